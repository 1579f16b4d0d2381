package telemetry

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner/gauge"
)

// countingWriter counts what a scrape writes.
type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// encodeScrape encodes everything reg holds in the text format a Prometheus
// scrapes, into w, and returns the number of series.
func encodeScrape(reg prometheus.Gatherer, w io.Writer) (int, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return 0, err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	series := 0
	for _, mf := range mfs {
		series += len(mf.GetMetric())
		if err := enc.Encode(mf); err != nil {
			return 0, err
		}
	}
	return series, nil
}

// cpuTime is the CPU time the process has used so far, user and system.
// Benchmarks report it per operation beside the wall time: on a shared
// machine the wall time follows the other processes, the CPU time much
// less.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fleetTick is the shipped policy over n routes in services of 4, with a
// tenth of the routes losing points, and the state after three ticks.
func fleetTick(b *testing.B, n int) (*evaluator.Policy, evaluator.State, evaluator.Snapshot, time.Time) {
	p := testenv.DefaultPolicy(b, testenv.Fleet(n))
	now := time.Unix(1_700_000_000, 0)
	snap := testenv.Degraded(p, testenv.Healthy(p, now), 10, "soft_fail_ratio", 0.12)
	var s evaluator.State
	for i := range 3 {
		s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: snap}, now.Add(time.Duration(i)*15*time.Second))
	}
	return p, s, snap, now
}

// BenchmarkScrape measures Hermes's own /metrics after a tick of the shipped
// policy, with a tenth of the routes degraded: bytes and series per scrape
// (what the Prometheus next to Hermes pays), and the time to encode it.
func BenchmarkScrape(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			p, s, snap, now := fleetTick(b, n)
			reg := prometheus.NewRegistry()
			m := newWithSaved(reg, Options{})
			m.Update(p, s, snap, nil, now)
			var w countingWriter
			var series int
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime(b)
			for b.Loop() {
				w.n = 0
				var err error
				if series, err = encodeScrape(reg, &w); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(w.n), "bytes/scrape")
			b.ReportMetric(float64(series), "series/scrape")
		})
	}
}

// BenchmarkUpdate measures one tick's export of Hermes's own series (the
// saved state through persist's Exporter, scores, per-signal series) at
// the state of fleetTick.
func BenchmarkUpdate(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			p, s, snap, now := fleetTick(b, n)
			m := newWithSaved(prometheus.NewRegistry(), Options{})
			m.Update(p, s, snap, nil, now)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime(b)
			for b.Loop() {
				m.Update(p, s, snap, nil, now)
			}
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// scrapeAccept is the Accept header Prometheus 2.x sends when it scrapes.
const scrapeAccept = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

// BenchmarkScrapeHTTP measures one scrape of /metrics as Prometheus makes
// it, after a tick of the shipped policy with a tenth of the routes
// degraded: over HTTP on 127.0.0.1, asked for OpenMetrics with gzip, the
// Go and process collectors beside Hermes's own series as in hermes run.
// Its CPU is what each Prometheus scraping Hermes adds to every interval.
// serve=hermes is how hermes run serves it (Handler over a
// gauge.Registry); serve=promhttp is promhttp's default handler over a
// prometheus.Registry, as it was served before; serve=registry (promhttp's
// handler over a gauge.Registry) and serve=handler (Handler over a
// prometheus.Registry) are the two changes apart.
func BenchmarkScrapeHTTP(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, serve := range []string{"hermes", "registry", "handler", "promhttp"} {
			b.Run(fmt.Sprintf("routes=%d/serve=%s", n, serve), func(b *testing.B) {
				benchmarkScrapeHTTP(b, n, serve)
			})
		}
	}
}

func benchmarkScrapeHTTP(b *testing.B, n int, serve string) {
	p, s, snap, now := fleetTick(b, n)
	var reg interface {
		prometheus.Registerer
		prometheus.Gatherer
	}
	if serve == "hermes" || serve == "registry" {
		reg = gauge.NewRegistry()
	} else {
		reg = prometheus.NewRegistry()
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := newWithSaved(reg, Options{})
	m.Update(p, s, snap, nil, now)
	h := Handler(reg)
	if serve == "promhttp" || serve == "registry" {
		h = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Accept", scrapeAccept)
	req.Header.Set("Accept-Encoding", "gzip")
	var w countingWriter
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime(b)
	for b.Loop() {
		resp, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		w.n = 0
		_, err = io.Copy(&w, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" {
			b.Fatalf("scrape: %v, status %d, Content-Encoding %q", err, resp.StatusCode, resp.Header.Get("Content-Encoding"))
		}
	}
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(w.n), "gzip-bytes/scrape")
}
