package runner

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner/condlog"
)

// TestLogSignalProblemsOncePerReason: failed queries are one line per
// reason, with the number of signals, the first few and the most routes
// one failed for, whatever the number of routes.
func TestLogSignalProblemsOncePerReason(t *testing.T) {
	p := testenv.DefaultPolicy(t, testenv.Fleet(1000))
	snap := testenv.Healthy(p, time.Unix(1_700_000_000, 0))
	for _, r := range p.Routes() {
		snap.Set(r, "p99_ratio", evaluator.Sample{Status: evaluator.StatusError, Reason: "timeout"})
		snap.Set(r, "p95_ratio", evaluator.Sample{Status: evaluator.StatusError, Reason: "timeout"})
	}
	snap.Set("svc3-route1", "quality_score", evaluator.Sample{Status: evaluator.StatusError, Reason: "two series for one route"})
	snap.Set("svc4-route2", "probe_success", evaluator.Sample{Status: evaluator.StatusMissing, Reason: "no data"})

	var buf bytes.Buffer
	condlog.New(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime}))).
		Observe(snap.Time, "signal queries", signalConditions(signalProblems(snap, p.Config.Signals, nil)))
	got := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		`level=WARN msg="signal queries failed" reason=timeout signals=2 first="[p95_ratio p99_ratio]" routes=1000 route=svc0-route0`,
		`level=WARN msg="signal queries failed" reason="two series for one route" signals=1 first=[quality_score] routes=1 route=svc3-route1`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("logged\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// TestViewSaysWhyQueriesFail: with Prometheus refusing connections, the
// view holds every signal's failure with its reason (the metric label)
// and its detail in words, for the status page and `hermes ctl status`.
func TestViewSaysWhyQueriesFail(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, refused := net.Dial("tcp", addr)
	if refused == nil {
		t.Fatal("a closed port accepted a connection")
	}
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{fail: fmt.Errorf("query: %w", refused)}
		r, _, _, _ := newTestRunner(t, fp)
		stop := start(t, r)
		defer stop()
		time.Sleep(16 * time.Second)
		synctest.Wait()
		probs := r.View().SignalProblems
		if len(probs) != len(r.View().Config.Signals) {
			t.Fatalf("%d signal problems, want one per signal (%d): %+v", len(probs), len(r.View().Config.Signals), probs)
		}
		for _, p := range probs {
			if p.Reason != "connection" || p.Detail != "connection refused" || p.Routes == 0 {
				t.Errorf("problem %+v, want reason connection, detail connection refused", p)
			}
		}
		fp.mu.Lock()
		fp.fail = nil
		fp.mu.Unlock()
		time.Sleep(15 * time.Second)
		synctest.Wait()
		if probs := r.View().SignalProblems; len(probs) != 0 {
			t.Errorf("after Prometheus answers again: %+v, want none", probs)
		}
	})
}
