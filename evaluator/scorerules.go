package evaluator

import (
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// scoreRules are the policy's penalties, caps and floors resolved once, in
// NewPolicy, to the index of their signal in Config.Signals (and floors to
// their level), so scoring a route looks nothing up by name: at 10,000
// routes a tick judges each route three times, and the name lookups were a
// fifth of ComputeScore.
type scoreRules struct {
	penalties []scoreRule[rules.PenaltyConfig]
	caps      []scoreRule[rules.CapConfig]
	floors    []scoreRule[rules.FloorConfig]
	// bounds are the thresholds of each signal, by signal index
	// (evidence.go).
	bounds [][]rules.Bound
}

// scoreRule is one penalty, cap or floor with the index of its signal.
type scoreRule[T any] struct {
	cfg    T
	signal int
	level  traffic.Level // floors: the level forced
}

// newScoreRules resolves cfg's scoring rules. A rule on an unknown signal,
// or a floor with an unknown level, is left out: Validate rejects both,
// and judge skipped them before.
func newScoreRules(cfg *rules.Policy, index map[string]int) scoreRules {
	sr := scoreRules{bounds: make([][]rules.Bound, len(cfg.Signals))}
	for _, pen := range cfg.Scoring.Penalties {
		if i, ok := index[pen.Signal]; ok {
			sr.penalties = append(sr.penalties, scoreRule[rules.PenaltyConfig]{cfg: pen, signal: i})
			sr.bounds[i] = append(sr.bounds[i], pen.Bound)
		}
	}
	for _, cp := range cfg.Scoring.Caps {
		if i, ok := index[cp.Signal]; ok {
			sr.caps = append(sr.caps, scoreRule[rules.CapConfig]{cfg: cp, signal: i})
			sr.bounds[i] = append(sr.bounds[i], cp.Bound)
		}
	}
	for _, fl := range cfg.Scoring.Floors {
		i, ok := index[fl.Signal]
		if !ok {
			continue
		}
		sr.bounds[i] = append(sr.bounds[i], fl.Bound)
		if lv, err := traffic.ParseLevel(fl.Level); err == nil {
			sr.floors = append(sr.floors, scoreRule[rules.FloorConfig]{cfg: fl, signal: i, level: lv})
		}
	}
	return sr
}
