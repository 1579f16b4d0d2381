package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/backtest/detect"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
)

const contentFailure = "../../testdata/scenarios/content_failure.yaml"

// TestBacktestCompare replays the content failure through the shipped
// policy and a candidate that moves sooner: the text puts both summaries
// side by side and lists the decisions that differ, the JSON carries the
// same, and a candidate equal to the current policy differs nowhere. The
// two policies are named by their files.
func TestBacktestCompare(t *testing.T) {
	cand := testenv.CandidateFile(t)
	series, err := filepath.Abs(contentFailure)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Dir(cand))
	if err := os.WriteFile("current.yaml", rules.DefaultYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"backtest", "--series", series, "--config", "current.yaml", "--compare", "candidate.yaml"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	text := out.String()
	for _, want := range []string{"current.yaml candidate.yaml", "minutes on a degraded route", "only under current.yaml, 6 only under candidate.yaml",
		"candidate.yaml  01:04:45  level     chat/free warm → shed", "current.yaml    01:06:00  level     chat/free warm → shed"} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}

	// Two --compare files compare the first with the second.
	out.Reset()
	if code := run(context.Background(), []string{"backtest", "--series", series, "--compare", "current.yaml", "--compare", "candidate.yaml"}, &out, &errb); code != 0 {
		t.Fatalf("two --compare: exit %d: %s", code, errb.String())
	}
	if out.String() != text {
		t.Errorf("--compare A --compare B differs from --config A --compare B:\n%s\n%s", out.String(), text)
	}

	out.Reset()
	if code := run(context.Background(), []string{"backtest", "--compare", cand, "--format", "json", "--series", series, "--config", "current.yaml"}, &out, &errb); code != 0 {
		t.Fatalf("json: exit %d: %s", code, errb.String())
	}
	var js struct {
		Current, Candidate struct {
			Moves           *int     `json:"moves"`
			Pages           *int     `json:"pages"`
			FailedBack      *int     `json:"failed_back"`
			DegradedMinutes *float64 `json:"degraded_minutes"`
		}
		CurrentName   string      `json:"current_name"`
		CandidateName string      `json:"candidate_name"`
		OnlyCurrent   []jsonEvent `json:"only_current"`
		OnlyCandidate []jsonEvent `json:"only_candidate"`
		Differences   []struct {
			By, Other, Instead string
		} `json:"differences"`
	}
	if err := json.Unmarshal(out.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	if js.Current.Moves == nil || js.Candidate.Pages == nil || js.Candidate.FailedBack == nil || js.Current.DegradedMinutes == nil {
		t.Fatalf("summaries incomplete: %s", out.String())
	}
	if *js.Candidate.DegradedMinutes >= *js.Current.DegradedMinutes {
		t.Errorf("a candidate that moves sooner should spend fewer minutes on the degraded route: %v vs %v", *js.Candidate.DegradedMinutes, *js.Current.DegradedMinutes)
	}
	if len(js.OnlyCurrent) == 0 || len(js.OnlyCandidate) == 0 || js.OnlyCandidate[0].Time != "1970-01-01T01:03:45Z" {
		t.Errorf("differences: %+v / %+v", js.OnlyCurrent, js.OnlyCandidate)
	}
	if js.CurrentName != "current.yaml" || js.CandidateName != cand || len(js.Differences) != len(js.OnlyCurrent)+len(js.OnlyCandidate) ||
		js.Differences[0].By != cand || js.Differences[0].Other != "current.yaml" || js.Differences[0].Instead != "stayed normal" {
		t.Errorf("names and differences: %q %q %+v", js.CurrentName, js.CandidateName, js.Differences)
	}

	out.Reset()
	if code := run(context.Background(), []string{"backtest", "--series", series, "--config", "current.yaml", "--compare", "current.yaml"}, &out, &errb); code != 0 {
		t.Fatalf("same: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "the two policies made the same decisions") {
		t.Errorf("the shipped policy compared with itself:\n%s", out.String())
	}
}

func TestBacktestCompareErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("levels: [{name: warm, below: 85, bogus: 1}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"backtest", "--series", contentFailure, "--compare", bad}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "--compare "+bad) {
		t.Errorf("bad candidate: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"backtest", "--series", contentFailure, "--compare", bad, "--format", "json", "--ticks"}, &out, &errb); code != 2 {
		t.Errorf("--ticks with --compare: exit %d, want 2 (%s)", code, errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"backtest", "--series", contentFailure, "--config", bad, "--compare", bad, "--compare", bad}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "two --compare files without --config") {
		t.Errorf("--config with two --compare: exit %d, want 2 (%s)", code, errb.String())
	}
}

// TestBacktestWithoutConfig: without --config, backtest replays
// ./hermes.yaml when present and says so, and otherwise warns in one
// line that it replays the embedded example policy.
func TestBacktestWithoutConfig(t *testing.T) {
	series, err := filepath.Abs(contentFailure)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"backtest", "--series", series}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "backtest: warning: no --config and no ./hermes.yaml: replaying the embedded example policy (rules/hermes.yaml), whose routes may not be yours\n"; errb.String() != want {
		t.Errorf("stderr %q, want %q", errb.String(), want)
	}
	embedded := out.String()
	// A local hermes.yaml with another route name is what is replayed.
	local := strings.ReplaceAll(string(rules.DefaultYAML), "paid-premium", "paid-gold")
	if err := os.WriteFile("hermes.yaml", []byte(local), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"backtest", "--series", series}, &out, &errb); code != 0 {
		t.Fatalf("local: exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(errb.String(), "backtest: no --config: replaying ./hermes.yaml\n") || !strings.Contains(out.String(), "paid-gold") || out.String() == embedded {
		t.Errorf("local hermes.yaml: stderr %q, out:\n%s", errb.String(), out.String())
	}
}

