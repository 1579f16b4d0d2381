// Package benchproxy measures `hermes proxy` beside nginx
// (scripts/bench-proxy.sh, make bench-proxy): a fast OpenAI-compatible
// upstream to put behind both (Upstream, run as a process by
// ./internal/benchproxy/upstream) and a load generator
// (./internal/benchproxy/load) whose fixed-rate loads are open-loop, each
// latency counted from the request's scheduled send time, so a slow
// reply does not hide the requests queued behind it (no coordinated
// omission).
//
// internal/faults is not reused: it starts only under a testing.TB, its
// healthy reply is 46 characters, and its streams have no gap to measure.
package benchproxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Headers a request sets to shape its stream (defaults: the Upstream's).
const (
	HeaderEvents = "X-Bench-Events" // content events in the stream
	HeaderGap    = "X-Bench-Gap"    // time between two events, a Go duration
)

// Model is the model the upstream answers as.
const Model = "bench-model"

// Upstream answers POST …/chat/completions: a plain completion of about
// 1.5 kB, or, when the request's "stream" is true, Events chunk events
// Gap apart (the last with finish_reason "stop"), then data: [DONE]. Each
// event carries the upstream's send time in nanoseconds ("sent_ns"), so
// that a client on the same machine can compare its gaps between events
// with the upstream's.
type Upstream struct {
	Events int
	Gap    time.Duration
}

// PlainReply is the body of a plain completion.
var PlainReply = func() []byte {
	b, err := json.Marshal(map[string]any{
		"id": "chatcmpl-bench", "object": "chat.completion", "created": 1733450000, "model": Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": Content}}},
		"usage": map[string]any{"prompt_tokens": 24, "completion_tokens": 260, "total_tokens": 284},
	})
	if err != nil {
		panic(err)
	}
	return b
}()

// Content is the completion's text (about 1.3 kB): a reply of a
// realistic size, which the validator reads whole.
var Content = strings.Repeat("The quick brown fox jumps over the lazy dog, and the answer goes on for a while. ", 16)

// Word is the text of each stream event.
const Word = "token "

func (u *Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req struct {
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "the body is not JSON", http.StatusBadRequest)
		return
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(PlainReply)))
		_, _ = w.Write(PlainReply)
		return
	}
	events, gap := u.Events, u.Gap
	if v := r.Header.Get(HeaderEvents); v != "" {
		if events, err = strconv.Atoi(v); err != nil || events < 1 {
			http.Error(w, HeaderEvents+": not a positive number", http.StatusBadRequest)
			return
		}
	}
	if v := r.Header.Get(HeaderGap); v != "" {
		if gap, err = time.ParseDuration(v); err != nil || gap < 0 {
			http.Error(w, HeaderGap+": not a duration", http.StatusBadRequest)
			return
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	start := time.Now()
	timer := time.NewTimer(0)
	<-timer.C
	buf := make([]byte, 0, 512)
	for i := range events {
		// Each event at its place in the schedule, not a gap after the
		// last write, so that a slow write does not shift the rest.
		if d := time.Until(start.Add(time.Duration(i) * gap)); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-r.Context().Done():
				return
			}
		}
		finish := "null"
		if i == events-1 {
			finish = `"stop"`
		}
		buf = fmt.Appendf(buf[:0], `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1733450000,"model":%q,"sent_ns":%d,"choices":[{"index":0,"delta":{"content":%q},"finish_reason":%s}]}`+"\n\n",
			Model, time.Now().UnixNano(), Word, finish)
		if i == events-1 {
			buf = append(buf, "data: [DONE]\n\n"...)
		}
		if _, err := w.Write(buf); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
