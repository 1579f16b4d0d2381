package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Engine is a query engine that speaks the Prometheus HTTP API.
type Engine struct {
	Name   string // of its process and files
	Binary string
	// Ready is the path that answers 200 once the engine serves queries.
	Ready string
	args  func(addr, config, data string) []string
}

// Prometheus is Debian's Prometheus 2.
var Prometheus = Engine{
	Name: "prometheus", Binary: "prometheus", Ready: "/-/ready",
	args: func(addr, config, data string) []string {
		return []string{"--config.file=" + config, "--storage.tsdb.path=" + data, "--web.listen-address=" + addr}
	},
}

// VictoriaMetrics is single-node VictoriaMetrics with its own scraper. Its
// default -search.latencyOffset (30s) would hide recent samples.
var VictoriaMetrics = Engine{
	Name: "victoriametrics", Binary: "victoria-metrics", Ready: "/health",
	args: func(addr, config, data string) []string {
		return []string{
			"-httpListenAddr=" + addr, "-storageDataPath=" + data, "-promscrape.config=" + config,
			"-search.latencyOffset=1s", "-search.disableCache",
		}
	},
}

// TSDB is a running query engine. [Server.Stop] and [Server.Start]
// restart it on the same address and data.
type TSDB struct {
	*Server
	Engine Engine
	// URL is the base URL of its Prometheus query API.
	URL string
	// API is a client of that API.
	API v1.API
}

// StartTSDB starts e on a free loopback port with the configuration text
// config (Prometheus's format: global and scrape_configs), its data in the
// directory data (a new one when empty) and flags after its own, and waits
// until it is ready. It runs until the end of t.
func StartTSDB(t testing.TB, e Engine, config, data string, flags ...string) *TSDB {
	t.Helper()
	bin := Binary(t, e.Binary)
	dir := t.TempDir()
	cfg := filepath.Join(dir, e.Name+".yml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if data == "" {
		data = filepath.Join(dir, "data")
	}
	addr := FreeAddr(t)
	d := &TSDB{Engine: e, URL: "http://" + addr}
	client, err := api.NewClient(api.Config{Address: d.URL})
	if err != nil {
		t.Fatal(err)
	}
	d.API = v1.NewAPI(client)
	d.Server = NewServer(t, e.Name, dir, d.URL+e.Ready, bin, append(e.args(addr, cfg, data), flags...)...)
	d.Start(t)
	return d
}

// Query runs an instant query now.
func (d *TSDB) Query(q string) (model.Vector, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, _, _, err := d.API.Query(ctx, q, time.Now())
	if err != nil {
		return nil, err
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("%s: not a vector: %s", q, v.Type())
	}
	return vec, nil
}

// QueryValue runs q and returns its single value.
func (d *TSDB) QueryValue(q string) (float64, error) {
	vec, err := d.Query(q)
	if err != nil {
		return 0, err
	}
	if len(vec) != 1 {
		return 0, fmt.Errorf("%s: %d series, want 1", q, len(vec))
	}
	return float64(vec[0].Value), nil
}
