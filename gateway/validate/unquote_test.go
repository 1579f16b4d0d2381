package validate

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// unquoteCases are string bodies at the edges of encoding/json's
// unquoting: escapes, surrogate pairs and lone surrogates, invalid UTF-8.
var unquoteCases = []string{
	``, `plain`, `a\nb`, `\"quoted\"`, `\\`, `\/`, `\b\f\n\r\t`, `caf\u00e9`, `café`, `\u0000`, `\u00E9\u00e9`,
	`\ud83d\ude00`, `\uD83D\uDE00x`, `\ud83d`, `\ud83dx`, `\ude00`, `\ude00\ud83d`, `\ud83d\ud83d\ude00`,
	`\ud83d\u0041`, `\ud83d\n`, `\ud83d\\ude00`, `\ufffd`, `\uffff`, `\u2028`,
	"\xff", "a\xffb", "\xed\xa0\x80", "\xe9t\xc3", "\xf0\x9f\x98", "\xf0\x9f\x98\x80", "\x7f", "é\\u00e9\xff\\n",
}

// TestWriteUnquoted: writeUnquoted gives what json.Unmarshal gives.
func TestWriteUnquoted(t *testing.T) {
	for _, s := range unquoteCases {
		checkUnquoted(t, []byte(s))
	}
}

// FuzzUnquote holds writeUnquoted to json.Unmarshal on every string
// validJSON accepts.
func FuzzUnquote(f *testing.F) {
	for _, s := range unquoteCases {
		f.Add([]byte(s))
	}
	f.Fuzz(checkUnquoted)
}

func checkUnquoted(t *testing.T, s []byte) {
	quoted := append(append([]byte{'"'}, s...), '"')
	if !validJSON(quoted) {
		return
	}
	var want string
	if err := json.Unmarshal(quoted, &want); err != nil {
		t.Fatalf("json.Unmarshal(%q): %v", quoted, err)
	}
	var b strings.Builder
	b.WriteString("x")
	writeUnquoted(&b, s)
	if got := b.String(); got != "x"+want {
		t.Fatalf("writeUnquoted(%q) = %q, json.Unmarshal %q", s, got[1:], want)
	}
	if n, un := runeCount(want), utf8.RuneCountInString(want); n != un {
		t.Fatalf("runeCount(%q) = %d, utf8 counts %d", want, n, un)
	}
	chars, blank := textFacts(s)
	if n := utf8.RuneCountInString(want); chars != n {
		t.Fatalf("textFacts(%q): %d characters, the text %q has %d", s, chars, want, n)
	}
	if b := strings.TrimSpace(want) == ""; blank != b {
		t.Fatalf("textFacts(%q): blank %v, the text %q is blank: %v", s, blank, want, b)
	}
}
