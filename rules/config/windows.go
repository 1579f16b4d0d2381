package config

import (
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/hermes-failover/hermes/rules"
)

// DeriveSignals are signals with what their PromQL says of their windows
// (rules.DerivedWindows) worked out: each signal's own window, its
// evidence query's window, its queries over each longer window and the
// tick query that joins them all (rules.SignalConfig.TickQuery). The
// core reads these without parsing PromQL; the parsing is done here, once
// per load, rather than each tick.
func DeriveSignals(signals []rules.SignalConfig) []rules.SignalConfig {
	out := make([]rules.SignalConfig, len(signals))
	for i, s := range signals {
		s.Derived = rules.DerivedWindows{Own: OwnWindow(s), Evidence: QueryWindow(s.EvidenceQuery())}
		for _, w := range s.Windows {
			q, v := WindowQueries(s, w)
			s.Derived.Over = append(s.Derived.Over, rules.WindowQuery{Query: q, Volume: v})
		}
		s.Derived.Tick = s.JoinTickQuery()
		out[i] = s
	}
	return out
}

// OwnWindow is the window of a signal with a volume: the range its volume
// counts over (the 1m of increase(x[1m])), 0 when it has none.
func OwnWindow(s rules.SignalConfig) time.Duration {
	if s.Volume == "" {
		return 0
	}
	return countWindow(s.Volume)
}

// countWindow is the window q counts over: its QueryWindow, or for a
// query without a range the window that ends the name of the first
// recording it reads by the convention level:metric:operations (the 1m of
// route:llm_gateway_soft_fail_ratio:rate1m). 0 when neither says.
func countWindow(q string) time.Duration {
	if w := QueryWindow(q); w > 0 {
		return w
	}
	e, err := parser.NewParser(parser.Options{}).ParseExpr(q)
	if err != nil {
		return 0
	}
	var w time.Duration
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok && w == 0 {
			w = recordingWindow(vs.Name)
		}
		return nil
	})
	return w
}

// recordingWindow is the window that ends the operations of a recording
// named level:metric:operations (rate1m, increase15m), 0 for any other
// name; windowAt is where it starts in name.
func recordingWindow(name string) time.Duration {
	i, ok := windowAt(name)
	if !ok {
		return 0
	}
	d, _ := model.ParseDuration(name[i:])
	return time.Duration(d)
}

// windowAt is where the window that ends a recording's name starts, ok
// false when name is no recording or ends in no window.
func windowAt(name string) (int, bool) {
	if strings.Count(name, ":") < 2 {
		return 0, false
	}
	i := len(name)
	for i > 0 && strings.IndexByte("0123456789smhdwy", name[i-1]) >= 0 {
		i--
	}
	for i < len(name) && (name[i] < '0' || name[i] > '9') {
		i++
	}
	if i == len(name) {
		return 0, false
	}
	if _, err := model.ParseDuration(name[i:]); err != nil {
		return 0, false
	}
	return i, true
}

// WindowQueries are the query and the volume of the signal over window w:
// its own with every range of its own window made w (RewriteWindow).
func WindowQueries(s rules.SignalConfig, w time.Duration) (query, volume string) {
	own := OwnWindow(s)
	return RewriteWindow(s.Query, own, w), RewriteWindow(s.Volume, own, w)
}

// RewriteWindow is q with every range selector whose range is from made
// to, and every recording named by the Prometheus convention
// level:metric:operations whose operations end in from (the rate1m of
// route:llm_gateway_soft_fail_ratio:rate1m) named with to instead (rate15m):
// by that convention it is the same computation over the other window.
// Ranges of other lengths (an hour-long baseline, a subquery) are kept.
// q is returned unchanged when it does not parse.
//
// The rewrite goes through the Prometheus parser rather than the text, so
// a "1m" inside a label value or a longer range such as [11m] is never
// touched; the result is the parser's own printing of the expression.
func RewriteWindow(q string, from, to time.Duration) string {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(q)
	if err != nil || from <= 0 {
		return q
	}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.MatrixSelector:
			if n.Range == from {
				n.Range, n.RangeExpr = to, nil
			}
		case *parser.VectorSelector:
			name, ok := renameWindow(n.Name, from, to)
			if !ok {
				return nil
			}
			n.Name = name
			for i, m := range n.LabelMatchers {
				if m != nil && m.Name == labels.MetricName && m.Type == labels.MatchEqual {
					n.LabelMatchers[i] = labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, name)
				}
			}
		}
		return nil
	})
	return e.String()
}

// renameWindow is the recording name with the window from that ends its
// operations made to, ok false when name is no recording over from.
func renameWindow(name string, from, to time.Duration) (string, bool) {
	if recordingWindow(name) != from {
		return "", false
	}
	i, _ := windowAt(name)
	return name[:i] + model.Duration(to).String(), true
}
