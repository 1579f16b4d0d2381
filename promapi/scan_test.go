package promapi

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzScanValid: the scanner accepts a text (one value, then only white
// space) exactly when encoding/json does, whatever its buffer's size.
func FuzzScanValid(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,-0.5e+3,true,false,null,"x\u00e9\n"]}`, ` [ ] `, `{}`, `"\ud800"`, "\"\xff\"", `0`, `-`, `01`, `1.`, `1e`, `.5`,
		`{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `"\x"`, `"\u12"`, "\"a\tb\"", `tru`, `nul`, `{"a":1}}`, `[[[[]]]]`, `{"\"":"\\"}`,
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, text []byte, size uint8) {
		for _, n := range []int{1 + int(size)%17, readBufferSize} {
			s := newScanner(bytes.NewReader(text), n)
			s.skip()
			got := s.err == nil && !s.more()
			if want := json.Valid(text); got != want {
				t.Fatalf("buffer %d: scanner accepts %v (%v), encoding/json %v", n, got, s.err, want)
			}
		}
	})
}

// TestScanDepth: arrays and objects nest as deeply as encoding/json lets
// them, and no deeper.
func TestScanDepth(t *testing.T) {
	for _, depth := range []int{maxDepth, maxDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			close := map[string]string{"[": "]", `{"a":`: "}"}[open]
			text := []byte(strings.Repeat(open, depth) + "1" + strings.Repeat(close, depth))
			s := newScanner(bytes.NewReader(text), readBufferSize)
			s.skip()
			if got, want := s.err == nil && !s.more(), json.Valid(text); got != want || got != (depth <= maxDepth) {
				t.Errorf("depth %d of %s: scanner accepts %v (%v), encoding/json %v", depth, open, got, s.err, want)
			}
		}
	}
}

// TestScanMembers: keys are unescaped as encoding/json unescapes them, and
// a member's value is where member leaves the scanner.
func TestScanMembers(t *testing.T) {
	text := `{"route":1, "rou\u0074e" : "x", "a\\b":[2,{"c":3}], "\u00e9":null}`
	var keys []string
	for _, size := range []int{1, 3, readBufferSize} {
		keys = keys[:0]
		s := newScanner(strings.NewReader(text), size)
		if s.openObject() {
			for first := true; s.member(first); first = false {
				keys = append(keys, string(s.key))
				s.skip()
			}
		}
		if s.err != nil || s.more() {
			t.Fatalf("buffer %d: %v", size, s.err)
		}
		if got, want := strings.Join(keys, "|"), `route|route|a\b|é`; got != want {
			t.Errorf("buffer %d: keys %s, want %s", size, got, want)
		}
	}
}
