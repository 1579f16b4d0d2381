package evaluator

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/traffic"
)

// condCases are conditions of every kind of node the alert language's tree
// holds (rules.Expr), in int, float and mixed comparisons. rules/config's
// TestCoreMatchesExprLang holds the compiled conditions to expr-lang's
// evaluation; here, to themselves on a target's lazy environment.
var condCases = []string{
	`true`, `false`, `degraded`, `drill`, `!degraded`, `not drill`, `!(score > 1)`,
	`score < 60`, `score <= 60`, `score > 60.5`, `score >= 60`, `score == 60`, `score != 60`, `60 > score`,
	`stage == 0`, `stage != 1`, `stage < 1.5`, `stage >= 1`, `-1 < stage`, `stage == score`, `stage < score`,
	`failing_for >= 45`, `failing_for < 45.5`,
	`signals.error_body_ratio > 0.03`, `signals["p95_ratio"] >= 1`, `signals.unknown == 0`, `signals.unknown < 0`,
	`signals.quota_remaining != signals.quota_remaining`, `signals.p95_ratio == signals.p95_ratio`,
	`len(missing) > 0`, `len(evidence) >= 1`, `len(causes) == 0`, `len(missing) < 1.5`,
	`level == "failover" && stage == 0`, `level == "normal" and score < 75`, `level == "warm" || level == "shed"`,
	`level != "manual" or degraded`, `"manual" == level`, `route == "svc0-route1"`, `service != "svc1"`,
	`actuator == "split"`, `error != ""`, `route == service`,
	`level == "normal" && (signals.response_size_ratio < 0.6 || signals.response_size_ratio > 1.8)`,
	`"error_body_ratio" in missing`, `level in ["warm", "shed"]`, `score + 1 > 60`, `-score < -60`,
	`degraded == true`, `level < "m"`, `route != "route" && 1 % stage == 0 || score < 0`,
	`weights["svc0-route0"] > 50`, `"p95_ratio" in signals`, `len(signals) > 2`, `signals[level] > 0`,
	`(stage > 0 ? score : 100.0) < 60`, `len(waiting) > 0`,
}

