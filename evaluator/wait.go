package evaluator

// WaitKind is what a line of Waiting is about.
type WaitKind uint8

// The kinds of what a route waits for.
const (
	// WaitRelease: a manual route waits for an operator's release.
	WaitRelease WaitKind = iota
	// WaitDwell: a move down waits for its dwell.
	WaitDwell
	// WaitFloor: a floor holds the route at its level.
	WaitFloor
	// WaitHysteresis: a move up waits for the score to reach its
	// recover_above.
	WaitHysteresis
	// WaitEvidence: the score may be good, but the calls do not show it
	// yet; WaitCalls lines follow, one per signal that wants calls.
	WaitEvidence
	// WaitCalls: the calls a counted signal still wants ("hard_fail_ratio:
	// 420 of about 950 calls needed …").
	WaitCalls
	// WaitRecovering: the score is good; the move up waits for
	// recover_for and the cooldown.
	WaitRecovering
	// WaitFailback: a failback stage waits for its observe window or its
	// calls.
	WaitFailback
	// WaitFailing: a failed-over route that still fails goes to manual.
	WaitFailing
	// WaitServing: a failed-over route still serves users (degraded mode,
	// an operator's split).
	WaitServing
	// WaitBudget: the failback budget puts off the next failback.
	WaitBudget
)

var waitKindNames = [...]string{"release", "dwell", "floor", "hysteresis", "evidence", "calls", "recovering", "failback", "failing", "serving", "budget"}

// String is the kind's name ("dwell", "calls", …).
func (k WaitKind) String() string {
	if int(k) < len(waitKindNames) {
		return waitKindNames[k]
	}
	return "unknown"
}

// Wait is one thing a route waits for: its kind, and the line that says
// it to people (Waiting).
type Wait struct {
	Kind WaitKind
	Text string
}

// WaitTexts returns the lines of ws, in order.
func WaitTexts(ws []Wait) []string {
	if ws == nil {
		return nil
	}
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Text
	}
	return out
}
