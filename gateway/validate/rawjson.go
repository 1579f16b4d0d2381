package validate

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// rawJSON is one value of a document that validJSON (json.Valid's
// answers, faster) accepted, read in
// place: the validator looks at a handful of fields of each reply and
// stream event (choices[0].delta.content, finish_reason, usage, error,
// the top-level strings of an error envelope), and decoding the whole
// event into map[string]any with encoding/json was a third of the proxy's
// CPU on streams. It answers exactly what the decoded map answered: a
// member named twice is its last value, names and strings are unquoted as
// encoding/json unquotes them (writeUnquoted, when they hold an escape or
// a byte that is not plain UTF-8), numbers are their text (json.Number).
// The judge reads most of what it needs from a reply, recorded in the
// same pass that validates the document; rawJSON reads the rest (usage,
// error envelopes, required fields off the reply's path). Hand-rolled because
// encoding/json/jsontext needs GOEXPERIMENT=jsonv2 in Go 1.26, and the
// third-party scanners differ from encoding/json on duplicate names and
// invalid UTF-8. TestJudgedAsRecorded holds it to the map-based judge it
// replaced, whose results are recorded in testdata/judged.jsonl.
//
// The empty rawJSON is a missing value.
type rawJSON []byte

// parseJSON returns b as a rawJSON when it is one JSON document (optional
// white space around it), as decodeJSON would decode it.
func parseJSON(b []byte) (rawJSON, bool) {
	if !validJSON(b) {
		return nil, false
	}
	return rawJSON(bytes.TrimSpace(b)), true
}

// kind is the value's first byte: '{', '[', '"', 't', 'f', 'n', or a
// number's first character; 0 when the value is missing.
func (r rawJSON) kind() byte {
	if len(r) == 0 {
		return 0
	}
	return r[0]
}

func (r rawJSON) isObject() bool { return r.kind() == '{' }
func (r rawJSON) isArray() bool  { return r.kind() == '[' }
func (r rawJSON) isString() bool { return r.kind() == '"' }
func (r rawJSON) isNumber() bool { k := r.kind(); return k == '-' || k >= '0' && k <= '9' }

// present reports what a lookup in the decoded map reported: the value is
// there and not null.
func (r rawJSON) present() bool { return len(r) > 0 && r[0] != 'n' }

// anError says whether r, the value of an "error" member, reports one:
// present and not blank (not {}, [], "", false or 0, which some
// providers send beside a healthy reply).
func (r rawJSON) anError() bool {
	switch string(r) {
	case "", "null", "{}", "[]", `""`, "false", "0":
		return false
	}
	if r.isObject() {
		n := 0
		r.members(func(_, _ rawJSON) { n++ })
		return n > 0 // {} written with white space inside
	}
	return true
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just past the value starting at b[i]; b is
// valid JSON, so brackets balance and strings end.
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	case 't', 'n':
		return i + 4
	case 'f':
		return i + 5
	}
	for i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == '-' || b[i] == '+' || b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string whose quote is b[i]:
