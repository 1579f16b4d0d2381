package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// escapingWriter writes through to w with every control character but
// newline and tab escaped (ESC as \x1b, C1 controls as \u009b): what ctl
// and explain print comes from a server and from people (reasons, names),
// and must not drive the terminal (clear it, set its title, rewrite a
// line with a carriage return).
type escapingWriter struct{ w io.Writer }

// terminalSafe wraps w in an escapingWriter.
func terminalSafe(w io.Writer) io.Writer { return escapingWriter{w} }

// Write escapes p's control characters and writes the result; it reports
// len(p) when the whole escaped text was written.
func (e escapingWriter) Write(p []byte) (int, error) {
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r == '\n' || r == '\t':
			out = append(out, byte(r))
		case r < 0x20 || r == 0x7f:
			out = fmt.Appendf(out, `\x%02x`, r)
		case r == utf8.RuneError && n == 1: // not UTF-8: a raw 8-bit CSI?
			out = fmt.Appendf(out, `\x%02x`, p[i])
		case r >= 0x80 && r <= 0x9f:
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, p[i:i+n]...)
		}
		i += n
	}
	if _, err := e.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// cell is s as one cell of a table: newline and tab, which terminalSafe
// lets through, are escaped too (\n, \t), so a name or reason holding
// them cannot end its cell or line and forge a row of the table (issue 31,
// item 12). Config refuses such names; the server's strings are not
// trusted for that.
func cell(s string) string {
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s)
}

// cells applies cell to each of ss.
func cells(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = cell(s)
	}
	return out
}
