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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/version"

	"github.com/hermes-failover/hermes/runner/telemetry"
)

// hermes runs the command line args in-process and returns its exit code,
// stdout and stderr.
func hermes(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// helpCases are every command and ctl action with the summary its help
// must show.
func helpCases() map[string]string {
	cases := map[string]string{}
	for _, c := range commands() {
		cases[c.name] = c.summary
	}
	for _, a := range ctlActions {
		cases[a.name] = a.summary
	}
	return cases
}

func TestHelpExitsZero(t *testing.T) {
	for name, summary := range helpCases() {
		if summary == "" || strings.Contains(summary, "\n") {
			t.Errorf("%s: summary %q is not one line", name, summary)
		}
		path := strings.Fields(name)
		var first string
		for _, flag := range []string{"--help", "-h", "-help"} {
			code, out, errb := hermes(t, append(path, flag)...)
			if code != 0 || errb != "" {
				t.Errorf("hermes %s %s: exit %d, stderr %q", name, flag, code, errb)
			}
			if !strings.HasPrefix(out, "usage: hermes "+name+" ") || !strings.Contains(out, "\n\n"+summary+"\n") {
				t.Errorf("hermes %s %s: stdout lacks the usage line and summary %q:\n%s", name, flag, summary, out)
			}
			if first == "" {
				first = out
			} else if out != first {
				t.Errorf("hermes %s %s differs from --help:\n%s", name, flag, out)
			}
		}
		// hermes help CMD [ACTION] prints the same text.
		code, out, errb := hermes(t, append([]string{"help"}, path...)...)
		if code != 0 || errb != "" || out != first {
			t.Errorf("hermes help %s: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", name, code, errb, out, first)
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		code, out, errb := hermes(t, args...)
		if code != 0 || errb != "" || !strings.HasPrefix(out, "usage: hermes <command>") {
			t.Errorf("hermes %v: exit %d, stderr %q, stdout:\n%s", args, code, errb, out)
		}
		for _, c := range commands() {
			if !strings.Contains(out, "  "+c.name+" ") || !strings.Contains(out, c.summary) {
				t.Errorf("hermes %v does not list %s with its summary", args, c.name)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	setVersion()
	for _, flag := range []string{"--version", "-version"} {
		code, out, errb := hermes(t, flag)
		if code != 0 || errb != "" || !strings.HasPrefix(out, "hermes, version "+version.Version+" ") || version.Version == "" {
			t.Errorf("hermes %s: exit %d, stderr %q, stdout %q", flag, code, errb, out)
		}
	}
	// hermes_build_info carries the same version.
	reg := prometheus.NewRegistry()
	telemetry.New(reg, telemetry.Options{})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range mfs {
		if mf.GetName() != "hermes_build_info" {
			continue
		}
		for _, l := range mf.GetMetric()[0].GetLabel() {
			if l.GetName() == "version" {
				found = l.GetValue() == version.Version
			}
		}
	}
	if !found {
		t.Errorf("hermes_build_info lacks version=%q", version.Version)
	}
}

// TestUsageErrors: a usage error exits 2 and says what is wrong on stderr,
// nothing on stdout.
func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "usage: hermes <command>"},
		{[]string{"nosuch"}, `unknown command "nosuch"`},
		{[]string{"help", "nosuch"}, `unknown command "nosuch"`},
		{[]string{"help", "run", "extra", "more"}, `unexpected "more"`},
		{[]string{"run", "--config", "x.yaml", "extra"}, `hermes run: unexpected argument "extra"`},
		{[]string{"run"}, "hermes run: --config is required"},
		{[]string{"run", "--nosuch"}, "hermes run: flag provided but not defined: -nosuch"},
		{[]string{"check", "extra"}, `hermes check: unexpected argument "extra"`},
		{[]string{"check", "--config"}, "hermes check: flag needs an argument: -config"},
		{[]string{"explain", "--route", "free", "extra"}, `hermes explain: unexpected argument "extra"`},
		{[]string{"explain"}, "hermes explain: --route is required"},
		{[]string{"probe"}, "hermes probe: --config is required"},
		{[]string{"probe", "--config", "p.yaml", "extra"}, `hermes probe: unexpected argument "extra"`},
		{[]string{"proxy"}, "hermes proxy: --config is required"},
		{[]string{"proxy", "--config", "p.yaml", "extra"}, `hermes proxy: unexpected argument "extra"`},
		{[]string{"demo", "extra"}, `hermes demo: unexpected argument "extra"`},
		{[]string{"demo", "--format", "xml"}, `--format must be text or json, not "xml"`},
		{[]string{"backtest"}, "give --series FILE… or --prometheus URL"},
		{[]string{"backtest", "extra.yaml"}, `hermes backtest: unexpected argument "extra.yaml" (series files follow --series)`},
		{[]string{"backtest", "--series", "x.yaml", "--prometheus", "http://127.0.0.1:1"}, "not both"},
		{[]string{"backtest", "--series", "x.yaml", "--format", "xml"}, `--format must be text or json, not "xml"`},
		{[]string{"backtest", "--series", "x.yaml", "--ticks"}, "hermes backtest: --ticks needs --format json"},
		{[]string{"ctl"}, "hermes ctl: an action is required"},
		{[]string{"ctl", "nosuch"}, `hermes ctl: unknown action "nosuch"`},
		{[]string{"ctl", "--nosuch", "status"}, "hermes ctl: flag provided but not defined: -nosuch"},
		{[]string{"ctl", "status", "extra"}, `hermes ctl status: unexpected argument "extra"`},
		{[]string{"ctl", "release"}, "hermes ctl release: want 1 argument(s), got 0"},
		{[]string{"ctl", "release", "free", "paid", "--reason", "x"}, `hermes ctl release: want 1 argument(s), got 2: unexpected "paid"`},
		{[]string{"ctl", "release", "free"}, "hermes ctl release: --reason is required"},
		{[]string{"ctl", "pin", "chat", "--reason", "x"}, "hermes ctl pin: want 2 argument(s), got 1"},
		{[]string{"ctl", "release", "free", "--reason", "x", "--for", "1h"}, "hermes ctl release: flag provided but not defined: -for"},
		{[]string{"ctl", "pause", "chat"}, "hermes ctl pause: --reason is required"},
	}
	for _, c := range cases {
		code, out, errb := hermes(t, c.args...)
		if code != 2 || out != "" || !strings.Contains(errb, c.want) {
			t.Errorf("hermes %q: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %q", c.args, code, out, errb, c.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	cases := map[string]time.Time{
		"now":                  now,
		"-10m":                 now.Add(-10 * time.Minute),
		"now-6h":               now.Add(-6 * time.Hour),
		"-1d":                  now.Add(-24 * time.Hour),
		"2026-11-30T12:00:00Z": time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		"1764547200":           time.Unix(1764547200, 0).UTC(),
		"1764547200.5":         time.Unix(1764547200, 5e8).UTC(),
	}
	for in, want := range cases {
		got, err := parseTime(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-10", "now+1h", "-10x", "-1764547200"} {
		if got, err := parseTime(bad, now); err == nil {
			t.Errorf("parseTime(%q) = %v, want an error", bad, got)
		}
	}
	// The command reports the flag.
	code, _, errb := hermes(t, "backtest", "--prometheus", "http://127.0.0.1:1", "--from", "yesterday")
	if code != 1 || !strings.Contains(errb, `--from: want RFC 3339, Unix seconds, now or -DURATION (e.g. -10m), got "yesterday"`) {
		t.Errorf("--from yesterday: exit %d, stderr %q", code, errb)
	}
	code, _, errb = hermes(t, "backtest", "--prometheus", "http://127.0.0.1:1", "--from", "-10m", "--to", "-20m")
	if code != 1 || !strings.Contains(errb, "--to must be after --from") {
		t.Errorf("--from -10m --to -20m: exit %d, stderr %q", code, errb)
	}
}

// TestBacktestSeveralSeries: every --series file is replayed and reported,
// whether given as repeated flags or as arguments after the first.
func TestBacktestSeveralSeries(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i, name := range []string{"a.yaml", "b.yaml", "c.yaml"} {
		path := filepath.Join(dir, name)
		body := "interval: 15s\ninput_series:\n  - series: 'up{job=\"x\"}'\n    values: '1x" + string(rune('4'+i)) + "'\n"
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	code, out, errb := hermes(t, "backtest", "--series", files[0], files[1], "--series", files[2])
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, f := range files {
		if !strings.Contains(out, "== "+f+"\nbacktest ") {
			t.Errorf("text output lacks %s:\n%s", f, out)
		}
	}
	code, out, errb = hermes(t, "backtest", "--format", "json", "--series", files[0], files[1])
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, errb)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var ends []string
	for dec.More() {
		var tl jsonTimeline
		if err := dec.Decode(&tl); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, tl.End)
	}
	// a.yaml has 5 samples, b.yaml 6: they end one step apart.
	if len(ends) != 2 || ends[0] == ends[1] {
		t.Errorf("json documents end at %q, want one per file", ends)
	}
	if code, _, errb := hermes(t, "backtest", "--series", files[0], filepath.Join(dir, "missing.yaml")); code != 1 || !strings.Contains(errb, "missing.yaml") {
		t.Errorf("a missing second file: exit %d, stderr %q", code, errb)
	}
}

// TestBacktestTicksAndReport: --ticks adds every tick to the JSON and
// --report writes the HTML report of every series file.
func TestBacktestTicksAndReport(t *testing.T) {
	dir := t.TempDir()
	series := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(series, []byte("interval: 15s\ninput_series:\n  - series: 'up{job=\"x\"}'\n    values: '1x4'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errb := hermes(t, "backtest", "--series", series, "--format", "json", "--ticks")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var tl struct {
		Ticks []struct {
			Time   time.Time
			Routes map[string]struct {
				Score float64
				Level string
			}
			Splits map[string]map[string]int
		}
	}
	if err := json.Unmarshal([]byte(out), &tl); err != nil {
		t.Fatal(err)
	}
	// 5 samples, 15 s apart: 5 ticks, every route scored, the split whole.
	if len(tl.Ticks) != 5 || tl.Ticks[4].Time.Sub(tl.Ticks[0].Time) != time.Minute {
		t.Fatalf("%d ticks: %+v", len(tl.Ticks), tl.Ticks)
	}
	for _, tk := range tl.Ticks {
		if len(tk.Routes) != 3 || tk.Routes["free"].Level != "normal" || tk.Splits["chat"]["free"]+tk.Splits["chat"]["paid-standard"]+tk.Splits["chat"]["paid-premium"] != 100 {
			t.Errorf("tick %+v", tk)
		}
	}
	if code, out, _ := hermes(t, "backtest", "--series", series, "--format", "json"); code != 0 || strings.Contains(out, `"ticks"`) {
		t.Errorf("without --ticks: exit %d, ticks printed: %s", code, out)
	}

	report := filepath.Join(dir, "report.html")
	code, _, errb = hermes(t, "backtest", "--series", series, series, "--report", report)
	if code != 0 || !strings.Contains(errb, "report written to "+report) {
		t.Fatalf("--report: exit %d: %s", code, errb)
	}
	html, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(html), `<section class="replay">`); n != 2 {
		t.Errorf("%d sections in the report, want one per series file", n)
	}
	if code, _, errb := hermes(t, "backtest", "--series", series, "--inject", "free:nosuch=0.4@10m"); code != 1 || !strings.Contains(errb, `--inject "free:nosuch=0.4@10m": unknown signal "nosuch"`) {
		t.Errorf("--inject of an unknown signal: exit %d: %s", code, errb)
	}
	if code, _, errb := hermes(t, "backtest", "--series", series, "--report", filepath.Join(dir, "missing", "r.html")); code != 1 || !strings.Contains(errb, "--report:") {
		t.Errorf("--report in a missing directory: exit %d: %s", code, errb)
	}
}
