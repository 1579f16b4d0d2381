package validate

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// writeUnquoted writes to b the text of the JSON string whose bytes
// between the quotes are s, exactly as encoding/json unquotes it: escapes
// decoded, a \uD83D\uDE00 surrogate pair joined into one rune, a lone
// surrogate (or a pair that does not decode) and every byte that is not
// UTF-8 replaced with U+FFFD. s must have been accepted by validJSON: a
// string with a bad escape or a control character is not unquoted
// faithfully. Hand-rolled because encoding/json unquotes only through
// Unmarshal into a new string (its own validity scan, then a copy), which
// was most of the CPU of judging a completion with a \n in it
// (BenchmarkJudgePlain/escaped); FuzzUnquote holds it to json.Unmarshal.
// It writes to a strings.Builder so that the text becomes a string
// without a second copy: a stream's deltas are unquoted straight into the
// completion being joined.
func writeUnquoted(b *strings.Builder, s []byte) {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\\':
			i += writeEscape(b, s[i:])
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(s) && s[j] != '\\' && s[j] < utf8.RuneSelf {
				j++
			}
			b.Write(s[i:j])
			i = j
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(s[i : i+size])
			}
			i += size
		}
	}
}

// writeEscape writes what the escape at s[0] (a backslash) stands for
// and returns how many bytes of s it took.
func writeEscape(b *strings.Builder, s []byte) int {
	r, n := escapeRune(s)
	if r >= 0 {
		b.WriteRune(r)
	}
	return n
}

// escapeRune is the rune the escape at s[0] (a backslash) stands for, -1
// for none (a bad escape, which validJSON refuses), and how many bytes of
// s it takes.
func escapeRune(s []byte) (rune, int) {
	if len(s) < 2 {
		return -1, len(s)
	}
	switch s[1] {
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r := hex4(s[2:])
		if r < 0 {
			return -1, 2
		}
		if utf16.IsSurrogate(r) {
			// encoding/json joins a high surrogate with the \u escape
			// right after it when the two decode; else the first is
			// U+FFFD and the second is read on its own.
			if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
				if pair := utf16.DecodeRune(r, hex4(s[8:])); pair != utf8.RuneError {
					return pair, 12
				}
			}
			r = utf8.RuneError
		}
		return r, 6
	}
	return rune(s[1]), 2 // '"', '\\', '/'
}

// textFacts is what judging a long completion reads of its text, from
// the bytes s between the quotes of its JSON string, as writeUnquoted
// would unquote them but without writing the text anywhere: its
// characters (runeCount of the text) and whether it is blank (nothing
// left by strings.TrimSpace). FuzzTextFacts holds it to writeUnquoted.
func textFacts(s []byte) (chars int, blank bool) {
	blank = true
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			i = len(s)
		}
		run := s[:i]
		if utf8.Valid(run) {
			chars += runeCount(run)
			blank = blank && len(bytes.TrimSpace(run)) == 0
		} else {
			// A byte that is not UTF-8 is a U+FFFD of its own.
			for j := 0; j < len(run); {
				r, size := utf8.DecodeRune(run[j:])
				chars++
				blank = blank && size > 1 && unicode.IsSpace(r)
				j += size
			}
		}
		s = s[i:]
		if len(s) > 0 {
			r, n := escapeRune(s)
			if r >= 0 {
				chars++
				blank = blank && unicode.IsSpace(r)
			}
			s = s[n:]
		}
	}
	return chars, blank
}

// hex4 is the value of the four hex digits that start s, or -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
