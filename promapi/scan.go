package promapi

import (
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// scanner reads one JSON text from a reader token by token, through a
// buffer of fixed size (grown only for a string longer than it), without
// allocating: keys and strings are handed over as bytes of the buffer.
// It checks the grammar as encoding/json does (RFC 8259): a text it
// accepts, encoding/json accepts too. The first error stops it; every
// method is then a no-op that reports nothing more.
//
// Why hand-written: decodeAnswer used json-iterator's Iterator, which
// allocates every object key as a string (four per series: "metric",
// "value", "route", "signal_part"), about two million allocations a tick
// at 10,000 routes, and a third of a live tick's CPU went to decoding.
// encoding/json allocates at least as much; fastjson and the like parse a
// whole answer into a tree of values, several times the answer's size in
// memory at once. An /api/v1/query answer uses a small part of JSON, and
// FuzzDecodeAnswer holds what decodeAnswer reads with this scanner to what
// client_golang's decoding reads of the same bytes.
type scanner struct {
	r        io.Reader
	buf      []byte
	pos, end int
	// mark, when not -1, is where a string being read began: fill keeps
	// the buffer from there on.
	mark int
	// off is the offset in the text of buf[0], for errors.
	off   int64
	eof   bool
	err   error
	depth int
	// key is the last member's key, unescaped.
	key []byte
}

// maxDepth bounds how deeply arrays and objects nest, as encoding/json's
// does.
const maxDepth = 10000

func newScanner(r io.Reader, size int) *scanner {
	return &scanner{r: r, buf: make([]byte, size), mark: -1, key: make([]byte, 0, 32)}
}

// fail records the first error, at the current offset.
func (s *scanner) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("%s at offset %d", fmt.Sprintf(format, args...), s.off+int64(s.pos))
	}
}

