package replay_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/evaluator/replay"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
)

// TestAtScaleDecidesLikeDefault replays every scenario twice: the default
// policy on the raw series, and the at-scale policy (rules/hermes-at-scale.yaml)
// on the raw series plus what the shipped recording rules record from them,
// evaluated every 15s by the embedded engine as a Prometheus loaded with
// them would. The rules run at the ticks' own times, so the records a tick
// reads are of that tick, and the timelines (every level change, split,
// failback stage and alert, with its score and reasons) must be equal.
// Live, a record is up to one rule interval older than the tick.
func TestAtScaleDecidesLikeDefault(t *testing.T) {
	groups, err := replay.LoadRecordingRules("../../rules/prometheus/hermes-recording.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rules.Load("../../rules/hermes-at-scale.yaml")
	if err != nil {
		t.Fatal(err)
	}
	atScale, err := evaluator.NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in %s: %v", scenarioDir, err)
	}
	moved := 0
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			if strings.HasSuffix(name, "_24h") && testing.Short() {
				t.Skip("24h scenario in -short mode")
			}
			raw, err := replay.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			recorded, err := replay.Record(context.Background(), raw, groups)
			if err != nil {
				t.Fatal(err)
			}
			want := timelineText(t, testenv.DefaultPolicy(t), raw)
			got := timelineText(t, atScale, recorded)
			if got != want {
				t.Errorf("at-scale timeline differs from the default's\n--- default\n%s\n--- at scale\n%s", want, got)
			}
			if strings.Contains(want, "  level  ") {
				moved++
			}
		})
	}
	if moved == 0 {
		t.Error("no scenario moves a route: the timelines compared hold no decision")
	}
}

// timelineText backtests f through pol and returns the text timeline.
func timelineText(t *testing.T, pol *evaluator.Policy, f *replay.File) string {
	t.Helper()
	bt, err := replay.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Close()
	tl, err := replay.RunBacktest(context.Background(), pol, bt, nil, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tl.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
