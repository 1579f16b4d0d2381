package detect

import (
	"strings"
	"testing"
	"time"
)

func TestParseTruth(t *testing.T) {
	got, err := ParseTruth([]byte("# Scenario x\n# degraded: free 1h0m0s 1h20m0s\n# degraded: paid 1h30m0s 4h0m0s\ninterval: 15s\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Window{{"free", time.Hour, 80 * time.Minute}, {"paid", 90 * time.Minute, 4 * time.Hour}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ParseTruth = %+v, want %+v", got, want)
	}
	if _, err := ParseTruth([]byte("# degraded: free 1h\n")); err == nil {
		t.Error("a window without its end parsed")
	}
}

// TestScore walks a method through a degradation of free from 1m to 2m
// (15s ticks): an early false move of paid, a failover 30s after onset,
// traffic back on free, an alert after the grace.
func TestScore(t *testing.T) {
	step := 15 * time.Second
	routes := []string{"free", "paid"}
	truth := []Window{{"free", time.Minute, 2 * time.Minute}}
	var ticks []Tick
	for i := 0; i <= 60; i++ {
		at := time.Duration(i) * step
		w := map[string]int{"free": 100, "paid": 0}
		if at >= 90*time.Second && at < 3*time.Minute {
			w = map[string]int{"free": 0, "paid": 100}
		}
		tk := Tick{At: at, Weights: w, Alerting: map[string]bool{"paid": at == 15*time.Second, "free": at >= 14*time.Minute}}
		ticks = append(ticks, tk)
	}
	o := Score("s", "m", ticks, step, truth, routes)
	if o.Onset != time.Minute || o.FirstMove != 30*time.Second || o.FullFailover != 30*time.Second {
		t.Errorf("onset %s, first move %s, full failover %s; want 1m, 30s, 30s", o.Onset, o.FirstMove, o.FullFailover)
	}
	if o.FalseAlerts != 2 || o.FalseMoves != 0 || o.FirstAlert != -1 {
		t.Errorf("false alerts %d, false moves %d, first alert %s; want 2, 0, never", o.FalseAlerts, o.FalseMoves, o.FirstAlert)
	}
	// Free is degraded with all the traffic for two ticks (1m, 1m15s) before the failover.
	if o.DegradedMinutes != 0.5 {
		t.Errorf("degraded minutes %g, want 0.5", o.DegradedMinutes)
	}
	var b strings.Builder
	if err := WriteTable(&b, []Outcome{o}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| s | m | 1m | – | +30s | +30s | 2 | 0 |") {
		t.Errorf("table:\n%s", b.String())
	}
}
