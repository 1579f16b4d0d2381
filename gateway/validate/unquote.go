package validate

import (
	"unicode/utf16"
	"unicode/utf8"
)

// appendUnquoted appends to dst the text of the JSON string whose bytes
// between the quotes are s, exactly as encoding/json unquotes it: escapes
// decoded, a \uD83D\uDE00 surrogate pair joined into one rune, a lone
// surrogate (or a pair that does not decode) and every byte that is not
// UTF-8 replaced with U+FFFD. s must have been accepted by validJSON: a
// string with a bad escape or a control character is not unquoted
// faithfully. Hand-rolled because encoding/json unquotes only through
// Unmarshal into a new string (its own validity scan, then a copy), which
// was most of the CPU of judging a completion with a \n in it
// (BenchmarkJudgePlain/escaped); FuzzUnquote holds it to json.Unmarshal.
func appendUnquoted(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\\':
			var n int
			dst, n = appendEscape(dst, s[i:])
			i += n
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(s) && s[j] != '\\' && s[j] < utf8.RuneSelf {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		}
	}
	return dst
}

// appendEscape appends what the escape at s[0] (a backslash) stands for
// and returns how many bytes of s it took.
func appendEscape(dst, s []byte) ([]byte, int) {
	if len(s) < 2 {
		return dst, len(s)
	}
	switch s[1] {
	case 'b':
		return append(dst, '\b'), 2
	case 'f':
		return append(dst, '\f'), 2
	case 'n':
		return append(dst, '\n'), 2
	case 'r':
		return append(dst, '\r'), 2
	case 't':
		return append(dst, '\t'), 2
	case 'u':
		r := hex4(s[2:])
		if r < 0 {
			return dst, 2
		}
		if utf16.IsSurrogate(r) {
			// encoding/json joins a high surrogate with the \u escape
			// right after it when the two decode; else the first is
			// U+FFFD and the second is read on its own.
			if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
				if pair := utf16.DecodeRune(r, hex4(s[8:])); pair != utf8.RuneError {
					return utf8.AppendRune(dst, pair), 12
				}
			}
			r = utf8.RuneError
		}
		return utf8.AppendRune(dst, r), 6
	}
	return append(dst, s[1]), 2 // '"', '\\', '/'
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
