// Package backtest_test checks that `hermes backtest --prometheus` replays what
// a real Prometheus holds the way a series-file backtest replays the same
// series: the scenario is backfilled into a real Prometheus TSDB with
// `promtool tsdb create-blocks-from openmetrics`, served by a real
// Prometheus, and replayed through range queries.
package backtest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// openMetrics writes the series of f shifted by offset, grouped by metric
// name as OpenMetrics requires.
func openMetrics(f *backtest.File, offset time.Duration) []byte {
	byName := map[string][]backtest.Series{}
	for _, s := range f.Series {
		name := s.Labels.Get("__name__")
		byName[name] = append(byName[name], s)
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	for _, n := range names {
		for _, s := range byName[n] {
			var lbls []string
			s.Labels.Range(func(l labels.Label) {
				if l.Name != "__name__" {
					lbls = append(lbls, fmt.Sprintf("%s=%q", l.Name, l.Value))
				}
			})
			for _, smp := range s.Samples {
				if math.IsNaN(smp.F) {
					continue
				}
				ts := float64(smp.T)/1000 + offset.Seconds()
				fmt.Fprintf(w, "%s{%s} %g %.3f\n", n, strings.Join(lbls, ","), smp.F, ts)
			}
		}
	}
	fmt.Fprintln(w, "# EOF")
	w.Flush()
	return b.Bytes()
}

func TestMain(m *testing.M) { testenv.Main(m) }

func TestBacktestPrometheusMatchesSeriesFile(t *testing.T) {
	promtool := testenv.Binary(t, "promtool")
	testenv.Binary(t, testenv.Prometheus.Binary)
	scenario := "../../testdata/scenarios/content_failure.yaml"
	f, err := backtest.ParseFile(scenario)
	if err != nil {
		t.Fatal(err)
	}
	// Put the 3h scenario in the recent past, aligned to the 15s interval.
	end := time.Now().Add(-time.Hour).Truncate(time.Hour)
	offset := end.Add(-3 * time.Hour).Sub(time.Unix(0, 0))
	dir := t.TempDir()
	om := filepath.Join(dir, "scenario.om")
	if err := os.WriteFile(om, openMetrics(f, offset), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", om, data).CombinedOutput(); err != nil {
		t.Fatalf("promtool backfill: %v\n%s", err, out)
	}
	prom := testenv.StartTSDB(t, testenv.Prometheus, "global: {scrape_interval: 15s}\n", data, "--storage.tsdb.retention.time=3650d")
	url := prom.URL

	hermes := testenv.HermesBinary(t)
	fromFile := runJSON(t, hermes, "backtest", "--series", scenario, "--format", "json")
	fromProm := runJSON(t, hermes, "backtest", "--prometheus", url,
		"--from", end.Add(-3*time.Hour).Format(time.RFC3339), "--to", end.Format(time.RFC3339), "--format", "json")

	a, b := levelMoves(fromFile, 0), levelMoves(fromProm, offset)
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("level moves differ:\nseries file: %v\nprometheus:  %v", a, b)
	}
	t.Logf("series file: %v\nprometheus:  %v", a, b)
	for i := range a {
		// Prometheus 2.42's engine selects ranges closed on the left, the
		// embedded 3.x engine open: values may differ by one sample, so
		// times may differ by a tick or two.
		if a[i].move != b[i].move || absDur(a[i].at-b[i].at) > time.Minute {
			t.Errorf("move %d: series file %v, prometheus %v", i, a[i], b[i])
		}
	}
}

type move struct {
	at   time.Duration
	move string
}

func levelMoves(tl timeline, offset time.Duration) []move {
	var out []move
	for _, e := range tl.Events {
		if e.Type != "level" {
			continue
		}
		at, _ := time.Parse(time.RFC3339, e.Time)
		out = append(out, move{at: at.Sub(time.Unix(0, 0)) - offset, move: e.Route + ":" + e.From + "→" + e.To})
	}
	return out
}

type timeline struct {
	Events []struct {
		Time, Type, Route, From, To string
	} `json:"events"`
}

func runJSON(t *testing.T, bin string, args ...string) timeline {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hermes %v: %v\n%s", args, err, stderr.String())
	}
	var tl timeline
	if err := json.Unmarshal(stdout.Bytes(), &tl); err != nil {
		t.Fatalf("hermes %v: %v", args, err)
	}
	return tl
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
