package promapi

import (
	"github.com/hermes-failover/hermes/evaluator"
	"slices"

	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/rules"
)

// collect is a fresh Collector's Collect over a QueryFunc, as a backtest
// collects.
func collect(ctx context.Context, query QueryFunc, signals []rules.SignalConfig, routes []string, t time.Time, timeout time.Duration) evaluator.Snapshot {
	return new(Collector).Collect(ctx, VectorRoutes(query), signals, routes, t, timeout)
}

func sample(value float64, lbls ...string) *model.Sample {
	m := model.Metric{}
	for i := 0; i+1 < len(lbls); i += 2 {
		m[model.LabelName(lbls[i])] = model.LabelValue(lbls[i+1])
	}
	return &model.Sample{Metric: m, Value: model.SampleValue(value)}
}

func TestCollect(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	answers := map[string]struct {
		vec model.Vector
		err error
	}{
		"ok": {vec: model.Vector{
			sample(0.02, "route", "free"),
			sample(0.5, "route", "paid"),
			sample(9, "route", "other"), // not a configured route
			sample(7),                   // no route label
		}},
		"partial":   {vec: model.Vector{sample(1, "route", "free")}},
		"nan":       {vec: model.Vector{sample(math.NaN(), "route", "free"), sample(math.Inf(-1), "route", "paid")}},
		"dup":       {vec: model.Vector{sample(1, "route", "free", "code", "200"), sample(2, "route", "free", "code", "500"), sample(3, "route", "paid")}},
		"empty":     {},
		"broken":    {err: &v1.Error{Type: v1.ErrBadData, Msg: "1:5: parse error"}},
		"unlabeled": {vec: model.Vector{sample(1)}},
	}
	var calls atomic.Int32
	query := func(ctx context.Context, q string, ts time.Time) (model.Vector, error) {
		calls.Add(1)
		if !ts.Equal(at) {
			return nil, fmt.Errorf("wrong time %v", ts)
		}
		if _, ok := ctx.Deadline(); !ok {
			return nil, errors.New("no deadline")
		}
		a := answers[q]
		return a.vec, a.err
	}
	var signals []rules.SignalConfig
	for _, q := range []string{"ok", "partial", "nan", "dup", "empty", "broken", "unlabeled"} {
		signals = append(signals, rules.SignalConfig{Name: "sig_" + q, Query: q})
	}
	routes := []string{"free", "paid"}

	snap := collect(context.Background(), query, signals, routes, at, time.Second)

	if got := calls.Load(); got != int32(len(signals)) {
		t.Errorf("queries run = %d, want %d", got, len(signals))
	}
	if !snap.Time.Equal(at) {
		t.Errorf("snapshot time = %v, want %v", snap.Time, at)
	}
	want := []struct {
		route, signal string
		status        evaluator.SampleStatus
		value         float64 // checked when status is OK
		reason        string
	}{
		{"free", "sig_ok", evaluator.StatusOK, 0.02, ""},
		{"paid", "sig_ok", evaluator.StatusOK, 0.5, ""},
		{"free", "sig_partial", evaluator.StatusOK, 1, ""},
		{"paid", "sig_partial", evaluator.StatusMissing, 0, "no data"},
		{"free", "sig_nan", evaluator.StatusMissing, 0, "NaN"},
		{"paid", "sig_nan", evaluator.StatusMissing, 0, "Inf"},
		{"free", "sig_dup", evaluator.StatusError, 0, "2 series for one route"},
		{"paid", "sig_dup", evaluator.StatusOK, 3, ""},
		{"free", "sig_empty", evaluator.StatusMissing, 0, "no data"},
		{"paid", "sig_empty", evaluator.StatusMissing, 0, "no data"},
		{"free", "sig_broken", evaluator.StatusError, 0, "bad_data"},
		{"paid", "sig_broken", evaluator.StatusError, 0, "bad_data"},
		{"free", "sig_unlabeled", evaluator.StatusMissing, 0, "no data"},
		{"paid", "sig_unlabeled", evaluator.StatusMissing, 0, "no data"},
	}
	for _, w := range want {
		got := snap.Get(w.route, w.signal)
		if got.Status != w.status || got.Reason != w.reason || (w.status == evaluator.StatusOK && got.Value != w.value) {
			t.Errorf("%s/%s = %+v, want status %v value %v reason %q", w.route, w.signal, got, w.status, w.value, w.reason)
		}
	}
	if !slices.Equal(snap.Routes(), routes) {
		t.Errorf("snapshot has routes %q, want %q", snap.Routes(), routes)
	}
	var names []string
	for _, sig := range signals {
		names = append(names, sig.Name)
	}
	if !slices.Equal(snap.Signals(), names) {
		t.Errorf("snapshot has signals %q, want %q", snap.Signals(), names)
	}
}

