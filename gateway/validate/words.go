package validate

import "math/bits"

// Eight bytes at a time: the two loops of judging that run over every
// byte of a completion's text (validating its string, counting its
// characters) read it as 64-bit words, so that a word of plain text costs
// a few instructions instead of eight trips round a byte loop. The tests
// are the classic ones for a byte in a word ("haszero", "hasless");
// FuzzValidJSON and FuzzUnquote hold the loops to encoding/json and
// unicode/utf8. Without unsafe, a word is read by shifts the compiler
// merges into one load.

const (
	ones  = 0x0101010101010101 // 0x01 in each byte
	highs = 0x8080808080808080 // 0x80 in each byte
)

// word is the eight bytes of s from i on, the first the lowest.
func word[T string | []byte](s T, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// stringStops marks with 0x80 the bytes of w that end a JSON string or
// need a look: control characters (below 0x20), quotes and backslashes.
// Its lowest mark is exact (a borrow only carries upwards, from a byte
// that is marked); marks above it may be false.
func stringStops(w uint64) uint64 {
	ctl := (w - 0x20*ones) &^ w // a byte below 0x20
	q := w ^ '"'*ones
	q = (q - ones) &^ q // a zero byte: a quote
	bs := w ^ '\\'*ones
	bs = (bs - ones) &^ bs // a backslash
	return (ctl | q | bs) & highs
}

// firstStop is the index in b, from i on, of the first byte
// stringStops marks, or the index of the last seven bytes' first when
// none is found before them.
func firstStop(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := stringStops(word(b, i)); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	return i
}

// runeCount is utf8.RuneCountInString for valid UTF-8 (what str and
// writeUnquoted make): the bytes that do not continue a rune (10xxxxxx).
// RuneCountInString decodes rune by rune: it was 14 % of
// BenchmarkJudgePlain.
func runeCount[T string | []byte](s T) int {
	n, i := len(s), 0
	for ; i+8 <= len(s); i += 8 {
		w := word(s, i)
		n -= bits.OnesCount64(w &^ (w << 1) & highs)
	}
	for ; i < len(s); i++ {
		if s[i]&0xc0 == 0x80 {
			n--
		}
	}
	return n
}
