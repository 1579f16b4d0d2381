package config_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// oracleCase is a condition compiled twice: by the loader into the
// model's tree and by the core into closures (what the live path
// evaluates), and by expr-lang into its own program (the reference).
type oracleCase struct {
	src  string
	core evaluator.Condition
	// ref and plain are expr-lang's program optimised (as it compiles
	// by default, and as the loader checks a condition) and not (the
	// tree the loader converts).
	ref, plain *vm.Program
}

// compileOracle compiles src both ways; ok false when the loader refuses
// it (refused is then the loader's error).
func compileOracle(t testing.TB, src string) (c oracleCase, refused error) {
	t.Helper()
	tree, _, err := config.CompileAlertExpr(src)
	if err != nil {
		return c, err
	}
	core, err := evaluator.CompileCondition(tree, src)
	if err != nil {
		t.Fatalf("%s: the loader's tree does not compile in the core: %v", src, err)
	}
	// The reference as expr-lang runs it by default (optimised).
	ref, err := expr.Compile(src, expr.Env(config.AlertExprEnv(&rules.AlertEnv{})), expr.AsBool())
	if err != nil {
		t.Fatalf("%s: the loader accepted what expr-lang refuses: %v", src, err)
	}
	plain, err := expr.Compile(src, expr.Env(config.AlertExprEnv(&rules.AlertEnv{})), expr.AsBool(), expr.Optimize(false))
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return oracleCase{src: src, core: core, ref: ref, plain: plain}, nil
}

// agree fails t unless the core and expr-lang give the same value and the
// same error on env. Where expr-lang's optimiser drops an operand that
// fails (`1 % stage == 0 and false` is false, unoptimised the modulo
// errs), the core evaluates every operand it reaches, as the unoptimised
// program does.
func (c *oracleCase) agree(t testing.TB, env *rules.AlertEnv) {
	t.Helper()
	want, wantErr := vm.Run(c.ref, config.AlertExprEnv(env))
	if plain, plainErr := vm.Run(c.plain, config.AlertExprEnv(env)); plainErr != nil && wantErr == nil {
		want, wantErr = plain, plainErr
	}
	got, err := c.core.Eval(env)
	if wantErr != nil {
		// The same message; the place may differ, as expr-lang's
		// optimiser reorders a long condition (TestRuntimeErrorText
		// checks the place on conditions it keeps as written).
		if err == nil || message(err) != message(wantErr) {
			t.Fatalf("%s on %+v: the core gave %v, %v; expr-lang the error %q", c.src, *env, got, err, wantErr)
		}
		return
	}
	if err != nil || want != got {
		t.Fatalf("%s on %+v: the core gave %v, %v; expr-lang %v", c.src, *env, got, err, want)
	}
}

// TestCoreMatchesExprLang is the oracle test of the alert language: on
// the shipped policies' conditions, hand-written cases of every kind of
// node and 3,000 conditions generated from the language's grammar
// (genCond), the core's compiled condition gives what expr-lang's own
// program gives (the same value, the same error), on random environments
// of every scope.
func TestCoreMatchesExprLang(t *testing.T) {
	var srcs []string
	for _, path := range []string{"../hermes.yaml", "../hermes-at-scale.yaml"} {
		cfg, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range cfg.Alerts {
			srcs = append(srcs, a.Expr)
		}
	}
	srcs = append(srcs, oracleCases...)
	rng := rand.New(rand.NewPCG(3, 7))
	for n := 0; n < 3000; {
		src := genCond(rng, 4)
		if _, err := expr.Compile(src, expr.Env(config.AlertExprEnv(&rules.AlertEnv{})), expr.AsBool()); err != nil {
			continue // expr-lang refuses it too (1 % 0 folded)
		}
		srcs = append(srcs, src)
		n++
	}
	envs := make([]rules.AlertEnv, 150)
	for i := range envs {
		envs[i] = randomEnv(rng)
	}
	for _, src := range srcs {
		c, err := compileOracle(t, src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		for i := range envs {
			c.agree(t, &envs[i])
		}
	}
}

// oracleCases are conditions of every kind of node rules.Expr holds.
var oracleCases = []string{
	`true`, `!degraded`, `not drill`, `score < 60`, `60 > score`, `stage == score`, `stage < 1.5`, `-stage < -1`,
	`+score > 1`, `signals.p95_ratio > 1.5`, `signals["quota_remaining"] < 0.15`, `signals.unknown == 0`,
	`signals[level] >= 0`, `weights["free"] > 50`, `weights[route] == 0`, `len(missing) > 0`, `len(signals) > 2`,
	`len(weights) == 0`, `len(route) == 4`, `len("系统繁忙") == 4`, `"p95_ratio" in missing`, `"p95_ratio" not in missing`,
	`"p95_ratio" in signals`, `route in weights`, `level in ["warm", "shed", route]`, `level contains "ar"`,
	`route startsWith "fr"`, `route endsWith "ee"`, `route + "/" + service == "free/chat"`, `level < "m"`, `level >= route`,
	`degraded == drill`, `degraded != true`, `score + 1 > 60`, `score - stage * 2 < 50`, `stage * stage == 4`,
	`stage + weight - 1 >= 0`, `score / 2 > 30`, `stage / 2 == 0.5`, `1 / stage > 0`, `stage ** 2 > 3`, `2 ^ stage == 4`,
	`weight % 7 == 0`, `1 % stage == 0`, `route != "route" && 1 % stage == 0 || score < 0`, `stage > 0 && 10 % stage == 0`,
	`(stage > 0 ? score : 100.0) < 60`, `(drill ? level : "x") == "normal"`, `(degraded ? stage : weight) > 0`,
	`len(stage > 0 ? missing : causes) > 0`, `stage_observed >= 2 || (stage_observed >= 1 && out_of_reach)`,
	`len(moved_by) > 0 && moved_to == "failover" && moved_at != ""`, `aborted != "" && len(waiting) > 0`,
	`failing_for >= 45 and error contains "exit"`, `actuator == "split" or len(evidence) > 1`,
	"level == \"failover\"\n  && 1 % stage == 0",
}

// message is an error's message without its place.
func message(err error) string {
	m, _, _ := strings.Cut(err.Error(), " (")
	return m
}

// TestRuntimeErrorText: a run-time error reads as expr-lang writes it, with
// its line:column and the line under a caret (what alert_error events and
// the status page show).
func TestRuntimeErrorText(t *testing.T) {
	env := rules.AlertEnv{Route: "free", Level: "failover"}
	for _, src := range []string{`route != "route" && 1 % stage == 0 || score < 0`, "level == \"failover\"\n  && 1 % stage == 0",
		"stage > 0 || weight % stage > 0"} {
		c, err := compileOracle(t, src)
		if err != nil {
			t.Fatal(err)
		}
		_, want := vm.Run(c.ref, config.AlertExprEnv(&env))
		_, got := c.core.Eval(&env)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%s: the core's error is\n%v\nexpr-lang's\n%v", src, got, want)
		}
	}
}

