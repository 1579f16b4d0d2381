package rules

import (
	"fmt"
	"testing"
)

func TestAlertExprReadsClock(t *testing.T) {
	for src, want := range map[string]bool{
		`score < 60`:                            false,
		`signals.p95_ratio > 1.5 && stage == 0`: false,
		`now().Hour() < 6 && score < 60`:        true,
		`date("2026-01-01") < now()`:            true,
	} {
		prog, err := CompileAlertExpr(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := AlertExprReadsClock(prog); got != want {
			t.Errorf("AlertExprReadsClock(%s) = %v, want %v", src, got, want)
		}
	}
}

func TestAlertExprInputs(t *testing.T) {
	for src, want := range map[string]string{
		`score < 60`:                        `{Fields:[score] Signals:[] AllSignals:false All:false}`,
		`level == "failover" && stage == 0`: `{Fields:[level stage] Signals:[] AllSignals:false All:false}`,
		`signals.p95_ratio > 1.5 || signals["p95_ratio"] > 2 && signals.x < 1`: `{Fields:[] Signals:[p95_ratio x] AllSignals:false All:false}`,
		`len(missing) > 0`:                   `{Fields:[missing] Signals:[] AllSignals:false All:false}`,
		`signals[route] > 1`:                 `{Fields:[route] Signals:[] AllSignals:true All:false}`,
		`len(signals) > 3 && signals.a > 1`:  `{Fields:[] Signals:[a] AllSignals:true All:false}`,
		`any(evidence, # != "") && degraded`: `{Fields:[evidence degraded] Signals:[] AllSignals:false All:false}`,
		`$env.score < 60`:                    `{Fields:[] Signals:[] AllSignals:false All:true}`,
		`let s = score; s < 60`:              `{Fields:[score] Signals:[] AllSignals:false All:true}`,
	} {
		prog, err := CompileAlertExpr(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		in := AlertExprInputs(prog)
		if in.Signals == nil {
			in.Signals = []string{}
		}
		if in.Fields == nil {
			in.Fields = []string{}
		}
		if got := fmt.Sprintf("%+v", in); got != want {
			t.Errorf("AlertExprInputs(%s) = %s, want %s", src, got, want)
		}
	}
}
