package backtest

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// yamlSeriesFile decodes data as parse did before scanShortForm: with
// yaml.v3 alone.
func yamlSeriesFile(data []byte) (seriesFile, error) {
	var raw seriesFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(&raw)
	return raw, err
}

// checkScanMatchesYAML fails when scanShortForm accepts data and reads it
// otherwise than yaml.v3 does, or accepts what yaml.v3 refuses. It
// returns whether scanShortForm accepted data.
func checkScanMatchesYAML(t *testing.T, name string, data []byte) bool {
	t.Helper()
	got, ok := scanShortForm(data)
	if !ok {
		return false
	}
	want, err := yamlSeriesFile(data)
	if err != nil {
		t.Errorf("%s: scanShortForm accepts what yaml.v3 refuses (%v)", name, err)
		return true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: scanShortForm read\n%+v\nyaml.v3 read\n%+v", name, got, want)
	}
	return true
}

// TestScanShortFormMatchesYAML checks that the short form's fast path
// reads every scenario as yaml.v3 does, that it takes them (it would
// otherwise be dead code and the speed it gives lost unnoticed), and that
// it leaves to yaml.v3 every file it is not sure of.
func TestScanShortFormMatchesYAML(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "scenarios", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !checkScanMatchesYAML(t, path, data) {
			t.Errorf("%s: scanShortForm leaves the scenario to yaml.v3", path)
		}
	}

	taken := map[string]string{
		"written by WriteSeries": "interval: 15s\ninput_series:\n  - series: '{__name__=\"up\", route=\"a\"}'\n    values: '0 1 2 _ stale'\n  - series: 'up{route=\"b\"}'\n    values: '0+1x3'\n",
		"no interval":            "input_series:\n  - series: 'up'\n    values: '1'\n",
		"no final newline":       "input_series:\n  - series: 'up'\n    values: '1'",
		"escaped quote":          "input_series:\n  - series: 'up{a=''x''}'\n    values: '1 2'\n",
		"comments and blanks":    "# a comment\n\ninterval: 1m\n\ninput_series:\n# between\n  - series: 'up'\n    values: ''\n",
		"interval of two units":  "interval: 1m30s\ninput_series:\n  - series: 'up'\n    values: '1'\n",
	}
	for name, data := range taken {
		if !checkScanMatchesYAML(t, name, []byte(data)) {
			t.Errorf("%s: scanShortForm leaves it to yaml.v3", name)
		}
	}

	left := map[string]string{
		"empty":                     "",
		"no series":                 "interval: 15s\ninput_series:\n",
		"flow sequence":             "input_series: [{series: 'up', values: '1'}]\n",
		"double quotes":             "input_series:\n  - series: \"up\"\n    values: '1'\n",
		"keys swapped":              "input_series:\n  - values: '1'\n    series: 'up'\n",
		"values missing":            "input_series:\n  - series: 'up'\n  - series: 'down'\n    values: '1'\n",
		"quote left open":           "input_series:\n  - series: 'up\n    values: '1'\n",
		"text after the quote":      "input_series:\n  - series: 'up' # c\n    values: '1'\n",
		"tab":                       "input_series:\n  - series: 'up'\n    values: '1\t2'\n",
		"not ASCII":                 "input_series:\n  - series: 'up{a=\"é\"}'\n    values: '1'\n",
		"carriage return":           "input_series:\r\n  - series: 'up'\r\n    values: '1'\r\n",
		"interval after the series": "input_series:\n  - series: 'up'\n    values: '1'\ninterval: 1m\n",
		"interval twice":            "interval: 1m\ninterval: 2m\ninput_series:\n  - series: 'up'\n    values: '1'\n",
		"input_series twice":        "input_series:\n  - series: 'up'\n    values: '1'\ninput_series:\n  - series: 'x'\n    values: '1'\n",
		"interval with a comment":   "interval: 1m # c\ninput_series:\n  - series: 'up'\n    values: '1'\n",
		"interval not a duration":   "interval: abc\ninput_series:\n  - series: 'up'\n    values: '1'\n",
		"interval null":             "interval: null\ninput_series:\n  - series: 'up'\n    values: '1'\n",
		"unknown key":               "intervals: 1m\ninput_series:\n  - series: 'up'\n    values: '1'\n",
		"tests":                     "tests:\n  - input_series:\n      - series: 'up'\n        values: '1'\n",
		"document marker":           "---\ninput_series:\n  - series: 'up'\n    values: '1'\n",
		"other indent":              "input_series:\n- series: 'up'\n  values: '1'\n",
	}
	for name, data := range left {
		if _, ok := scanShortForm([]byte(data)); ok {
			t.Errorf("%s: scanShortForm takes %q, which it should leave to yaml.v3", name, data)
		}
	}
}

// FuzzScanShortForm checks on arbitrary files that what scanShortForm
// accepts, yaml.v3 reads the same.
func FuzzScanShortForm(f *testing.F) {
	f.Add([]byte("interval: 15s\ninput_series:\n  - series: 'up{a=''x''}'\n    values: '0+1x10 _ stale'\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkScanMatchesYAML(t, "fuzzed", data)
	})
}
