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
// The added label makes the two halves' label sets disjoint, so `or` keeps
// every series of both and a tick costs one round trip per signal however
// many routes there are. Both halves are evaluated at the same time by the
// same engine, as two queries would be; promapi.Collect splits them.
func (s SignalConfig) TickQuery() string {
	ev := s.EvidenceQuery()
	if ev == "" {
		return s.Query
	}
	return markPart(s.Query, PartValue) + "\nor\n" + markPart(ev, PartEvidence)
}

// markPart wraps q so each of its series carries PartLabel=part.
func markPart(q, part string) string {
	return "label_replace(" + q + ", " + strconv.Quote(PartLabel) + ", " + strconv.Quote(part) + `, "", "")`
}

// SplitTickQuery is TickQuery's inverse: the query and evidence query of a
// TickQuery with evidence, ok false for any other query. Sources that answer
// by a query's text rather than by evaluating PromQL (fakes, fixed answers)
// use it, through promapi.ByPart, to answer each half.
func SplitTickQuery(q string) (query, evidence string, ok bool) {
	head, rest, found := strings.Cut(q, markPart("", PartValue)[len("label_replace("):]+"\nor\n")
	if !found || !strings.HasPrefix(head, "label_replace(") {
		return "", "", false
	}
	tail := markPart("", PartEvidence)[len("label_replace("):]
	if !strings.HasPrefix(rest, "label_replace(") || !strings.HasSuffix(rest, tail) {
		return "", "", false
	}
	return head[len("label_replace("):], rest[len("label_replace(") : len(rest)-len(tail)], true
}
