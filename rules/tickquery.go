package rules

import (
	"strconv"
	"strings"
)

// PartLabel is the label that tells, in the one query a tick sends for a
// signal (TickQuery), the signal's value from its evidence (the volume or
// samples behind it): PartValue or PartEvidence.
const PartLabel = "signal_part"

// Values of PartLabel.
const (
	PartValue    = "value"
	PartEvidence = "evidence"
)

// TickQuery is the one PromQL query a tick sends for the signal: its query
// alone, or, when it declares a volume or samples, the query and its
// evidence query in one expression, every series of each marked with
// PartLabel:
//
//	label_replace(QUERY, "signal_part", "value", "", "")
//	or
//	label_replace(EVIDENCE, "signal_part", "evidence", "", "")
//
// followed, for each of its Windows, by that window's query and volume
// (Derived.Over) marked WindowPart(PartValue, w) and
// WindowPart(PartEvidence, w): "value_15m", "evidence_15m".
//
// The added label makes the parts' label sets disjoint, so `or` keeps
// every series of each and a tick costs one round trip per signal however
// many routes and windows there are. Every part is evaluated at the same
// time by the same engine, as separate queries would be; promapi.Collector
// splits them.
//
// The windows' queries come from the loader (SignalConfig.Derived), which
// parses PromQL and joins the tick query once per load (Derived.Tick), so
// a tick only reads it; TickQuery joins the parts itself only for a
// signal the loader did not derive (a policy built in a test). It panics
// on a signal with windows whose Derived was not filled in, a Policy not
// built by the loader.
func (s SignalConfig) TickQuery() string {
	if s.Derived.Tick != "" {
		return s.Derived.Tick
	}
	return s.JoinTickQuery()
}

// JoinTickQuery joins the parts of the signal's TickQuery afresh; the
// loader stores the result in Derived.Tick.
func (s SignalConfig) JoinTickQuery() string {
	ev := s.EvidenceQuery()
	if ev == "" {
		return s.Query
	}
	if len(s.Derived.Over) != len(s.Windows) {
		panic("rules: signal " + s.Name + " has windows but not their queries: build its policy with rules/config")
	}
	q := markPart(s.Query, PartValue) + "\nor\n" + markPart(ev, PartEvidence)
	for i, w := range s.Windows {
		wq := s.Derived.Over[i]
		q += "\nor\n" + markPart(wq.Query, WindowPart(PartValue, w)) + "\nor\n" + markPart(wq.Volume, WindowPart(PartEvidence, w))
	}
	return q
}

// markPart wraps q so each of its series carries PartLabel=part.
func markPart(q, part string) string {
	return "label_replace(" + q + ", " + strconv.Quote(PartLabel) + ", " + strconv.Quote(part) + `, "", "")`
}

// TickPart is one part of a TickQuery: its PartLabel value and its query.
type TickPart struct {
	Part, Query string
}

// SplitTickQuery is TickQuery's inverse for its first two parts: the query
// and evidence query of a TickQuery with evidence, ok false for any other
// query. Sources that answer by a query's text rather than by evaluating
// PromQL (fakes, fixed answers) use it, through promapi.ByPart, to answer
// each part; TickParts gives the window parts too.
func SplitTickQuery(q string) (query, evidence string, ok bool) {
	parts, ok := TickParts(q)
	if !ok {
		return "", "", false
	}
	return parts[0].Query, parts[1].Query, true
}

// TickParts splits a TickQuery with evidence into its parts, in order:
// the value, the evidence, then each window's value and evidence. ok is
// false for any other query.
func TickParts(q string) ([]TickPart, bool) {
	const open, sep = "label_replace(", "\nor\n"
	mark := ", " + strconv.Quote(PartLabel) + ", \""
	var parts []TickPart
	for rest := q; ; {
		if !strings.HasPrefix(rest, open) {
			return nil, false
		}
		i := strings.Index(rest, mark)
		if i < 0 {
			return nil, false
		}
		query, tail := rest[len(open):i], rest[i+len(mark):]
		j := strings.Index(tail, `", "", "")`)
		if j < 0 {
			return nil, false
		}
		parts = append(parts, TickPart{Part: tail[:j], Query: query})
		rest = tail[j+len(`", "", "")`):]
		if rest == "" {
			break
		}
		if !strings.HasPrefix(rest, sep) {
			return nil, false
		}
		rest = rest[len(sep):]
	}
	if len(parts) < 2 || parts[0].Part != PartValue || parts[1].Part != PartEvidence {
		return nil, false
	}
	return parts, true
}
