package web

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/web/api"
)

// TestStatusPageShowsTheCandidate: with a candidate policy, the page and
// the API show where it stands apart from live and the decisions that
// differed, newest first; without one, neither mentions it.
func TestStatusPageShowsTheCandidate(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 3, 0, 0, time.UTC)
	score := 81.0
	d := evaluator.Difference{By: "candidate", Other: "live", Instead: "stayed normal",
		Event: evaluator.Event{Time: at, Type: evaluator.EventLevel, Service: "chat", Route: "free", From: "normal", To: "warm", Score: &score, Reasons: []string{"soft_fail_ratio 0.09 (-19.0)"}}}
	st := api.Status{Ready: true, Interval: "15s", Services: []api.Service{}, Alerts: []api.Alert{}, Actuators: []api.Actuator{},
		Candidate: &api.Candidate{File: "/etc/hermes/candidate.yaml", LoadedAt: at.Add(-time.Hour), SeededAt: at.Add(-time.Hour), LastTick: at,
			Routes:      []api.CandidateRoute{{Service: "chat", Route: "free", Level: "warm", LiveLevel: "normal", Score: 81, LiveScore: 81, Traffic: 95, LiveTraffic: 100}},
			Differences: []api.CandidateDifference{{Difference: d, Text: d.String()}}}}
	srv := serve(t, &statusBackend{fakeBackend: fakeBackend{ready: true}, st: st}, "")
	code, body := do(t, "GET", srv.URL+"/", "", "")
	if code != 200 {
		t.Fatalf("page: %d", code)
	}
	for _, want := range []string{
		`<h2 id="candidate">Candidate policy (shadow: never applied, never sent)</h2>`,
		"/etc/hermes/candidate.yaml",
		`<td>chat / free</td><td><span class="level level-warm">warm</span> · score 81.0 · 95%</td><td><span class="level level-normal">normal</span> · score 81.0 · 100%</td>`,
		"<li>candidate: chat/free warm at 12:03:00 (live stayed normal): score 81.0: soft_fail_ratio 0.09 (-19.0)</li>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	code, js := do(t, "GET", srv.URL+"/api/v1/status", "", "")
	var got struct {
		Candidate *struct {
			File        string
			Differences []struct{ By, Other, Instead, Text string }
		}
	}
	if err := json.Unmarshal([]byte(js), &got); code != 200 || err != nil || got.Candidate == nil || got.Candidate.File != "/etc/hermes/candidate.yaml" ||
		len(got.Candidate.Differences) != 1 || got.Candidate.Differences[0].Instead != "stayed normal" || !strings.HasPrefix(got.Candidate.Differences[0].Text, "candidate: chat/free warm") {
		t.Errorf("API: %d %v %s", code, err, js)
	}

	st.Candidate = nil
	srv = serve(t, &statusBackend{fakeBackend: fakeBackend{ready: true}, st: st}, "")
	if _, body := do(t, "GET", srv.URL+"/", "", ""); strings.Contains(body, "Candidate policy") {
		t.Error("a page without a candidate shows one")
	}
	if _, js := do(t, "GET", srv.URL+"/api/v1/status", "", ""); strings.Contains(js, "candidate") {
		t.Errorf("an API status without a candidate mentions one: %s", js)
	}
}