// TestTargetEnvMatchesFull: for the conditions of the shipped policies and
// condCases, on random route, service and actuator environments, a
// target's lazy environment (targetEnv, whose route details enter only
// when read) gives what the whole environment alertEnv and routeDetails
// build from scratch gives (the same value, the same error), and full is
// that environment.
func TestTargetEnvMatchesFull(t *testing.T) {
	var conds []*alertRule
	for _, path := range []string{"../rules/hermes.yaml", "../rules/hermes-at-scale.yaml"} {
		cfg, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range cfg.Rules().Alerts {
			conds = append(conds, mustCompileCond(t, a.Expr))
		}
	}
	for _, src := range condCases {
		conds = append(conds, mustCompileCond(t, src))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	p := policyWithActuator(t)
	now := time.Unix(1e9, 0)
	for i := range 500 {
		rs := randomRouteState(rng)
		svc := rules.ServiceConfig{Name: "svc0"}
		want := alertEnv(p, State{}, svc, nil, "svc0-route1", nil, rs, map[string]float64{}, now)
		routeDetails(p, &want, rs, now)
		other := randomAlertEnv(rng)
		wantText := map[bool]string{true: fmt.Sprintf("%#v", want), false: fmt.Sprintf("%#v", other)}
		for _, r := range conds {
			for _, c := range []struct {
				route   bool
				scratch rules.AlertEnv
				t       targetEnv
			}{
				{true, want, targetEnv{env: alertEnv(p, State{}, svc, nil, "svc0-route1", nil, rs, map[string]float64{}, now), route: rs, p: p, now: now}},
				{false, other, targetEnv{env: other}},
			} {
				c.t.env.Signals = maps.Clone(c.t.env.Signals) // no map shared with the scratch environment
				wantRes, wantErr := r.cond.Eval(&c.scratch)
				res, err := r.cond.eval(&c.t)
				if fmt.Sprint(res, err) != fmt.Sprint(wantRes, wantErr) {
					t.Fatalf("case %d, %s on %#v: the lazy environment gave %v, %v; the whole one %v, %v",
						i, r.cfg.Expr, c.scratch, res, err, wantRes, wantErr)
				}
				if got, want := fmt.Sprintf("%#v", *c.t.full()), wantText[c.route]; got != want {
					t.Fatalf("case %d, %s: full is\n%s\nwant\n%s", i, r.cfg.Expr, got, want)
				}
			}
		}
	}
}

// TestRuleWithoutTreeIsRefused: a policy not built by the loader has no
// compiled conditions, and the core says so rather than never firing.
func TestRuleWithoutTreeIsRefused(t *testing.T) {
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	pol := cfg.Rules()
	pol.Alerts[0].Cond = nil
	if _, err := NewPolicy(pol); err == nil {
		t.Fatal("NewPolicy accepted an alert rule without its compiled condition")
	}
}

func mustCompileCond(t *testing.T, src string) *alertRule {
	t.Helper()
	tree, _, err := config.CompileAlertExpr(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	cond, err := CompileCondition(tree, src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return &alertRule{cfg: rules.AlertRuleConfig{Expr: src, Cond: tree}, cond: cond}
}

// condSignals are the signal names random environments use: shipped ones,
// with duplicates in a route's contributions, and one no rule reads.
var condSignals = []string{"error_body_ratio", "p95_ratio", "quota_remaining", "response_size_ratio", "throughput_ratio", "other"}

// pick is one of vs at random.
func pick[T any](rng *rand.Rand, vs ...T) T { return vs[rng.IntN(len(vs))] }

// condValue is a value at or near the shipped thresholds, NaN, or any.
func condValue(rng *rand.Rand) float64 {
	return pick(rng, math.NaN(), 0, 0.03, 0.0301, 0.15, 0.5, 0.6, 1, 1.5, 1.8, 2, 45, 59.99, 60, 75, 100, math.Inf(1), rng.Float64()*100)
}

// randomRouteState is a route state with random score, level, stage,
// missing signals and contributions.
func randomRouteState(rng *rand.Rand) *RouteState {
	rs := &RouteState{}
	rs.Level, rs.Stage = traffic.Level(rng.IntN(int(traffic.Manual)+1)), rng.IntN(3)
	rs.Score.Value = condValue(rng)
	for _, s := range condSignals {
		if rng.IntN(4) == 0 {
			rs.Score.Missing = append(rs.Score.Missing, s)
		}
	}
	for range rng.IntN(8) {
		c := Contribution{Signal: pick(rng, condSignals...), AlertValue: condValue(rng), Status: pick(rng, StatusOK, StatusOK, StatusMissing),
			Counted: rng.IntN(2) == 0, Reason: pick(rng, "", "3 of 300 calls"), Penalty: pick(rng, 0, 12.5), CapsAt: pick(rng, -1, 40.0),
			Floor: pick(rng, traffic.Normal, traffic.Failover)}
		rs.Score.Contributions = append(rs.Score.Contributions, c)
	}
	return rs
}

// randomAlertEnv is a service's or actuator's environment with random
// fields and signals.
func randomAlertEnv(rng *rand.Rand) rules.AlertEnv {
	env := rules.AlertEnv{Service: pick(rng, "", "svc1"), Actuator: pick(rng, "", "split"), Score: condValue(rng),
		Level: pick(rng, "normal", "warm", "manual"), Stage: rng.IntN(3), Degraded: rng.IntN(2) == 0, Drill: rng.IntN(2) == 0,
		FailingFor: condValue(rng), Error: pick(rng, "", "exit 1"), Signals: map[string]float64{},
		Weights: pick(rng, map[string]int(nil), map[string]int{"svc0-route0": 90})}
	for _, s := range condSignals {
		if rng.IntN(2) == 0 {
			env.Signals[s] = condValue(rng)
		}
	}
	if rng.IntN(2) == 0 {
		env.Missing = []string{pick(rng, condSignals...)}
	}
	return env
}
