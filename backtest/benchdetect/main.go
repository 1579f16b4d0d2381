// Command benchdetect runs every backtest scenario through the shipped
// policy and through the detection rules people use today, on the same
// series with the same embedded PromQL engine, and prints a Markdown table
// (onset, first alert, first traffic move, full failover, false alerts,
// false moves, minutes on a degraded route). With -nights N it draws N
// random failing and N healthy low-traffic nights instead (internal/synth)
// and prints, per method, how many failing nights were acted on within
// 15 min, how many moved a backup, and the healthy nights' false moves and
// alerts per route-day. With -fleet N it replays the healthy fleet's noise
// (internal/synth, fleet.go) instead: -weeks healthy weeks of three routes,
// and per rate (0.1, 0.3, 1 req/s on free, idle backups) N healthy 6 h
// nights and N failing ones of each failure kind (fallback phrases,
// truncation, error templates, 503s), each failing row with its bound:
// twice the expected calls of Wald's SPRT (α 0.001, β 0.05, the policy's
// threshold against the failing share) at the rate, plus 1 min.
// `make bench-detect` runs all three.
//
//	go run ./backtest/benchdetect [-dir testdata/scenarios] [-run REGEXP]
//	go run ./backtest/benchdetect -nights 100 [-seed 1]
//	go run ./backtest/benchdetect -fleet 20 [-weeks 3] [-seed 1]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/hermes-failover/hermes/backtest/detect"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules/config"
)

func main() {
	dir := flag.String("dir", "testdata/scenarios", "the scenario files")
	run := flag.String("run", "", "only scenarios whose name matches this regular expression")
	nights := flag.Uint64("nights", 0, "instead, draw this many random failing and healthy low-traffic nights and sum each method's outcomes")
	fleet := flag.Uint64("fleet", 0, "instead, replay this many healthy and failing fleet nights per rate and kind, and -weeks healthy weeks")
	weeks := flag.Uint64("weeks", 3, "with -fleet, how many healthy weeks")
	seed := flag.Uint64("seed", 1, "with -nights or -fleet, the first seed")
	flag.Parse()
	var err error
	switch {
	case *fleet > 0:
		err = benchFleet(*seed, *weeks, *fleet)
	case *nights > 0:
		err = benchNights(*seed, *nights)
	default:
		err = bench(*dir, *run)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-detect:", err)
		os.Exit(1)
	}
}

func benchNights(first, n uint64) error {
	pol, err := defaultPolicy()
	if err != nil {
		return err
	}
	reports, err := detect.Nights(context.Background(), pol, first, n)
	if err != nil {
		return err
	}
	return detect.WriteNightsTable(os.Stdout, reports)
}

func benchFleet(first, weeks, n uint64) error {
	pol, err := defaultPolicy()
	if err != nil {
		return err
	}
	rows, err := detect.FleetRows(context.Background(), pol, first, weeks, n)
	if err != nil {
		return err
	}
	return detect.WriteFleetTable(os.Stdout, rows)
}

func defaultPolicy() (*evaluator.Policy, error) {
	cfg, err := config.Default()
	if err != nil {
		return nil, err
	}
	return evaluator.NewPolicy(cfg.Rules())
}

func bench(dir, run string) error {
	re, err := regexp.Compile(run)
	if err != nil {
		return err
	}
	pol, err := defaultPolicy()
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	var outs []detect.Outcome
	for _, f := range files {
		if !re.MatchString(strings.TrimSuffix(filepath.Base(f), ".yaml")) {
			continue
		}
		o, err := detect.Scenario(context.Background(), pol, f)
		if err != nil {
			return err
		}
		outs = append(outs, o...)
	}
	return detect.WriteTable(os.Stdout, outs)
}
