package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/evaluator/promapi"
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
	promURL := fs.String("prometheus", "", "replay what this Prometheus (or any engine with its query API) holds, instead of --series")
	fromS := fs.String("from", "", "with --prometheus: start, RFC 3339 or Unix seconds")
	toS := fs.String("to", "", "with --prometheus: end, RFC 3339 or Unix seconds (default: now)")
	var releases releaseFlags
	fs.Var(&releases, "release", "release ROUTE from manual at OFFSET from the start, e.g. free@3h (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if (*series == "") == (*promURL == "") {
		fmt.Fprintln(stderr, "backtest: give exactly one of --series FILE or --prometheus URL")
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
	if *promURL != "" {
		tl, err := backtestPrometheus(ctx, cfg, *promURL, *fromS, *toS, releases)
		if err != nil {
			fmt.Fprintf(stderr, "backtest: %v\n", err)
			return 1
		}
		return writeTimeline(tl, *format, stdout, stderr)
	}
	f, err := replay.ParseFile(*series)
	if err != nil {
		fmt.Fprintf(stderr, "backtest: %v\n", err)
		return 1
	}
	tl, err := backtestFile(ctx, cfg, f, releases, progressTo(stderr, time.Now))
	if err != nil {
		fmt.Fprintf(stderr, "backtest: %v\n", err)
		return 1
	}
	return writeTimeline(tl, *format, stdout, stderr)
}

// backtestFile replays a parsed series file through the policy of cfg.
func backtestFile(ctx context.Context, cfg *rules.Config, f *replay.File, releases []string, progress func(done, total time.Duration)) (*replay.Timeline, error) {
	pol, err := evaluator.NewPolicy(cfg)
	if err != nil {
		return nil, err
	}
	bt, err := replay.Open(f)
	if err != nil {
		return nil, err
	}
	defer bt.Close()
	opts, err := releaseOptions(releases, bt.Start())
	if err != nil {
		return nil, err
	}
	return replay.RunBacktest(ctx, pol, bt, progress, opts)
}

// backtestPrometheus replays [from, to] of a Prometheus: one range query per
// signal at the evaluation interval, then the same ticks as a live run.
func backtestPrometheus(ctx context.Context, cfg *rules.Config, url, fromS, toS string, releases []string) (*replay.Timeline, error) {
	if fromS == "" {
		return nil, errors.New("--from is required with --prometheus")
	}
	from, err := parseTime(fromS)
	if err != nil {
		return nil, fmt.Errorf("--from: %w", err)
	}
	to := time.Now()
	if toS != "" {
		if to, err = parseTime(toS); err != nil {
			return nil, fmt.Errorf("--to: %w", err)
		}
	}
	if !to.After(from) {
		return nil, errors.New("--to must be after --from")
	}
	pol, err := evaluator.NewPolicy(cfg)
	if err != nil {
		return nil, err
	}
	pc := cfg.Prometheus
	pc.URL = url
	api, err := promapi.NewAPI(pc)
	if err != nil {
		return nil, err
	}
	step := cfg.Global.EvaluationInterval
	from = from.Truncate(step)
	cache, err := replay.NewRangeCache(ctx, api, cfg.Queries(), from, to.Truncate(step), step)
	if err != nil {
		return nil, err
	}
	opts, err := releaseOptions(releases, from)
	if err != nil {
		return nil, err
	}
	return replay.Run(ctx, pol, cache.Query, cache.Start(), cache.End(), opts)
}

// releaseOptions turns --release ROUTE@OFFSET flags into replayed releases.
func releaseOptions(releases []string, start time.Time) (replay.Options, error) {
	var opts replay.Options
	for _, r := range releases {
		route, off, ok := strings.Cut(r, "@")
		d, err := model.ParseDuration(off)
		if !ok || route == "" || err != nil {
			return opts, fmt.Errorf("--release %q: want ROUTE@OFFSET such as free@3h", r)
		}
		opts.Releases = append(opts.Releases, replay.Release{Route: route, At: start.Add(time.Duration(d)), Reason: "--release " + r})
	}
	return opts, nil
}

// parseTime accepts RFC 3339 or Unix seconds, like Prometheus's API.
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("want RFC 3339 or Unix seconds, got %q", s)
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC(), nil
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
