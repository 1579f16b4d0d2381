package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/probe"
	"github.com/hermes-failover/hermes/rules"
)

var checkUsage = usage{name: "check", synopsis: "[--config FILE] [--syntax-only]",
	summary: "validate a configuration file (Hermes's, actuators included, or the prober's) and report every problem"}

// checkCmd implements "hermes check [--config FILE]": it loads and validates
// a configuration (the embedded default policy without --config) and builds
// its actuators as run does, then checks what they need of this machine (a
// state file's directory, the nginx binary) unless --syntax-only. It prints
// a summary and returns 0 when the configuration is valid, prints every
// problem, one per line with its file:line, to stderr and returns 1 when it
// is not, and returns 2 on a usage error.
func checkCmd(args []string, stdout, stderr io.Writer) int {
	fs := checkUsage.newFlags()
	configFile := configFlag(fs, "configuration `file` (default: the embedded default policy)")
	syntaxOnly := fs.Bool("syntax-only", false, "skip what depends on this machine (directories, binaries): for checking a configuration meant for another host")
	if _, code, ok := checkUsage.parse(fs, args, 0, 0, stdout, stderr); !ok {
		return code
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
	// Actuator options are the backends' own: build them as run does.
	acts, err := actuatorKinds().Build(cfg.Actuators, slog.New(slog.DiscardHandler))
	if err == nil && !*syntaxOnly {
		err = actuators.Preflight(acts)
	}
	if err != nil {
		fmt.Fprintln(stderr, cfg.Locate(err))
		return 1
	}
	fmt.Fprintf(stdout, "config OK: %d signals, %d services, %d alert rules\n",
		len(cfg.Signals), len(cfg.Services), len(cfg.Alerts))
	return 0
}
