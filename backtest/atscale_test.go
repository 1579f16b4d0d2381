package backtest_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
)

// TestAtScaleDecidesLikeDefault replays every scenario twice: the default
// policy on the raw series, and the at-scale policy (rules/hermes-at-scale.yaml)
// on the raw series plus what the shipped recording rules record from them,
// each group evaluated at its own interval by the embedded engine, as a
// Prometheus loaded with them would: the 15s groups at the ticks' own
// times, the hour-long baselines every minute (so a tick reads them up to
// a minute old, built from recorded 1m rates).
//
// The decisions must be equal: the same events at the same ticks, every
// level change, traffic split, failback stage and alert with its state,
// labels and start (sameDecisions). What explains them, the scores,
// reasons and alert texts, may differ in the value of a baseline, so their
// numbers must agree within explanationTolerance; their words are equal.
func TestAtScaleDecidesLikeDefault(t *testing.T) {
	groups, err := backtest.LoadRecordingRules("../rules/prometheus/hermes-recording.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load("../rules/hermes-at-scale.yaml")
	if err != nil {
		t.Fatal(err)
	}
	atScale, err := evaluator.NewPolicy(cfg.Rules())
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
			raw, err := backtest.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			recorded, err := backtest.Record(context.Background(), raw, groups)
			if err != nil {
				t.Fatal(err)
			}
			want := backtestTimeline(t, testenv.DefaultPolicy(t), raw)
			got := backtestTimeline(t, atScale, recorded)
			differ, err := sameDecisions(want, got)
			if err != nil {
				t.Errorf("at-scale timeline decides differently from the default's: %v\n--- default\n%s\n--- at scale\n%s", err, timelineText(t, want), timelineText(t, got))
			}
			if differ > 0 {
				t.Logf("%d of %d events explained with other numbers (within the tolerance)", differ, len(want.Events))
			}
			if slices.ContainsFunc(want.Events, func(e evaluator.Event) bool { return e.Type == evaluator.EventLevel }) {
				moved++
			}
		})
	}
	if moved == 0 {
		t.Error("no scenario moves a route: the timelines compared hold no decision")
	}
}

// explanationTolerance bounds how far a number explaining an at-scale
// decision (a score, a signal's value, a count of samples) may be from the
// default's: this share of the larger, plus one unit of the last digit
// printed (a score printed as 74 against 73). It covers the baselines'
// minute of age and their mean of 1m rates against the rate over the hour.
const explanationTolerance = 0.05

// sameDecisions compares two timelines of the same scenario: the same
// events, equal except for their scores, reasons and annotations; the
// explanation's words must be equal and its numbers within
// explanationTolerance. It returns
// how many events differ in those numbers.
func sameDecisions(want, got *backtest.Timeline) (int, error) {
	if len(got.Events) != len(want.Events) {
		return 0, fmt.Errorf("%d events, the default has %d", len(got.Events), len(want.Events))
	}
	differ := 0
	for i, w := range want.Events {
		g := got.Events[i]
		if !reflect.DeepEqual(decision(g), decision(w)) {
			return differ, fmt.Errorf("event %d differs: %+v, the default's %+v", i, decision(g), decision(w))
		}
		ew, eg := explanation(w), explanation(g)
		if ew == eg {
			continue
		}
		differ++
		if err := closeNumbers(ew, eg); err != nil {
			return differ, fmt.Errorf("event %d at %s: %w", i, w.Time.UTC().Format(time.TimeOnly), err)
		}
	}
	return differ, nil
}

// decision is e without what explains it.
func decision(e evaluator.Event) evaluator.Event {
	e.Score, e.Reasons, e.Annotations = nil, nil, nil
	return e
}

// explanation is the text of what explains e as a timeline prints it:
// score, reasons and an alert's summary. (An alert's description, which
// lists every signal's value, is not compared: a latency ratio there can
// differ by a tenth near a change of latency, as the baseline a tick reads
// is up to a minute older.)
func explanation(e evaluator.Event) string {
	var b strings.Builder
	if e.Score != nil {
		fmt.Fprintf(&b, "score %.1f; ", *e.Score)
	}
	b.WriteString(strings.Join(e.Reasons, "; "))
	if s, ok := e.Annotations["summary"]; ok {
		fmt.Fprintf(&b, "; summary: %s", s)
	}
	return b.String()
}

