package web

import (
	"fmt"
	"html/template"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/traffic"
	"github.com/hermes-failover/hermes/web/api"
	"github.com/hermes-failover/hermes/web/charts"
)

// statusBackend serves a fixed status.
type statusBackend struct {
	fakeBackend
	st api.Status
}

func (b *statusBackend) Status() api.Status { return b.st }

// TestStatusPageFollowsConfig: scores are coloured by the configured
// thresholds, routes keep their colour, manual and pending/firing are told
// apart, alerts link their runbook, and each route says what to do next.
func TestStatusPageFollowsConfig(t *testing.T) {
	st := api.Status{Ready: true, Interval: "15s",
		// Thresholds unlike the shipped 85/75/60.
		Levels: []api.Level{{Name: "warm", Below: 95}, {Name: "shed", Below: 90}, {Name: "failover", Below: 50}},
		Services: []api.Service{{Name: "chat", Weights: map[string]int{"free": 0, "paid-standard": 70, "paid-premium": 30},
			Override: &evaluator.Override{Kind: "pin", Route: "paid-standard", Reason: "launch"},
			Routes: []api.Route{
				{Name: "free", Score: 10, Level: "manual", ScoreState: api.ScoreJudged},
				{Name: "paid-standard", Score: 92, Level: "warm", Traffic: 70, ScoreState: api.ScoreJudged},
				{Name: "paid-premium", Score: 96, Level: "normal", Traffic: 30, ScoreState: api.ScoreJudged},
			}}},
		Alerts: []api.Alert{
			{Name: "HermesRouteManual", Tier: "A", State: "firing", Service: "chat", Route: "free", Runbook: "https://runbooks.example.com/manual"},
			{Name: "HermesRouteScoreDegraded", Tier: "B", State: "pending", Service: "chat", Route: "paid-standard"},
		}}
	srv := serve(t, &statusBackend{fakeBackend: fakeBackend{ready: true}, st: st}, "")
	code, body := do(t, "GET", srv.URL+"/", "", "")
	if code != 200 {
		t.Fatalf("page: %d", code)
	}
	colors := charts.RouteColors([]string{"free", "paid-standard", "paid-premium"})
	for _, want := range []string{
		"levels: warm below 95, shed below 90, failover below 50",
		`<td class="fair">92.0`, // below warm's 95, not shed's 90
		`<span class="level level-manual">manual</span>`,
		`<span class="state-firing">firing</span>`, `<span class="state-pending">pending</span>`,
		`<a href="https://runbooks.example.com/manual">runbook</a>`,
		`<code class="next">hermes ctl release free --reason &#34;…&#34;</code>`,
		`<code class="next">hermes ctl clear chat --reason &#34;…&#34;</code>`,
		`width: 70%; background: ` + colors["paid-standard"],
		`width: 30%; background: ` + colors["paid-premium"],
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if !strings.Contains(body, `<td class="good">96.0`) || !strings.Contains(body, `<td class="bad">10.0`) {
		t.Errorf("scores not coloured by the configured thresholds:\n%s", body)
	}
}

// TestStatusPageListsDrills: a running drill is on the page with what it
// sets, why, until when, what it has shown so far and how to stop it; a
// dry run says the actuators keep their split.
func TestStatusPageListsDrills(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	st := api.Status{Ready: true, Interval: "15s",
		Services: []api.Service{{Name: "chat", Weights: map[string]int{"free": 100},
			Routes: []api.Route{{Name: "free", Score: 40, Level: "failover"}}}},
		Drills: []evaluator.Drill{
			{Route: "free", Signals: map[string]float64{"soft_fail_ratio": 0.3, "p99_ratio": 4}, Reason: "game day", By: "alice",
				Since: t0, Until: t0.Add(10 * time.Minute), Detected: t0.Add(30 * time.Second), Moved: t0.Add(45 * time.Second)},
			{Route: "paid-standard", Signals: map[string]float64{"probe_success": 0}, Reason: "dry", Since: t0, Until: t0.Add(time.Hour), DryRun: true},
		}}
	srv := serve(t, &statusBackend{fakeBackend: fakeBackend{ready: true}, st: st}, "")
	code, body := do(t, "GET", srv.URL+"/", "", "")
	if code != 200 {
		t.Fatalf("page: %d", code)
	}
	for _, want := range []string{
		`<div class="warn" id="drill-free">Drill on <b>free</b>: p99_ratio = 4; soft_fail_ratio = 0.3; game day (by alice), since 2026-12-01 03:00:00`,
		"ends 2026-12-01 03:10:00",
		"detected 2026-12-01 03:00:30Z · traffic moved 2026-12-01 03:00:45Z · stop it",
		`<code class="next">hermes ctl drill free --stop --reason &#34;…&#34;</code>`,
		`<div class="warn" id="drill-paid-standard">Drill on <b>paid-standard</b> (dry run: the actuators keep the split it began with`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q\n%s", want, body)
		}
	}
	if strings.Contains(body, "failed over 2026") {
		t.Error("a drill that has not failed over says it has")
	}
}

