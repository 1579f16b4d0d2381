// Command gen writes a fleet scenario for scripts/bench-promtool.sh: the
// series for `hermes backtest --series` and a promtool test file that
// evaluates the shipped recording rules over the same series and range.
// With -config-only it writes only a configuration with the fleet's
// services instead (scripts/bench-rss.sh).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/internal/benchfleet"
)

func main() {
	scenario := flag.String("scenario", "testdata/scenarios/healthy.yaml", "scenario of the shipped service to stretch")
	routes := flag.Int("routes", 3, "routes in the fleet")
	reps := flag.Int("reps", 4, "repetitions of the scenario end to end")
	rulesFile := flag.String("rules", "rules/prometheus/hermes-recording.rules.yml", "recording rules for promtool")
	out := flag.String("out", "", "output directory")
	configOnly := flag.Bool("config-only", false, "write only hermes.yaml, the shipped configuration with the fleet's services")
	flag.Parse()
	var err error
	if *configOnly {
		err = writeConfig(*routes, *out)
	} else {
		err = run(*scenario, *routes, *reps, *rulesFile, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// writeConfig writes out/hermes.yaml for a fleet of routes routes.
func writeConfig(routes int, out string) error {
	if out == "" {
		return fmt.Errorf("-out is required")
	}
	src, err := benchfleet.ConfigYAML(routes)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "hermes.yaml"), src, 0o644)
}

func run(scenario string, routes, reps int, rulesFile, out string) error {
	if out == "" {
		return fmt.Errorf("-out is required")
	}
	src, err := backtest.ParseFile(scenario)
	if err != nil {
		return err
	}
	f := benchfleet.Series(src, routes, reps)
	series, err := os.Create(filepath.Join(out, "series.yaml"))
	if err != nil {
		return err
	}
	defer series.Close()
	if err := benchfleet.WriteSeries(series, f, ""); err != nil {
		return err
	}
	abs, err := filepath.Abs(rulesFile)
	if err != nil {
		return err
	}
	// promtool evaluates the rules at every evaluation_interval up to the
	// latest eval_time of the group's tests: one expression test at the end
	// makes it evaluate the whole range, as a backtest does.
	var end time.Duration
	for _, s := range f.Series {
		if n := len(s.Samples); n > 0 {
			end = max(end, time.Duration(s.Samples[n-1].T-s.Samples[0].T)*time.Millisecond)
		}
	}
	test, err := os.Create(filepath.Join(out, "promtool.test.yml"))
	if err != nil {
		return err
	}
	defer test.Close()
	fmt.Fprintf(test, "rule_files:\n  - %s\nevaluation_interval: 15s\ntests:\n  -\n", abs)
	if err := benchfleet.WriteSeries(test, f, "    "); err != nil {
		return err
	}
	fmt.Fprintf(test, "    promql_expr_test:\n      - expr: count(route:llm_gateway_requests:rate1m) > 0\n        eval_time: %ds\n        exp_samples:\n          - value: %d\n",
		int(end.Seconds()), routes)
	return test.Close()
}
