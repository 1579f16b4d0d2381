package evaluator

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/expr-lang/expr/vm"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/traffic"
)

// condCases are conditions covering every shape nativeCond knows, in
// int, float and mixed comparisons, and some it leaves to the expr program.
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
	// Left to the expr program.
	`"error_body_ratio" in missing`, `level in ["warm", "shed"]`, `score + 1 > 60`, `-score < -60`,
	`degraded == true`, `level < "m"`, `signals?.p95_ratio > 1`, `route != "route" && 1 % stage == 0 || score < 0`,
	`let s = score; s < 60`, `weights["svc0-route0"] > 50`, `any(missing, # == "p95_ratio")`,
	`missing[0] == "p95_ratio"`,
}

// TestTargetEnvMatchesExpr compares targetEnv with the plain computation:
// for the conditions of the shipped policies and condCases, on random
// route, service and actuator environments, eval gives what the expr
// program gives on the environment alertEnv and routeDetails build from
// scratch (the same value, the same error), and full is that environment.
func TestTargetEnvMatchesExpr(t *testing.T) {
	var conds []*alertRule
	for _, path := range []string{"../rules/hermes.yaml", "../rules/hermes-at-scale.yaml"} {
		cfg, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range cfg.Alerts {
			conds = append(conds, mustCompileCond(t, a.Expr))
		}
	}
	for _, src := range condCases {
		conds = append(conds, mustCompileCond(t, src))
	}
	matchExpr(t, conds, rand.New(rand.NewPCG(1, 2)), 500)
}

// matchExpr checks conds on n random route, service and actuator
// environments: eval gives what the expr program gives on the
// environment alertEnv and routeDetails build from scratch (the same
// value, the same error), and full is that environment.
func matchExpr(t *testing.T, conds []*alertRule, rng *rand.Rand, n int) {
	t.Helper()
	var plain, fast vm.VM
	p := policyWithActuator(t)
	now := time.Unix(1e9, 0)
	for i := range n {
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
				wantRes, wantErr := plain.Run(r.cond.prog, &c.scratch)
				res, err := r.cond.eval(&c.t, &fast)
				if fmt.Sprintf("%T %v %v", res, res, err) != fmt.Sprintf("%T %v %v", wantRes, wantRes, wantErr) {
					t.Fatalf("case %d, %s on %#v: eval gave %T %v, %v; the expr program %T %v, %v",
						i, r.cfg.Expr, c.scratch, res, res, err, wantRes, wantRes, wantErr)
				}
				if got, want := fmt.Sprintf("%#v", *c.t.full()), wantText[c.route]; got != want {
					t.Fatalf("case %d, %s: full is\n%s\nwant\n%s", i, r.cfg.Expr, got, want)
				}
			}
		}
	}
}

// TestGeneratedConditionsMatchExpr: on 2,000 conditions generated from the
// alert language's grammar (genCond), most in the shapes nativeCond
// knows, some not, the compiled condition (alertCond) gives what expr's
// program gives, on random environments.
func TestGeneratedConditionsMatchExpr(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	var conds []*alertRule
	native := 0
	for range 2000 {
		r := mustCompileCond(t, genCond(rng, 3))
		if r.cond.native != nil {
			native++
		}
		conds = append(conds, r)
	}
	if native < len(conds)/2 || native == len(conds) {
		t.Fatalf("%d of %d generated conditions are native: the generator no longer covers both evaluations", native, len(conds))
	}
	matchExpr(t, conds, rng, 10)
}

// genCond is a random boolean condition of the alert language, nested at
// most depth deep: the variables, literals and operators nativeCond knows,
// and now and then a shape it leaves to expr (arithmetic, in, a
// comparison of booleans).
func genCond(rng *rand.Rand, depth int) string {
	if depth == 0 || rng.IntN(3) == 0 {
		switch rng.IntN(8) {
		case 0:
			return pick(rng, "degraded", "drill", "true", "false")
		case 1:
			return genString(rng) + pick(rng, " == ", " != ") + genString(rng)
		case 2:
			return pick(rng, genNumber(rng)+" + 1 > "+genNumber(rng), `"`+pick(rng, condSignals...)+`" in missing`,
				"degraded == drill", `level in ["warm", "shed"]`)
		default:
			return genNumber(rng) + pick(rng, " == ", " != ", " < ", " <= ", " > ", " >= ") + genNumber(rng)
		}
	}
	switch rng.IntN(3) {
	case 0:
		return pick(rng, "!", "not ") + "(" + genCond(rng, depth-1) + ")"
	default:
		return "(" + genCond(rng, depth-1) + pick(rng, " && ", " and ", " || ", " or ") + genCond(rng, depth-1) + ")"
	}
}

// genNumber is a numeric operand: a number variable, a signal, a list's
// length or a literal.
func genNumber(rng *rand.Rand) string {
	sig := pick(rng, condSignals...)
	return pick(rng, "score", "stage", "failing_for", "signals."+sig, `signals["`+sig+`"]`,
		"len(missing)", "len(evidence)", "len(causes)", "0", "1", "2", "-1", "0.03", "60", "59.99", "1.5")
}

// genString is a string operand: a string variable or a literal.
func genString(rng *rand.Rand) string {
	return pick(rng, "route", "service", "level", "actuator", "error",
		`""`, `"svc0-route1"`, `"svc1"`, `"normal"`, `"failover"`, `"split"`, `"exit 1"`)
}

// TestShippedConditionsAreNative keeps the shipped policies' conditions in
// the shapes nativeCond knows: their expr programs cost most of the alert
// rules' time at 10,000 routes.
func TestShippedConditionsAreNative(t *testing.T) {
	for _, path := range []string{"../rules/hermes.yaml", "../rules/hermes-at-scale.yaml"} {
		cfg, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range cfg.Alerts {
			if mustCompileCond(t, a.Expr).cond.native == nil {
				t.Errorf("%s: %s %q runs its expr program", path, a.Name, a.Expr)
			}
		}
	}
	for _, src := range condCases {
		if mustCompileCond(t, src).cond.native == nil {
			t.Logf("left to expr: %s", src)
		}
	}
}

func mustCompileCond(t *testing.T, src string) *alertRule {
	t.Helper()
	cond, err := compileCond(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return &alertRule{cfg: rules.AlertRuleConfig{Expr: src}, cond: cond}
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
