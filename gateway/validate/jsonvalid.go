package validate

// maxDepth is encoding/json's limit on nested arrays and objects
// (its scanner's maxNestingDepth): a document nested deeper is not valid.
const maxDepth = 10000

// validJSON reports whether b is one JSON document with optional white
// space around it, exactly as encoding/json's Valid does: RFC 8259's
// grammar, control characters refused inside strings, any other byte
// (invalid UTF-8 too) accepted there, at most maxDepth levels of nesting.
// Hand-rolled because json.Valid steps its scanner through a function
// call per byte: it was 8 % of hermes proxy's CPU on plain replies under
// make bench-proxy, for one 1.5 kB body a request, and this loop takes
// about a fifth of json.Valid's time (BenchmarkValidJSON: 0.6 µs against
// 3.1–3.6, reading a string's plain bytes eight at a time, words.go).
// FuzzValidJSON holds it to json.Valid.
func validJSON(b []byte) bool { return scanJSON(b, nil) }

// roleDepth is how deep scanJSON looks for what a reply records: the
// document, choices, a choice, its delta or message, and their
// tool_calls or function_call.
const roleDepth = 5

// scanJSON is validJSON, recording in r (when not nil) the members of a
// chat completion the judge reads as it meets them, so that the judge
// needs no second walk over the document (see reply).
func scanJSON(b []byte, r *reply) bool {
	var buf [32]byte
	stack := buf[:0] // '{' or '[' for each open level
	// roles[d] and starts[d] are the role and the first byte of the
	// container open at depth d (1 is the document), down to roleDepth.
	var roles [roleDepth + 1]slot
	var starts [roleDepth + 1]int
	next := slotNone // the role of the value that starts at b[i]
	if r != nil {
		next = slotTop
	}
	i := skipSpace(b, 0)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return false
		}
		start := i
		if next != slotNone {
			r.open(next)
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(stack) == maxDepth {
				return false
			}
			stack = append(stack, c)
			role := slotNone
			if d := len(stack); d <= roleDepth {
				roles[d], starts[d], role = next, i, next
			}
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' or ']', an empty one
				i++
				stack = stack[:len(stack)-1]
				break
			}
			if c == '{' {
				if i, next = memberName(b, i, role); i < 0 {
					return false
				}
			} else {
				next = role.element()
			}
			continue
		case c == '"':
			if i = validStringEnd(b, i); i < 0 {
				return false
			}
		case c == 't':
			if i = literal(b, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = literal(b, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = literal(b, i, "null"); i < 0 {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if i = numberEnd(b, i); i < 0 {
				return false
			}
		default:
			return false
		}
		if next != slotNone {
			r.set(next, b[start:i])
		}
		// A value ended before b[i]: close what it ends, or go on to the
		// next member or element.
		for {
			i = skipSpace(b, i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			d := len(stack)
			top := stack[d-1]
			role := slotNone
			if d <= roleDepth {
				role = roles[d]
			}
			if b[i] == top+2 {
				stack = stack[:d-1]
				i++
				if role != slotNone {
					r.set(role, b[starts[d]:i])
				}
				continue
			}
			if b[i] != ',' {
				return false
			}
			i = skipSpace(b, i+1)
			if top == '{' {
				if i, next = memberName(b, i, role); i < 0 {
					return false
				}
			} else {
				next = role.element()
			}
			break
		}
	}
}

// memberName checks a member's name and its colon at b[i], and returns
// the index of its value, or -1, and the role of the value in an object
// of role obj.
func memberName(b []byte, i int, obj slot) (int, slot) {
	if i >= len(b) || b[i] != '"' {
		return -1, slotNone
	}
	start := i
	if i = validStringEnd(b, i); i < 0 {
		return -1, slotNone
	}
	role := slotNone
	if obj != slotNone {
		role = obj.member(rawJSON(b[start:i]))
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1, slotNone
	}
	return skipSpace(b, i+1), role
}

// validStringEnd returns the index just past the string whose quote is b[i],
// or -1 when it is not a valid JSON string.
func validStringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		j = firstStop(b, j) // the plain bytes of a string, most of a reply
		if j >= len(b) {
			break
		}
		if c := b[j]; c >= 0x20 && c != '"' && c != '\\' {
			j++ // a plain byte of the last seven
			continue
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1
		case c == '\\':
			if j+1 >= len(b) {
				return -1
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(b) {
					return -1
				}
				for _, h := range b[j+2 : j+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				j += 6
			default:
				return -1
			}
		case c < 0x20:
			return -1
		default:
			j++
		}
	}
	return -1
}

// literal returns the index past word at b[i], or -1.
func literal(b []byte, i int, word string) int {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

// numberEnd returns the index past the number at b[i], or -1 when it is
// not one by JSON's grammar.
func numberEnd(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
