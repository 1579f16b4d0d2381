package backtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/value"
)

// point is a sample in seconds, for readable expectations; stale marks a stale marker.
type point struct {
	sec   int64
	v     float64
	stale bool
}

func checkSamples(t *testing.T, name string, got []Sample, want []point) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d samples %v, want %d %v", name, len(got), got, len(want), want)
	}
	for i, w := range want {
		g := got[i]
		ok := g.T == w.sec*1000
		if w.stale {
			ok = ok && value.IsStaleNaN(g.F)
		} else {
			ok = ok && g.F == w.v
		}
		if !ok {
			t.Errorf("%s: sample %d = {T:%d F:%v}, want %+v", name, i, g.T, g.F, w)
		}
	}
}

func TestParseShortForm(t *testing.T) {
	f, err := Parse([]byte(`
input_series:
  - series: 'x{route="a"}'
    values: '0+10x3'
  - series: 'x{route="b"}'
    values: '1 _ 3 stale 5 _x2 -1-1x1'
`))
	if err != nil {
		t.Fatal(err)
	}
	if f.Interval != time.Minute {
		t.Errorf("interval = %s, want the 1m default", f.Interval)
	}
	if len(f.Series) != 2 {
		t.Fatalf("got %d series, want 2", len(f.Series))
	}
	if got := f.Series[0].Labels.String(); got != `{__name__="x", route="a"}` {
		t.Errorf("labels = %s", got)
	}
	checkSamples(t, "a", f.Series[0].Samples, []point{{0, 0, false}, {60, 10, false}, {120, 20, false}, {180, 30, false}})
	checkSamples(t, "b", f.Series[1].Samples, []point{
		{0, 1, false}, {120, 3, false}, {180, 0, true}, {240, 5, false}, {420, -1, false}, {480, -2, false},
	})
}

func TestParsePromtoolFile(t *testing.T) {
	f, err := Parse([]byte(`
rule_files: [alerts.yml]
evaluation_interval: 1m
tests:
  - name: first
    interval: 15s
    input_series:
      - series: 'up{job="a"}'
        values: '1 0 1'
    alert_rule_test:
      - eval_time: 1m
        alertname: Down
        exp_alerts: []
    promql_expr_test:
      - expr: up
        eval_time: 0
        exp_samples:
          - labels: 'up{job="a"}'
            value: 1
  - interval: 1m
    input_series:
      - series: 'other'
        values: '5'
`))
	if err != nil {
		t.Fatal(err)
	}
	if f.Interval != 15*time.Second || len(f.Series) != 1 {
		t.Fatalf("got interval %s and %d series, want the first test's 15s and 1", f.Interval, len(f.Series))
	}
	checkSamples(t, "up", f.Series[0].Samples, []point{{0, 1, false}, {15, 0, false}, {30, 1, false}})
}

func TestParsePromtoolDefaults(t *testing.T) {
	f, err := Parse([]byte(`
evaluation_interval: 2m
tests:
  - start_timestamp: 1700000000
    input_series:
      - series: 'up'
        values: '1 1'
`))
	if err != nil {
		t.Fatal(err)
	}
	if f.Interval != 2*time.Minute {
		t.Errorf("interval = %s, want evaluation_interval 2m", f.Interval)
	}
	checkSamples(t, "up", f.Series[0].Samples, []point{{1_700_000_000, 1, false}, {1_700_000_120, 1, false}})
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "empty series file"},
		{"unknown key", "interval: 1m\nseries: []\n", "field series not found"},
		{"unknown test key", "tests:\n  - input_series: [{series: up, values: '1'}]\n    bogus: 1\n", "field bogus not found"},
		{"no series", "interval: 1m\n", "input_series: no series"},
		{"bad values", "input_series:\n  - {series: 'a', values: '1'}\n  - {series: 'b', values: '1'}\n  - {series: 'c', values: '1'}\n  - {series: 'd', values: '1+'}\n", "input_series[3]: "},
		{"bad series", "input_series:\n  - {series: 'a{', values: '1'}\n", "input_series[0]: parsing"},
		{"blank series", "input_series:\n  - {series: '', values: '1'}\n", "input_series[0]: series is empty"},
		{"duplicate", "input_series:\n  - {series: 'a{x=\"1\"}', values: '1'}\n  - {series: 'a{x=\"1\"}', values: '2'}\n", "input_series[1]: series {__name__=\"a\", x=\"1\"} repeats input_series[0]"},
		{"histogram", "input_series:\n  - {series: 'h', values: '{{schema:0 sum:5 count:4 buckets:[1 2 1]}}'}\n", "input_series[0]: value 0: native histograms are not supported"},
		{"test index", "tests:\n  - input_series: [{series: up, values: 'x'}]\n", "tests[0].input_series[0]: "},
		{"mixed", "input_series: [{series: up, values: '1'}]\ntests:\n  - input_series: [{series: up, values: '1'}]\n", "must not set interval or input_series"},
		{"bad interval", "interval: 1q\ninput_series: [{series: up, values: '1'}]\n", "decoding series file"},
		{"huge expansion", "input_series: [{series: up, values: '0+1x100000000'}]\n", "the series describes 100000001 samples, more than the 2200000 one series may have"},
		{"huge over series", "input_series:\n" + strings.Repeat("  - {series: a, values: '0x2099999'}\n", 9) + "  - {series: b, values: '_x10 1x2099999'}\n  - {series: a, values: '1'}\n", "input_series[9]: the file describes more than 20000000 samples"},
		{"start far in the future", "tests:\n  - start_timestamp: '1e20'\n    input_series: [{series: up, values: '1'}]\n", "tests[0].start_timestamp: \"1e20\" is outside"},
		{"start before 1970", "tests:\n  - start_timestamp: '1969-12-31T00:00:00Z'\n    input_series: [{series: up, values: '1'}]\n", "before 1970"},
		{"interval beyond 9999", "interval: 290y\ninput_series: [{series: up, values: '1x40'}]\n", "value 28 would be at Unix time"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte("interval: 30s\ninput_series: [{series: up, values: '1 2'}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkSamples(t, "up", f.Series[0].Samples, []point{{0, 1, false}, {30, 2, false}})

	if _, err := ParseFile(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file: no error")
	}
	if err := os.WriteFile(path, []byte("input_series: [{series: up, values: '1 +'}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFile(path); err == nil || !strings.Contains(err.Error(), path+": input_series[0]") {
		t.Errorf("error = %v, want it to name the file and the series", err)
	}
}
