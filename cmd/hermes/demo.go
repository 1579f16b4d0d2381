package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
)

// demoSeries is testdata/scenarios/content_failure.yaml, copied here by the
// scenario generator so the binary can embed it.
//
//go:embed demo_content_failure.yaml
var demoSeries []byte

var demoUsage = usage{name: "demo", synopsis: "[--format text|json]",
	summary: "backtest the embedded default policy on an embedded scenario (no Prometheus needed)"}

func demoCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := demoUsage.newFlags()
	format := fs.String("format", "text", "output format: text or json")
	if _, code, ok := demoUsage.parse(fs, args, 0, 0, stdout, stderr); !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		return demoUsage.fail(stderr, fs, "--format must be text or json, not %q", *format)
	}
	cfg, err := loadConfig("")
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	f, err := backtest.Parse(demoSeries)
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	fmt.Fprintln(stderr, "demo: the default policy (rules/hermes.yaml) over a silent content failure of the free route (testdata/scenarios/content_failure.yaml)")
	pol, err := evaluator.NewPolicy(cfg.Rules())
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	tl, err := backtestFile(ctx, pol, f, backtestFlags{})
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	return writeTimeline(tl, *format, false, stdout, stderr)
}
