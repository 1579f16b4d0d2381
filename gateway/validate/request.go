package validate

import (
	"bytes"
	"encoding/json"
)

// MaxTokens finds the caller's own cap on a reply in a request's body,
// fed to Write piece by piece as the body passes: the top-level
// max_tokens, max_completion_tokens or max_output_tokens (capKeys), the
// smallest when several are set (a later duplicate of one replaces it, as encoding/json reads
// it). It keeps a few bytes of state and never the body, so a body of
// any size costs it nothing but the bytes' one look; a body that is not
// a JSON object, or a value that is not a positive integer, sets no cap.
// Give the cap to the reply's Classifier (Classifier.CallerMaxTokens):
// a reply the caller's own max_tokens ended is not the route's fault.
// The zero value is ready; it is not safe for concurrent use.
//
// Hand-rolled, because the body must be read as it passes, in pieces and
// without a goroutine: encoding/json (and encoding/json/jsontext) pull
// from a reader, and a request body is pushed to the upstream by
// whatever carries it (hermes proxy's front, net/http's transport).
// FuzzMaxTokens holds it to encoding/json's reading of the whole body.
type MaxTokens struct {
	state  scanState
	depth  int // open arrays and objects inside the top-level object
	esc    bool
	key    [maxKeyBytes]byte
	keyLen int // -1: longer than any key looked for
	which  int // the key whose value is being read (keyNone: another)
	num    int64
	neg    bool
	// got holds each looked-for key's last value (0: unset or not a
	// positive integer).
	got [len(capKeys)]int64
}

type scanState uint8

const (
	scanStart   scanState = iota // before the top-level value
	scanKeyWait                  // in the top-level object: a key, or its end
	scanKey                      // in a top-level key
	scanColon                    // after a top-level key
	scanValue                    // after a top-level key's colon
	scanNumber                   // in a looked-for key's number
	scanOther                    // in any other top-level value, or nested inside one
	scanString                   // in a string of scanOther
	scanAfter                    // after a top-level value: a comma or the end
	scanDone                     // the object has ended, or the body is not one
)

// maxKeyBytes bounds a top-level key as it is read: the longest looked
// for, max_completion_tokens, with every byte escaped (\u006d) is 126.
const maxKeyBytes = 128

const keyNone = -1

// capKeys are the members that cap a reply's tokens: max_tokens, OpenAI's
// newer max_completion_tokens (which its reasoning models need) and its
// Responses API's max_output_tokens.
var capKeys = [3]string{"max_tokens", "max_completion_tokens", "max_output_tokens"}

// Write reads the next piece of the body; it never fails.
func (m *MaxTokens) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && m.state != scanDone {
		p = m.step(p)
	}
	return n, nil
}

