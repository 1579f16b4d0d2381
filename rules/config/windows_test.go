package config

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/hermes-failover/hermes/rules"
)

// TestRewriteWindow: every range of the signal's own window becomes the
// longer one, and so does a recording's name by the Prometheus naming
// convention; other ranges, label values, subqueries and offsets stay.
func TestRewriteWindow(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{`sum by (route) (increase(x_total[1m]))`, `sum by (route) (increase(x_total[15m]))`},
		{`(sum by (route) (rate(x_total{verdict="soft_fail",w="1m"}[1m])) or 0 * sum by (route) (rate(x_total[1m]))) / sum by (route) (rate(x_total[1m]))`,
			`(sum by (route) (rate(x_total{verdict="soft_fail",w="1m"}[15m])) or 0 * sum by (route) (rate(x_total[15m]))) / sum by (route) (rate(x_total[15m]))`},
		{`rate(x_total[11m]) / rate(x_total[1h] offset 1m)`, `rate(x_total[11m]) / rate(x_total[1h] offset 1m)`},
		{`min_over_time(rate(x_total[1m])[1m:15s])`, `min_over_time(rate(x_total[15m])[1m:15s])`},
		{`route:llm_gateway_soft_fail_ratio:rate1m`, `route:llm_gateway_soft_fail_ratio:rate15m`},
		{`last_over_time(route:llm_gateway_requests:increase1m[1m])`, `last_over_time(route:llm_gateway_requests:increase15m[15m])`},
		{`route:llm_gateway_requests:rate11m + route:x:min2m_over_1h_offset30m + llm:rate1m`, `route:llm_gateway_requests:rate11m + route:x:min2m_over_1h_offset30m + llm:rate1m`},
		{`not promql (`, `not promql (`},
	} {
		got := RewriteWindow(c.q, time.Minute, 15*time.Minute)
		if c.want != `not promql (` {
			// Compare as the parser prints both.
			e, err := parser.NewParser(parser.Options{}).ParseExpr(c.want)
			if err != nil {
				t.Fatal(err)
			}
			c.want = e.String()
		}
		if got != c.want {
			t.Errorf("RewriteWindow(%q)\n got %q\nwant %q", c.q, got, c.want)
		}
	}
}

// TestTickQueryWindows: a signal with windows sends each window's query
// and volume as further parts of its one query; SplitTickQuery still gives
// the first two and TickParts all of them.
func TestTickQueryWindows(t *testing.T) {
	s := rules.SignalConfig{Name: "hard_fail_ratio",
		Query:   `sum by (route) (rate(x_total{verdict="hard_fail"}[1m])) / sum by (route) (rate(x_total[1m]))`,
		Volume:  `sum by (route) (increase(x_total[1m]))`,
		Windows: []time.Duration{5 * time.Minute, 15 * time.Minute}}
	s = DeriveSignals([]rules.SignalConfig{s})[0]
	q := s.TickQuery()
	if _, err := parser.NewParser(parser.Options{}).ParseExpr(q); err != nil {
		t.Fatalf("TickQuery does not parse: %v\n%s", err, q)
	}
	value, evidence, ok := rules.SplitTickQuery(q)
	if !ok || value != s.Query || evidence != s.Volume {
		t.Errorf("SplitTickQuery = %q, %q, %v; want the query and the volume", value, evidence, ok)
	}
	parts, ok := rules.TickParts(q)
	if !ok {
		t.Fatalf("TickParts(%q) not ok", q)
	}
	want := []string{rules.PartValue, rules.PartEvidence, "value_5m", "evidence_5m", "value_15m", "evidence_15m"}
	if len(parts) != len(want) {
		t.Fatalf("%d parts, want %d: %v", len(parts), len(want), parts)
	}
	for i, p := range parts {
		if p.Part != want[i] {
			t.Errorf("part %d is %q, want %q", i, p.Part, want[i])
		}
	}
	if wq, wv := WindowQueries(s, 15*time.Minute); parts[4].Query != wq || parts[5].Query != wv || QueryWindow(wq) != 15*time.Minute || QueryWindow(wv) != 15*time.Minute {
		t.Errorf("15m parts %q, %q; want the query and volume over 15m", parts[4].Query, parts[5].Query)
	}
	if got := rules.Columns([]rules.SignalConfig{s, {Name: "p99_ratio"}}); len(got) != 4 || got[2] != "hard_fail_ratio@5m" || got[3] != "hard_fail_ratio@15m" {
		t.Errorf("Columns = %v", got)
	}
}

// TestCountWindow: a query's own window is its range, or for a recording
// read without one the window that ends its name.
func TestCountWindow(t *testing.T) {
	for q, want := range map[string]time.Duration{
		`sum by (route) (increase(x_total[2m]))`:                     2 * time.Minute,
		`route:llm_gateway_soft_fail_ratio:rate1m`:                   time.Minute,
		`last_over_time(route:llm_gateway_requests:increase1m[1m])`:  time.Minute,
		`llm_gateway_quota_remaining_ratio`:                          0,
		`route:llm_gateway_request_duration_seconds:samples_min2m_x`: 0,
	} {
		if got := countWindow(q); got != want {
			t.Errorf("countWindow(%q) = %s, want %s", q, got, want)
		}
	}
}

// TestTickQueryOfDerivedWindows: each shipped signal with windows sends
// its query and volume over every window, as the loader derived them
// once (DeriveSignals); a signal with fewer windows sends another query;
// one whose windows were never derived panics rather than send its own
// window's query as a longer window's.
func TestTickQueryOfDerivedWindows(t *testing.T) {
	cfg, err := Load("../hermes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range cfg.Signals {
		if len(s.Windows) == 0 {
			continue
		}
		n++
		q := s.TickQuery()
		if s.Derived.Tick != q || s.JoinTickQuery() != q {
			t.Errorf("%s: the loaded policy does not hold its tick query, joined once (Derived.Tick %q)", s.Name, s.Derived.Tick)
		}
		for _, w := range s.Windows {
			wq, wv := WindowQueries(s, w)
			if !strings.Contains(q, wq) || !strings.Contains(q, wv) {
				t.Errorf("%s: TickQuery lacks the %s window's query or volume", s.Name, w)
			}
		}
		other := s
		other.Windows = other.Windows[:len(other.Windows)-1]
		if other = DeriveSignals([]rules.SignalConfig{other})[0]; other.TickQuery() == q {
			t.Errorf("%s: fewer windows gave the same TickQuery", s.Name)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: TickQuery without derived windows did not panic", s.Name)
				}
			}()
			raw := s
			raw.Derived = rules.DerivedWindows{}
			_ = raw.TickQuery()
		}()
	}
	if n == 0 {
		t.Fatal("no shipped signal has windows: nothing was compared")
	}
}
