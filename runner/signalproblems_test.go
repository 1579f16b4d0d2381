package runner

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
)

func TestLogSignalProblemsOncePerSignal(t *testing.T) {
	p := testenv.DefaultPolicy(t, testenv.Fleet(1000))
	snap := testenv.Healthy(p, time.Unix(1_700_000_000, 0))
	for _, r := range p.Routes() {
		snap.Set(r, "p99_ratio", evaluator.Sample{Status: evaluator.StatusError, Reason: "timeout"})
		snap.Set(r, "p95_ratio", evaluator.Sample{Status: evaluator.StatusError, Reason: "timeout"})
	}
	snap.Set("svc3-route1", "quality_score", evaluator.Sample{Status: evaluator.StatusError, Reason: "two series for one route"})
	snap.Set("svc4-route2", "probe_success", evaluator.Sample{Status: evaluator.StatusMissing, Reason: "no data"})

	var buf bytes.Buffer
	logSignalProblems(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime})), snap)
	got := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		`level=WARN msg="signal query failed" signal=p95_ratio reason=timeout routes=1000 route=svc0-route0`,
		`level=WARN msg="signal query failed" signal=p99_ratio reason=timeout routes=1000 route=svc0-route0`,
		`level=WARN msg="signal query failed" signal=quality_score reason="two series for one route" routes=1 route=svc3-route1`,
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
