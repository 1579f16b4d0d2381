package evaluator

import (
	"maps"
	"math"
	"slices"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// envParts are the parts of a route's alert environment that may differ
// between two ticks of a route whose rule results are remembered (memo.go):
// its route, service and scope are the same, it is in no drill, and the
// actuator fields of a route's environment are always empty. The signals
// are apart, one bit per signal (signalBits).
type envParts uint8

const (
	partScore envParts = 1 << iota
	partLevel
	partStage
	partMissing
	partEvidence
	partSplit // degraded and weights
	allParts  = partSplit<<1 - 1
)

// ruleInputs is what of a route's alert environment a rule reads: the
// parts, and the signals as bits of signal indices (signalBits).
type ruleInputs struct {
	parts   envParts
	signals uint64
}

// partOfField is the part of each AlertEnv field (by expr name) that can
// differ between two ticks of a remembered route; fields absent here
// (route, service, drill, actuator, failing_for, error) cannot.
var partOfField = map[string]envParts{
	"score": partScore, "level": partLevel, "stage": partStage, "missing": partMissing,
	"evidence": partEvidence, "degraded": partSplit, "weights": partSplit,
}

// newRuleInputs is what the condition of r reads, from its syntax
// (rules.AlertExprInputs): all of it when that cannot tell.
func newRuleInputs(r *alertRule, signalIndex map[string]int) ruleInputs {
	in := rules.AlertExprInputs(r.prog)
	if in.All || in.AllSignals {
		return ruleInputs{parts: allParts, signals: math.MaxUint64}
	}
	var ri ruleInputs
	for _, f := range in.Fields {
		ri.parts |= partOfField[f]
	}
	for _, name := range in.Signals {
		i, ok := signalIndex[name]
		if !ok {
			i = -1
		}
		ri.signals |= signalBit(i)
	}
	return ri
}

// signalBit is the bit of the signal of index i in a mask of signals: a
// policy of more than 64 signals shares the last bit among the rest (and
// an unknown signal, -1, takes every bit), so a mask may say too much
// changed, never too little.
func signalBit(i int) uint64 {
	switch {
	case i < 0:
		return math.MaxUint64
	case i >= 63:
		return 1 << 63
	}
	return 1 << i
}

// reusable returns, by rule index, which of p's rules read nothing that
// differs between the environment a remembers and the one of rs in the
// service with split, and whether nothing at all differs.
func (a *alertMemo) reusable(p *Policy, rs *RouteState, split *traffic.Split) (reuse uint64, same bool) {
	var parts envParts
	if a.value != math.Float64bits(rs.Score.Value) {
		parts |= partScore
	}
	if a.level != rs.Level {
		parts |= partLevel
	}
	if a.stage != rs.Stage {
		parts |= partStage
	}
	if a.split != split {
		if degraded, weights := splitEnv(split); a.degraded != degraded || !maps.Equal(a.weights, weights) {
			parts |= partSplit
		}
	}
	if !slices.Equal(a.missing, rs.Score.Missing) {
		parts |= partMissing
	}
	signals := changedSignals(a.contribs, rs.Score.Contributions, &parts)
	for i, r := range p.alerts {
		if r.inputs.parts&parts == 0 && r.inputs.signals&signals == 0 {
			reuse |= 1 << i
		}
	}
	return reuse, parts == 0 && signals == 0
}

// changedSignals returns the bits of the signals whose value in an alert
// environment differs between the contributions was and is (the same
// policy's, one per signal), and adds partEvidence to parts when a line of
// the evidence does. Floats compare bit for bit.
func changedSignals(was, is []Contribution, parts *envParts) uint64 {
	if len(was) != len(is) {
		*parts |= partEvidence
		return math.MaxUint64
	}
	if len(is) == 0 || &was[0] == &is[0] {
		return 0
	}
	var changed uint64
	for i := range is {
		w, c := &was[i], &is[i]
		if math.Float64bits(envSignal(w)) != math.Float64bits(envSignal(c)) {
			changed |= signalBit(i)
		}
		if ew, ec := hasEvidence(w), hasEvidence(c); ew != ec || ec && (w.Signal != c.Signal || !sameReason(w, c)) {
			*parts |= partEvidence
		}
	}
	return changed
}

// envSignal is what an alert environment's signals map holds for c.
func envSignal(c *Contribution) float64 {
	if c.Status != StatusOK {
		return math.NaN()
	}
	return c.AlertValue
}

// hasEvidence reports whether c gives a line of an alert environment's
// evidence (its signal and reason).
func hasEvidence(c *Contribution) bool {
	return c.Status == StatusOK && c.Counted && (c.evidence != nil || c.Reason != "") &&
		(c.Penalty > 0 || c.CapsAt >= 0 || c.Floor > traffic.Normal || c.Unproven)
}
