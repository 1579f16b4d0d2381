package config

import (
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/hermes-failover/hermes/rules"
)

// TestTickQuery: every shipped signal is one instant-vector query; one with
// evidence marks both halves, one without is its query unchanged.
func TestTickQuery(t *testing.T) {
	cfg, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(cfg.Queries()), len(cfg.Signals); got != want {
		t.Errorf("%d queries per tick, want %d (one per signal)", got, want)
	}
	counted := 0
	for _, s := range cfg.Signals {
		q := s.TickQuery()
		e, err := parser.NewParser(parser.Options{}).ParseExpr(q)
		if err != nil {
			t.Fatalf("signal %s: %v\n%s", s.Name, err, q)
		}
		if e.Type() != parser.ValueTypeVector {
			t.Errorf("signal %s: TickQuery returns %s", s.Name, e.Type())
		}
		if s.EvidenceQuery() == "" {
			if q != s.Query {
				t.Errorf("signal %s without evidence: TickQuery %q, want its query", s.Name, q)
			}
			continue
		}
		counted++
		for _, want := range []string{s.Query, s.EvidenceQuery(), `"` + rules.PartValue + `"`, `"` + rules.PartEvidence + `"`} {
			if !strings.Contains(q, want) {
				t.Errorf("signal %s: TickQuery lacks %q", s.Name, want)
			}
		}
	}
	if counted == 0 {
		t.Error("no shipped signal has a volume or samples")
	}
}

// TestSplitTickQuery: SplitTickQuery gives back the halves of every
// shipped TickQuery with evidence, and refuses anything else.
func TestSplitTickQuery(t *testing.T) {
	cfg, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cfg.Signals {
		q, ev, ok := rules.SplitTickQuery(s.TickQuery())
		if want := s.EvidenceQuery() != ""; ok != want {
			t.Errorf("signal %s: split ok = %v, want %v", s.Name, ok, want)
			continue
		}
		if ok && (q != s.Query || ev != s.EvidenceQuery()) {
			t.Errorf("signal %s: split into %q and %q, want its query and evidence", s.Name, q, ev)
		}
	}
	for _, q := range []string{"", "up", `label_replace(up, "signal_part", "value", "", "")`} {
		if _, _, ok := rules.SplitTickQuery(q); ok {
			t.Errorf("SplitTickQuery(%q) ok, want not a TickQuery", q)
		}
	}
}