// TestBacktestWarnsAboutUnknownRoutes: a series file whose route label no
// service has (a typo, a renamed route) is replayed with a warning naming
// the route and the known ones.
func TestBacktestWarnsAboutUnknownRoutes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typo.yaml")
	src := "interval: 15s\ninput_series:\n  - series: 'llm_gateway_requests_total{route=\"fre\",code=\"200\",verdict=\"ok\"}'\n    values: '0+100x20'\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"backtest", "--series", path, "--config", "../../rules/hermes.yaml"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := `has series for route(s) ["fre"] that no service of the configuration has (known routes: ["free" "paid-standard" "paid-premium"])`; !strings.Contains(errb.String(), want) {
		t.Errorf("stderr %q lacks %q", errb.String(), want)
	}
	errb.Reset()
	if code := run(context.Background(), []string{"backtest", "--series", contentFailure, "--config", "../../rules/hermes.yaml"}, &out, &errb); code != 0 || strings.Contains(errb.String(), "warning") {
		t.Errorf("known routes: exit %d, stderr %q", code, errb.String())
	}
}

// TestDegradedMinutesHaveOneDefinition: the report's "minutes on a
// degraded route" for a scenario is the detection benchmark's figure for
// the shipped policy on it (docs/detection.md's last column).
func TestDegradedMinutesHaveOneDefinition(t *testing.T) {
	var out, errb bytes.Buffer
	report := filepath.Join(t.TempDir(), "report.html")
	if code := run(context.Background(), []string{"backtest", "--series", contentFailure, "--report", report}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	outs, err := detect.Scenario(context.Background(), testenv.DefaultPolicy(t), contentFailure)
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`<td id="degraded-minutes">%.1f</td>`, outs[0].DegradedMinutes)
	if outs[0].Method != detect.MethodHermes || !strings.Contains(string(html), want) {
		t.Errorf("report lacks the benchmark's %s (%s)", want, outs[0].Method)
	}
	doc, err := os.ReadFile("../../docs/detection.md")
	if err != nil {
		t.Fatal(err)
	}
	if row := fmt.Sprintf("| content_failure | %s |", detect.MethodHermes); !strings.Contains(string(doc), row) ||
		!strings.Contains(string(doc), fmt.Sprintf("| %.1f |\n| content_failure | classic", outs[0].DegradedMinutes)) {
		t.Errorf("docs/detection.md's content_failure row does not end in %.1f", outs[0].DegradedMinutes)
	}
}
