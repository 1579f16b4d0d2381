package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// labCalls are the chat completions the lab's load sends in turn, the
// mix an application sends: short answers, titles held to a few tokens by
// the caller's own max_tokens (the provider ends them with finish_reason
// length, a healthy reply), and one call in four streamed, half of those
// capped too.
var labCalls = []string{
	`{"model":"fake-model","messages":[{"role":"user","content":"What is the capital of France? Answer in one short sentence."}],"max_tokens":40}`,
	`{"model":"fake-model","messages":[{"role":"user","content":"Summarize as a title of at most five words: cheap routes fail inside HTTP 200."}],"max_tokens":5}`,
	`{"model":"fake-model","messages":[{"role":"user","content":"What is the capital of France? Answer in one short sentence."}],"max_completion_tokens":40}`,
	`{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"Summarize: cheap routes fail inside HTTP 200."}],"max_tokens":200}`,
	`{"model":"fake-model","messages":[{"role":"user","content":"What is the capital of France? Answer in one short sentence."}],"max_tokens":40}`,
	`{"model":"fake-model","messages":[{"role":"user","content":"Summarize as a title of at most five words: routes need evidence."}],"max_completion_tokens":5}`,
	`{"model":"fake-model","messages":[{"role":"user","content":"What is the capital of France? Answer in one short sentence."}],"max_tokens":40}`,
	`{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"Summarize in a dozen words: cheap routes fail inside HTTP 200."}],"max_tokens":12}`,
}

// labLoad sends chat completions to the gateway at rate requests a
// second until ctx ends (labCalls in turn), each with its own goroutine
// so a slow reply does not slow the rate. Every minute it logs how many
// it sent and how many got no 200.
func labLoad(ctx context.Context, gateway string, rate float64, logger *slog.Logger) {
	client := &http.Client{Timeout: 30 * time.Second}
	var sent, failed atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	report := time.NewTicker(time.Minute)
	defer report.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-report.C:
			logger.Info("load", "sent", sent.Swap(0), "not_200", failed.Swap(0), "per", "1m")
			continue
		case <-tick.C:
		}
		body := labCalls[n%len(labCalls)]
		wg.Go(func() {
			sent.Add(1)
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, gateway+"/v1/chat/completions", strings.NewReader(body))
			if err != nil {
				return
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				if ctx.Err() == nil {
					failed.Add(1)
				}
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				failed.Add(1)
			}
		})
	}
}

// labPager is the lab's pager: Alertmanager's webhook receiver. It logs
// one line per alert of each notification and keeps them for GET /.
type labPager struct {
	logger *slog.Logger
	mu     sync.Mutex
	notes  []pagerNote
}

// pagerNote is one alert of one notification, as the pager got it.
type pagerNote struct {
	Received    time.Time         `json:"received"`
	Status      string            `json:"status"` // firing or resolved
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
}

func (p *labPager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/notify":
		var msg struct {
			Alerts []pagerNote `json:"alerts"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 4<<20)).Decode(&msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		now := time.Now()
		p.mu.Lock()
		for _, a := range msg.Alerts {
			a.Received = now
			p.notes = append(p.notes, a)
			p.logger.Info("pager: "+strings.ToUpper(a.Status), "alert", a.Labels["alertname"], "severity", a.Labels["severity"],
				"route", a.Labels["route"], "summary", a.Annotations["summary"], "description", a.Annotations["description"])
		}
		p.mu.Unlock()
	case r.Method == http.MethodGet && r.URL.Path == "/":
		p.mu.Lock()
		notes := append([]pagerNote{}, p.notes...)
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(notes)
	default:
		http.NotFound(w, r)
	}
}
