package evaluator

import (
	"github.com/hermes-failover/hermes/traffic"

	"fmt"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules/config"
)

func defaultPolicy(t testing.TB) *Policy {
	t.Helper()
	return policyOf(t, nil)
}

// policyWithActuator is the shipped policy with one actuator, "split", the
// target of its actuator-scope alerts.
func policyWithActuator(t testing.TB) *Policy {
	t.Helper()
	return policyOf(t, []config.ActuatorConfig{{Name: "split", Type: "file"}})
}

// policyOf is the shipped policy with the given actuators.
func policyOf(t testing.TB, acts []config.ActuatorConfig) *Policy {
	t.Helper()
	return editedPolicy(t, func(c *config.Config) { c.Actuators = acts })
}

// editedPolicy is the shipped policy changed by edit, validated: the
// core's own tests' testenv.DefaultPolicy. (The helpers of internal/testenv
// import this package, so its own tests cannot use them.)
func editedPolicy(t testing.TB, edit func(*config.Config)) *Policy {
	t.Helper()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	edit(cfg)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy(cfg.Rules())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// snap builds a snapshot where every signal of every route is healthy,
// then applies overrides "route.signal" → value (NaN-free); "route.signal"
// → missing when the value is the string "missing".
func snap(p *Policy, t time.Time, over map[string]any) Snapshot {
	s := Snapshot{Time: t}
	healthy := map[string]float64{
		"soft_fail_ratio": 0.02, "hard_fail_ratio": 0.0002, "empty_ratio": 0, "error_body_ratio": 0,
		"status_422_ratio": 0.002, "retry_ratio": 0.01, "p99_ratio": 1, "p95_ratio": 1, "throughput_ratio": 1,
		"quota_remaining": 0.8, "quota_forecast": 0.7, "probe_success": 1, "probe_e2e_success": 1, "quality_score": 0.95,
	}
	for _, r := range p.Routes() {
		for _, sig := range p.Config.Signals {
			s.Set(r, sig.Name, Sample{Value: healthy[sig.Name]})
		}
	}
	for k, v := range over {
		var route, sig string
		fmt.Sscanf(k, "%s", &route)
		for i := 0; i < len(k); i++ {
			if k[i] == '.' {
				route, sig = k[:i], k[i+1:]
				break
			}
		}
		switch v := v.(type) {
		case float64:
			s.Set(route, sig, Sample{Value: v})
		case string:
			s.Set(route, sig, Sample{Status: StatusMissing, Reason: v})
		case Sample:
			s.Set(route, sig, v)
		}
	}
	return s
}

func TestScore(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Unix(0, 0)
	cases := []struct {
		name    string
		over    map[string]any
		idle    bool
		want    float64
		missing int
		floor   traffic.Level
		imm     traffic.Level
	}{
		{"healthy", nil, false, 100, 0, traffic.Normal, traffic.Normal},
		{"soft fail 11%", map[string]any{"free.soft_fail_ratio": 0.11}, false, 82, 0, traffic.Normal, traffic.Normal},
		{"soft fail capped at 100 points", map[string]any{"free.soft_fail_ratio": 0.9}, false, 0, 0, traffic.Normal, traffic.Normal},
		{"hard failure is a veto", map[string]any{"free.hard_fail_ratio": 0.25}, false, 0, 0, traffic.Normal, traffic.Failover},
		{"latency alone never below 70", map[string]any{"free.p99_ratio": 10.0}, false, 70, 0, traffic.Normal, traffic.Normal},
		{"quota under 5% prepares", map[string]any{"free.quota_remaining": 0.04}, false, 100, 0, traffic.Warm, traffic.Warm},
		{"quota under 2% forces failover", map[string]any{"free.quota_remaining": 0.01}, false, 100, 0, traffic.Failover, traffic.Failover},
		{"missing probe holds", map[string]any{"free.probe_success": "no data"}, false, 100, 1, traffic.Normal, traffic.Normal},
		{"missing optional signal does not hold", map[string]any{"free.quality_score": "no data"}, false, 100, 0, traffic.Normal, traffic.Normal},
		{"idle route: traffic signals are not missing", map[string]any{"free.soft_fail_ratio": "NaN", "free.p99_ratio": "no data"}, true, 100, 0, traffic.Normal, traffic.Normal},
		{"busy route: traffic signals missing hold", map[string]any{"free.soft_fail_ratio": "NaN"}, false, 100, 1, traffic.Normal, traffic.Normal},
		{"failed probes judge an idle route", map[string]any{"free.probe_success": 0.2, "free.soft_fail_ratio": "NaN"}, true, 0, 0, traffic.Normal, traffic.Normal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := ComputeScore("free", snap(p, t0, c.over), p, c.idle)
			if diff := sc.Value - c.want; diff > 0.01 || diff < -0.01 {
				t.Errorf("score = %.2f, want %.2f (reasons %v)", sc.Value, c.want, sc.Reasons())
			}
			if len(sc.Missing) != c.missing {
				t.Errorf("missing = %v, want %d", sc.Missing, c.missing)
			}
			if sc.Floor != c.floor || sc.ImmediateLevel != c.imm {
				t.Errorf("floor %s immediate %s, want %s %s", sc.Floor, sc.ImmediateLevel, c.floor, c.imm)
			}
		})
	}
}