// number is a decimal number in an explanation, not part of a word
// (p99_ratio, 1m0s).
var number = regexp.MustCompile(`\b\d+(?:\.\d+)?\b`)

// closeNumbers checks that got is want with each number within
// explanationTolerance of want's.
func closeNumbers(want, got string) error {
	if number.ReplaceAllString(want, "#") != number.ReplaceAllString(got, "#") {
		return fmt.Errorf("explained as %q, the default as %q", got, want)
	}
	wn, gn := number.FindAllString(want, -1), number.FindAllString(got, -1)
	for i := range wn {
		w, _ := strconv.ParseFloat(wn[i], 64)
		g, _ := strconv.ParseFloat(gn[i], 64)
		unit := 1.0
		if dot := strings.IndexByte(wn[i], '.'); dot >= 0 {
			unit = math.Pow(10, -float64(len(wn[i])-dot-1))
		}
		if math.Abs(g-w) > explanationTolerance*math.Max(math.Abs(w), math.Abs(g))+unit {
			return fmt.Errorf("%s where the default has %s, beyond %g %% (%q, the default %q)", gn[i], wn[i], 100*explanationTolerance, got, want)
		}
	}
	return nil
}

// TestSameDecisionsBound: sameDecisions passes the same timeline and one
// whose numbers moved a little, and fails another decision, another
// event, other words or a number moved too far.
func TestSameDecisionsBound(t *testing.T) {
	score := func(v float64) *float64 { return &v }
	base := func() *backtest.Timeline {
		return &backtest.Timeline{Events: []evaluator.Event{
			{Time: time.Unix(900, 0), Type: evaluator.EventLevel, Service: "chat", Route: "free", From: "normal", To: "shed", Score: score(70), Reasons: []string{"p99_ratio 3.62 (-30.0): 2400 samples in 2m"}},
			{Time: time.Unix(960, 0), Type: evaluator.EventAlert, Service: "chat", Route: "free", Name: "HermesLatencyP95High", Tier: "B", State: "resolved", Annotations: map[string]string{"summary": "P95 latency of route free is 2.3× its baseline."}},
		}}
	}
	if n, err := sameDecisions(base(), base()); err != nil || n != 0 {
		t.Errorf("equal timelines: %d differ, %v", n, err)
	}
	near := base()
	near.Events[0].Score = score(71)
	near.Events[1].Annotations = map[string]string{"summary": "P95 latency of route free is 2.4× its baseline."}
	if n, err := sameDecisions(base(), near); err != nil || n != 2 {
		t.Errorf("numbers within the tolerance: %d differ, %v; want 2, nil", n, err)
	}
	for name, change := range map[string]func(*backtest.Timeline){
		"later":       func(tl *backtest.Timeline) { tl.Events[0].Time = tl.Events[0].Time.Add(15 * time.Second) },
		"other level": func(tl *backtest.Timeline) { tl.Events[0].To = "warm" },
		"other state": func(tl *backtest.Timeline) { tl.Events[1].State = "firing" },
		"one less":    func(tl *backtest.Timeline) { tl.Events = tl.Events[:1] },
		"other words": func(tl *backtest.Timeline) {
			tl.Events[0].Reasons = []string{"p95_ratio 3.62 (-30.0): 2400 samples in 2m"}
		},
		"far score": func(tl *backtest.Timeline) { tl.Events[0].Score = score(60) },
		"far in text": func(tl *backtest.Timeline) {
			tl.Events[0].Reasons = []string{"p99_ratio 3.62 (-30.0): 1200 samples in 2m"}
		},
		"far summary": func(tl *backtest.Timeline) {
			tl.Events[1].Annotations = map[string]string{"summary": "P95 latency of route free is 2.9× its baseline."}
		},
	} {
		tl := base()
		change(tl)
		if _, err := sameDecisions(base(), tl); err == nil {
			t.Errorf("%s: sameDecisions passed", name)
		}
	}
}

// backtestTimeline backtests f through pol.
func backtestTimeline(t *testing.T, pol *evaluator.Policy, f *backtest.File) *backtest.Timeline {
	t.Helper()
	bt, err := backtest.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Close()
	tl, err := backtest.RunStore(context.Background(), pol, bt, nil, backtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// timelineText is tl as text.
func timelineText(t *testing.T, tl *backtest.Timeline) string {
	t.Helper()
	var b bytes.Buffer
	if err := tl.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
