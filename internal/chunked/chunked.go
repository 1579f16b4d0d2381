// Package chunked follows an HTTP/1.1 chunked body's framing as the
// body passes unchanged, byte by byte in whatever pieces it arrives: it
// finds the body's end and hands the chunks' data to a judge, for a proxy
// that passes the bytes on itself (hermes proxy's event loops, the
// bench's event-loop proxy). Go's net/http/httputil.NewChunkedReader
// decodes from a reader that blocks; an event loop has a piece at a time
// and must not wait for the next.
package chunked

// Scanner follows one chunked body: a size in hex, extensions to the
// line's end, the data and its CRLF, and after the last chunk trailer
// lines up to an empty one (RFC 9112 §7.1). A size past maxChunk is a
// framing error (Bad). The zero Scanner is at a body's start.
type Scanner struct {
	state int
	size  int64 // of the chunk being read, or its data still to come
	line  int   // bytes of the trailer line being read
	bad   bool
}

const (
	chunkSize  = iota // the size's digits
	chunkExt          // the rest of the size line, to its LF
	chunkData         // the data
	chunkCRLF         // the CR LF after the data
	chunkTrail        // trailer lines, to an empty one
)

const maxChunk = 1 << 40

// Judge takes a body's data as it passes (instrument.Call is one).
type Judge interface{ Write(p []byte) }

// Bad says the framing was broken; the Scanner then reads nothing more.
func (c *Scanner) Bad() bool { return c.bad }

// Feed reads p, the next bytes of the body, and feeds the chunks' data to
// j (when not nil); it returns how many bytes of p belong to the body
// and whether the body ended within them.
func (c *Scanner) Feed(p []byte, j Judge) (int, bool) {
	i := 0
	for i < len(p) && !c.bad {
		b := p[i]
		switch c.state {
		case chunkSize:
			var d int64
			switch {
			case '0' <= b && b <= '9':
				d = int64(b - '0')
			case 'a' <= b && b <= 'f':
				d = int64(b-'a') + 10
			case 'A' <= b && b <= 'F':
				d = int64(b-'A') + 10
			default:
				c.state = chunkExt
				continue
			}
			if c.size = c.size<<4 | d; c.size > maxChunk {
				c.bad = true
				return i, false
			}
			i++
		case chunkExt:
			i++
			if b == '\n' {
				if c.size == 0 {
					c.state, c.line = chunkTrail, 0
				} else {
					c.state = chunkData
				}
			}
		case chunkData:
			n := int(min(c.size, int64(len(p)-i)))
			if j != nil {
				j.Write(p[i : i+n])
			}
			i += n
			if c.size -= int64(n); c.size == 0 {
				c.state = chunkCRLF
			}
		case chunkCRLF:
			i++
			if b == '\n' {
				c.state = chunkSize
			}
		case chunkTrail:
			i++
			if b == '\n' {
				if c.line == 0 {
					return i, true
				}
				c.line = 0
			} else if b != '\r' {
				c.line++
			}
		}
	}
	return i, false
}
