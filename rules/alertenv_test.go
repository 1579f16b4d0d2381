package rules

import "testing"

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