// TestUnsupportedConditionsAreRefused: what expr-lang accepts but the
// model's tree does not hold is refused by the loader, with its place.
func TestUnsupportedConditionsAreRefused(t *testing.T) {
	for src, want := range map[string]string{
		`signals?.p95_ratio > 1`:             "optional chaining",
		`let s = score; s < 60`:              "(1:",
		`any(missing, # == "p95_ratio")`:     "the function any",
		`missing[0] == "p95_ratio"`:          "operand types",
		`stage in [1, 2]`:                    "holds strings only",
		`route matches "^f"`:                 "the operator matches",
		`abs(score) > 1`:                     "the function abs",
		`missing == causes`:                  "operand types",
		`(stage > 0 ? score : 100) < 60`:     "type interface",
		`route == nil`:                       "(1:",
		`score < 60 && level == "x" ?? true`: "(1:",
	} {
		if _, err := expr.Compile(src, expr.Env(config.AlertExprEnv(&rules.AlertEnv{})), expr.AsBool()); err != nil {
			t.Errorf("%s: expr-lang refuses it (%v): the case tests nothing", src, err)
			continue
		}
		_, _, err := config.CompileAlertExpr(src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CompileAlertExpr(%q) = %v, want an error containing %q", src, err, want)
		}
	}
}

// FuzzCoreMatchesExprLang: any text the loader accepts as a condition,
// the core evaluates as expr-lang does, on random environments.
func FuzzCoreMatchesExprLang(f *testing.F) {
	for _, src := range oracleCases {
		f.Add(src, uint64(1))
	}
	f.Fuzz(func(t *testing.T, src string, seed uint64) {
		if _, err := expr.Compile(src, expr.Env(config.AlertExprEnv(&rules.AlertEnv{})), expr.AsBool()); err != nil {
			return // not a condition
		}
		c, err := compileOracle(t, src)
		if err != nil {
			return // outside the tree, refused
		}
		rng := rand.New(rand.NewPCG(seed, 1))
		for range 20 {
			env := randomEnv(rng)
			c.agree(t, &env)
		}
	})
}

// genCond is a random boolean condition of the alert language, nested at
// most depth deep, of every kind of node rules.Expr holds.
func genCond(rng *rand.Rand, depth int) string {
	if depth == 0 || rng.IntN(3) == 0 {
		switch rng.IntN(9) {
		case 0:
			return pick(rng, "degraded", "drill", "out_of_reach", "true", "false")
		case 1:
			return genString(rng, 1) + pick(rng, " == ", " != ", " < ", " >= ", " contains ", " startsWith ", " endsWith ") + genString(rng, 1)
		case 2:
			return genString(rng, 1) + pick(rng, " in ", " not in ") +
				pick(rng, "missing", "causes", "moved_by", "signals", "weights", `["warm", "shed", route]`)
		case 3:
			return pick(rng, "degraded", "drill") + pick(rng, " == ", " != ") + pick(rng, "drill", "true", "out_of_reach")
		default:
			return genNumber(rng, 2) + pick(rng, " == ", " != ", " < ", " <= ", " > ", " >= ") + genNumber(rng, 2)
		}
	}
	switch rng.IntN(4) {
	case 0:
		return pick(rng, "!", "not ") + "(" + genCond(rng, depth-1) + ")"
	case 1:
		return "(" + genCond(rng, depth-1) + " ? " + genCond(rng, depth-1) + " : " + genCond(rng, depth-1) + ")"
	default:
		return "(" + genCond(rng, depth-1) + pick(rng, " && ", " and ", " || ", " or ") + genCond(rng, depth-1) + ")"
	}
}

