// Package promfleet fills a real Prometheus with the gateway metric
// contract (docs/design.md) of a fleet of healthy routes, for measuring
// what Hermes's queries cost that Prometheus at 1,000 and 10,000 routes
// (test/scale, scripts/bench-prometheus.sh).
//
// It writes through Prometheus's remote-write receiver
// (--web.enable-remote-write-receiver), which takes samples with their
// timestamps: hours of history arrive in a minute, where scraping an
// exporter would take those hours, and a backfill with promtool would
// write an OpenMetrics text file of gigabytes first. Live ticks after the
// history continue the same series every 15 s, as scrapes would.
package promfleet

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/hermes-failover/hermes/internal/benchfleet"
)

// Interval is the live scrape interval the fleet's series are written at.
const Interval = 15 * time.Second

// SeriesPerRoute is about how many series each route has (Fleet's series
// divided by its routes): four request counters, retries, six latency
// buckets, the reply size's sum and count, a readiness and an end-to-end
// probe, a quality score, and a quota on every third route.
const SeriesPerRoute = 17

// Fleet is the series of routes healthy routes named as benchfleet names
// them (free, paid-standard, paid-premium, free-1, ...), and their values.
type Fleet struct {
	URL    string // Prometheus's base URL
	Client *http.Client

	series []series
	// batch is how many series one write request carries.
	batch int
}

// series is one series: its labels and how its value moves per second.
type series struct {
	labels []prompb.Label
	// rate is a counter's increase per second, 0 for a gauge.
	rate  float64
	value float64
}

// New builds the fleet of routes routes writing to the Prometheus at url.
func New(url string, routes int) *Fleet {
	f := &Fleet{URL: url, Client: &http.Client{Timeout: 2 * time.Minute}, batch: 4000}
	for i := range routes {
		f.addRoute(benchfleet.Route(i), i)
	}
	return f
}

// Series is the number of series the fleet writes.
func (f *Fleet) Series() int { return len(f.series) }

// addRoute adds one route's series: 20 calls per second, 1 % soft
// failures (empty replies and error templates) and 0.5 % HTTP 422s, well
// inside the shipped policy's thresholds, with the same latency
// distribution at every hour, so every signal reads healthy.
func (f *Fleet) addRoute(route string, i int) {
	counter := func(rate float64, kv ...string) {
		f.series = append(f.series, series{labels: labelSet(append([]string{"route", route}, kv...)), rate: rate})
	}
	gauge := func(v float64, kv ...string) {
		f.series = append(f.series, series{labels: labelSet(append([]string{"route", route}, kv...)), value: v})
	}
	counter(19.7, "__name__", "llm_gateway_requests_total", "code", "200", "verdict", "ok")
	counter(0.1, "__name__", "llm_gateway_requests_total", "code", "200", "verdict", "soft_fail", "reason", "empty")
	counter(0.1, "__name__", "llm_gateway_requests_total", "code", "200", "verdict", "soft_fail", "reason", "error_body")
	counter(0.1, "__name__", "llm_gateway_requests_total", "code", "422", "verdict", "hard_fail")
	counter(0.4, "__name__", "llm_gateway_retries_total")
	for _, b := range []struct {
		le    string
		share float64
	}{{"0.25", 0.3}, {"0.5", 0.6}, {"1", 0.9}, {"2", 0.97}, {"4", 0.995}, {"+Inf", 1}} {
		counter(20*b.share, "__name__", "llm_gateway_request_duration_seconds_bucket", "le", b.le)
	}
	counter(20*1800, "__name__", "llm_gateway_response_size_bytes_sum")
	counter(20, "__name__", "llm_gateway_response_size_bytes_count")
	// hermes probe's defaults: readiness every 10s, e2e every 2m.
	counter(0.1, "__name__", "llm_probe_results_total", "probe", "models", "layer", "readiness", "verdict", "ok")
	counter(1.0/120, "__name__", "llm_probe_results_total", "probe", "chat", "layer", "e2e", "verdict", "ok")
	gauge(0.95, "__name__", "llm_gateway_quality_score")
	if i%3 == 0 {
		gauge(0.8, "__name__", "llm_gateway_quota_remaining_ratio")
	}
}

// labelSet sorts name-value pairs into remote write's sorted labels.
func labelSet(kv []string) []prompb.Label {
	ls := make([]prompb.Label, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		ls = append(ls, prompb.Label{Name: kv[i], Value: kv[i+1]})
	}
	slices.SortFunc(ls, func(a, b prompb.Label) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return ls
}

// History writes the series from from to to: every minute until 20
// minutes before to (what hour-long baselines and offsets read), every
// Interval after (what 1m and 2m windows read). It returns the last
// timestamp written.
func (f *Fleet) History(ctx context.Context, from, to time.Time) (time.Time, error) {
	var times []time.Time
	dense := to.Add(-20 * time.Minute)
	for t := from; !t.After(to); {
		times = append(times, t)
		if t.Before(dense) {
			t = t.Add(time.Minute)
		} else {
			t = t.Add(Interval)
		}
	}
	// Ten timestamps per request: the labels travel once per ten samples.
	prev := from
	for start := 0; start < len(times); start += 10 {
		chunk := times[start:min(start+10, len(times))]
		if err := f.write(ctx, prev, chunk); err != nil {
			return prev, err
		}
		prev = chunk[len(chunk)-1]
	}
	return prev, nil
}

// Tick writes one sample of every series at t, Interval after the last.
func (f *Fleet) Tick(ctx context.Context, prev, t time.Time) error {
	return f.write(ctx, prev, []time.Time{t})
}

// write appends the samples of every series at times (after prev) and
// sends them, f.batch series per request, two requests at a time.
func (f *Fleet) write(ctx context.Context, prev time.Time, times []time.Time) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, 2)
	)
	for start := 0; start < len(f.series); start += f.batch {
		part := f.series[start:min(start+f.batch, len(f.series))]
		req := &prompb.WriteRequest{Timeseries: make([]prompb.TimeSeries, len(part))}
		for i := range part {
			s := &part[i]
			ts := prompb.TimeSeries{Labels: s.labels, Samples: make([]prompb.Sample, len(times))}
			last := prev
			for j, t := range times {
				s.value += s.rate * t.Sub(last).Seconds()
				last = t
				ts.Samples[j] = prompb.Sample{Value: s.value, Timestamp: t.UnixMilli()}
			}
			req.Timeseries[i] = ts
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := f.send(ctx, req); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// send posts one remote-write request.
func (f *Fleet) send(ctx context.Context, req *prompb.WriteRequest) error {
	raw, err := req.Marshal()
	if err != nil {
		return fmt.Errorf("encoding remote write: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, f.URL+"/api/v1/write", bytes.NewReader(snappy.Encode(nil, raw)))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Encoding", "snappy")
	hreq.Header.Set("Content-Type", "application/x-protobuf")
	hreq.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	resp, err := f.Client.Do(hreq)
	if err != nil {
		return fmt.Errorf("remote write: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("remote write: %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	return nil
}

// CPUSeconds reads process_cpu_seconds_total from the Prometheus's own
// /metrics: the CPU it has used since it started.
func CPUSeconds(ctx context.Context, client *http.Client, url string) (float64, error) {
	return selfMetric(ctx, client, url, "process_cpu_seconds_total")
}

// selfMetric reads the value of an unlabelled metric from url's /metrics.
func selfMetric(ctx context.Context, client *http.Client, url, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", name, err)
	}
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(name+" ")); ok {
			return strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
		}
	}
	return 0, fmt.Errorf("%s/metrics has no %s", url, name)
}
