package promapi

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// fleetAnswers renders, for every query of the shipped policy's signals,
// the answer a Prometheus holding a healthy fleet of n routes gives: one
// series per route for the value, and for a counted signal its evidence
// and each window's value and evidence. Each query lists its routes in an
// order of its own (as Prometheus lists series in the order its index
// holds them), the same at every tick and in every part of its answer.
func fleetAnswers(tb testing.TB, n int) (signals []rules.SignalConfig, routes []string, answers map[string][]byte) {
	tb.Helper()
	cfg, err := config.Default()
	if err != nil {
		tb.Fatal(err)
	}
	signals = cfg.Signals
	routes = make([]string, n)
	for i := range routes {
		routes[i] = fmt.Sprintf("provider-%d/model-%d", i/4, i%4)
	}
	answers = map[string][]byte{}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sig := range signals {
		q := sig.TickQuery()
		if _, ok := answers[q]; ok {
			continue
		}
		parts := []struct{ part, v string }{{"", "1"}}
		if sig.EvidenceQuery() != "" {
			parts = []struct{ part, v string }{{rules.PartValue, "0.01"}, {rules.PartEvidence, "1200"}}
			for _, w := range sig.Windows {
				parts = append(parts, struct{ part, v string }{rules.WindowPart(rules.PartValue, w), "0.01"},
					struct{ part, v string }{rules.WindowPart(rules.PartEvidence, w), "48000"})
			}
		}
		order := rng.Perm(n)
		var b strings.Builder
		b.WriteString(`{"status":"success","data":{"resultType":"vector","result":[`)
		for p, part := range parts {
			for k, i := range order {
				if p+k > 0 {
					b.WriteByte(',')
				}
				if part.part == "" {
					fmt.Fprintf(&b, `{"metric":{"route":%q},"value":[1700000000.123,%q]}`, routes[i], part.v)
				} else {
					fmt.Fprintf(&b, `{"metric":{"route":%q,"signal_part":%q},"value":[1700000000.123,%q]}`, routes[i], part.part, part.v)
				}
			}
		}
		b.WriteString(`]}}`)
		answers[q] = []byte(b.String())
	}
	return signals, routes, answers
}

// memoryQuery answers each query from answers, decoded as a live tick
// decodes the body of Prometheus's reply.
func memoryQuery(answers map[string][]byte) RouteQueryFunc {
	return func(_ context.Context, q string, _ time.Time, into *Answer) error {
		body, ok := answers[q]
		if !ok {
			return fmt.Errorf("no answer for %q", q)
		}
		_, err := decodeAnswer(bytes.NewReader(body), 0, into.addBytes)
		return err
	}
}

// BenchmarkCollect measures what a live tick spends between Prometheus's
// replies and the snapshot Step reads, at 10,000 routes with the shipped
// policy: every signal's answer decoded from memory (its value, evidence
// and windows, routes in an order of each query's own) and the snapshot
// built, tick after tick: by a Collector, as the live loop does, and by
// a fresh Collector each tick. B/op is the garbage a tick makes.
func BenchmarkCollect(b *testing.B) {
	signals, routes, answers := fleetAnswers(b, 10000)
	query := memoryQuery(answers)
	t := time.Unix(1_700_000_000, 0)
	var c Collector
	for _, run := range []struct {
		name    string
		collect func() evaluator.Snapshot
	}{
		{"collector", func() evaluator.Snapshot { return c.Collect(context.Background(), query, signals, routes, t, 0) }},
		{"fresh", func() evaluator.Snapshot {
			return new(Collector).Collect(context.Background(), query, signals, routes, t, 0)
		}},
	} {
		b.Run(run.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				snap := run.collect()
				if s := snap.Get(routes[len(routes)-1], signals[0].Name); s.Status != evaluator.StatusOK {
					b.Fatalf("last route %+v", s)
				}
			}
		})
	}
}
