// Command benchdetect runs every backtest scenario through the shipped
// policy and through the detection rules people use today, on the same
// series with the same embedded PromQL engine, and prints a Markdown table
// (onset, first alert, first traffic move, full failover, false alerts,
// false moves, minutes on a degraded route). `make bench-detect` runs it.
//
//	go run ./backtest/benchdetect [-dir testdata/scenarios] [-run REGEXP]
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
	"github.com/hermes-failover/hermes/rules"
)

func main() {
	dir := flag.String("dir", "testdata/scenarios", "the scenario files")
	run := flag.String("run", "", "only scenarios whose name matches this regular expression")
	flag.Parse()
	if err := bench(*dir, *run); err != nil {
		fmt.Fprintln(os.Stderr, "bench-detect:", err)
		os.Exit(1)
	}
}

func bench(dir, run string) error {
	re, err := regexp.Compile(run)
	if err != nil {
		return err
	}
	cfg, err := rules.Default()
	if err != nil {
		return err
	}
	pol, err := evaluator.NewPolicy(cfg)
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
