package evaluator

import (
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/traffic"
)

// TestOverlayDrivesTheCore: an injected error_body_ratio on a healthy
// route moves it down exactly as a real one would, inside its window only,
// and leaves the snapshot it was given untouched.
func TestOverlayDrivesTheCore(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	o, err := ParseOverlay(p, "free:error_body_ratio=0.4@1m+10m", t0)
	if err != nil {
		t.Fatal(err)
	}
	if o.Route != "free" || o.Signal != "error_body_ratio" || o.Value != 0.4 || !o.From.Equal(t0.Add(time.Minute)) || !o.Until.Equal(t0.Add(11*time.Minute)) {
		t.Fatalf("parsed %+v", o)
	}
	var st State
	left := time.Time{}
	for i := 0; i <= 60; i++ {
		at := t0.Add(time.Duration(i) * 15 * time.Second)
		s := snap(p, at, nil)
		orig := s
		o.Apply(&s)
		if orig.Get("free", "error_body_ratio").Value != 0 {
			t.Fatal("Apply wrote into the snapshot's table")
		}
		inWindow := !at.Before(o.From) && at.Before(o.Until)
		if got := s.Get("free", "error_body_ratio").Value; (got == 0.4) != inWindow {
			t.Fatalf("at %s: error_body_ratio %g, in window %v", at, got, inWindow)
		}
		st, _ = Step(p, st, Input{Snapshot: s}, at)
		if left.IsZero() && st.Routes["free"].Level != traffic.Normal {
			left = at
		}
	}
	if left.IsZero() || left.Before(o.From) {
		t.Errorf("free left normal at %v, want after the injection at %s", left, o.From)
	}
	if st.Routes["paid-standard"].Level != traffic.Normal {
		t.Error("the overlay touched another route")
	}
	for _, bad := range []string{"free:error_body_ratio=0.4", "free=0.4@1m", "free:error_body_ratio=x@1m", "free:error_body_ratio=0.4@soon",
		"free:nosuch=0.4@1m", "nosuch:error_body_ratio=0.4@1m", "free:error_body_ratio=0.4@1m+0s"} {
		if _, err := ParseOverlay(p, bad, t0); err == nil || !strings.Contains(err.Error(), "want ROUTE:SIGNAL=VALUE@OFFSET") {
			t.Errorf("ParseOverlay(%q): %v", bad, err)
		}
	}
}
