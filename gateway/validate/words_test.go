package validate

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestStringStops: firstStop finds the first control character, quote or
// backslash of a word at every place, next to every other byte.
func TestStringStops(t *testing.T) {
	for c := range 256 {
		for at := range 8 {
			for _, fill := range []byte{'a', 0x00, 0x1f, 0x20, 0x21, '"' + 1, '\\' - 1, 0x7f, 0x80, 0xff} {
				b := bytes.Repeat([]byte{fill}, 9)
				b[at] = byte(c)
				want := 8 // none in the word: the last byte, left to the byte loop
				for i, x := range b[:8] {
					if x < 0x20 || x == '"' || x == '\\' {
						want = i
						break
					}
				}
				if got := firstStop(b, 0); got != want {
					t.Fatalf("firstStop(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
}

// TestRuneCount: runeCount counts as utf8 does on valid UTF-8.
func TestRuneCount(t *testing.T) {
	for _, s := range []string{"", "a", "abcdefgh", "abcdefghi", "café", strings.Repeat("é", 9), "系统繁忙，请稍后重试", "😀😀😀x", "\ufffd\u2028 ab"} {
		if got, want := runeCount(s), utf8.RuneCountInString(s); got != want {
			t.Errorf("runeCount(%q) = %d, want %d", s, got, want)
		}
	}
}