// step reads what it can of p in the current state and returns the rest.
func (m *MaxTokens) step(p []byte) []byte {
	switch m.state {
	case scanStart:
		i := skipSpace(p, 0)
		if i == len(p) {
			return nil
		}
		if p[i] != '{' {
			m.state = scanDone
			return nil
		}
		m.state = scanKeyWait
		return p[i+1:]
	case scanKeyWait:
		i := skipSpace(p, 0)
		if i == len(p) {
			return nil
		}
		switch p[i] {
		case '"':
			m.state, m.keyLen, m.esc = scanKey, 0, false
		case ',':
		default: // '}', or not JSON: nothing more is read
			m.state = scanDone
		}
		return p[i+1:]
	case scanKey:
		end, rest := m.stringEnd(p)
		if m.keyLen >= 0 {
			if m.keyLen+end > maxKeyBytes {
				m.keyLen = -1
			} else {
				m.keyLen += copy(m.key[m.keyLen:], p[:end])
			}
		}
		if rest == nil {
			return nil
		}
		m.which = m.keyIndex()
		m.state = scanColon
		return rest
	case scanColon:
		i := skipSpace(p, 0)
		if i == len(p) {
			return nil
		}
		if p[i] != ':' {
			m.state = scanDone
			return nil
		}
		m.state = scanValue
		return p[i+1:]
	case scanValue:
		i := skipSpace(p, 0)
		if i == len(p) {
			return nil
		}
		c := p[i]
		if m.which != keyNone {
			m.got[m.which] = 0 // a later member replaces an earlier one
			if c == '-' || c >= '0' && c <= '9' {
				m.state, m.num, m.neg = scanNumber, 0, c == '-'
				if m.neg {
					return p[i+1:]
				}
				return p[i:]
			}
		}
		m.state = scanOther
		return p[i:]
	case scanNumber:
		for i, c := range p {
			if c >= '0' && c <= '9' {
				if m.num < 1<<40 {
					m.num = m.num*10 + int64(c-'0')
				}
				continue
			}
			if c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
				// Not an integer: no cap (a provider refuses it).
				m.state = scanOther
				return p[i:]
			}
			if !m.neg && m.num > 0 && m.num <= 1<<31-1 {
				m.got[m.which] = m.num // a larger one caps nothing a provider takes
			}
			m.state = scanAfter
			return p[i:]
		}
		return nil
	case scanOther:
		// A value that is not looked at: skipped to the comma or the
		// brace that ends it at the top level.
		for i, c := range p {
			switch c {
			case '"':
				m.state, m.esc = scanString, false
				return p[i+1:]
			case '{', '[':
				m.depth++
			case '}', ']':
				if m.depth == 0 {
					m.state = scanDone
					return nil
				}
				m.depth--
			case ',':
				if m.depth == 0 {
					m.state = scanKeyWait
					return p[i+1:]
				}
			}
		}
		return nil
	case scanString:
		_, rest := m.stringEnd(p)
		if rest == nil {
			return nil
		}
		m.state = scanOther
		return rest
	case scanAfter:
		i := skipSpace(p, 0)
		if i == len(p) {
			return nil
		}
		if p[i] == ',' {
			m.state = scanKeyWait
			return p[i+1:]
		}
		m.state = scanDone
		return nil
	}
	return nil
}

// stringEnd finds the closing quote of the string p is inside (m.esc
// says p[0] is escaped): it returns how much of p is the string's and
// the rest after the quote, or len(p) and nil when the string goes on.
func (m *MaxTokens) stringEnd(p []byte) (int, []byte) {
	from := 0
	if m.esc {
		m.esc = false
		from = 1
		if len(p) == 0 {
			return 0, nil
		}
	}
	for {
		i := bytes.IndexByte(p[from:], '"')
		if i < 0 {
			m.esc = backslashes(p[from:])%2 == 1
			return len(p), nil
		}
		i += from
		if backslashes(p[from:i])%2 == 0 {
			return i, p[i+1:]
		}
		from = i + 1
	}
}

// backslashes counts the backslashes that end b.
func backslashes(b []byte) int {
	n := 0
	for n < len(b) && b[len(b)-1-n] == '\\' {
		n++
	}
	return n
}

// keyIndex says which looked-for key the key just read is, or keyNone.
func (m *MaxTokens) keyIndex() int {
	if m.keyLen < 0 {
		return keyNone
	}
	key := m.key[:m.keyLen]
	if bytes.IndexByte(key, '\\') >= 0 {
		// Escaped (rare): read as encoding/json reads it.
		var s string
		if json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &s) != nil {
			return keyNone
		}
		key = []byte(s)
	}
	for i, k := range capKeys {
		if string(key) == k {
			return i
		}
	}
	return keyNone
}

// Tokens is the caller's cap on the reply's tokens read so far: the
// smallest of max_tokens, max_completion_tokens and max_output_tokens,
// or 0 when none is an integer from 1 to 2³¹−1.
func (m *MaxTokens) Tokens() int {
	n := int64(0)
	for _, v := range m.got {
		if v > 0 && (n == 0 || v < n) {
			n = v
		}
	}
	return int(n)
}

// Reset forgets what was read, for the next body.
func (m *MaxTokens) Reset() { *m = MaxTokens{} }
