package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"

	"github.com/hermes-failover/hermes/evaluator/replay"
)

// demoSeries is testdata/scenarios/content_failure.yaml, copied here by the
// scenario generator so the binary can embed it.
//
//go:embed demo_content_failure.yaml
var demoSeries []byte

func demoCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output format: text or json")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := loadConfig("")
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	f, err := replay.Parse(demoSeries)
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	fmt.Fprintln(stderr, "demo: the default policy (rules/hermes.yaml) over a silent content failure of the free route (testdata/scenarios/content_failure.yaml)")
	tl, err := backtestFile(ctx, cfg, f, nil, nil)
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	return writeTimeline(tl, *format, stdout, stderr)
}
