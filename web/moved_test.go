package web

import (
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner"
)

// TestRouteRowSaysWhatMovedIt: a failed-over route's row says what moved
// it, as it was at the move, a minute later when its score shows nothing
// of it (the failover's hard failures are gone from its calls).
func TestRouteRowSaysWhatMovedIt(t *testing.T) {
	p := testenv.DefaultPolicy(t)
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	snap := testenv.Healthy(p, t0)
	snap.Set("free", "hard_fail_ratio", evaluator.Sample{Value: 0.5})
	s, _ := evaluator.Step(p, evaluator.State{}, evaluator.Input{Snapshot: snap}, t0)
	t1 := t0.Add(time.Minute)
	s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: testenv.Healthy(p, t1)}, t1)
	st := StatusOf(runner.View{Ticked: true, Ready: true, LastTick: t1, Config: &config.Config{Policy: *p.Config}, Policy: p, State: s})
	srv := serve(t, &statusBackend{st: st}, "")
	_, body := do(t, "GET", srv.URL+"/", "", "")
	i := strings.Index(body, `id="route-free"`)
	j := strings.Index(body, `id="route-paid-standard"`)
	if i < 0 || j < i {
		t.Fatalf("no row of free:\n%s", body)
	}
	want := `<li class="cause">moved to failover at 2026-12-01T03:00:00Z (immediate (cap or floor, no dwell)): hard_fail_ratio 0.5 (-100.0); hard_fail_ratio 0.5 caps score at 0`
	if row := body[i:j]; !strings.Contains(row, want) {
		t.Errorf("the failed-over row lacks %q:\n%s", want, row)
	}
}