// TestActuationsOnTheirCharts: an actuation of a service is marked on its
// split chart and on the score charts of its routes, not on another
// service's.
func TestActuationsOnTheirCharts(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	st := api.Status{Levels: []api.Level{{Name: "warm", Below: 85}}, Services: []api.Service{
		{Name: "chat", Routes: []api.Route{{Name: "free"}, {Name: "paid"}}},
		{Name: "embed", Routes: []api.Route{{Name: "paid"}, {Name: "local"}}},
	}}
	ticks := []evaluator.Tick{{Time: t0}, {Time: t0.Add(time.Minute)}}
	acts := []evaluator.Actuation{{Time: t0.Add(30 * time.Second), Actuator: "nginx", Service: "chat", Weights: map[string]int{"free": 0, "paid": 100}, Result: evaluator.ActuationApplied}}
	h := buildHistory(st, ticks, nil, acts, "prometheus", charts.RouteColors([]string{"free", "paid", "local"}))
	marked := func(svg template.HTML) bool {
		return strings.Contains(string(svg), "actuator nginx applied chat: free 0%, paid 100% (ok)")
	}
	if !marked(h.Splits[0]) || marked(h.Splits[1]) {
		t.Errorf("split charts: chat marked %v, embed marked %v; want chat only", marked(h.Splits[0]), marked(h.Splits[1]))
	}
	// Score charts in order of first appearance: free, paid, local.
	if !marked(h.Scores[0]) || !marked(h.Scores[1]) || marked(h.Scores[2]) {
		t.Errorf("score charts: free %v, paid %v, local %v; want free and paid (routes of chat) only", marked(h.Scores[0]), marked(h.Scores[1]), marked(h.Scores[2]))
	}
}