// fill reads more of the text into the buffer, keeping what is not read
// yet (and the string from mark on); false at the end of the text, after
// a read error or after an error of the scanner's.
func (s *scanner) fill() bool {
	if s.eof || s.err != nil {
		return false
	}
	keep := s.pos
	if s.mark >= 0 {
		keep = s.mark
	}
	if keep > 0 {
		s.end = copy(s.buf, s.buf[keep:s.end])
		s.off += int64(keep)
		s.pos -= keep
		if s.mark >= 0 {
			s.mark = 0
		}
	}
	if s.end == len(s.buf) { // a string longer than the buffer
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	for {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.eof = true
		}
		if n > 0 {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// peek is the next byte that is not white space, left unread; 0 at the
// end of the text (more reports whether there is a byte).
func (s *scanner) peek() byte {
	if s.pos < s.end && s.buf[s.pos] > ' ' { // compact JSON: no white space
		return s.buf[s.pos]
	}
	return s.peekSpace()
}

// peekSpace is peek past white space or the buffer's end.
func (s *scanner) peekSpace() byte {
	for {
		for s.pos < s.end {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return c
			}
		}
		if !s.fill() {
			return 0
		}
	}
}

// more reports whether the text goes on past the white space at the
// current position.
func (s *scanner) more() bool {
	s.peek()
	return s.pos < s.end
}

// cur is the byte at the current position, or -1 at the end of the text.
func (s *scanner) cur() int {
	if s.pos >= s.end && !s.fill() {
		return -1
	}
	return int(s.buf[s.pos])
}

// strClass marks the bytes a string's fast loop must stop at: the quote,
// the backslash, control characters (invalid in a string) and bytes of
// multi-byte UTF-8 sequences.
var strClass = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// str reads a string, the next value, and returns its raw content between
// the quotes, valid until the scanner reads on; esc: it holds an escape
// (checked), wide: a byte of 0x80 or more (not checked: encoding/json
// turns invalid UTF-8 into U+FFFD).
func (s *scanner) str() (raw []byte, esc, wide bool) {
	if s.peek() != '"' {
		s.unexpected("a string")
		return nil, false, false
	}
	s.pos++
	s.mark = s.pos
	i := s.pos
	for {
		buf := s.buf[:s.end]
		for i < len(buf) {
			c := buf[i]
			if !strClass[c] {
				i++
				continue
			}
			switch {
			case c == '"':
				raw = buf[s.mark:i]
				s.pos, s.mark = i+1, -1
				if esc && !validEscapes(raw) {
					s.fail("invalid escape in a string")
				}
				return raw, esc, wide
			case c == '\\':
				if i+1 >= len(buf) {
					goto more // the escaped byte is not read yet
				}
				esc = true
				i += 2
			case c < 0x20:
				s.pos, s.mark = i, -1
				s.fail("control character %#x in a string", c)
				return nil, false, false
			default:
				wide = true
				i++
			}
		}
	more:
		rel := i - s.mark
		if !s.fill() {
			s.pos, s.mark = s.end, -1
			s.fail("unexpected end of the answer in a string")
			return nil, false, false
		}
		i = s.mark + rel
	}
}

// validEscapes reports whether every escape of a string's raw content is
// one of JSON's.
func validEscapes(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++
		if i >= len(raw) {
			return false
		}
		switch raw[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if i+4 >= len(raw) {
				return false
			}
			for _, h := range raw[i+1 : i+5] {
				if !isHex(h) {
					return false
				}
			}
			i += 4
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// unescaped is a string's raw content as encoding/json decodes it,
// appended to dst: as it stands unless it holds an escape or invalid
// UTF-8, which encoding/json itself decodes (rare in an answer).
func unescaped(dst, raw []byte, esc, wide bool) ([]byte, error) {
	if !esc && (!wide || utf8.Valid(raw)) {
		return append(dst, raw...), nil
	}
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	var v string
	if err := json.Unmarshal(quoted, &v); err != nil {
		return dst, err
	}
	return append(dst, v...), nil
}

// text reads a string, the next value, as encoding/json decodes it; null
// reads as "".
func (s *scanner) text() string {
	if s.peek() == 'n' {
		s.literal("null")
		return ""
	}
	raw, esc, wide := s.str()
	if s.err != nil {
		return ""
	}
	v, err := unescaped(nil, raw, esc, wide)
	if err != nil {
		s.fail("a string: %v", err)
	}
	return string(v)
}

// openObject starts reading an object, the next value: true when it is
// one (member then reads its members), false when it is null, read.
func (s *scanner) openObject() bool {
	switch s.peek() {
	case '{':
		s.pos++
		return s.enter()
	case 'n':
		s.literal("null")
	default:
		s.unexpected("an object")
	}
	return false
}

// member moves to the next member of the object being read: true with its
// key in s.key and the scanner at its value, false past the object's end
// (or on an error). first: no member was read yet.
func (s *scanner) member(first bool) bool {
	switch c := s.peek(); {
	case c == '}':
		s.pos++
		s.depth--
		return false
	case !first && c != ',':
		s.unexpected("',' or '}'")
		return false
	case !first:
		s.pos++
	}
	raw, esc, wide := s.str()
	if s.err != nil {
		return false
	}
	if !esc && !wide {
		s.key = append(s.key[:0], raw...)
	} else {
		var err error
		if s.key, err = unescaped(s.key[:0], raw, esc, wide); err != nil {
			s.fail("a key: %v", err)
			return false
		}
	}
	if s.peek() != ':' {
		s.unexpected("':'")
		return false
	}
	s.pos++
	return true
}

// openArray starts reading an array, the next value: true when it is one
// (element then reads its elements), false when it is null, read.
func (s *scanner) openArray() bool {
	switch s.peek() {
	case '[':
		s.pos++
		return s.enter()
	case 'n':
		s.literal("null")
	default:
		s.unexpected("an array")
	}
	return false
}

// element moves to the next element of the array being read: true with
// the scanner at it, false past the array's end (or on an error).
func (s *scanner) element(first bool) bool {
	switch c := s.peek(); {
	case c == ']':
		s.pos++
		s.depth--
		return false
	case s.err != nil:
		return false
	case first:
		return true
	case c != ',':
		s.unexpected("',' or ']'")
		return false
	}
	s.pos++
	return true
}

func (s *scanner) enter() bool {
	if s.depth++; s.depth > maxDepth {
		s.fail("nested too deeply")
		return false
	}
	return true
}

// skip reads the next value, whatever it is.
func (s *scanner) skip() {
	switch c := s.peek(); {
	case c == '"':
		s.str()
	case c == '{':
		if s.openObject() {
			for first := true; s.member(first); first = false {
				s.skip()
			}
		}
	case c == '[':
		if s.openArray() {
			for first := true; s.element(first); first = false {
				s.skip()
			}
		}
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		s.number()
	default:
		s.unexpected("a value")
	}
}

// literal reads word (true, false or null).
func (s *scanner) literal(word string) {
	for i := 0; i < len(word); i++ {
		if s.cur() != int(word[i]) {
			s.unexpected("'" + word + "'")
			return
		}
		s.pos++
	}
}

// number reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() {
	if end := numberEnd(s.buf[s.pos:s.end]); end > 0 {
		s.pos += end // the usual case: a valid number, whole in the buffer
		return
	}
	s.numberSpanning()
}

// numberEnd is the length of the valid number that b starts with when b
// holds the byte after it too, else 0. It is number's fast path (the
// evaluation time of every sample), over a slice instead of byte by byte.
func numberEnd(b []byte) int {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digitsEnd(b, i)
	default:
		return 0
	}
	if i < len(b) && b[i] == '.' {
		j := digitsEnd(b, i+1)
		if j == i+1 {
			return 0
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digitsEnd(b, i)
		if j == i {
			return 0
		}
		i = j
	}
	if i >= len(b) {
		return 0 // it may go on past the buffer
	}
	return i
}

// digitsEnd is where the digits of b from i end.
func digitsEnd(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// numberSpanning is number byte by byte, reading on as the number needs
// (and reporting what is wrong with it).
func (s *scanner) numberSpanning() {
	if s.cur() == '-' {
		s.pos++
	}
	switch c := s.cur(); {
	case c == '0':
		s.pos++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		s.unexpected("a digit")
		return
	}
	if s.cur() == '.' {
		s.pos++
		if !s.digits() {
			return
		}
	}
	if c := s.cur(); c == 'e' || c == 'E' {
		s.pos++
		if c := s.cur(); c == '+' || c == '-' {
			s.pos++
		}
		s.digits()
	}
}

// digits reads one digit or more.
func (s *scanner) digits() bool {
	n := 0
	for {
		buf, i := s.buf[:s.end], s.pos
		for i < len(buf) && '0' <= buf[i] && buf[i] <= '9' {
			i++
		}
		n += i - s.pos
		s.pos = i
		if i < len(buf) || !s.fill() {
			break
		}
	}
	if n == 0 {
		s.unexpected("a digit")
	}
	return n > 0
}

// unexpected fails on the next byte, which is not what was expected.
func (s *scanner) unexpected(want string) {
	switch c := s.cur(); {
	case s.err != nil:
	case c < 0:
		s.fail("unexpected end of the answer, expected %s", want)
	default:
		s.fail("unexpected %q, expected %s", rune(c), want)
	}
}
