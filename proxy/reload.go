package proxy

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Reloader reloads a Proxy's configuration file on demand (SIGHUP, POST
// /-/reload) and exports the outcome as Prometheus does for its own:
// hermes_proxy_config_last_reload_successful and
// hermes_proxy_config_last_reload_success_timestamp_seconds.
type Reloader struct {
	path   string
	proxy  *Proxy
	logger *slog.Logger
	now    func() time.Time

	mu          sync.Mutex // one reload at a time
	successful  prometheus.Gauge
	successTime prometheus.Gauge
}

// NewReloader registers the reload series on reg, for a proxy that was
// started from the file at path (a successful load, now).
func NewReloader(path string, p *Proxy, reg prometheus.Registerer, logger *slog.Logger) (*Reloader, error) {
	r := &Reloader{path: path, proxy: p, logger: logger, now: time.Now,
		successful: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hermes_proxy_config_last_reload_successful",
			Help: "Whether the last configuration reload attempt was successful.",
		}),
		successTime: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hermes_proxy_config_last_reload_success_timestamp_seconds",
			Help: "Timestamp of the last successful configuration reload.",
		}),
	}
	for _, c := range []prometheus.Collector{r.successful, r.successTime} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering reload metrics: %w", err)
		}
	}
	r.successful.Set(1)
	r.successTime.Set(float64(r.now().UnixNano()) / 1e9)
	return r, nil
}

// Reload loads the file again and serves its routes. A file that does not
// load, or routes that do not build, leave the current routes serving and
// are logged on one line; the error is returned too.
func (r *Reloader) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	cfg, err := Load(r.path)
	if err == nil {
		err = r.proxy.Apply(cfg)
	}
	if err != nil {
		r.successful.Set(0)
		r.logger.Error("reload failed; the previous configuration stays", "file", r.path, "err", err)
		return err
	}
	r.successful.Set(1)
	r.successTime.Set(float64(r.now().UnixNano()) / 1e9)
	r.logger.Info("configuration reloaded", "file", r.path, "routes", len(cfg.Routes))
	return nil
}
