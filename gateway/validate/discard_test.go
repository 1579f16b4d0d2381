package validate

import (
	"net/http"
	"strings"
	"testing"
)

// TestDiscardContentJudgesAlike: a Classifier told that nobody reads
// Result.Content gives every reply the Result it gives otherwise, the
// Content aside: the recorded cases, and long completions (past
// fallback_max_chars, where the text is judged in place) that are blank
// in every way JSON can write white space, too short, cut, calling tools,
// escaped, or not UTF-8.
func TestDiscardContentJudgesAlike(t *testing.T) {
	long := strings.Repeat("Foxes are small omnivores. ", 20)
	texts := []string{
		long,
		long + "\n\n" + long,
		strings.Repeat(" \n\t\r", 60),
		strings.Repeat("\u00a0\u2003\u3000", 50), // Unicode spaces, written raw
		strings.Repeat("狐狸", 100),
		"短",
		"",
	}
	var bodies []string
	for _, text := range texts {
		bodies = append(bodies, completion(text, "stop"), completion(text, "length"))
	}
	bodies = append(bodies,
		`{"choices":[{"message":{"content":"`+strings.Repeat(`\u00a0\n\u2003\t`, 60)+`"},"finish_reason":"stop"}]}`,
		`{"choices":[{"message":{"content":"`+strings.Repeat(`\ud83d\ude00\ud83d x\"`, 60)+`"},"finish_reason":"stop"}]}`,
		`{"choices":[{"message":{"content":"`+strings.Repeat("\xff\xfe ok ", 60)+`"},"finish_reason":"stop"}]}`,
		`{"choices":[{"message":{"content":"`+strings.Repeat(" ", 300)+`","tool_calls":[{"id":"c"}]},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c"}]},"finish_reason":"tool_calls"}]}`,
	)
	for _, c := range judgedCases() {
		if !c.Stream {
			bodies = append(bodies, string(c.Body))
		}
	}
	sets := []Rules{
		{},
		{FallbackMaxChars: 1},
		{FallbackMaxChars: 1, MinLength: 150},
		{FallbackMaxChars: 1, MinLength: 400},
		{MinLength: 3, Schema: `{"type":"object","required":["a"]}`},
		{RequiredFields: []string{"choices[0].message.content"}},
		{Format: FormatText},
	}
	judgedLong := 0
	for _, r := range sets {
		v, err := New(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range bodies {
			want := v.Classify(200, jsonHeader, []byte(body))
			c := v.Start(200, jsonHeader)
			c.DiscardContent()
			_, _ = c.Write([]byte(body))
			got := c.Finish()
			if got.Content != "" {
				t.Errorf("rules %+v, body %.80q: Content %.40q kept", r, body, got.Content)
			}
			if want.Content != "" && !v.readsText(want.Chars) {
				judgedLong++
			}
			want.Content = ""
			if got != want {
				t.Errorf("rules %+v, body %.80q:\ndiscarding %+v\nkeeping    %+v", r, body, got, want)
			}
		}
	}
	if judgedLong == 0 {
		t.Fatal("no case judged a long text in place")
	}
}

// TestDiscardContentKeepsStreams: a stream's content is joined to be
// judged, and is still in the Result.
func TestDiscardContentKeepsStreams(t *testing.T) {
	v, err := New(Rules{})
	if err != nil {
		t.Fatal(err)
	}
	c := v.Start(200, http.Header{"Content-Type": {"text/event-stream"}})
	c.DiscardContent()
	_, _ = c.Write([]byte(sse(`{"choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}`, "[DONE]")))
	if r := c.Finish(); r.Verdict != OK || r.Content != "Hello there" {
		t.Fatalf("got %+v", r)
	}
}
