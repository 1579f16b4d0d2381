package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/probe"
	"github.com/hermes-failover/hermes/proxy"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/actuation"
)

var checkUsage = usage{name: "check", synopsis: "[--config FILE] [--syntax-only] [--write-initial] [--replica NAME]",
	summary: "validate a configuration file (Hermes's, actuators included, the prober's or the proxy's) and report every problem"}

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
	writeInitial := fs.Bool("write-initial", false, "write each actuator's initial state where it has none yet (nginx's include files: every service on its first route), so that nginx can start before Hermes; existing files are kept")
	replica := fs.String("replica", "", "check the configuration for `hermes run --replica NAME`: the name, and that every actuator carries the replicas' lease")
	if _, code, ok := checkUsage.parse(fs, args, 0, 0, stdout, stderr); !ok {
		return code
	}
	if err := actuation.CheckReplicaName(*replica); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
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
	// So is a proxy configuration (top-level routes:).
	if data, err := os.ReadFile(*configFile); *configFile != "" && err == nil && proxy.LooksLikeConfig(data) {
		pcfg, err := proxy.Load(*configFile)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintf(stdout, "proxy config OK: %d routes\n", len(pcfg.Routes))
		return 0
	}

	var (
		cfg *config.Config
		err error
	)
	if *configFile == "" {
		cfg, err = config.Default()
	} else {
		cfg, err = config.Load(*configFile)
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
	if err == nil && *replica != "" {
		err = actuators.CheckStamps(cfg.Actuators, acts)
	}
	if err != nil {
		fmt.Fprintln(stderr, cfg.Locate(err))
		return 1
	}
	fmt.Fprintf(stdout, "config OK: %d signals, %d services, %d alert rules\n",
		len(cfg.Signals), len(cfg.Services), len(cfg.Alerts))
	if *writeInitial && !*syntaxOnly {
		initial, err := initialSplits(cfg)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		wrote, err := actuators.WriteInitial(acts, initial)
		for _, w := range wrote {
			fmt.Fprintf(stdout, "wrote the initial state of %s\n", w)
		}
		if err != nil {
			fmt.Fprintln(stderr, cfg.Locate(err))
			return 1
		}
		if len(wrote) == 0 {
			fmt.Fprintln(stdout, "initial state: every actuator already holds one; nothing written")
		}
	}
	return 0
}

// initialSplits is the split the core plans for cfg at a first tick
// that knows nothing yet (every route normal, no data): each service's
// traffic on the first route of its chain.
func initialSplits(cfg *config.Config) (actuators.Splits, error) {
	p, err := evaluator.NewPolicy(cfg.Rules())
	if err != nil {
		return nil, fmt.Errorf("initial state: %w", err)
	}
	t := time.Unix(0, 0)
	s, _ := evaluator.Step(p, evaluator.State{}, evaluator.Input{Snapshot: evaluator.NewSnapshot(t, p.Routes(), nil)}, t)
	out := actuators.Splits{}
	for name, sp := range s.Services {
		out[name] = *sp
	}
	return out, nil
}
