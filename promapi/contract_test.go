package promapi

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/hermes-failover/hermes/rules/config"
)

// contractCase is one answer of a Prometheus, or one failure to get it,
// and the outcome both of Client's paths must give for it.
type contractCase struct {
	name string
	// serve answers /prom/api/v1/query (the URL has a path prefix); a
	// request elsewhere gets a 404.
	serve http.HandlerFunc
	// tls serves over HTTPS with a certificate of its own.
	tls bool
	// cfg adjusts the prometheus section (auth, TLS, bounds); srv is the
	// started server, dir a directory for files.
	cfg func(t *testing.T, cfg *config.PrometheusConfig, srv *httptest.Server, dir string)
	// down: the server is gone before the query (connection refused).
	down bool
	// timeout is the query's deadline (default 4 s).
	timeout time.Duration

	// want: what each route got, by route (render), when the query
	// succeeds; reason and detail: ErrorReason and ErrorDetail of its
	// error ("*": any, the same for both paths); warning: a warning
	// logged.
	want           string
	reason, detail string
	warning        string
}

// reply answers with code and body, as JSON.
func reply(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

// vectorReply is a successful answer holding series (JSON objects).
func vectorReply(series ...string) http.HandlerFunc {
	return reply(http.StatusOK, `{"status":"success","data":{"resultType":"vector","result":[`+strings.Join(series, ",")+`]}}`)
}

// head is the start of an answer cut short.
const head = `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"route":"free"},"value":[1,"1"]},`

var contractCases = []contractCase{
	{
		name: "values and evidence",
		serve: vectorReply(
			`{"metric":{"__name__":"x","route":"free","job":"gw"},"value":[1000,"0.25"]}`,
			`{"metric":{"route":"free","signal_part":"evidence"},"value":[1000,"1200"]}`,
			`{"metric":{"route":"paid","signal_part":"value"},"value":[1000,"0"]}`,
			`{"metric":{"route":"gone"},"value":[1000,"7"]}`,
			`{"metric":{"job":"no route"},"value":[1000,"7"]}`),
		want: "free: value 0.25, evidence 1200; paid: value 0, evidence none",
	},
	{
		name:  "empty result",
		serve: vectorReply(),
		want:  "free: value none, evidence none; paid: value none, evidence none",
	},
	{
		// A stale marker is a NaN too, written "NaN"; Prometheus leaves
		// stale series out of instant results.
		name: "NaN and infinities",
		serve: vectorReply(
			`{"metric":{"route":"free"},"value":[1000,"NaN"]}`,
			`{"metric":{"route":"paid"},"value":[1000,"+Inf"]}`,
			`{"metric":{"route":"paid","signal_part":"evidence"},"value":[1000,"-Inf"]}`),
		want: "free: value NaN, evidence none; paid: value +Inf, evidence -Inf",
	},
	{
		name: "several series for one route",
		serve: vectorReply(
			`{"metric":{"route":"free","code":"200"},"value":[1000,"1"]}`,
			`{"metric":{"route":"free","code":"500"},"value":[1000,"2"]}`),
		want: "free: 2 values, evidence none; paid: value none, evidence none",
	},
	{
		name:    "warnings",
		serve:   reply(http.StatusOK, `{"status":"success","warnings":["partial answer"],"data":{"resultType":"vector","result":[{"metric":{"route":"free"},"value":[1000,"1"]}]}}`),
		want:    "free: value 1, evidence none; paid: value none, evidence none",
		warning: "partial answer",
	},
	{
		name: "POST refused, asked by GET",
		serve: func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			vectorReply(`{"metric":{"route":"paid"},"value":[1000,"3"]}`)(w, r)
		},
		want: "free: value none, evidence none; paid: value 3, evidence none",
	},
	{
		name:   "a matrix",
		serve:  reply(http.StatusOK, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"route":"free"},"values":[[1000,"1"]]}]}}`),
		reason: "query must return an instant vector, got matrix",
		detail: "query must return an instant vector, got matrix",
	},
	{
		name:   "a matrix, its result before its type",
		serve:  reply(http.StatusOK, `{"status":"success","data":{"result":[{"metric":{"route":"free"},"values":[[1000,"1"]]}],"resultType":"matrix"}}`),
		reason: "query must return an instant vector, got matrix",
		detail: "query must return an instant vector, got matrix",
	},
	{
		name:   "a scalar",
		serve:  reply(http.StatusOK, `{"status":"success","data":{"resultType":"scalar","result":[1000,"1"]}}`),
		reason: "query must return an instant vector, got scalar",
		detail: "query must return an instant vector, got scalar",
	},
	{
		name:   "a native histogram",
		serve:  vectorReply(`{"metric":{"route":"free"},"histogram":[1000,{"count":"2","sum":"3","buckets":[[0,"0","1","2"]]}]}`),
		reason: "bad_response",
		detail: "a series without a float value (a native histogram?): signal queries must retur…",
	},
	{
		name:   "bad_data, 400",
		serve:  reply(http.StatusBadRequest, `{"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected"}`),
		reason: "bad_data", detail: "1:5: parse error: unexpected",
	},
	{
		name:   "execution, 422, with warnings",
		serve:  reply(http.StatusUnprocessableEntity, `{"status":"error","errorType":"execution","error":"out of memory","warnings":["partial answer"]}`),
		reason: "execution", detail: "out of memory",
		warning: "partial answer",
	},
	{
		name:   "execution, 422",
		serve:  reply(http.StatusUnprocessableEntity, `{"status":"error","errorType":"execution","error":"many-to-many matching not allowed"}`),
		reason: "execution", detail: "many-to-many matching not allowed",
	},
	{
		name:   "a Prometheus timeout, 503",
		serve:  reply(http.StatusServiceUnavailable, `{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}`),
		reason: "timeout", detail: "server error: 503",
	},
	{
		name:   "an unknown errorType, 503",
		serve:  reply(http.StatusServiceUnavailable, `{"status":"error","errorType":"made_up","error":"?"}`),
		reason: "other", detail: "server error: 503",
	},
	{
		name:   "an error in a 200",
		serve:  reply(http.StatusOK, `{"status":"error","errorType":"internal","error":"boom"}`),
		reason: "internal", detail: "boom",
	},
	{
		name:   "success in a 400",
		serve:  reply(http.StatusBadRequest, `{"status":"success","data":{"resultType":"vector","result":[]}}`),
		reason: "bad_response", detail: "inconsistent body for response code",
	},
	{
		name: "a plain 500",
		serve: func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "proxy says no", http.StatusInternalServerError)
		},
		reason: "server_error", detail: "server error: 500",
	},
	{
		name:   "a plain 404",
		serve:  func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) },
		reason: "client_error", detail: "client error: 404",
	},
	{
		name:   "not JSON, 400",
		serve:  func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "bad request", http.StatusBadRequest) },
		reason: "client_error", detail: "client error: 400",
	},
	{
		name:   "bad JSON",
		serve:  reply(http.StatusOK, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"route":"free"},"value":[1000,1]}]}}`),
		reason: "bad_response", detail: "malformed answer: *",
	},
	{
		name:   "not JSON at all",
		serve:  reply(http.StatusOK, `<html>maintenance</html>`),
		reason: "bad_response", detail: "malformed answer: *",
	},
	{
		name:   "data after the answer",
		serve:  reply(http.StatusOK, `{"status":"success","data":{"resultType":"vector","result":[]}} {}`),
		reason: "bad_response", detail: "malformed answer: *",
	},
	{
		name:   "no timeout on the server, the client's deadline passes",
		serve:  func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
		reason: "timeout", detail: "no answer within the query timeout", timeout: 300 * time.Millisecond,
	},
	{
		name: "the deadline passes mid-answer",
		serve: func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(head))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		},
		reason: "timeout", detail: "no answer within the query timeout", timeout: 300 * time.Millisecond,
	},
	{
		name: "the server hangs up mid-answer",
		serve: func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(head))
			w.(http.Flusher).Flush()
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				_ = conn.Close()
			}
		},
		reason: "connection", detail: "connection closed before the answer",
	},
	{
		name:   "connection refused",
		serve:  vectorReply(),
		down:   true,
		reason: "connection", detail: "connection refused",
	},
	{
		name: "too many series",
		serve: vectorReply(`{"metric":{"route":"free"},"value":[1000,"1"]}`, `{"metric":{"route":"paid"},"value":[1000,"1"]}`,
			`{"metric":{"route":"other"},"value":[1000,"1"]}`),
		cfg: func(_ *testing.T, cfg *config.PrometheusConfig, _ *httptest.Server, _ string) {
			cfg.MaxSeriesPerQuery = 2
		},
		reason: "too_many_series", detail: "3 series, more than prometheus.max_series_per_query (2)",
	},
	{
		name:  "as many series as the bound",
		serve: vectorReply(`{"metric":{"route":"free"},"value":[1000,"1"]}`, `{"metric":{"route":"paid"},"value":[1000,"2"]}`),
		cfg: func(_ *testing.T, cfg *config.PrometheusConfig, _ *httptest.Server, _ string) {
			cfg.MaxSeriesPerQuery = 2
		},
		want:   "free: value 1, evidence none; paid: value 2, evidence none",
		reason: "",
	},
	{
		name:  "too large",
		serve: vectorReply(`{"metric":{"route":"free","pad":"` + strings.Repeat("x", 200) + `"},"value":[1000,"1"]}`),
		cfg: func(_ *testing.T, cfg *config.PrometheusConfig, _ *httptest.Server, _ string) {
			cfg.MaxResponseBytes = 100
		},
		reason: "response_too_large", detail: "response larger than prometheus.max_response_bytes",
	},
	{
		name:  "basic auth from http_config",
		serve: authorized(func(r *http.Request) bool { u, p, ok := r.BasicAuth(); return ok && u == "hermes" && p == "s3cret" }),
		cfg: func(_ *testing.T, cfg *config.PrometheusConfig, _ *httptest.Server, _ string) {
			cfg.HTTPClient.BasicAuth = &commoncfg.BasicAuth{Username: "hermes", Password: "s3cret"}
		},
		want: "free: value 1, evidence none; paid: value none, evidence none",
	},
	{
		name:   "without the basic auth",
		serve:  authorized(func(r *http.Request) bool { _, _, ok := r.BasicAuth(); return ok }),
		reason: "client_error", detail: "client error: 401",
	},
	{
		name:  "a bearer token from a file",
		serve: authorized(func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer t0ken" }),
		cfg: func(t *testing.T, cfg *config.PrometheusConfig, _ *httptest.Server, dir string) {
			file := filepath.Join(dir, "token")
			if err := os.WriteFile(file, []byte("t0ken\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg.HTTPClient.Authorization = &commoncfg.Authorization{Type: "Bearer", CredentialsFile: file}
		},
		want: "free: value 1, evidence none; paid: value none, evidence none",
	},
	{
		name:  "TLS with the server's CA from tls_config",
		serve: vectorReply(`{"metric":{"route":"free"},"value":[1000,"1"]}`),
		tls:   true,
		cfg: func(t *testing.T, cfg *config.PrometheusConfig, srv *httptest.Server, dir string) {
			file := filepath.Join(dir, "ca.pem")
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
			if err := os.WriteFile(file, ca, 0o600); err != nil {
				t.Fatal(err)
			}
			cfg.HTTPClient.TLSConfig.CAFile = file
		},
		want: "free: value 1, evidence none; paid: value none, evidence none",
	},
	{
		name:   "TLS with an unknown CA",
		serve:  vectorReply(`{"metric":{"route":"free"},"value":[1000,"1"]}`),
		tls:    true,
		reason: "*", detail: "*",
	},
}

// authorized answers one series to the requests ok accepts, 401 to others.
func authorized(ok func(*http.Request) bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !ok(r) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		vectorReply(`{"metric":{"route":"free"},"value":[1000,"1"]}`)(w, r)
	}
}

// contractOutcome is what one query gave, in terms the two paths share.
type contractOutcome struct {
	routes, reason, detail, warnings string
	requests                         []string
}

// TestQueryContract: each case of contractCases, against Client.Query
// (client_golang, through VectorRoutes as a Collector reads it) and
// Client.QueryRoutes (the streamed decoder), over one server: both give
// the outcome the case wants (what each route got, or the error's reason
// and detail), and the same outcome, log the same warnings and send the
// same requests (method, path, time and server-side timeout). A detail
// wanted as "words: *" is compared up to the "*" only: past it each
// decoder says in its own words what is wrong with a malformed answer.
func TestQueryContract(t *testing.T) {
	paths := []struct {
		name  string
		query func(*Client) RouteQueryFunc
	}{
		{"vector", func(c *Client) RouteQueryFunc { return VectorRoutes(c.Query) }},
		{"routes", func(c *Client) RouteQueryFunc { return c.QueryRoutes }},
	}
	for _, tc := range contractCases {
		t.Run(tc.name, func(t *testing.T) {
			run := serveContractCase(t, tc)
			var outcomes []contractOutcome
			for _, p := range paths {
				o := run(p.query)
				if tc.reason == "" && o.reason != "" {
					t.Errorf("%s: failed: %s (%s), want %s", p.name, o.reason, o.detail, tc.want)
				}
				if tc.reason == "" && o.routes != tc.want {
					t.Errorf("%s: got %s, want %s", p.name, o.routes, tc.want)
				}
				if tc.reason == "*" && o.reason == "" || tc.reason != "*" && o.reason != tc.reason {
					t.Errorf("%s: reason %q, want %q", p.name, o.reason, tc.reason)
				}
				if !detailMatches(o.detail, tc.detail) {
					t.Errorf("%s: detail %q, want %q", p.name, o.detail, tc.detail)
				}
				if !strings.Contains(o.warnings, tc.warning) || (tc.warning == "") != (o.warnings == "") {
					t.Errorf("%s: warnings logged %q, want %q", p.name, o.warnings, tc.warning)
				}
				if len(o.requests) == 0 && !tc.down && !tc.tls {
					t.Errorf("%s: sent no request", p.name)
				}
				if prefix, ok := strings.CutSuffix(tc.detail, "*"); ok {
					o.detail = prefix // what the decoders word alike
				}
				outcomes = append(outcomes, o)
			}
			v, r := outcomes[0], outcomes[1]
			if v.routes != r.routes || v.reason != r.reason || v.detail != r.detail || v.warnings != r.warnings {
				t.Errorf("the paths differ:\nvector: %+v\nroutes: %+v", v, r)
			}
			if !slices.Equal(v.requests, r.requests) {
				t.Errorf("the paths sent different requests:\nvector: %q\nroutes: %q", v.requests, r.requests)
			}
		})
	}
}

// detailMatches reports whether detail is the one wanted: want itself,
// or when want ends with "*", what begins with the rest of want (only "*":
// any, empty without an error).
func detailMatches(detail, want string) bool {
	prefix, ok := strings.CutSuffix(want, "*")
	if !ok {
		return detail == want
	}
	return detail != "" && strings.HasPrefix(detail, prefix)
}

// serveContractCase serves tc and returns a function that queries it once
// through the path query makes of a new Client and says what came of it.
func serveContractCase(t *testing.T, tc contractCase) func(query func(*Client) RouteQueryFunc) contractOutcome {
	t.Helper()
	var mu sync.Mutex
	var requests []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		mu.Lock()
		requests = append(requests, fmt.Sprintf("%s %s query=%s time=%s timeout=%s",
			r.Method, r.URL.Path, r.Form.Get("query"), r.Form.Get("time"), r.Form.Get("timeout")))
		mu.Unlock()
		if r.URL.Path != "/prom/api/v1/query" {
			http.NotFound(w, r)
			return
		}
		tc.serve(w, r)
	})
	srv := httptest.NewUnstartedServer(h)
	// A TLS handshake refused is the case's outcome, not the server's news.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tc.tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	cfg := config.PrometheusConfig{URL: srv.URL + "/prom/"}
	if tc.cfg != nil {
		tc.cfg(t, &cfg, srv, t.TempDir())
	}
	if tc.down {
		srv.Close()
		cfg.URL = "http://" + closedAddr(t) + "/prom/"
	}
	timeout := tc.timeout
	if timeout == 0 {
		timeout = 4 * time.Second
	}
	return func(query func(*Client) RouteQueryFunc) contractOutcome {
		mu.Lock()
		requests = nil
		mu.Unlock()
		var logs bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
		c, err := New(cfg, timeout, logger)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var o contractOutcome
		routes := []string{"free", "paid"}
		a := newAnswer(newRoutePositions(routes), true, nil)
		if err := query(c)(ctx, "up", time.Unix(1000, 5e8), a); err != nil {
			o.reason, o.detail = ErrorReason(err), ErrorDetail(err)
		} else {
			o.routes = render(a, routes)
		}
		o.warnings = logs.String()
		mu.Lock()
		o.requests = slices.Clone(requests)
		mu.Unlock()
		return o
	}
}

// render says what each route got in a: its value and evidence, "none"
// without a series, "n values" with several.
func render(a *Answer, routes []string) string {
	var out []string
	for i, r := range routes {
		out = append(out, fmt.Sprintf("%s: %s, %s", r, slot("value", a.values[i], a.nValues[i]), slot("evidence", a.evidence[i], a.nEvidence[i])))
	}
	return strings.Join(out, "; ")
}

func slot(name string, v float64, n int32) string {
	switch n {
	case 0:
		return name + " none"
	case 1:
		return fmt.Sprintf("%s %v", name, v)
	}
	return fmt.Sprintf("%d %ss", n, name)
}

// closedAddr is an address of 127.0.0.1 where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