// genNumber is a numeric operand: a number variable, a signal or weight,
// a length, a literal, or arithmetic of those.
func genNumber(rng *rand.Rand, depth int) string {
	if depth > 0 && rng.IntN(3) == 0 {
		if rng.IntN(4) == 0 {
			return "(" + genInt(rng) + " % " + genInt(rng) + ")"
		}
		return "(" + genNumber(rng, depth-1) + pick(rng, " + ", " - ", " * ", " / ", " ** ") + genNumber(rng, depth-1) + ")"
	}
	if rng.IntN(3) == 0 {
		return genInt(rng)
	}
	sig := pick(rng, oracleSignals...)
	return pick(rng, "score", "failing_for", "stage_for", "observe", "stage_observed", "signals."+sig, `signals["`+sig+`"]`,
		"signals[level]", "0.03", "59.99", "1.5", "-score", "-0.5")
}

// genInt is an integer operand.
func genInt(rng *rand.Rand) string {
	return pick(rng, "stage", "weight", `weights["free"]`, "weights[route]", "len(missing)", "len(evidence)", "len(causes)",
		"len(waiting)", "len(signals)", "len(route)", "0", "1", "2", "-1", "60", "-stage")
}

// genString is a string operand: a string variable, a literal, or two
// joined.
func genString(rng *rand.Rand, depth int) string {
	if depth > 0 && rng.IntN(5) == 0 {
		return "(" + genString(rng, depth-1) + " + " + genString(rng, depth-1) + ")"
	}
	return pick(rng, "route", "service", "level", "actuator", "error", "moved_to", "moved_at", "aborted",
		`""`, `"free"`, `"chat"`, `"normal"`, `"failover"`, `"split"`, `"exit 1"`, `"p95_ratio"`, `"ar"`)
}

// oracleSignals are the signal names random environments use, and one
// none has.
var oracleSignals = []string{"error_body_ratio", "p95_ratio", "quota_remaining", "response_size_ratio", "other"}

// pick is one of vs at random.
func pick[T any](rng *rand.Rand, vs ...T) T { return vs[rng.IntN(len(vs))] }

// value is a number at or near the shipped thresholds, NaN, infinite, or
// any.
func value(rng *rand.Rand) float64 {
	return pick(rng, math.NaN(), 0, -0.5, 0.03, 0.0301, 0.15, 0.5, 1, 1.5, 2, 45, 59.99, 60, 75, 100,
		math.Inf(1), math.Inf(-1), rng.Float64()*100)
}

// randomEnv is an environment of a route, service or actuator with random
// values in every variable.
func randomEnv(rng *rand.Rand) rules.AlertEnv {
	some := func(vs ...string) []string {
		var l []string
		for _, v := range vs {
			if rng.IntN(3) == 0 {
				l = append(l, v)
			}
		}
		return l
	}
	env := rules.AlertEnv{Route: pick(rng, "", "free", "paid"), Service: pick(rng, "", "chat"), Score: value(rng),
		Level: pick(rng, "normal", "warm", "shed", "failover", "manual"), Stage: rng.IntN(4) - 1,
		Missing: some(oracleSignals...), Degraded: rng.IntN(2) == 0, Evidence: some("a", "b"), Causes: some("p95_ratio", "c"),
		MovedBy: some("p95_ratio"), MovedTo: pick(rng, "", "failover"), MovedAt: pick(rng, "", "2026-12-06T10:00:00Z"),
		Aborted: pick(rng, "", "stage 2"), StageFor: value(rng), Observe: value(rng), StageObserved: value(rng),
		OutOfReach: rng.IntN(2) == 0, Waiting: some("w"), Weight: pick(rng, 0, 5, 14, 100), Drill: rng.IntN(2) == 0,
		Actuator: pick(rng, "", "split"), FailingFor: value(rng), Error: pick(rng, "", "exit 1")}
	if rng.IntN(4) > 0 {
		env.Signals = map[string]float64{}
		for _, s := range oracleSignals[:4] {
			if rng.IntN(3) > 0 {
				env.Signals[s] = value(rng)
			}
		}
		if rng.IntN(3) == 0 {
			env.Signals[env.Level] = value(rng)
		}
	}
	if rng.IntN(2) == 0 {
		env.Weights = map[string]int{"free": pick(rng, 0, 50, 95), "paid": pick(rng, 0, 5)}
	}
	return env
}
