package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/backtest/detect"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules/config"
)

// history is one history to replay: a series file or a Prometheus's range.
// replay may be called twice (the current policy, then a candidate's);
// close releases what the replays shared.
type history struct {
	name   string
	replay func(pol *evaluator.Policy) (*backtest.Timeline, error)
	close  func()
	// degraded is the history's ground truth, when it has one (a
	// scenario's "# degraded:" lines).
	degraded backtest.Degraded
}

// seriesHistory is the series file at path, opened at its first replay;
// opening it warns on stderr about series of routes pol does not know.
func seriesHistory(ctx context.Context, path string, pol *evaluator.Policy, rf backtestFlags, stderr io.Writer) *history {
	h := &history{name: path, close: func() {}}
	var bt *backtest.Store
	h.replay = func(p *evaluator.Policy) (*backtest.Timeline, error) {
		if bt == nil {
			var err error
			if bt, err = backtest.OpenFile(path); err != nil {
				return nil, err
			}
			h.close = func() { bt.Close() }
			warnUnknownRoutes(stderr, path, bt.Routes(), pol.Routes())
			if data, err := os.ReadFile(path); err == nil {
				if truth, err := detect.ParseTruth(data); err == nil && len(truth) > 0 {
					h.degraded = detect.Degraded(truth, bt.Start())
				}
			}
		}
		rf.progress = progressTo(stderr, time.Now)
		return backtestSeries(ctx, p, bt, rf)
	}
	return h
}

// warnUnknownRoutes says which routes of a series file no service of the
// policy has: their series are replayed for nothing, and a typo in a
// route label would otherwise pass as a healthy backtest.
func warnUnknownRoutes(stderr io.Writer, path string, inFile, known []string) {
	var unknown []string
	for _, r := range inFile {
		if !slices.Contains(known, r) {
			unknown = append(unknown, r)
		}
	}
	if len(unknown) > 0 {
		fmt.Fprintf(stderr, "backtest: warning: %s has series for route(s) %q that no service of the configuration has (known routes: %q); they are ignored\n", path, unknown, known)
	}
}

// backtestPolicies loads the current policy (--config, or the embedded
// default) and, with --compare, the candidate's.
func backtestPolicies(configPath, comparePath string) (cur, cand *evaluator.Policy, prom map[*evaluator.Policy]config.PrometheusConfig, err error) {
	prom = map[*evaluator.Policy]config.PrometheusConfig{}
	load := func(path, what string) (*evaluator.Policy, error) {
		cfg, err := loadConfig(path)
		var pol *evaluator.Policy
		if err == nil {
			pol, err = evaluator.NewPolicy(cfg.Rules())
		}
		if err != nil && what != "" {
			err = fmt.Errorf("%s: %w", what, err)
		}
		if err == nil {
			prom[pol] = cfg.Prometheus
		}
		return pol, err
	}
	if cur, err = load(configPath, ""); err != nil || comparePath == "" {
		return cur, nil, prom, err
	}
	if cand, err = load(comparePath, "--compare "+comparePath); err != nil {
		return nil, nil, nil, err
	}
	if cur.Config.Global.EvaluationInterval != cand.Config.Global.EvaluationInterval {
		return nil, nil, nil, errors.New("--compare: the candidate's global.evaluation_interval differs from the current one; ticks would not line up")
	}
	return cur, cand, prom, nil
}

// writeComparison prints c as text or one JSON object.
func writeComparison(c backtest.Comparison, format string, stdout, stderr io.Writer) int {
	return writeFormat(format, c.WriteText, c.WriteJSON, stdout, stderr)
}
