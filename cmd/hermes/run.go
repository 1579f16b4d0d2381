package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	oklog "github.com/oklog/run"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/runner/auditlog"
	"github.com/hermes-failover/hermes/runner/gauge"
	"github.com/hermes-failover/hermes/runner/persist"
	"github.com/hermes-failover/hermes/runner/telemetry"
	"github.com/hermes-failover/hermes/web"
)

var runUsage = usage{name: "run", synopsis: "--config FILE [flags]",
	summary: "evaluate routes live next to Prometheus and shift traffic"}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := runUsage.newFlags()
	configPath := configFlag(fs, "Hermes configuration `file` (required)")
	webf := addWebFlags(fs)
	auditPath := fs.String("audit.file", "-", `audit log (JSON lines) file, or "-" for standard output`)
	logLevel := fs.String("log.level", "info", "log level: debug, info, warn, error")
	logFormat := fs.String("log.format", "logfmt", "log format: logfmt or json")
	overrides := fs.String("overrides.file", "", "local state file: operator overrides, running drills and active alerts kept across restarts (default: hermes-state.json next to the config; hermes-overrides.json, its old name, is read while it is missing)")
	tolerance := fs.Duration("restore.tolerance", time.Hour, "how old Hermes's own series may be to restore state from them")
	selector := fs.String("restore.selector", "", `label matchers selecting this deployment's own series, e.g. job="hermes"`)
	watch := fs.Bool("config.watch", false, "reload the configuration when its file changes (off: reload on SIGHUP, or POST /-/reload with --web.enable-lifecycle)")
	perSignal := fs.Bool("metrics.per-signal", false, "export hermes_signal_value, _penalty and _status of every signal for every route, not only the informative ones for routes that are not normal or lose points")
	replica := fs.String("replica", "", "this replica's name, when two replicas write the same backends: each write is stamped with it and the tick, and a replica does not overwrite another's fresh, different split (empty: one writer)")
	candidate := fs.String("candidate.file", "", "a candidate policy `file` evaluated beside the configuration every tick on the same data: its levels, splits and alerts are exported (hermes_candidate_*) and shown where they differ, never applied nor sent; read again, and seeded from the live state, at every reload (docs/shadow.md)")
	pprofOn := fs.Bool("web.enable-pprof", false, "serve Go runtime profiles (heap, CPU) under /debug/pprof/")
	if _, code, ok := runUsage.parse(fs, args, 0, 0, stdout, stderr); !ok {
		return code
	}
	if *configPath == "" {
		return runUsage.fail(stderr, fs, "--config is required")
	}
	logger, err := newLogger(stderr, *logLevel, *logFormat)
	if err != nil {
		fmt.Fprintf(stderr, "run: %v\n", err)
		return 2
	}
	token, err := webf.check()
	if err != nil {
		fmt.Fprintf(stderr, "run: %v\n", err)
		return 2
	}
	audit := auditlog.New(stdout)
	if *auditPath != "-" {
		if audit, err = auditlog.Open(*auditPath); err != nil {
			fmt.Fprintf(stderr, "run: --audit.file: %v\n", err)
			return 2
		}
		defer audit.Close()
	}

	// The per-route series (gauge.Vec) are scraped without the registry's
	// per-series checks: a third of a scrape at 10,000 routes.
	reg := gauge.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	kinds := actuatorKinds()
	r, err := runner.New(runner.Options{
		ConfigPath: *configPath, OverridesPath: *overrides, Logger: logger, Registerer: reg,
		Audit: audit, Actuators: kinds,
		Restore: persist.RestoreOptions{Tolerance: *tolerance, Selector: *selector},
		Metrics: telemetry.Options{AllSignals: *perSignal},
		Replica: *replica, CandidatePath: *candidate,
	})
	if err != nil {
		fmt.Fprintf(stderr, "run: %v\n", err)
		return 1
	}

	ln, err := webf.listen()
	if err != nil {
		fmt.Fprintf(stderr, "run: %v\n", err)
		return 1
	}
	srv := webf.newServer(withPprof(web.Handler(web.Options{Loop: web.Live(r), Gatherer: reg, Logger: logger, AdminToken: token,
		EnableAdminAPI: webf.adminAPI, EnableLifecycle: webf.lifecycle}), *pprofOn))
	logger.Info("listening", "address", ln.Addr().String(), "config", *configPath,
		"admin_api", webf.adminAPI, "lifecycle_api", webf.lifecycle)
	if token == "" && (webf.adminAPI || webf.lifecycle) {
		logger.Warn("the enabled admin or lifecycle API accepts anyone who can reach this address; set --web.admin-token-file to require a token")
	}
	// The loop, the HTTP server, SIGHUP and the configuration watcher
	// run as one oklog/run.Group, as Prometheus's main does: the first
	// to return (the loop's failure, the server's, or ctx: SIGINT or
	// SIGTERM) interrupts the others, and Run waits for all of them.
	var g oklog.Group
	g.Add(oklog.ContextHandler(ctx))
	{
		loopCtx, stopLoop := context.WithCancel(context.Background())
		g.Add(func() error {
			if err := r.Run(loopCtx); err != nil {
				logger.Error("evaluator stopped", "err", err)
				return err
			}
			return nil
		}, func(error) { stopLoop() })
	}
	{
		var stopping atomic.Bool
		g.Add(func() error {
			err := webf.serve(ln, srv, logger)
			if err == nil && !stopping.Load() {
				err = errors.New("stopped unasked")
			}
			if err != nil {
				logger.Error("HTTP server stopped", "err", err)
			}
			return err
		}, func(error) {
			stopping.Store(true)
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Warn("HTTP shutdown", "err", err)
			}
		})
	}
	{
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		hupCtx, stopHup := context.WithCancel(context.Background())
		g.Add(func() error {
			defer signal.Stop(hup)
			for {
				select {
				case <-hupCtx.Done():
					return nil
				case <-hup:
					logger.Info("SIGHUP: reloading configuration")
					if err := audit.Reopen(); err != nil { // logrotate's create
						logger.Error("cannot reopen the audit log", "err", err)
					}
					_ = r.Reload(hupCtx)
				}
			}
		}, func(error) { stopHup() })
	}
	if *watch {
		watchCtx, stopWatch := context.WithCancel(context.Background())
		g.Add(func() error {
			if err := r.WatchConfig(watchCtx); err != nil {
				// Not fatal: SIGHUP and /-/reload still reload.
				logger.Warn("cannot watch the configuration file; use SIGHUP or /-/reload", "err", err)
				<-watchCtx.Done()
			}
			return nil
		}, func(error) { stopWatch() })
	}
	code := 0
	if err := g.Run(); err != nil && !errors.Is(err, context.Canceled) {
		code = 1
	}
	logger.Info("stopped")
	return code
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log.level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "logfmt":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log.format must be logfmt or json, not %q", format)
}