func TestCollectTimeoutAndConcurrency(t *testing.T) {
	// Every query blocks until all of them have started: run one after the
	// other they would time out before the second starts.
	const n = 3
	var started atomic.Int32
	all := make(chan struct{})
	query := func(ctx context.Context, q string, _ time.Time) (model.Vector, error) {
		if started.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if q == "slow" {
			<-ctx.Done()
			return nil, fmt.Errorf("running %q: %w", q, ctx.Err())
		}
		return model.Vector{sample(1, "route", "r")}, nil
	}
	signals := []rules.SignalConfig{{Name: "a", Query: "a"}, {Name: "slow", Query: "slow"}, {Name: "b", Query: "b"}}

	snap := collect(context.Background(), query, signals, []string{"r"}, time.Unix(0, 0), 200*time.Millisecond)

	for _, name := range []string{"a", "b"} {
		if got := snap.Get("r", name); got.Status != evaluator.StatusOK {
			t.Errorf("%s = %+v, want ok (queries must run concurrently)", name, got)
		}
	}
	if got := snap.Get("r", "slow"); got.Status != evaluator.StatusError || got.Reason != "timeout" {
		t.Errorf("slow = %+v, want error timeout", got)
	}
}

func TestErrorReason(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "http://127.0.0.1:1/api/v1/query", Err: &net.OpError{
		Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED,
	}}
	clientDeadline := &url.Error{Op: "Post", URL: "http://x/api/v1/query", Err: context.DeadlineExceeded}
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{context.DeadlineExceeded, "timeout"},
		{fmt.Errorf("query: %w", context.DeadlineExceeded), "timeout"},
		{clientDeadline, "timeout"},
		{context.Canceled, "canceled"},
		{&v1.Error{Type: v1.ErrBadData, Msg: "parse error"}, "bad_data"},
		{&v1.Error{Type: v1.ErrExec, Msg: "many-to-many matching not allowed"}, "execution"},
		{&v1.Error{Type: v1.ErrTimeout, Msg: "query timed out"}, "timeout"},
		{&v1.Error{Type: v1.ErrServer, Msg: "server error: 502", Detail: "<html>bad gateway</html>"}, "server_error"},
		{&v1.Error{Type: v1.ErrServer, Msg: "server error: 503",
			Detail: `{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}`}, "timeout"},
		{fmt.Errorf("signal x: %w", &v1.Error{Type: v1.ErrClient, Msg: "client error: 404"}), "client_error"},
		{&v1.Error{Type: v1.ErrServer, Msg: "server error: 500",
			Detail: `{"status":"error","errorType":"` + strings.Repeat("x", 2000) + `","error":"hostile"}`}, "other"},
		{&v1.Error{Type: "no such type\nat all", Msg: "m"}, "other"},
		{&v1.Error{Type: "unavailable", Msg: "TSDB not ready"}, "unavailable"},
		{refused, "connection"},
		{&net.DNSError{Err: "no such host", Name: "prometheus"}, "connection"},
		{errors.New("query timed out in query execution"), "timeout"},
		{errors.New("query must return an instant vector, got scalar\nmore"), "query must return an instant vector, got scalar"},
	}
	for _, tc := range tests {
		if got := ErrorReason(tc.err); got != tc.want {
			t.Errorf("ErrorReason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	long := ErrorReason(errors.New(string(make([]byte, 300))))
	if n := len([]rune(long)); n > maxReasonLen {
		t.Errorf("long reason has %d runes, want ≤ %d", n, maxReasonLen)
	}
}

func TestErrorDetail(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "http://127.0.0.1:1/api/v1/query", Err: &net.OpError{
		Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED},
	}}
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{refused, "connection refused"},
		{fmt.Errorf("signal x: %w", refused), "connection refused"},
		{&url.Error{Op: "Post", URL: "http://prometheus/", Err: &net.DNSError{Err: "no such host", Name: "prometheus"}}, "no such host"},
		{&url.Error{Op: "Post", URL: "http://x/", Err: io.EOF}, "connection closed before the answer"},
		{&url.Error{Op: "Post", URL: "http://x/", Err: context.DeadlineExceeded}, "no answer within the query timeout"},
		{&v1.Error{Type: v1.ErrBadData, Msg: "parse error at char 3"}, "parse error at char 3"},
		{errors.New("first line\nsecond"), "first line"},
	}
	for _, tc := range tests {
		if got := ErrorDetail(tc.err); got != tc.want {
			t.Errorf("ErrorDetail(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestErrorDetailRealDial reads the detail of a real refused dial.
func TestErrorDetailRealDial(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = net.Dial("tcp", addr)
	if got := ErrorDetail(fmt.Errorf("query: %w", err)); got != "connection refused" {
		t.Errorf("ErrorDetail(%v) = %q, want connection refused", err, got)
	}
}
