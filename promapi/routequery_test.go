package promapi

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// byRoute runs rq into an Answer over routes and returns what it got as a
// vector: a sample per route with one series, marked by its part when it
// is evidence. Tests compare it with NewQueryFunc's answers.
func byRoute(rq RouteQueryFunc, routes ...string) QueryFunc {
	return func(ctx context.Context, q string, t time.Time) (model.Vector, error) {
		a := newAnswer(newRoutePositions(routes), true, nil)
		if err := rq(ctx, q, t, a); err != nil {
			return nil, err
		}
		var vec model.Vector
		for i, r := range routes {
			if a.nValues[i] == 1 {
				vec = append(vec, &model.Sample{Metric: model.Metric{RouteLabel: model.LabelValue(r)}, Value: model.SampleValue(a.values[i])})
			}
			if a.nEvidence[i] == 1 {
				vec = append(vec, &model.Sample{Metric: model.Metric{RouteLabel: model.LabelValue(r), rules.PartLabel: rules.PartEvidence}, Value: model.SampleValue(a.evidence[i])})
			}
		}
		return vec, nil
	}
}

// TestRouteQueryFuncAsQueryFunc: over the same Prometheus, the tick's
// decoder answers as client_golang's does: values, errors and their
// reasons, the server-side timeout.
func TestRouteQueryFuncAsQueryFunc(t *testing.T) {
	srv := prometheusStub(t)
	api, err := NewAPI(config.PrometheusConfig{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	rq, err := NewRouteQueryFunc(config.PrometheusConfig{URL: srv.URL}, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	vector := NewQueryFunc(api, time.Second, 0, nil)
	routes := byRoute(rq, "free", "paid")
	for _, q := range []string{"vector", "matrix", "scalar", "bad", "slow"} {
		want, wantErr := vector(context.Background(), q, time.Unix(1000, 0))
		got, err := routes(context.Background(), q, time.Unix(1000, 0))
		if ErrorReason(err) != ErrorReason(wantErr) || (err == nil) != (wantErr == nil) {
			t.Errorf("%s: error %v (%s), want %v (%s)", q, err, ErrorReason(err), wantErr, ErrorReason(wantErr))
		}
		if wantErr != nil && !strings.Contains(err.Error(), wantErr.Error()) && !strings.Contains(wantErr.Error(), err.Error()) {
			t.Errorf("%s: error %q, client_golang's %q", q, err, wantErr)
		}
		for _, s := range want {
			s.Timestamp = 0 // the tick's time, which Hermes knows
		}
		if got.String() != want.String() {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
}

// TestRouteQueryFuncHTTP: warnings are logged; a server that refuses POST
// is asked by GET; the time and the server-side timeout are sent, under
// the path prefix of prometheus.url.
func TestRouteQueryFuncHTTP(t *testing.T) {
	var methods []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods = append(methods, r.Method)
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Path != "/prom/api/v1/query" || r.FormValue("query") != "up" || r.FormValue("time") != "1000.5" || r.FormValue("timeout") != "3s" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"status":"error","errorType":"bad_data","error":"unexpected request %s"}`, r.URL)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"success","warnings":["partial answer"],"data":{"resultType":"vector","result":[{"metric":{"route":"free"},"value":[1000.5,"+Inf"]}]}}`))
	}))
	defer srv.Close()
	var logs bytes.Buffer
	q, err := NewRouteQueryFunc(config.PrometheusConfig{URL: srv.URL + "/prom/"}, 4*time.Second, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	snap := CollectRoutes(context.Background(), q, []rules.SignalConfig{{Name: "s", Query: "up"}}, []string{"free"}, time.Unix(1000, 5e8), 4*time.Second)
	if s := snap.Get("free", "s"); s.Status != evaluator.StatusMissing || s.Reason != "Inf" {
		t.Errorf("free = %+v, want missing: Inf (methods %v)", s, methods)
	}
	if strings.Join(methods, " ") != "POST GET" {
		t.Errorf("methods %v, want POST then GET", methods)
	}
	if !strings.Contains(logs.String(), "partial answer") {
		t.Errorf("warnings not logged: %q", logs.String())
	}
}

// TestRouteQueryFuncCutAnswers: an answer cut short is a failed query
// with the reason of the cut, never a partial answer: "timeout" when the
// deadline passes mid-answer, "connection" when the server hangs up.
func TestRouteQueryFuncCutAnswers(t *testing.T) {
	const head = `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"route":"free"},"value":[1,"1"]},`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query := r.FormValue("query")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(head))
		w.(http.Flusher).Flush()
		if query == "stalls" {
			<-r.Context().Done()
			return
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer srv.Close()
	q, err := NewRouteQueryFunc(config.PrometheusConfig{URL: srv.URL}, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	signals := []rules.SignalConfig{{Name: "stalls", Query: "stalls"}, {Name: "hangs_up", Query: "hangs_up"}}
	snap := CollectRoutes(context.Background(), q, signals, []string{"free"}, time.Unix(1, 0), 300*time.Millisecond)
	for signal, reason := range map[string]string{"stalls": "timeout", "hangs_up": "connection"} {
		if s := snap.Get("free", signal); s.Status != evaluator.StatusError || s.Reason != reason {
			t.Errorf("%s: %+v, want an error: %s", signal, s, reason)
		}
	}
}
