package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// jsonTimeline is the documented output of backtest --format json.
type jsonTimeline struct {
	Start  string      `json:"start"`
	End    string      `json:"end"`
	Step   string      `json:"step"`
	Events []jsonEvent `json:"events"`
}

type jsonEvent struct {
	Time    string         `json:"time"`
	Type    string         `json:"type"`
	Service string         `json:"service"`
	Route   string         `json:"route"`
	From    string         `json:"from"`
	To      string         `json:"to"`
	Score   *float64       `json:"score"`
	Reasons []string       `json:"reasons"`
	Weights map[string]int `json:"weights"`
	Name    string         `json:"name"`
	Tier    string         `json:"tier"`
	State   string         `json:"state"`
	Stage   *int           `json:"stage"`
}

func TestBacktestJSONContract(t *testing.T) {
	files, err := filepath.Glob("../../testdata/scenarios/*.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("want the 10 scenarios, got %d (%v)", len(files), err)
	}
	levels := map[string]bool{"normal": true, "warm": true, "shed": true, "failover": true, "manual": true}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), []string{"backtest", "--series", f, "--format", "json"}, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
			dec.DisallowUnknownFields()
			var tl jsonTimeline
			if err := dec.Decode(&tl); err != nil {
				// Unknown fields are allowed in the contract (labels, annotations…): decode loosely then.
				if !strings.Contains(err.Error(), "unknown field") {
					t.Fatal(err)
				}
				if err := json.Unmarshal(out.Bytes(), &tl); err != nil {
					t.Fatal(err)
				}
			}
			if dec.More() {
				t.Fatal("more than one JSON value printed")
			}
			if strings.Count(strings.TrimSpace(out.String()), "\n") != 0 {
				t.Error("the JSON object should be printed on one line")
			}
			mustTime(t, tl.Start)
			mustTime(t, tl.End)
			if tl.Start != "1970-01-01T00:00:00Z" || tl.Step != "15s" {
				t.Errorf("start %s step %s", tl.Start, tl.Step)
			}
			if len(tl.Events) == 0 || tl.Events[0].Type != "traffic" {
				t.Fatalf("the first event must be the initial traffic split")
			}
			prev := time.Time{}
			for i, e := range tl.Events {
				at := mustTime(t, e.Time)
				if at.Before(prev) {
					t.Errorf("event %d goes back in time", i)
				}
				prev = at
				switch e.Type {
				case "level":
					if e.Service == "" || e.Route == "" || !levels[e.From] || !levels[e.To] || e.Score == nil || len(e.Reasons) == 0 {
						t.Errorf("event %d: bad level event %+v", i, e)
					}
				case "failback":
					if e.Route == "" || e.Stage == nil {
						t.Errorf("event %d: bad failback event %+v", i, e)
					}
				case "traffic":
					sum := 0
					for _, w := range e.Weights {
						if w < 0 || w > 100 {
							t.Errorf("event %d: weight %d", i, w)
						}
						sum += w
					}
					if e.Service == "" || sum != 100 {
						t.Errorf("event %d: weights %v sum to %d", i, e.Weights, sum)
					}
				case "alert":
					if e.Name == "" || (e.Tier != "A" && e.Tier != "B" && e.Tier != "C") || (e.State != "firing" && e.State != "resolved") {
						t.Errorf("event %d: bad alert event %+v", i, e)
					}
				default:
					t.Errorf("event %d: unknown type %q", i, e.Type)
				}
			}
		})
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil || at.Location() != time.UTC || !strings.HasSuffix(s, "Z") {
		t.Fatalf("time %q is not RFC 3339 UTC: %v", s, err)
	}
	return at
}

func TestBacktestUsageErrors(t *testing.T) {
	cases := [][]string{
		{"backtest"},
		{"backtest", "--series", "x.yaml", "--prometheus", "http://127.0.0.1:1"},
		{"backtest", "--series", "../../testdata/scenarios/healthy.yaml", "--format", "xml"},
	}
	for _, args := range cases {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"backtest", "--series", "does-not-exist.yaml"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "does-not-exist.yaml") {
		t.Errorf("missing file: exit %d, stderr %q", code, errb.String())
	}
}

func TestDemoEmbedsTheContentFailureScenario(t *testing.T) {
	want, err := os.ReadFile("../../testdata/scenarios/content_failure.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, demoSeries) {
		t.Fatal("cmd/hermes/demo_content_failure.yaml is stale: run go run ./testdata/scenarios/gen")
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"demo"}, &out, &errb); code != 0 {
		t.Fatalf("demo exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "normal → warm") || !strings.Contains(out.String(), "→ failover") {
		t.Errorf("demo output lacks the failover:\n%s", out.String())
	}
}
