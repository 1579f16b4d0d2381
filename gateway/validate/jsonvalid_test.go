package validate

import (
	"encoding/json"
	"strings"
	"testing"
)

// validCases are documents at the edges of JSON's grammar and of
// encoding/json's reading of it.
var validCases = []string{
	``, ` `, `{}`, `[]`, ` { } `, `[ ]`, `{"a":1}`, `{"a":1,}`, `[1,]`, `[,1]`, `{"a" 1}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`,
	`"x"`, `"\u00e9\n\t\"\\\/\b\f\r"`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\x01b\"", "\"a\x7fb\"", "\"\xff\xfe\"", `"unterminated`, `"\`,
	`0`, `-0`, `01`, `-`, `1.`, `.5`, `1.5`, `1e5`, `1E+5`, `1e-5`, `1e`, `1e+`, `-1.5e10`, `+1`, `0x10`, `1 2`, `1.5.5`,
	`true`, `false`, `null`, `tru`, `truex`, `nul`, `True`, `[true,false,null]`, `{"a":[{"b":null}]}`,
	`{"a":1}}`, `[[]`, `[]]`, `{"a":{"b":[1,2,{"c":"d"}]}}`, "\t\r\n{\"a\"\t:\r\n1}\n", "\v{}", "{}\x00",
	strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
	strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
	strings.Repeat(`{"a":`, maxDepth) + "1" + strings.Repeat("}", maxDepth),
	strings.Repeat(`{"a":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1),
	completion("Paris is the capital of France.", "stop"),
}

// TestValidJSON: validJSON answers as json.Valid does.
func TestValidJSON(t *testing.T) {
	for _, c := range validCases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("validJSON(%.60q) = %v, json.Valid %v", c, got, want)
		}
	}
}

// FuzzValidJSON holds validJSON to json.Valid on arbitrary bytes.
func FuzzValidJSON(f *testing.F) {
	for _, c := range validCases {
		if len(c) < 1000 {
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}

// BenchmarkValidJSON compares validJSON with json.Valid on a 1.5 kB
// chat completion.
func BenchmarkValidJSON(b *testing.B) {
	doc := []byte(completion(strings.Repeat("The quick brown fox jumps over the lazy dog, and the answer goes on for a while. ", 16), "stop"))
	b.Run("validJSON", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			validJSON(doc)
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			json.Valid(doc)
		}
	})
}
