package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The set-up hermes probe and hermes proxy share: both are daemons that
// serve their series on /metrics, with /-/healthy and /-/ready beside
// them, and log with --log.level and --log.format.

// logFlags are --log.level and --log.format.
type logFlags struct{ level, format *string }

func addLogFlags(fs *flag.FlagSet) logFlags {
	return logFlags{
		level:  fs.String("log.level", "info", "log level: debug, info, warn, error"),
		format: fs.String("log.format", "logfmt", "log format: logfmt or json"),
	}
}

// logger is the logger the flags ask for, writing to w.
func (f logFlags) logger(w io.Writer) (*slog.Logger, error) {
	return newLogger(w, *f.level, *f.format)
}

// newDaemonRegistry is a registry holding the Go and process collectors
// and cs.
func newDaemonRegistry(cs ...prometheus.Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(append([]prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}, cs...)...)
	return reg
}

// daemonMux serves GET /metrics from reg, and GET /-/healthy and
// /-/ready; the caller adds its own routes.
func daemonMux(reg *prometheus.Registry) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /-/healthy", okHandler)
	mux.HandleFunc("GET /-/ready", okHandler)
	return mux
}

func okHandler(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "OK") }

// serveDaemon serves h on l until the returned stop is called; stop
// waits up to grace for open requests, then closes what is left. There is
// no write timeout: hermes proxy's streams last as long as their route's
// total_timeout.
func serveDaemon(l net.Listener, h http.Handler, logger *slog.Logger) (stop func(grace time.Duration)) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serving", "err", err)
		}
	}()
	return func(grace time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
	}
}
