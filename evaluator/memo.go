package evaluator

import (
	"math"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// routeMemo is what a tick computed from one route's inputs, kept in the
// route's state so the next tick can reuse it when those inputs are
// exactly the same: a fleet's routes are mostly calm, and rebuilding their
// scores, alert environments and rule results every tick was most of a
// 10,000-route tick. It is exact by construction: it is keyed on the input
// values themselves (never on time), and on the policy it was computed
// with. A routeMemo is never changed once a state holds it; a state
// restored or built outside Step has none, which costs one full tick.
type routeMemo struct {
	policy *Policy
	idle   bool
	// score is what ComputeScore returned, before Step carries a held
	// score; its Contributions are shared, never changed.
	score Score

	// alerts, when set, are the route-scope alert rules' results for the
	// route in its only service and the environment they saw: this tick's,
	// or carried from an earlier memo of the same policy when the samples
	// changed, so a rule whose inputs did not change keeps its result.
	alerts alertMemo
}

// alertMemo is what route-scope rules gave for a route's alert environment
// (bit i for p.alerts[i]), and that environment: a rule whose inputs in it
// (alertinputs.go) are the same in the current one gives the same result.
type alertMemo struct {
	set   bool
	value uint64 // math.Float64bits of the score
	level traffic.Level
	stage int
	// split is the service's split; Step keeps a split that did not
	// change, and never changes one in place, so the same pointer means
	// the same split. Else its degraded and weights are compared.
	split    *traffic.Split
	degraded bool
	weights  map[string]int
	// contribs and missing are the score's, never changed: the signals
	// and evidence of the environment.
	contribs []Contribution
	missing  []string
	conds    uint64
}

// tickInputs are the samples a tick scores, cur, and those the tick
// before scored, last, which the previous state's memos were made from.
type tickInputs struct {
	p         *Policy
	cur, last policyRows
	curBuf    []cell
	lastBuf   []cell
}

// newTickInputs reads the tables cur and last (either may be nil) in p's
// order.
func newTickInputs(p *Policy, cur, last *table) *tickInputs {
	n := len(p.Config.Signals)
	return &tickInputs{p: p, cur: readRows(p, cur), last: readRows(p, last), curBuf: make([]cell, 0, n), lastBuf: make([]cell, 0, n)}
}

// score is ComputeScore of the policy's route i through its memo from the
// previous tick: the same score when every sample is the same as the
// previous tick's. It returns the score and the memo for the next state.
// A memo is only ever made here, from the tick's samples, which the next
// state keeps as its inputs (State.inputs): so a route state's memo is
// always that of its state's inputs.
func (in *tickInputs) score(prev *routeMemo, i int, idle bool) (Score, *routeMemo) {
	p, n := in.p, len(in.p.Config.Signals)
	cells := in.cur.cells(i, n, in.curBuf)
	if prev != nil && prev.policy == p && prev.idle == idle && sameCells(in.cur.t, cells, in.last.t, in.last.cells(i, n, in.lastBuf)) {
		return prev.score, prev
	}
	var buf [intervalsOnStack]Sample
	sc := scoreSamples(p, in.cur.samples(cells, buf[:0]), idle)
	m := &routeMemo{policy: p, idle: idle, score: sc}
	if prev != nil && prev.policy == p {
		m.alerts = prev.alerts
	}
	return sc, m
}

// alertsMemoizable reports whether rule results may be reused while their
// environment is unchanged: no rule reads the clock, and the results fit
// in an alertMemo's bits.
func alertsMemoizable(alerts []*alertRule) bool {
	if len(alerts) > 64 {
		return false
	}
	for _, r := range alerts {
		if rules.AlertExprReadsClock(r.prog) {
			return false
		}
	}
	return true
}

// alertReuse is routeAlerts's answer for a route in the split its
// service had before the tick's plan. Step takes it in its route loop,
// where the route state and memo are in the CPU's cache, and the alert
// pass, which runs after the plan, reads it in a row (see routeBrief);
// for a service whose plan replaced the split, the alert pass asks the
// memo again.
type alertReuse struct {
	conds, reuse uint64
	set, same    bool
}

// newAlertReuse is routeAlerts(p, rs, split) as an alertReuse.
func newAlertReuse(p *Policy, rs *RouteState, split *traffic.Split) alertReuse {
	conds, reuse, same := routeAlerts(p, rs, split)
	return alertReuse{conds: conds, reuse: reuse, set: rs.memo != nil && rs.memo.alerts.set, same: same}
}

// routeAlerts returns the route-scope rule results that rs's memo holds,
// which of them may be reused for the route's alert environment in the
// service with split (reuse, by rule index: the rules whose inputs are the
// same), and whether that environment is exactly the one they were
// computed from.
func routeAlerts(p *Policy, rs *RouteState, split *traffic.Split) (conds, reuse uint64, same bool) {
	m := rs.memo
	if !p.alertMemo || m == nil || !m.alerts.set {
		return 0, 0, false
	}
	reuse, same = m.alerts.reusable(p, rs, split)
	return m.alerts.conds, reuse, same
}

// owned says what of a route's state the current tick made, so it may
// still change it: ownState the route state, ownMemo its memo. What it did
// not make may be the previous tick's, and is replaced instead.
type owned uint8

const (
	ownState owned = 1 << iota
	ownMemo
)

// rememberAlerts returns rs with the route-scope rule results conds and
// what they saw recorded in its memo: in place where own allows, else in
// a new route state or memo. same says the memo already holds that
// environment: a memo of the previous tick is then kept as it is.
func rememberAlerts(p *Policy, rs *RouteState, own owned, split *traffic.Split, conds uint64, same bool) *RouteState {
	// same first: it implies a memo, and then rs need not be read at all.
	if same && own&ownMemo == 0 || !p.alertMemo || rs.memo == nil {
		return rs
	}
	degraded, weights := splitEnv(split)
	a := alertMemo{set: true, value: math.Float64bits(rs.Score.Value), level: rs.Level, stage: rs.Stage,
		split: split, degraded: degraded, weights: weights,
		contribs: rs.Score.Contributions, missing: rs.Score.Missing, conds: conds}
	return withAlertMemo(rs, own, a)
}

// forgetAlerts returns rs without rule results in its memo: in place where
// own allows, else in a new route state and memo. A route whose
// environment a tick evaluates but does not record (a rule failed, a
// drill) forgets them, so a memo's environment is always the last one the
// route's rules saw: an active alert keeps its annotations only when they
// were rendered from the same environment.
func forgetAlerts(rs *RouteState, own owned) *RouteState {
	if rs.memo == nil || !rs.memo.alerts.set {
		return rs
	}
	return withAlertMemo(rs, own, alertMemo{})
}

// withAlertMemo returns rs with a as its memo's alert results: in place
// where own allows, else in a new route state or memo (copy on write: what
// this tick did not make may be the previous tick's).
func withAlertMemo(rs *RouteState, own owned, a alertMemo) *RouteState {
	if own&ownState == 0 {
		c := *rs
		rs = &c
	}
	if own&ownMemo == 0 {
		m := *rs.memo
		rs.memo = &m
	}
	rs.memo.alerts = a
	return rs
}

// splitEnv is what an alert environment reads from a service's split.
func splitEnv(split *traffic.Split) (bool, map[string]int) {
	if split == nil {
		return false, nil
	}
	return split.Degraded, split.Weights
}