// the first quote after it that no backslash escapes.
func stringEnd(b []byte, i int) int {
	for j := i + 1; ; {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// members calls each with every member of an object, in order.
func (r rawJSON) members(each func(name, value rawJSON)) {
	if !r.isObject() {
		return
	}
	i := skipSpace(r, 1)
	for i < len(r) && r[i] == '"' {
		end := stringEnd(r, i)
		name := r[i:end]
		i = skipSpace(r, end)
		i = skipSpace(r, i+1) // the colon
		vend := valueEnd(r, i)
		each(name, r[i:vend])
		i = skipSpace(r, vend)
		if i < len(r) && r[i] == ',' {
			i = skipSpace(r, i+1)
		}
	}
}

// elements calls each with every element of an array, in order, until it
// returns false.
func (r rawJSON) elements(each func(value rawJSON) bool) {
	if !r.isArray() {
		return
	}
	i := skipSpace(r, 1)
	for i < len(r) && r[i] != ']' {
		end := valueEnd(r, i)
		if !each(r[i:end]) {
			return
		}
		i = skipSpace(r, end)
		if i < len(r) && r[i] == ',' {
			i = skipSpace(r, i+1)
		}
	}
}

// field is the member name of an object: its last value, as a decoded map
// keeps it; missing when r is not an object or has no such member.
func (r rawJSON) field(name string) rawJSON {
	var v rawJSON
	r.members(func(n, val rawJSON) {
		if n.equals(name) {
			v = val
		}
	})
	return v
}

// fields is field for each of up to four names, in one pass over the
// object.
func (r rawJSON) fields(names ...string) (vals [4]rawJSON) {
	r.members(func(n, val rawJSON) {
		for i, name := range names {
			if n.equals(name) {
				vals[i] = val
				return
			}
		}
	})
	return vals
}

// index is element i of an array; missing when there is none.
func (r rawJSON) index(i int) rawJSON {
	var v rawJSON
	r.elements(func(val rawJSON) bool {
		if i == 0 {
			v = val
			return false
		}
		i--
		return true
	})
	return v
}

// equals reports whether r is a string that unquotes to s; false for
// any other value, or none.
func (r rawJSON) equals(s string) bool {
	if !r.isString() {
		return false
	}
	body := r[1 : len(r)-1]
	if len(body) > 0 && body[0] < utf8.RuneSelf && body[0] != '\\' && (s == "" || body[0] != s[0]) {
		// An ASCII first byte that starts no escape unquotes to itself:
		// most names of an event ("id", "object", "model" against
		// "choices") differ there (equals was 8 % of hermes proxy's
		// CPU profile on streams).
		return false
	}
	if string(body) == s {
		return utf8.Valid(body) // else encoding/json would have replaced its bad bytes
	}
	if bytes.IndexByte(body, '\\') < 0 && !strings.ContainsRune(s, utf8.RuneError) {
		// Without escapes, the name unquotes to itself, or to itself
		// with U+FFFD for its bad bytes: neither is s.
		return false
	}
	u, _ := r.str()
	return u == s
}

// str is the string r holds, unquoted as encoding/json unquotes it; false
// when r is not a string.
func (r rawJSON) str() (string, bool) {
	if !r.isString() {
		return "", false
	}
	body := r[1 : len(r)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), true
	}
	// Escapes, or bytes encoding/json replaces with U+FFFD: unquoted as
	// it unquotes them, so that the text is the same.
	var b strings.Builder
	b.Grow(len(body)) // the text is not longer, unless it has bad bytes
	writeUnquoted(&b, body)
	return b.String(), true
}

// lookupRaw is the value at p in a raw document: the value at p, and
// whether it is there and not null.
func (p jsonPath) lookupRaw(doc rawJSON) (rawJSON, bool) {
	cur := doc
	for _, seg := range p {
		switch s := seg.(type) {
		case string:
			if !cur.isObject() {
				return nil, false
			}
			cur = cur.field(s)
		case int:
			if !cur.isArray() {
				return nil, false
			}
			cur = cur.index(s)
		}
		if len(cur) == 0 {
			return nil, false
		}
	}
	return cur, cur.present()
}

// rawGet is lookupRaw for a path known at compile time.
func rawGet(doc rawJSON, segs ...any) (rawJSON, bool) { return jsonPath(segs).lookupRaw(doc) }

func rawGetString(doc rawJSON, segs ...any) (string, bool) {
	v, ok := rawGet(doc, segs...)
	if !ok {
		return "", false
	}
	return v.str()
}

// notEmpty reports whether v is present, not null and, when an array, has
// an element.
func notEmpty(v rawJSON) bool {
	if !v.present() {
		return false
	}
	if v.isArray() {
		has := false
		v.elements(func(rawJSON) bool { has = true; return false })
		return has
	}
	return true
}

// hasText says whether v is a string that is not empty.
func hasText(v rawJSON) bool { return v.isString() && len(v) > len(`""`) }

// eachPart calls text with the text of every text part of a content
// array ([{"type":"text","text":"…"}]) and thought with every thinking
// part: Mistral's reasoning models send a completion so, its thinking
// beside its text. A part of another type (an image, a reference) is
// neither.
func (r rawJSON) eachPart(text func(rawJSON), thought func()) {
	r.elements(func(part rawJSON) bool {
		f := part.fields("type", "text")
		switch {
		case f[0].equals("text") && f[1].isString():
			text(f[1])
		case f[0].equals("thinking"):
			thought()
		}
		return true
	})
}

// tokenCount is a count of tokens: an integer from 0 to 2³¹−1, or -1
// when v is missing or not one.
func tokenCount(v rawJSON) int {
	if v.isNumber() {
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil && i >= 0 && i < 1<<31 {
			return int(i)
		}
	}
	return -1
}

// usageFrom reads the token counts of a usage object.
func usageFrom(usage rawJSON) Usage {
	f := usage.fields("prompt_tokens", "completion_tokens", "total_tokens", "completion_tokens_details")
	n := func(v rawJSON) int { return max(tokenCount(v), 0) }
	u := Usage{PromptTokens: n(f[0]), CompletionTokens: n(f[1]), TotalTokens: n(f[2]),
		ReasoningTokens: n(f[3].fields("reasoning_tokens")[0])}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u
}

// rawErrorInStrings looks for an error pattern in the top-level strings of
// an object that is not a completion ({"code": 500, "msg": "系统繁忙"}),
// each member's last value as a decoded map keeps it, in the order of the
// document.
func rawErrorInStrings(obj rawJSON, patterns []string) (string, bool) {
	type member struct {
		name  string
		value rawJSON
	}
	var last []member
	obj.members(func(n, v rawJSON) {
		name, _ := n.str()
		for i := range last {
			if last[i].name == name {
				last[i].value = v
				return
			}
		}
		last = append(last, member{name, v})
	})
	for _, m := range last {
		if s, ok := m.value.str(); ok {
			if p, ok := containsAny(strings.ToLower(s), patterns); ok {
				return p, true
			}
		}
	}
	return "", false
}

// rawErrorEnvelope reports whether an object that is not a completion is a
// provider's error envelope: the code of an HTTP error (400–599, as a
// number or as text) next to a message, as in {"code":500,"msg":"…"}.
func rawErrorEnvelope(obj rawJSON) bool {
	hasCode := false
	for _, k := range []string{"code", "status", "status_code", "error_code"} {
		v := obj.field(k)
		var s string
		switch {
		case v.isNumber():
			s = string(v)
		case v.isString():
			s, _ = v.str()
		}
		if n, err := strconv.Atoi(s); err == nil && n >= 400 && n <= 599 {
			hasCode = true
		}
	}
	if !hasCode {
		return false
	}
	for _, k := range []string{"msg", "message", "error_msg", "errmsg", "detail"} {
		if obj.field(k).isString() {
			return true
		}
	}
	return false
}
