package evaluator

import (
	"strings"
	"testing"
)

// waitLeads are how the line of each kind of Wait begins.
var waitLeads = map[WaitKind][]string{
	WaitRelease:    {"manual since "},
	WaitDwell:      {"dwell: "},
	WaitFloor:      {"hold: a floor ", "waiting: a floor "},
	WaitHysteresis: {"hysteresis: "},
	WaitEvidence:   {"waiting for evidence: "},
	WaitRecovering: {"recovering: "},
	WaitFailback:   {"failback stage "},
	WaitFailing:    {"failing since "},
	WaitServing:    {"serving while failed over "},
	WaitBudget:     {"failback budget: "},
}

// checkWaitKinds fails t unless each of ws has the kind its line says:
// a WaitCalls line names one of p's signals, every other kind begins as
// waitLeads says. The page picks lines by kind (web's waitsFor), so a
// line given the wrong kind would show in the wrong place.
func checkWaitKinds(t testing.TB, p *Policy, ws []Wait) {
	t.Helper()
	for _, w := range ws {
		ok := false
		if w.Kind == WaitCalls {
			for _, s := range p.Config.Signals {
				ok = ok || strings.HasPrefix(w.Text, s.Name+": ") && strings.Contains(w.Text, " calls")
			}
		}
		for _, lead := range waitLeads[w.Kind] {
			ok = ok || strings.HasPrefix(w.Text, lead)
		}
		if !ok {
			t.Errorf("a %s line says %q", w.Kind, w.Text)
		}
	}
}

// TestWaitKindNames keeps WaitKind's names in step with its constants.
func TestWaitKindNames(t *testing.T) {
	seen := map[string]bool{}
	for k := WaitRelease; k <= WaitBudget; k++ {
		if n := k.String(); n == "unknown" || seen[n] {
			t.Errorf("kind %d is named %q", k, n)
		}
		seen[k.String()] = true
	}
	if got := (WaitBudget + 1).String(); got != "unknown" {
		t.Errorf("a kind past the last is %q", got)
	}
}
