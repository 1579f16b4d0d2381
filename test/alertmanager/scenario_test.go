package alertmanager

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner/alerting"
)

// policyYAML is a small Hermes configuration for the scenario: the score is
// 100 − 100 × hard_fail_ratio, levels move at once, and three of the default
// policy's alert rules, one per tier.
const policyYAML = `
global: {evaluation_interval: 1s, query_timeout: 500ms}` + testenv.HardFailScoring + `
levels:
  - {name: warm, below: 85, recover_above: 90, primary_percent: 95, retries: true}
  - {name: shed, below: 75, recover_above: 82, primary_percent: 50, retries: true}
  - {name: failover, below: 60, recover_above: 80, recover_for: 2s, primary_percent: 0}
failback: {stages: [100], observe: 1s, min_score: 80, max_completed: 5, window: 1h, manual_after: 1h}
services:
  - name: chat
    routes: [free, paid]
alerts:
  - name: HermesRouteFailedOver
    tier: A
    expr: level == "failover" && stage == 0
    summary: 'Traffic of {{ .Service }} was failed over away from route {{ .Route }}.'
    runbook_url: https://runbooks.example.com/hermes/failed-over
  - name: HermesRouteScoreDegraded
    tier: B
    expr: score >= 60 && score < 75
    summary: 'Route {{ .Route }} of {{ .Service }} is degraded (score {{ printf "%.0f" .Score }}).'
  - name: HermesWarmStageInUse
    tier: C
    expr: level == "warm"
    summary: 'Route {{ .Route }} is warm: a small share of {{ .Service }} goes to the backup.'
`

// Scores of the free route in each phase (hard_fail_ratio → score).
const (
	warm     = 0.2 // 80: warm → C
	degraded = 0.3 // 70: shed → B (and, while failed over, B under A)
	failing  = 0.5 // 50: failover → A
	healthy  = 0.0 // 100: failback → A resolved
)

func policy(t *testing.T) *evaluator.Policy {
	t.Helper()
	return testenv.Policy(t, policyYAML)
}

// driver runs the evaluator core in real time, one Step per second with a
// hand-built snapshot, and hands every tick's alerts to the sender.
type driver struct {
	p      *evaluator.Policy
	sender *alerting.Sender
	log    *slog.Logger

	mu       sync.Mutex
	hardFail float64
	st       evaluator.State
}

func (d *driver) set(v float64) {
	d.mu.Lock()
	d.hardFail = v
	d.mu.Unlock()
}

// step evaluates one tick at now.
func (d *driver) step(now time.Time) []evaluator.Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	snap := evaluator.Snapshot{Time: now}
	snap.Set("free", "hard_fail_ratio", evaluator.Sample{Value: d.hardFail})
	snap.Set("paid", "hard_fail_ratio", evaluator.Sample{Value: 0})
	var evs []evaluator.Event
	d.st, evs = evaluator.Step(d.p, d.st, evaluator.Input{Snapshot: snap}, now)
	if d.sender != nil {
		// As the live loop's alerting stage does.
		d.sender.NotifyIncidents(context.Background(), d.st.Alerts, alerting.IncidentsOf(d.st.Routes), now)
	}
	return evs
}

// run ticks every interval until ctx is done.
func (d *driver) run(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		for _, e := range d.step(time.Now()) {
			if e.Type == evaluator.EventAlert || e.Type == evaluator.EventLevel {
				d.log.Info("event", "type", e.Type, "name", e.Name, "state", e.State, "from", e.From, "to", e.To, "route", e.Route)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// alert returns a copy of the alert of rule on route free, nil if none.
func (d *driver) alert(rule string) *evaluator.Alert {
	d.mu.Lock()
	defer d.mu.Unlock()
	as := d.st.Alerts[rule+"/chat/free"]
	if as == nil {
		return nil
	}
	c := *as
	return &c
}

// TestScenarioAlerts checks, without Alertmanager, that the scenario's
// phases raise the alerts the integration test expects.
func TestScenarioAlerts(t *testing.T) {
	d := &driver{p: policy(t), log: slog.New(slog.DiscardHandler)}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	phase := func(v float64, ticks int) {
		d.set(v)
		for range ticks {
			now = now.Add(time.Second)
			d.step(now)
		}
	}
	status := func(rule string) string {
		if as := d.alert(rule); as != nil {
			return as.State.String()
		}
		return "none"
	}
	expect := func(phase string, want map[string]string) {
		t.Helper()
		for rule, st := range want {
			if got := status(rule); got != st {
				t.Errorf("%s: %s is %s, want %s", phase, rule, got, st)
			}
		}
	}
	phase(warm, 3)
	expect("warm", map[string]string{"HermesWarmStageInUse": "firing", "HermesRouteScoreDegraded": "none", "HermesRouteFailedOver": "none"})
	phase(degraded, 3)
	expect("degraded", map[string]string{"HermesWarmStageInUse": "inactive", "HermesRouteScoreDegraded": "firing"})
	if l := d.alert("HermesRouteScoreDegraded").Labels["level"]; l != "shed" {
		t.Errorf("degraded: level label %q, want shed", l)
	}
	phase(failing, 3)
	expect("failing", map[string]string{"HermesRouteScoreDegraded": "inactive", "HermesRouteFailedOver": "firing"})
	phase(degraded, 3)
	expect("degraded while failed over", map[string]string{"HermesRouteScoreDegraded": "firing", "HermesRouteFailedOver": "firing"})
	if l := d.alert("HermesRouteScoreDegraded").Labels["level"]; l != "failover" {
		t.Errorf("degraded while failed over: level label %q, want failover", l)
	}
	phase(healthy, 5)
	expect("healthy", map[string]string{"HermesRouteScoreDegraded": "inactive", "HermesRouteFailedOver": "inactive"})
}
