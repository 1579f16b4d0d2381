package config

import (
	"time"

	"github.com/prometheus/prometheus/promql/parser"
)

// QueryWindow is the range of the first range selector in q (the "2m" of
// increase(x[2m])), 0 when q has none or does not parse. Explanations name
// it ("2 calls in 2m"); Validate requires one in volume and samples queries.
func QueryWindow(q string) time.Duration {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(q)
	if err != nil {
		return 0
	}
	var w time.Duration
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if ms, ok := n.(*parser.MatrixSelector); ok && w == 0 {
			w = ms.Range
		}
		return nil
	})
	return w
}
