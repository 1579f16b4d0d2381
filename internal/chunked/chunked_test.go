package chunked

import (
	"bytes"
	"strings"
	"testing"
)

// TestChunksFindTheEnd feeds chunked bodies, each followed by the next
// reply's bytes, a byte at a time and whole, with extensions and trailers,
// and checks where each body ends and the data judged; a size too large
// to hold is a framing error.
func TestChunksFindTheEnd(t *testing.T) {
	for _, tc := range []struct{ body, data string }{
		{"5\r\nhello\r\n0\r\n\r\n", "hello"},
		{"5;ext=1\r\nhello\r\na\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n", "hello0123456789"},
		{"0\r\n\r\n", ""},
	} {
		in := tc.body + "HTTP/1.1 200 OK\r\n"
		for _, step := range []int{1, len(in)} {
			c, j := &Scanner{}, &collected{}
			used, done := 0, false
			for i := 0; i < len(in) && !done; i += step {
				var n int
				n, done = c.Feed([]byte(in[i:min(i+step, len(in))]), j)
				used += n
			}
			if !done || used != len(tc.body) || j.String() != tc.data {
				t.Errorf("%q in steps of %d: done %v after %d bytes with data %q, want the end after %d with %q", tc.body, step, done, used, j.String(), len(tc.body), tc.data)
			}
		}
	}
	c := &Scanner{}
	if _, done := c.Feed([]byte(strings.Repeat("f", 12)+"\r\n"), nil); done || !c.Bad() {
		t.Errorf("a size of 16^12 bytes: done %v, bad %v; want a framing error", done, c.Bad())
	}
}

type collected struct{ bytes.Buffer }

func (c *collected) Write(p []byte) { c.Buffer.Write(p) }
