package main

// chunks follows a chunked body's framing as it passes, to find its end
// and hand the chunks' data to the judge. It reads what RFC 9112 §7.1
// allows: a size in hex, extensions up to the line's end, the data and
// its CRLF, and after the last chunk trailer lines up to an empty one.
type chunks struct {
	state int
	size  int // of the chunk being read, or its data still to come
	line  int // bytes of the trailer line being read
}

const (
	chunkSize  = iota // reading the size's digits
	chunkExt          // the rest of the size line, to its LF
	chunkData         // the data
	chunkCRLF         // the CR LF after the data
	chunkTrail        // trailer lines, to an empty one
)

// judge takes the data of a body as it passes (instrument.Call).
type judge interface{ Write(p []byte) }

// feed reads p, the next bytes of the body, and feeds the chunks' data
// to j (when not nil); it returns how many bytes of p belong to the
// body and whether the body ended within them.
func (c *chunks) feed(p []byte, j judge) (int, bool) {
	i := 0
	for i < len(p) {
		b := p[i]
		switch c.state {
		case chunkSize:
			switch {
			case '0' <= b && b <= '9':
				c.size = c.size<<4 | int(b-'0')
			case 'a' <= b && b <= 'f':
				c.size = c.size<<4 | int(b-'a'+10)
			case 'A' <= b && b <= 'F':
				c.size = c.size<<4 | int(b-'A'+10)
			default:
				c.state = chunkExt
				continue
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
			n := min(c.size, len(p)-i)
			if j != nil {
				j.Write(p[i : i+n])
			}
			i += n
			if c.size -= n; c.size == 0 {
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
