package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hermes-failover/hermes/probe"
)

var probeUsage = usage{name: "probe", synopsis: "--config FILE [--web.listen-address :9798]",
	summary: "probe LLM routes (liveness, readiness, end-to-end, boundary) and export llm_probe_* for Prometheus"}

// probeCmd implements "hermes probe --config FILE": the synthetic prober,
// serving its llm_probe_* series on /metrics until ctx ends.
func probeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := probeUsage.newFlags()
	configPath := configFlag(fs, "prober configuration `file` (required)")
	listen := fs.String("web.listen-address", ":9798", "address serving /metrics, /-/healthy and /-/ready")
	logLevel := fs.String("log.level", "info", "log level: debug, info, warn, error")
	logFormat := fs.String("log.format", "logfmt", "log format: logfmt or json")
	if _, code, ok := probeUsage.parse(fs, args, 0, 0, stdout, stderr); !ok {
		return code
	}
	if *configPath == "" {
		return probeUsage.fail(stderr, fs, "--config is required")
	}
	logger, err := newLogger(stderr, *logLevel, *logFormat)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	cfg, err := probe.Load(*configPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	p, err := probe.New(cfg, reg, nil, logger)
	if err != nil {
		logger.Error("starting the prober", "err", err)
		return 1
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		logger.Error("listening", "address", *listen, "err", err)
		return 1
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	ok := func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "OK") }
	mux.HandleFunc("GET /-/healthy", ok)
	mux.HandleFunc("GET /-/ready", ok)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serving", "err", err)
		}
	}()
	logger.Info("probing", "targets", len(cfg.Targets), "address", l.Addr().String())
	_ = p.Run(ctx)
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	logger.Info("stopped")
	return 0
}
