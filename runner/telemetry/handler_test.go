package telemetry

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hermes-failover/hermes/runner/gauge"
)

// TestHandlerScrapesAsPromhttp: hermes run's /metrics (Handler over a
// gauge.Registry) is promhttp's default handler's over a
// prometheus.Registry, as it was served before, byte for byte once
// decompressed, for a scrape asked as Prometheus asks (OpenMetrics first,
// gzip) and for one that accepts no compression; only the gzip level
// differs.
func TestHandlerScrapesAsPromhttp(t *testing.T) {
	p := policy(t, nil)
	plain, fast := prometheus.NewPedanticRegistry(), gauge.NewRegistry()
	for _, reg := range []prometheus.Registerer{plain, fast} {
		m := newWithSaved(reg, Options{AllSignals: true})
		m.Update(p, midFailback(p, t0), healthy(p, t0), map[string]bool{"other": true}, t0)
		m.ObserveTick(0, t0)
		m.QueryError("soft_fail_ratio", "timeout")
	}

	scrape := func(h http.Handler, encoding string) (body []byte, contentEncoding, contentType string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
		if encoding != "" {
			req.Header.Set("Accept-Encoding", encoding)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		body = rec.Body.Bytes()
		if ce := rec.Header().Get("Content-Encoding"); ce == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		return body, rec.Header().Get("Content-Encoding"), rec.Header().Get("Content-Type")
	}
	before := promhttp.HandlerFor(plain, promhttp.HandlerOpts{})
	after := Handler(fast)
	for _, enc := range []string{"gzip", ""} {
		want, wantCE, wantCT := scrape(before, enc)
		got, gotCE, gotCT := scrape(after, enc)
		if gotCE != wantCE || gotCT != wantCT {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, Content-Type %q; promhttp says %q, %q", enc, gotCE, gotCT, wantCE, wantCT)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Accept-Encoding %q: the scrape differs from promhttp's:\n%s\nwant:\n%s", enc, got, want)
		}
		if len(want) < 2000 || !bytes.Contains(want, []byte(`hermes_route_traffic_ratio{route="paid-premium",service="chat"} 0.7`)) {
			t.Errorf("Accept-Encoding %q: a scrape of %d bytes without the routes' series: the test sees too little", enc, len(want))
		}
	}
}
