package evaluator

import (
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/traffic"
)

// TestStageWithoutCallsHeldToItsProbes: a failback stage the plan gives a
// share, whose callers send nothing (a quiet night), is judged by its
// probes alone, and held as a route without a share is: it passes only
// when its probe results would have shown the failure that moved it. A
// route failed over on 5 % of its calls answering 503 waits, since a
// dozen passing end-to-end results cannot rule out 5 %; one failed over
// on 40 % error templates goes on, since they rule that out.
func TestStageWithoutCallsHeldToItsProbes(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Unix(0, 0).UTC()
	observe := p.Config.Failback.Observe
	now := t0.Add(time.Hour)
	over := map[string]any{}
	for _, sig := range p.Config.Signals {
		if sig.RequiresTraffic {
			over["free."+sig.Name] = Sample{Status: StatusMissing, Counted: true}
		}
	}
	over["free.probe_e2e_success"] = Sample{Value: 1, Volume: 12, Counted: true}
	over["free.probe_success"] = Sample{Value: 1, Volume: 60, Counted: true}
	sn := snap(p, now, over)
	free := p.routeIndex["free"]
	for _, c := range []struct {
		name    string
		cause   Cause
		advance bool
	}{
		{"5 % of calls answering 503", Cause{Signal: "hard_fail_ratio", Share: 0.05}, false},
		{"40 % error templates", Cause{Signal: "error_body_ratio", Share: 0.4}, true},
	} {
		rs := RouteState{
			SavedRoute: SavedRoute{Level: traffic.Failover, Since: t0, Stage: 1, StageSince: now.Add(-observe - time.Minute)},
			Causes:     []Cause{c.cause},
			Move:       &Move{Incident: t0, At: t0, To: traffic.Failover, QuietSince: t0},
		}
		sc := newRouteSamples(p, sn).score(free, false, scopeAt(&rs, now))
		next, _ := decideRoute(p, rs, sc, false, now)
		if got := next.Stage > rs.Stage; got != c.advance {
			t.Errorf("%s, no calls at stage 1 for %s: advanced %v, want %v (score %.1f, low %.1f: %v)",
				c.name, observe+time.Minute, got, c.advance, sc.Value, sc.Low, sc.Reasons())
		}
		if c.advance {
			continue
		}
		// What explain and the status page say of the wait: the probes,
		// not calls that never come.
		if ws := Waiting(p, next, now); len(ws) == 0 || ws[0].Kind != WaitFailback ||
			!strings.Contains(ws[0].Text, "its callers send no calls: the next stage once its probes show a score ≥ 80") {
			t.Errorf("%s: waiting %q, want the stage held to its probes", c.name, WaitTexts(ws))
		}
	}
}
