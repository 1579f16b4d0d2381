package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/evaluator/replay"
	"github.com/hermes-failover/hermes/rules"
)

// releaseFlags collects repeated --release ROUTE@OFFSET flags.
type releaseFlags []string

func (r *releaseFlags) String() string     { return strings.Join(*r, ",") }
func (r *releaseFlags) Set(v string) error { *r = append(*r, v); return nil }

func backtestCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("backtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	series := fs.String("series", "", "series file in promtool input_series notation (or a promtool test file)")
	configPath := fs.String("config", "", "Hermes configuration (default: the embedded rules/hermes.yaml)")
	format := fs.String("format", "text", "output format: text or json")
	var releases releaseFlags
	fs.Var(&releases, "release", "release ROUTE from manual at OFFSET from the start, e.g. free@3h (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *series == "" {
		fmt.Fprintln(stderr, "backtest: --series is required")
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "backtest: --format must be text or json, not %q\n", *format)
		return 2
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "backtest: %v\n", err)
		return 1
	}
	f, err := replay.ParseFile(*series)
	if err != nil {
		fmt.Fprintf(stderr, "backtest: %v\n", err)
		return 1
	}
	tl, err := backtestFile(ctx, cfg, f, releases)
	if err != nil {
		fmt.Fprintf(stderr, "backtest: %v\n", err)
		return 1
	}
	return writeTimeline(tl, *format, stdout, stderr)
}

// backtestFile replays a parsed series file through the policy of cfg.
func backtestFile(ctx context.Context, cfg *rules.Config, f *replay.File, releases []string) (*replay.Timeline, error) {
	pol, err := evaluator.NewPolicy(cfg)
	if err != nil {
		return nil, err
	}
	bt, err := replay.Open(f)
	if err != nil {
		return nil, err
	}
	defer bt.Close()
	var opts replay.Options
	for _, r := range releases {
		route, off, ok := strings.Cut(r, "@")
		d, err := model.ParseDuration(off)
		if !ok || route == "" || err != nil {
			return nil, fmt.Errorf("--release %q: want ROUTE@OFFSET such as free@3h", r)
		}
		opts.Releases = append(opts.Releases, replay.Release{Route: route, At: bt.Start().Add(time.Duration(d)), Reason: "--release " + r})
	}
	return replay.Run(ctx, pol, bt.Query, bt.Start(), bt.End(), opts)
}

// loadConfig loads and validates path, or the embedded default when empty.
func loadConfig(path string) (*rules.Config, error) {
	var cfg *rules.Config
	var err error
	if path == "" {
		cfg, err = rules.Default()
	} else {
		cfg, err = rules.Load(path)
	}
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid configuration:\n%w", err)
	}
	return cfg, nil
}

func writeTimeline(tl *replay.Timeline, format string, stdout, stderr io.Writer) int {
	var err error
	if format == "json" {
		err = tl.WriteJSON(stdout)
	} else {
		err = tl.WriteText(stdout)
	}
	if err != nil && !errors.Is(err, io.ErrClosedPipe) {
		fmt.Fprintf(stderr, "backtest: %v\n", err)
		return 1
	}
	return 0
}
