package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"

	"github.com/hermes-failover/hermes/proxy"
)

var proxyUsage = usage{name: "proxy", synopsis: "--config FILE [--web.listen-address :9799] [--web.enable-lifecycle]",
	summary: "pass LLM API calls through to each route's upstream, judging each reply (chat completions, Anthropic's Messages, OpenAI's Responses), and export llm_gateway_* for Prometheus"}

// proxyCmd implements "hermes proxy --config FILE": the judging reverse
// proxy, serving /ROUTE/… and /metrics on one listener until ctx ends. It
// reloads its configuration on SIGHUP (and POST /-/reload with
// --web.enable-lifecycle); open streams finish on the routes they began on.
func proxyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := proxyUsage.newFlags()
	configPath := configFlag(fs, "proxy configuration `file` (required)")
	listen := fs.String("web.listen-address", ":9799", "address serving the routes (/ROUTE/…), /metrics, /-/healthy, /-/ready and /-/reload")
	lifecycle := fs.Bool("web.enable-lifecycle", false, "enable POST /-/reload (anyone who reaches the address may then reload)")
	pprofOn := fs.Bool("web.enable-pprof", false, "serve Go runtime profiles (heap, CPU) under /debug/pprof/")
	logs := addLogFlags(fs)
	if _, code, ok := proxyUsage.parse(fs, args, 0, 0, stdout, stderr); !ok {
		return code
	}
	if *configPath == "" {
		return proxyUsage.fail(stderr, fs, "--config is required")
	}
	logger, err := logs.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	cfg, err := proxy.Load(*configPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if proxy.SetGCPercent() {
		logger.Debug("garbage collector target set", "gogc", proxy.GCPercent)
	}
	if proxy.SetProcs() {
		logger.Debug("a P to spare beside the event loops", "gomaxprocs", runtime.GOMAXPROCS(0))
	}
	reg := newDaemonRegistry(versioncollector.NewCollector("hermes"))
	p, err := proxy.New(cfg, reg, logger)
	if err != nil {
		logger.Error("starting the proxy", "err", err)
		return 1
	}
	reloader, err := proxy.NewReloader(*configPath, p, reg, logger)
	if err != nil {
		logger.Error("starting the proxy", "err", err)
		return 1
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		logger.Error("listening", "address", *listen, "err", err)
		return 1
	}
	mux := daemonMux(reg)
	mux.HandleFunc("/", proxy.NoRoute)
	mux.HandleFunc("POST /-/reload", func(w http.ResponseWriter, _ *http.Request) {
		if !*lifecycle {
			http.Error(w, "lifecycle API is not enabled (--web.enable-lifecycle)", http.StatusForbidden)
			return
		}
		if err := reloader.Reload(); err != nil {
			http.Error(w, "reload failed; the previous configuration stays:\n"+err.Error(), http.StatusInternalServerError)
			return
		}
		okHandler(w, nil)
	})
	// The routes are served by the proxy's own fasthttp server; every
	// other path (/metrics, /-/…, /debug/pprof/) by this mux through it.
	srv := p.Server(withPprof(mux, *pprofOn))
	go func() {
		if err := srv.Serve(l); err != nil {
			logger.Error("serving", "err", err)
		}
	}()

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	logger.Info("proxying", "routes", len(cfg.Routes), "address", l.Addr().String())
	for {
		select {
		case <-hup:
			logger.Info("SIGHUP: reloading configuration")
			_ = reloader.Reload()
			continue
		case <-ctx.Done():
		}
		break
	}
	// Open requests get 10 seconds to finish; then what is left is cut.
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.ShutdownWithContext(sctx); err != nil {
		logger.Warn("stopping: open requests cut", "err", err)
	}
	logger.Info("stopped")
	return 0
}
