package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

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
	logs := addLogFlags(fs)
	if _, code, ok := probeUsage.parse(fs, args, 0, 0, stdout, stderr); !ok {
		return code
	}
	if *configPath == "" {
		return probeUsage.fail(stderr, fs, "--config is required")
	}
	logger, err := logs.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	cfg, err := probe.Load(*configPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	reg := newDaemonRegistry()
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
	stop := serveDaemon(l, daemonMux(reg), logger)
	logger.Info("probing", "targets", len(cfg.Targets), "address", l.Addr().String())
	_ = p.Run(ctx)
	stop(5 * time.Second)
	logger.Info("stopped")
	return 0
}