// TestStatusPageSaysTheState: with Prometheus unreachable the page says so
// at the top, a score never judged is "not judged" in the neutral colour,
// never a green 100, and each route says why it is held; a failed-over
// route says what its failback waits for, not "all signals within
// thresholds".
func TestStatusPageSaysTheState(t *testing.T) {
	p := testenv.DefaultPolicy(t)
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	snap, probs := failing(p, testenv.Healthy(p, t0), "connection", "connection refused")
	s, _ := evaluator.Step(p, evaluator.State{}, evaluator.Input{Snapshot: snap}, t0)
	st := StatusOf(runner.View{Ticked: true, LastTick: t0, Config: &config.Config{Policy: *p.Config}, Policy: p, State: s, SignalProblems: probs})
	srv := serve(t, &statusBackend{st: st}, "")
	_, body := do(t, "GET", srv.URL+"/", "", "")
	for _, want := range []string{
		`<div class="alarm problem">Prometheus unreachable: connection refused</div>`,
		`<td class="held" title="signals without data and no score with full data yet">not judged</td>`,
		`<li class="state">held: Prometheus unreachable: connection refused; not judged yet`,
		`<li>soft_fail_ratio, hard_fail_ratio, `, `probe_success missing: Prometheus unreachable: connection refused (level held)</li>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, `class="good">100.0`) || strings.Contains(body, "held: blind") {
		t.Errorf("a blind route shows a green 100 or (held: blind):\n%s", body)
	}

	snap = testenv.Healthy(p, t0)
	snap.Set("free", "hard_fail_ratio", evaluator.Sample{Value: 0.5})
	snap.Set("free", "probe_success", evaluator.Sample{Value: 1})
	s, _ = evaluator.Step(p, evaluator.State{}, evaluator.Input{Snapshot: snap}, t0)
	t1 := t0.Add(time.Minute)
	s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: testenv.Healthy(p, t1)}, t1)
	st = StatusOf(runner.View{Ticked: true, Ready: true, LastTick: t1, Config: &config.Config{Policy: *p.Config}, Policy: p, State: s})
	srv = serve(t, &statusBackend{st: st}, "")
	_, body = do(t, "GET", srv.URL+"/", "", "")
	i := strings.Index(body, `id="route-free"`)
	j := strings.Index(body, `id="route-paid-standard"`)
	if i < 0 || j < i {
		t.Fatalf("no row of free:\n%s", body)
	}
	row := body[i:j]
	if !strings.Contains(row, `<li class="state">failed over since 2026-12-01T03:00:00Z: `) || !strings.Contains(row, "the staged failback starts") ||
		strings.Contains(row, "all signals within thresholds") {
		t.Errorf("the failed-over row does not say what it waits for:\n%s", row)
	}
}

// TestStatusPageTellsTheIncident (issue 34, "a page that tells the
// incident"): a failed-over route's score is never green, whatever its
// value, nor a failback's; events wrap rather than scroll; a rejected
// reload is in the header with its error until a good one.
func TestStatusPageTellsTheIncident(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	st := api.Status{Ready: true, Interval: "15s", LoadedAt: t0.Add(-time.Hour),
		Levels: []api.Level{{Name: "warm", Below: 85}, {Name: "shed", Below: 75}, {Name: "failover", Below: 60}},
		Services: []api.Service{{Name: "chat", Weights: map[string]int{"free": 10, "paid": 90}, Routes: []api.Route{
			{Name: "free", Score: 85.5, Level: "failover", ScoreState: api.ScoreJudged, WaitsFor: []string{"6m0s more (03:06:00Z) with a score ≥ 80, for failback stage 1 (10%)"}},
			{Name: "stuck", Score: 100, Level: "failover", FailbackStage: 1, FailbackPercent: 10, ScoreState: api.ScoreJudged},
			{Name: "paid", Score: 99, Level: "normal", Traffic: 90, ScoreState: api.ScoreJudged},
		}}},
		ReloadFailure: &api.ReloadFailure{At: t0, Since: t0.Add(-time.Minute), Count: 2, Error: "hermes.yaml:3: levels out of order"}}
	srv := serve(t, &statusBackend{st: st}, "")
	_, body := do(t, "GET", srv.URL+"/", "", "")
	for _, want := range []string{
		`<td class="bad" title="the score is 85.5, but the route is at failover: the level decides its traffic">85.5</td>`,
		`<td class="bad" title="the score is 100.0, but the route is at failover: the level decides its traffic">100.0</td>`,
		`<td class="good">99.0</td>`,
		`<th>waits for</th>`, `<td class="waits">6m0s more (03:06:00Z) with a score ≥ 80, for failback stage 1 (10%)</td>`,
		`<div class="alarm reload" id="reload-failure">Reload rejected at 2026-12-01 03:00:00Z (2 rejected since 2026-12-01 02:59:00Z): hermes.yaml:3: levels out of order. The configuration loaded 2026-12-01 02:00:00Z keeps running`,
		`white-space: pre-wrap`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "overflow-x") {
		t.Error("events still scroll sideways")
	}
	st.ReloadFailure = nil
	srv = serve(t, &statusBackend{st: st}, "")
	if _, body = do(t, "GET", srv.URL+"/", "", ""); strings.Contains(body, "Reload rejected") {
		t.Error("a reload failure shown with none in the status")
	}
}

// TestDryRunShowsTheAppliedSplit (issue 34): while a dry-run drill holds
// a service, its bar and each route's traffic are the split the actuators
// keep; the plan is shown apart, as planned only.
func TestDryRunShowsTheAppliedSplit(t *testing.T) {
	p := testenv.DefaultPolicy(t)
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	s, _ := evaluator.Step(p, evaluator.State{}, evaluator.Input{Snapshot: testenv.Healthy(p, t0)}, t0)
	kept := maps.Clone(s.Services["chat"].Weights)
	planned := map[string]int{}
	for r := range kept {
		planned[r] = 0
	}
	planned["paid-standard"] = 100
	s.Services["chat"] = &traffic.Split{Weights: planned}
	s.Drills = map[string]evaluator.Drill{"free": {Route: "free", DryRun: true, Since: t0, Until: t0.Add(time.Hour), Reason: "rehearsal",
		Before: map[string]traffic.Split{"chat": {Weights: kept}}}}
	st := StatusOf(runner.View{Ticked: true, Ready: true, LastTick: t0, Config: &config.Config{Policy: *p.Config}, Policy: p, State: s})
	chat := st.Services[0]
	if !maps.Equal(chat.Weights, kept) || !maps.Equal(chat.Planned, planned) || routeOf(t, st, "free").Traffic != kept["free"] {
		t.Fatalf("chat weights %v planned %v (free traffic %d), want kept %v planned %v", chat.Weights, chat.Planned, routeOf(t, st, "free").Traffic, kept, planned)
	}
	srv := serve(t, &statusBackend{st: st}, "")
	_, body := do(t, "GET", srv.URL+"/", "", "")
	for _, want := range []string{
		fmt.Sprintf(`title="free %d%%"`, kept["free"]),
		`<div class="meta planned">dry run, planned only (not applied: the actuators keep the split above): `,
		"paid-standard 100% ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
