package promapi

import "github.com/hermes-failover/hermes/rules"

// seriesRead is what fastSeries read of one series of an instant vector.
type seriesRead struct {
	// route and part are the values of the route and rules.PartLabel
	// labels, bytes of the buffer read; part is empty when absent.
	route, part []byte
	hasRoute    bool
	v           float64
	// n is the length of the series' text.
	n int
}

// fastSeries reads the series that b starts with when b holds it whole in
// the form Prometheus writes every series of an instant vector:
//
//	{"metric":{"route":"a","signal_part":"value"},"value":[1700000000.123,"0.01"]}
//
// compact, its members in this order and spelled so, its label names and
// values without escapes, control characters or bytes past ASCII, its
// timestamp a number and its value a number as parseValue reads it. ok is
// false for anything else (another order, white space, a series cut by
// the buffer's end, any doubt), and then nothing is read: readVector reads
// the series token by token as before, and finds the same series, or the
// error, that it always found. Every series of a live tick's answer takes
// this path but the one the read buffer cuts; it reads a series in one
// pass over its bytes where the scanner's methods take each token in turn,
// about half of decoding an answer. FuzzDecodeAnswer holds decodeAnswer
// through a buffer that every series fits (this path) to the same bytes
// through buffers of a few bytes (the scanner's path) and to client_golang.
func fastSeries(b []byte) (f seriesRead, ok bool) {
	const open, value = `{"metric":{`, `,"value":[`
	if len(b) < len(open) || string(b[:len(open)]) != open {
		return f, false
	}
	i := len(open)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			key, j, ok := plainString(b, i)
			if !ok || j >= len(b) || b[j] != ':' {
				return f, false
			}
			val, k, ok := plainString(b, j+1)
			if !ok || k >= len(b) {
				return f, false
			}
			switch string(key) {
			case "route":
				f.route, f.hasRoute = val, true
			case rules.PartLabel:
				f.part = val
			}
			i = k + 1
			if b[k] == '}' {
				break
			}
			if b[k] != ',' {
				return f, false
			}
		}
	}
	if len(b)-i < len(value) || string(b[i:i+len(value)]) != value {
		return f, false
	}
	i += len(value)
	end := numberEnd(b[i:])
	if end == 0 {
		return f, false
	}
	i += end
	if i >= len(b) || b[i] != ',' {
		return f, false
	}
	raw, j, ok := plainString(b, i+1)
	if !ok || len(b)-j < 2 || b[j] != ']' || b[j+1] != '}' {
		return f, false
	}
	v, err := parseValue(raw)
	if err != nil {
		return f, false
	}
	f.v, f.n = v, j+2
	return f, true
}

// plainString reads the string that b[i:] starts with when it is whole in
// b and holds no escape, control character or byte past ASCII: its
// content and the position after its closing quote.
func plainString(b []byte, i int) (raw []byte, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		if c := b[j]; strClass[c] {
			if c != '"' {
				return nil, 0, false
			}
			return b[i+1 : j], j + 1, true
		}
	}
	return nil, 0, false
}