func TestScoreReasonsExplainPenalty(t *testing.T) {
	p := defaultPolicy(t)
	sc := ComputeScore("free", snap(p, time.Unix(0, 0), map[string]any{"free.soft_fail_ratio": 0.11}), p, false)
	if r := sc.Reasons(); len(r) != 1 || r[0] != "soft_fail_ratio 0.11 (-18.0)" {
		t.Fatalf("reasons = %q", r)
	}
}

func TestPlanService(t *testing.T) {
	p := defaultPolicy(t)
	svc := p.Config.Services[0]
	rs := func(l traffic.Level, stage int, score float64) *RouteState {
		return &RouteState{SavedRoute: SavedRoute{Level: l, Stage: stage}, Score: Score{Value: score}}
	}
	cases := []struct {
		name              string
		free, std, prem   *RouteState
		want              [3]int
		degraded, retries bool
	}{
		{"all normal", rs(traffic.Normal, 0, 100), rs(traffic.Normal, 0, 100), rs(traffic.Normal, 0, 100), [3]int{100, 0, 0}, false, true},
		{"warm", rs(traffic.Warm, 0, 80), rs(traffic.Normal, 0, 100), rs(traffic.Normal, 0, 100), [3]int{95, 5, 0}, false, true},
		{"shed", rs(traffic.Shed, 0, 70), rs(traffic.Normal, 0, 100), rs(traffic.Normal, 0, 100), [3]int{50, 50, 0}, false, true},
		{"failover", rs(traffic.Failover, 0, 10), rs(traffic.Normal, 0, 100), rs(traffic.Normal, 0, 100), [3]int{0, 100, 0}, false, false},
		{"failback stage 1", rs(traffic.Failover, 1, 90), rs(traffic.Normal, 0, 100), rs(traffic.Normal, 0, 100), [3]int{10, 90, 0}, false, false},
		{"failback stage 3", rs(traffic.Failover, 3, 90), rs(traffic.Normal, 0, 100), rs(traffic.Normal, 0, 100), [3]int{50, 50, 0}, false, false},
		{"cascade", rs(traffic.Failover, 0, 10), rs(traffic.Failover, 0, 20), rs(traffic.Normal, 0, 100), [3]int{0, 0, 100}, false, false},
		{"cascade with shed backup", rs(traffic.Failover, 0, 10), rs(traffic.Shed, 0, 70), rs(traffic.Normal, 0, 100), [3]int{0, 50, 50}, false, false},
		{"backups failed: warm primary keeps all", rs(traffic.Warm, 0, 80), rs(traffic.Failover, 0, 20), rs(traffic.Manual, 0, 0), [3]int{100, 0, 0}, false, true},
		{"manual primary", rs(traffic.Manual, 0, 30), rs(traffic.Normal, 0, 100), rs(traffic.Normal, 0, 100), [3]int{0, 100, 0}, false, false},
		{"every route bad: least bad serves", rs(traffic.Failover, 0, 10), rs(traffic.Failover, 0, 35), rs(traffic.Manual, 0, 20), [3]int{0, 100, 0}, true, false},
		{"every route bad: tie goes to the primary", rs(traffic.Failover, 0, 0), rs(traffic.Failover, 0, 0), rs(traffic.Failover, 0, 0), [3]int{100, 0, 0}, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := PlanService(p, svc, map[string]*RouteState{"free": c.free, "paid-standard": c.std, "paid-premium": c.prem})
			got := [3]int{st.Weights["free"], st.Weights["paid-standard"], st.Weights["paid-premium"]}
			if got != c.want || st.Degraded != c.degraded || st.RetriesEnabled != c.retries {
				t.Errorf("weights %v degraded %v retries %v, want %v %v %v", got, st.Degraded, st.RetriesEnabled, c.want, c.degraded, c.retries)
			}
			if got[0]+got[1]+got[2] != 100 {
				t.Errorf("weights %v do not sum to 100", got)
			}
		})
	}
}
