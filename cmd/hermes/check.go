package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/hermes-failover/hermes/probe"
	"github.com/hermes-failover/hermes/rules"
)

// checkCmd implements "hermes check [--config FILE]": it loads and validates
// a configuration (the embedded default policy without --config). It prints
// a summary and returns 0 when the configuration is valid, prints every
// problem, one per line, to stderr and returns 1 when it is not, and
// returns 2 on a usage error.
func checkCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hermes check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config", "", "configuration `file` (default: the embedded default policy)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: hermes check [--config FILE]\n\nValidate a configuration file and report every problem.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hermes check: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}

	// A prober configuration (top-level targets:) is checked as such.
	if data, err := os.ReadFile(*configFile); *configFile != "" && err == nil && probe.LooksLikeConfig(data) {
		pcfg, err := probe.Load(*configFile)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintf(stdout, "probe config OK: %d targets, %d prompts\n", len(pcfg.Targets), len(pcfg.Prompts))
		return 0
	}

	var (
		cfg *rules.Config
		err error
	)
	if *configFile == "" {
		cfg, err = rules.Default()
	} else {
		cfg, err = rules.Load(*configFile)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	// Actuator options are the backends' own: build them as run would.
	if _, err := actuatorKinds().Build(cfg.Actuators, slog.New(slog.DiscardHandler)); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "config OK: %d signals, %d services, %d alert rules\n",
		len(cfg.Signals), len(cfg.Services), len(cfg.Alerts))
	return 0
}
