package telemetry

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"net/http"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzhttp/writer"
	"github.com/klauspost/compress/gzhttp/writer/gzstd"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/hermes-failover/hermes/runner/gauge"
)

// Handler serves the series of g on /metrics as promhttp.HandlerFor does,
// compressed at gzip.BestSpeed for a client that accepts gzip (Prometheus
// asks for it on every scrape).
//
// Why not promhttp's own compression: it gzips at the default level,
// which cost about 20 ms of a scrape's CPU more than BestSpeed at 10,000
// routes (BenchmarkScrapeHTTP: 36 ms against 59 ms a scrape, serve=hermes
// against serve=registry), and the text repeats itself so much that
// BestSpeed makes it little larger (207 kB against 194 kB for that
// bench's fleet; 149 kB against 153 kB, smaller, for the calm fleet of
// scripts/bench-rss.sh). promhttp offers no level, so it compresses
// nothing here and gzhttp (klauspost's, which negotiates Accept-Encoding
// as net/http's clients expect) does, with the standard library's gzip:
// at BestSpeed it cost less than klauspost's own (46–51 ms a scrape). zstd
// is left off, as promhttp offers it only when asked to.
//
// Over a gauge.Registry, a scrape in the text format (what Prometheus
// gets: this handler offers no OpenMetrics, as promhttp's default does
// not) is written by the registry itself (gauge.TextScrape), with the
// headers promhttp sets; any other format, a scrape filtered by name[]
// or a failed gather is promhttp's.
func Handler(g prometheus.Gatherer) http.Handler {
	h := promhttp.HandlerFor(g, promhttp.HandlerOpts{DisableCompression: true})
	if reg, ok := g.(*gauge.Registry); ok {
		h = textHandler(reg, h)
	}
	wrap, err := gzhttp.NewWrapper(gzhttp.CompressionLevel(gzip.BestSpeed), gzhttp.EnableZstd(false), gzhttp.Implementation(writer.GzipWriterFactory{Levels: gzstd.Levels, New: gzstd.NewWriter}))
	if err != nil {
		// The options are constants: an error is a programming error.
		panic(fmt.Sprintf("telemetry: gzip handler: %v", err))
	}
	return wrap(h)
}

// textHandler serves reg's scrapes in the text format as promhttp's
// handler does (other's), and leaves the rest to other.
func textHandler(reg *gauge.Registry, other http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		format := expfmt.NegotiateAccept(req.Header, expfmt.DefaultAcceptedFormats()...)
		if format.FormatType() != expfmt.TypeTextPlain || req.URL != nil && req.URL.Query().Has("name[]") {
			other.ServeHTTP(w, req)
			return
		}
		scrape, err := reg.GatherText()
		if err != nil {
			other.ServeHTTP(w, req) // it gathers again and reports the error
			return
		}
		w.Header().Add("Vary", "Accept")
		w.Header().Set("Content-Type", string(format))
		bw := bufio.NewWriterSize(w, 32<<10)
		if scrape.Write(bw, format) == nil {
			_ = bw.Flush()
		}
	})
}
