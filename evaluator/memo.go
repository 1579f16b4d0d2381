package evaluator

import (
	"maps"
	"math"

	"github.com/hermes-failover/hermes/evaluator/traffic"
	"github.com/hermes-failover/hermes/rules"
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
	// route in its only service and what they saw.
	alerts *alertMemo
}

// alertMemo is what a route's alert environment held besides its score's
// contributions, and what the route-scope rules gave: bit i for p.alerts[i].
type alertMemo struct {
	value uint64 // math.Float64bits of the score
	level traffic.Level
	stage int
	// split is the service's split; Step keeps a split that did not
	// change, and never changes one in place, so the same pointer means
	// the same split. Else its degraded and weights are compared.
	split    *traffic.Split
	degraded bool
	weights  map[string]int
	conds    uint64
}

// scoreRoute is ComputeScore(route, snap, p, idle) through the route's
// memo from the previous tick: the same score when every sample the score
// reads is the same. It returns the score and the memo for the next state.
// The samples are read from the snapshot once, for both.
func scoreRoute(p *Policy, prev *routeMemo, route string, snap Snapshot, idle bool) (Score, *routeMemo) {
	var buf [intervalsOnStack]Sample
	smps := rowSamples(p, snap.Row(route), buf[:0])
	if prev != nil && prev.policy == p && prev.idle == idle && sameSamples(p, prev.score, smps) {
		return prev.score, prev
	}
	sc := scoreSamples(p, smps, idle)
	return sc, &routeMemo{policy: p, idle: idle, score: sc}
}

// sameSamples reports whether smps (one per signal of p) are exactly the
// samples behind sc. A contribution keeps its sample's status, volume and
// counted flag, its value when ok, and its reason unless ComputeScore
// replaced it by the evidence text (ok and counted), which the other
// fields determine. Floats compare bit for bit (-0 prints differently).
func sameSamples(p *Policy, sc Score, smps []Sample) bool {
	if len(sc.Contributions) != len(p.Config.Signals) {
		return false
	}
	for i, sig := range p.Config.Signals {
		smp, c := &smps[i], &sc.Contributions[i]
		if smp.Status != c.Status || math.Float64bits(smp.Volume) != math.Float64bits(c.Volume) ||
			(smp.Counted && sig.EvidenceQuery() != "") != c.Counted {
			return false
		}
		if smp.Status == StatusOK {
			if math.Float64bits(smp.Value) != math.Float64bits(c.Value) {
				return false
			}
			if c.Counted {
				continue
			}
		}
		if smp.Reason != c.Reason {
			return false
		}
	}
	return true
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

// routeAlerts returns the route-scope rule results that rs's memo holds,
// if the route's alert environment in the service with split is exactly
// the one they were computed from: the same scored samples (a memo with
// results is the previous tick's, which scoreRoute kept), score, level,
// stage and split.
func routeAlerts(p *Policy, rs *RouteState, split *traffic.Split) (uint64, bool) {
	m := rs.memo
	if !p.alertMemo || m == nil || m.alerts == nil {
		return 0, false
	}
	a := m.alerts
	if a.value != math.Float64bits(rs.Score.Value) || a.level != rs.Level || a.stage != rs.Stage {
		return 0, false
	}
	if a.split != split {
		degraded, weights := splitEnv(split)
		if a.degraded != degraded || !maps.Equal(a.weights, weights) {
			return 0, false
		}
	}
	return a.conds, true
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
// a new route state or memo.
func rememberAlerts(p *Policy, rs *RouteState, own owned, split *traffic.Split, conds uint64) *RouteState {
	if !p.alertMemo || rs.memo == nil {
		return rs
	}
	degraded, weights := splitEnv(split)
	a := &alertMemo{value: math.Float64bits(rs.Score.Value), level: rs.Level, stage: rs.Stage,
		split: split, degraded: degraded, weights: weights, conds: conds}
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
