package rules

// AlertEnv is what an alert rule's condition sees: the variables of
// AlertVars, whose names the language spells (route, signals,
// stage_for, …), and the template data (TemplateData).
type AlertEnv struct {
	Route    string
	Service  string
	Score    float64
	Level    string             // normal, warm, shed, failover, manual
	Stage    int                // failback stage, 0 = none
	Signals  map[string]float64 // every configured signal; NaN when not ok
	Missing  []string           // signals without data that hold the route
	Degraded bool               // service scope: every route bad
	Weights  map[string]int     // service scope: traffic split
	// Evidence is what the counted signals showed, one line each
	// ("error_body_ratio: 120 of 300 calls in 2m: ≥ 31.7 % at 99.9 %").
	Evidence []string
	// Causes are the signals that cost the route its score, the heaviest
	// first ("soft_fail_ratio 0.28 (-58.2): 339 of 1200 calls in 1m: ≥ 24.4
	// % at 99.9 %"): what a page about a move names as its cause.
	Causes []string
	// MovedBy are the signals that moved the route down, fixed at its
	// last move down and kept until it is back at normal, in the order and
	// words of Causes; MovedTo is the level of that move and MovedAt its
	// time (RFC 3339). Empty at normal. A page about a failover names
	// these: Causes are the costs of the tick its values were taken at
	// (the last tick its condition held).
	MovedBy []string
	MovedTo string
	MovedAt string
	// Aborted is the failback of this incident that stepped back to no
	// traffic, until the next one starts ("stage 2 (30 %) at …: score 0.0
	// < 80 …"); "" when none.
	Aborted string
	// StageFor is how long the route has been at its failback stage
	// (seconds, 0 when none), Observe the stage's observe window
	// (seconds, failback.observe): a stage that waits well beyond it is
	// stalled.
	StageFor float64
	Observe  float64
	// StageObserved is StageFor in observe windows (StageFor / Observe):
	// `stage_observed >= 2` is a stage that waited twice its window.
	StageObserved float64
	// OutOfReach (a route at a failback stage): a counted signal needs
	// more calls to show the route healthy than its window holds at the
	// rate they arrive; at this traffic the stage cannot complete
	// (Waiting says which signal and how many calls).
	OutOfReach bool
	// Waiting is what the route waits for (the dwell of a move down, the
	// evidence and calls a failback stage needs), as the status page says
	// it.
	Waiting []string
	// Weight is the route's share of its service's traffic in percent
	// (route scope).
	Weight int
	// Drill: the route (service scope: a route of the service) is in a
	// fault drill; its alerts carry the label drill="true".
	Drill bool
	// Actuator scope: the actuator, how long it has been failing without a
	// success (seconds, 0 while it works) and its last error.
	Actuator   string
	FailingFor float64
	Error      string
}

// TemplateData is what an alert's summary and description templates see:
// the values a condition reads (AlertEnv), under the same names
// ({{ .Route }}, {{ .Signals.error_body_ratio }}). One type, so the two
// cannot drift apart.
type TemplateData = AlertEnv

// TemplateData returns the template view of the same evaluation.
func (e AlertEnv) TemplateData() TemplateData {
	return e
}
