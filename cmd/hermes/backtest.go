package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/atomicfile"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/web/report"
)

// repeated collects the values of a repeatable flag.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

var backtestUsage = usage{name: "backtest", synopsis: "--series FILE [FILE…] | --prometheus URL --from T [--to T]  [flags]",
	summary: "run the policy over series files (promtool notation) or a Prometheus's history",
	details: `Each series file is replayed and reported on its own, in the order given
(with --format json, one JSON document per line). Times for --from and --to
are RFC 3339, Unix seconds, "now", or relative to now: -10m, now-6h.
`}

func backtestCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := backtestUsage.newFlags()
	var series repeated
	fs.Var(&series, "series", "series `file` in promtool input_series notation (or a promtool test file); repeatable, and further files may follow as arguments")
	configPath := configFlag(fs, "Hermes configuration `file` (default: ./hermes.yaml when present, else the embedded rules/hermes.yaml, with a warning)")
	format := fs.String("format", "text", "output format: text or json")
	promURL := fs.String("prometheus", "", "replay what this Prometheus (or any engine with its query API) holds, instead of --series")
	fromS := fs.String("from", "", "with --prometheus: start, RFC 3339, Unix seconds, now or -DURATION (e.g. -6h)")
	toS := fs.String("to", "now", "with --prometheus: end, as --from")
	var releases repeated
	fs.Var(&releases, "release", "release ROUTE from manual at OFFSET from the start, e.g. free@3h (repeatable)")
	var injects repeated
	fs.Var(&injects, "inject", "overlay a fault on the replayed signals: ROUTE:SIGNAL=VALUE@OFFSET[+DURATION] from the start, e.g. free:error_body_ratio=0.4@10m (repeatable)")
	reportPath := fs.String("report", "", "also write a self-contained HTML `file`: summary, traffic split and score charts of each backtest")
	ticks := fs.Bool("ticks", false, "with --format json: add every tick's score and level per route and split per service")
	var comparePaths repeated
	fs.Var(&comparePaths, "compare", "replay the same history through this candidate configuration `file` too, and report where it decides differently from --config; given twice (--compare A --compare B), compare A with B")
	pos, code, ok := backtestUsage.parse(fs, args, 0, -1, stdout, stderr)
	if !ok {
		return code
	}
	if len(series) == 0 && len(pos) > 0 {
		return backtestUsage.fail(stderr, fs, "unexpected argument %q (series files follow --series)", pos[0])
	}
	series = append(series, pos...)
	if (len(series) == 0) == (*promURL == "") {
		return backtestUsage.fail(stderr, fs, "give --series FILE… or --prometheus URL, not both")
	}
	if *format != "text" && *format != "json" {
		return backtestUsage.fail(stderr, fs, "--format must be text or json, not %q", *format)
	}
	if *ticks && *format != "json" {
		return backtestUsage.fail(stderr, fs, "--ticks needs --format json")
	}
	if len(comparePaths) > 2 {
		return backtestUsage.fail(stderr, fs, "--compare is given at most twice (--compare A --compare B)")
	}
	if len(comparePaths) == 2 && *configPath != "" {
		return backtestUsage.fail(stderr, fs, "give --config with one --compare, or two --compare files without --config")
	}
	if *ticks && len(comparePaths) > 0 {
		return backtestUsage.fail(stderr, fs, "--ticks does not apply to --compare (the report draws both policies' ticks)")
	}
	curPath, comparePath := *configPath, ""
	switch len(comparePaths) {
	case 1:
		comparePath = comparePaths[0]
	case 2:
		curPath, comparePath = comparePaths[0], comparePaths[1]
	}
	if curPath == "" {
		curPath = defaultBacktestConfig(stderr)
	}
	pol, cand, prom, err := backtestPolicies(curPath, comparePath)
	if err == nil && *reportPath != "" {
		err = checkWritable(*reportPath)
	}
	if err != nil {
		fmt.Fprintf(stderr, "backtest: %v\n", err)
		return 1
	}
	// The report and a comparison draw every tick; JSON prints them only
	// with --ticks.
	rf := backtestFlags{releases: releases, injects: injects, ticks: *ticks || *reportPath != "" || cand != nil}
	var histories []*history
	if *promURL != "" {
		histories = append(histories, &history{name: *promURL, close: func() {}, replay: func(p *evaluator.Policy) (*backtest.Timeline, error) {
			return backtestPrometheus(ctx, p, prom[p], *promURL, *fromS, *toS, rf, time.Now())
		}})
	}
	for _, path := range series {
		histories = append(histories, seriesHistory(ctx, path, pol, rf, stderr))
	}
	var backtests []report.Backtest
	var compares []report.Compare
	for i, h := range histories {
		tl, err := h.replay(pol)
		if err != nil {
			h.close()
			fmt.Fprintf(stderr, "backtest: %s: %v\n", h.name, err)
			return 1
		}
		cur := report.Backtest{Name: h.name, Timeline: tl, Policy: pol, Degraded: h.degraded}
		if len(histories) > 1 && *format == "text" {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "== %s\n", h.name)
		}
		if cand == nil {
			h.close()
			backtests = append(backtests, cur)
			if code := writeTimeline(tl, *format, *ticks, stdout, stderr); code != 0 {
				return code
			}
			continue
		}
		ctl, err := h.replay(cand)
		h.close()
		if err != nil {
			fmt.Fprintf(stderr, "backtest: %s: candidate %s: %v\n", h.name, comparePath, err)
			return 1
		}
		compares = append(compares, report.Compare{Current: cur, Candidate: report.Backtest{Name: h.name, Timeline: ctl, Policy: cand, Degraded: h.degraded},
			CurrentName: policyName(curPath), CandidateName: comparePath})
		if code := writeComparison(backtest.CompareNamed(policyName(curPath), tl, comparePath, ctl, h.degraded), *format, stdout, stderr); code != 0 {
			return code
		}
	}
	if *reportPath != "" {
		if err := writeReport(*reportPath, backtests, compares); err != nil {
			fmt.Fprintf(stderr, "backtest: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "backtest: report written to %s\n", *reportPath)
	}
	return 0
}

// localConfig is the configuration file backtest reads when --config is
// not given and the file exists in the working directory, as prometheus
// reads ./prometheus.yml.
const localConfig = "hermes.yaml"

// defaultBacktestConfig is the configuration a backtest without --config
// replays: ./hermes.yaml when present, else the embedded policy (""),
// whose routes are the shipped example's, not the user's; either way it
// says so in one line on stderr.
func defaultBacktestConfig(stderr io.Writer) string {
	if _, err := os.Stat(localConfig); err == nil {
		fmt.Fprintf(stderr, "backtest: no --config: replaying ./%s\n", localConfig)
		return localConfig
	}
	fmt.Fprintf(stderr, "backtest: warning: no --config and no ./%s: replaying the embedded example policy (rules/hermes.yaml), whose routes may not be yours\n", localConfig)
	return ""
}

// policyName names the current policy of a comparison: its file, or
// "embedded policy".
func policyName(path string) string {
	if path == "" {
		return "embedded policy"
	}
	return path
}

// checkWritable fails early, before a long backtest, when path cannot be
// created.
func checkWritable(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	return f.Close()
}

// writeReport writes the HTML report of backtests, or of comparisons, to
// path, atomically.
func writeReport(path string, backtests []report.Backtest, compares []report.Compare) error {
	var b bytes.Buffer
	write := func() error { return report.Write(&b, backtests) }
	if len(compares) > 0 {
		write = func() error { return report.WriteCompare(&b, compares) }
	}
	if err := write(); err != nil {
		return err
	}
	if err := atomicfile.Write(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	return nil
}

// backtestFlags are the flags that shape a backtest: --release, --inject, and
// whether to keep every tick (--ticks, --report).
type backtestFlags struct {
	releases, injects []string
	ticks             bool
	// progress, when set, hears how far a long backtest has come.
	progress func(done, total time.Duration)
}

// backtestFile backtests a parsed series file through pol.
func backtestFile(ctx context.Context, pol *evaluator.Policy, f *backtest.File, rf backtestFlags) (*backtest.Timeline, error) {
	bt, err := backtest.Open(f)
	if err != nil {
		return nil, err
	}
	defer bt.Close()
	return backtestSeries(ctx, pol, bt, rf)
}

// backtestSeries backtests the opened series bt through pol.
func backtestSeries(ctx context.Context, pol *evaluator.Policy, bt *backtest.Store, rf backtestFlags) (*backtest.Timeline, error) {
	opts, err := rf.options(pol, bt.Start())
	if err != nil {
		return nil, err
	}
	return backtest.RunStore(ctx, pol, bt, rf.progress, opts)
}

// backtestPrometheus backtests [from, to] of a Prometheus: one range query per
// signal at the evaluation interval, then the same ticks as a live run.
func backtestPrometheus(ctx context.Context, pol *evaluator.Policy, pc config.PrometheusConfig, url, fromS, toS string, rf backtestFlags, now time.Time) (*backtest.Timeline, error) {
	cfg := pol.Config
	if fromS == "" {
		return nil, errors.New("--from is required with --prometheus")
	}
	from, err := parseTime(fromS, now)
	if err != nil {
		return nil, fmt.Errorf("--from: %w", err)
	}
	to, err := parseTime(toS, now)
	if err != nil {
		return nil, fmt.Errorf("--to: %w", err)
	}
	if !to.After(from) {
		return nil, errors.New("--to must be after --from")
	}
	pc.URL = url
	api, err := promapi.NewAPI(pc)
	if err != nil {
		return nil, err
	}
	step := cfg.Global.EvaluationInterval
	from = from.Truncate(step)
	cache, err := backtest.NewRangeCache(ctx, api, pol.Queries(), from, to.Truncate(step), step)
	if err != nil {
		return nil, err
	}
	opts, err := rf.options(pol, from)
	if err != nil {
		return nil, err
	}
	return backtest.Run(ctx, pol, cache.Query, cache.Start(), cache.End(), opts)
}

// options turns the flags into backtest options, offsets counted from start.
func (rf backtestFlags) options(pol *evaluator.Policy, start time.Time) (backtest.Options, error) {
	opts := backtest.Options{Ticks: rf.ticks}
	for _, s := range rf.injects {
		o, err := evaluator.ParseOverlay(pol, s, start)
		if err != nil {
			return opts, fmt.Errorf("--inject %w", err)
		}
		opts.Inject = append(opts.Inject, o)
	}
	for _, r := range rf.releases {
		route, off, ok := strings.Cut(r, "@")
		d, err := model.ParseDuration(off)
		if !ok || route == "" || err != nil {
			return opts, fmt.Errorf("--release %q: want ROUTE@OFFSET such as free@3h", r)
		}
		opts.Releases = append(opts.Releases, backtest.Release{Route: route, At: start.Add(time.Duration(d)), Reason: "--release " + r})
	}
	return opts, nil
}

// parseTime accepts RFC 3339 or Unix seconds, like Prometheus's API, and
// times relative to now: "now", "-10m", "now-6h" (Prometheus durations).
func parseTime(s string, now time.Time) (time.Time, error) {
	if rel, ok := strings.CutPrefix(s, "now"); ok && (rel == "" || rel[0] == '-') {
		if rel == "" {
			return now, nil
		}
		s = rel
	}
	if ago, ok := strings.CutPrefix(s, "-"); ok {
		if d, err := model.ParseDuration(ago); err == nil {
			return now.Add(-time.Duration(d)), nil
		}
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return time.Time{}, fmt.Errorf("want RFC 3339, Unix seconds, now or -DURATION (e.g. -10m), got %q", s)
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC(), nil
}

// loadConfig loads and validates path, or the embedded default when empty.
func loadConfig(path string) (*config.Config, error) {
	var cfg *config.Config
	var err error
	if path == "" {
		cfg, err = config.Default()
	} else {
		cfg, err = config.Load(path)
	}
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid configuration:\n%w", err)
	}
	return cfg, nil
}

// writeTimeline prints tl as text or JSON; JSON carries its ticks only when
// ticks is set.
func writeTimeline(tl *backtest.Timeline, format string, ticks bool, stdout, stderr io.Writer) int {
	if !ticks {
		tl = &backtest.Timeline{Start: tl.Start, End: tl.End, Step: tl.Step, Events: tl.Events, Final: tl.Final}
	}
	return writeFormat(format, tl.WriteText, tl.WriteJSON, stdout, stderr)
}

// writeFormat prints with asText or asJSON as format says; a closed pipe
// (| head) is no failure.
func writeFormat(format string, asText, asJSON func(io.Writer) error, stdout, stderr io.Writer) int {
	write := asText
	if format == "json" {
		write = asJSON
	}
	if err := write(stdout); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		fmt.Fprintf(stderr, "backtest: %v\n", err)
		return 1
	}
	return 0
}
