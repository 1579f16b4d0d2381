package telemetry

import (
	"slices"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
)

// Update sets every gauge from s, the state Step returned for the tick at
// now, and every signal gauge from snap, that tick's snapshot; the
// saved-state series are the persist stage's (persist.Exporter). Routes,
// services and signals that are no longer in pol (after a reload) lose
// their series. Signal samples with StatusError count as query errors,
// once per signal and reason per call, since one failed query errs for
// every route.
func (m *Metrics) Update(pol *evaluator.Policy, s evaluator.State, snap evaluator.Snapshot, now time.Time) {
	m.update(pol, s, snap, now, true)
}

// update is Update; mayErr says whether snap may hold error samples in
// the signals' columns. Without one, a route whose per-signal series are
// not exported (signalDetail) has nothing to read in its row: at 10,000
// routes of a calm fleet that was 160,000 lookups of a sample by its
// signal's name a tick, to find no error.
func (m *Metrics) update(pol *evaluator.Policy, s evaluator.State, snap evaluator.Snapshot, now time.Time, mayErr bool) {
	m.mu.Lock()
	defer m.mu.Unlock()

	if pol != m.pol {
		m.layOut(pol)
	}
	errs := queryErrors{last: m.lastErrs}
	clear(errs.last)
	for i, route := range pol.Routes() {
		r := m.routeList[i]
		rs := s.Routes[route]
		if rs == nil {
			r.delete(m)
			continue
		}
		m.exportRoute(r, rs, now)
		m.exportSignals(r, rs, snap, route, &errs, mayErr)
	}
	for k := range errs.seen {
		m.queryErrors.WithLabelValues(k[0], k[1]).Inc()
	}
}

// layOut readies the per-route series for pol, a policy other than the
// last Update's: it deletes the series of the routes and signals that pol
// no longer has, and lays out routeList in pol's order. A policy is built
// once per (re)load and never changed, so the ticks between two reloads
// find their routes' series without a lookup by name.
func (m *Metrics) layOut(pol *evaluator.Policy) {
	configured := make(map[string]bool, len(pol.Routes()))
	for _, r := range pol.Routes() {
		configured[r] = true
	}
	for name, r := range m.routes {
		if !configured[name] {
			r.delete(m)
			delete(m.routes, name)
		}
	}
	signals := make([]string, len(pol.Config.Signals))
	for i, sig := range pol.Config.Signals {
		signals[i] = sig.Name
	}
	if !slices.Equal(signals, m.signals) {
		moved := make([]int, len(m.signals))
		for i, name := range m.signals {
			moved[i] = slices.Index(signals, name)
		}
		for _, r := range m.routes {
			r.resignal(m, moved, len(signals))
		}
	}
	m.routeList = make([]*routeSeries, len(pol.Routes()))
	for i, name := range pol.Routes() {
		r := m.routes[name]
		if r == nil {
			r = &routeSeries{route: name}
			m.routes[name] = r
		}
		m.routeList[i] = r
	}
	m.pol, m.signals, m.lastErrs = pol, signals, make([]string, len(signals))
}

// queryErrors collects the signals and reasons of a tick's failed queries.
// One failed query errs for every route: remembering the reason each
// signal last erred with makes the other routes cost a string compare, not
// a map write.
type queryErrors struct {
	seen map[[2]string]bool
	last []string // by signal: the reason it last erred with; "" for none
}

// add records that signal i, name, erred with reason.
func (q *queryErrors) add(i int, name, reason string) {
	if reason == "" {
		reason = "unknown"
	}
	if q.last[i] == reason {
		return
	}
	q.last[i] = reason
	if q.seen == nil {
		q.seen = map[[2]string]bool{}
	}
	q.seen[[2]string{name, reason}] = true
}

// exportRoute sets the score and failback counter of one route. The level
// is persist's hermes_route_level.
func (m *Metrics) exportRoute(r *routeSeries, rs *evaluator.RouteState, now time.Time) {
	r.score.Set(m.routeScore, rs.Score.Value, r.route)

	// A failback is new when it completed after the latest one already
	// counted. The first time a route is seen only failbacks completed at
	// this tick count: older ones were counted before a restart (restored
	// failbacks are copies of the last one's time).
	latest := r.lastFailback
	added := 0
	for _, t := range rs.Failbacks {
		if (r.failbacksSeen && t.After(r.lastFailback)) || (!r.failbacksSeen && !t.Before(now)) {
			added++
		}
		if t.After(latest) {
			latest = t
		}
	}
	r.failbacksSeen, r.lastFailback = true, latest
	// The counter starts at 0 once the route leaves normal (a failback
	// needs a failover first, so rate and increase see it from 0) and then
	// stays: a route that never left normal has none.
	if rs.Level != traffic.Normal || added > 0 || r.failbacks != nil {
		if r.failbacks == nil {
			r.failbacks = m.failbacksTotal.WithLabelValues(r.route)
		}
		r.failbacks.Add(float64(added))
	}
}

// signalDetail reports whether a route's per-signal series are exported:
// with Options.AllSignals, else while the route is not normal, some signal
// takes points off its score or a missing signal holds its level (then each
// signal's value, its penalty when not 0 and its status when not ok: the
// HermesSignalMissing runbook reads that status). A calm fleet then costs a few
// series per route, not a few per route and signal (docs/design.md counts
// them).
func (m *Metrics) signalDetail(rs *evaluator.RouteState) bool {
	return m.allSignals || rs.Level != traffic.Normal || rs.Score.Value < 100 || rs.Score.Held()
}

// exportSignals sets the signal gauges of one route from its row of
// snap, or drops them when signalDetail says so, and collects its
// erroring signals into errs; a route without detail reads its row only
// when mayErr (update).
func (m *Metrics) exportSignals(r *routeSeries, rs *evaluator.RouteState, snap evaluator.Snapshot, route string, errs *queryErrors, mayErr bool) {
	detail := m.signalDetail(rs)
	if !detail && r.detail {
		r.deleteSignals(m)
	}
	if !detail && !mayErr {
		return
	}
	row := snap.Row(route)
	if detail && r.signals == nil {
		r.signals = make([]signalSeries, len(m.signals))
	}
	cs := rs.Score.Contributions
	// Step makes a contribution per signal in the policy's order, and a
	// validated policy has each signal once: then the i-th contribution is
	// the one of signal i.
	inOrder := detail && len(cs) == len(m.signals)
	for i := 0; inOrder && i < len(cs); i++ {
		inOrder = cs[i].Signal == m.signals[i]
	}
	for i, name := range m.signals {
		smp := row.Get(name)
		if smp.Status == evaluator.StatusError {
			errs.add(i, name, smp.Reason)
		}
		if !detail {
			continue
		}
		penalty := 0.0
		if inOrder {
			penalty = cs[i].Penalty
		} else if j := slices.IndexFunc(cs, func(c evaluator.Contribution) bool { return c.Signal == name }); j >= 0 {
			penalty = cs[j].Penalty
		}
		ss := &r.signals[i]
		ss.value.SetOrDelete(m.signalValue, smp.Value, smp.Status == evaluator.StatusOK, r.route, name)
		// Without --metrics.per-signal a penalty of 0 and the status ok are
		// left out: a route that loses points to one signal costs about one
		// series per signal (its value, or its status when it has none).
		ss.penalty.SetOrDelete(m.signalPenalty, penalty, m.allSignals || penalty != 0, r.route, name)
		ss.status.SetOrDelete(m.signalStatus, float64(smp.Status), m.allSignals || smp.Status != evaluator.StatusOK, r.route, name)
	}
	if detail {
		r.detail = true
	}
}
