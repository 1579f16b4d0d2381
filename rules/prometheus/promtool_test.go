// Package prometheus_test tests the shipped Prometheus rules like code: promtool
// checks and unit-tests them, every rule must have a test, and each recorded
// signal must equal the query of the default signal it replaces.
package prometheus_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	yaml "go.yaml.in/yaml/v3"

	hermesrules "github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

const (
	recordingRules = "hermes-recording.rules.yml"
	defaultConfig  = "../hermes.yaml"
	atScaleConfig  = "../hermes-at-scale.yaml"
)

// promtoolTimeout bounds one promtool run; the slowest takes a few seconds.
const promtoolTimeout = 5 * time.Minute

func TestCheckRules(t *testing.T) {
	t.Parallel()
	runPromtool(t, append([]string{"check", "rules"}, glob(t, "*.rules.yml")...)...)
}

func TestTestRules(t *testing.T) {
	t.Parallel()
	runPromtool(t, append([]string{"test", "rules"}, glob(t, "tests/*.test.yml")...)...)
}

// TestEveryRuleIsTested wants each record read by a promql_expr_test and
// each alert tested both while it must stay quiet and while it fires.
func TestEveryRuleIsTested(t *testing.T) {
	t.Parallel()
	var exprs []string
	quiet, firing := map[string]bool{}, map[string]bool{}
	for _, path := range glob(t, "tests/*.test.yml") {
		var f testFile
		readYAML(t, path, &f)
		for _, g := range f.Tests {
			for _, e := range g.PromqlExprTest {
				exprs = append(exprs, e.Expr)
			}
			for _, a := range g.AlertRuleTest {
				if len(a.ExpAlerts) == 0 {
					quiet[a.Alertname] = true
				} else {
					firing[a.Alertname] = true
				}
			}
		}
	}
	for _, path := range glob(t, "*.rules.yml") {
		var f ruleFile
		readYAML(t, path, &f)
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				switch {
				case r.Record != "" && !slices.ContainsFunc(exprs, func(e string) bool { return mentions(e, r.Record) }):
					t.Errorf("%s: record %s is not read by any promql_expr_test", path, r.Record)
				case r.Alert != "" && !quiet[r.Alert]:
					t.Errorf("%s: alert %s has no test where it does not fire", path, r.Alert)
				case r.Alert != "" && !firing[r.Alert]:
					t.Errorf("%s: alert %s has no test where it fires", path, r.Alert)
				}
			}
		}
	}
}

// TestAtScaleSignals checks rules/hermes-at-scale.yaml's signals: the
// default signals, in order and with the same settings, each reading a
// record, and so does each volume or samples query.
func TestAtScaleSignals(t *testing.T) {
	t.Parallel()
	defaults, atScale := signals(t, defaultConfig), signals(t, atScaleConfig)
	records := recordNames(t)
	if len(atScale) != len(defaults) {
		t.Errorf("%s lists %d signals, %s %d", atScaleConfig, len(atScale), defaultConfig, len(defaults))
	}
	for i, d := range defaults {
		if i >= len(atScale) {
			break
		}
		s := atScale[i]
		if s.Name != d.Name || s.Missing != d.Missing || s.RequiresTraffic != d.RequiresTraffic || s.Help != d.Help {
			t.Errorf("%s signal %d = %+v, want the settings of %+v", atScaleConfig, i, s.settings(), d.settings())
		}
		if !records[s.Query] {
			t.Errorf("%s signal %s reads %q, not a record of %s", atScaleConfig, s.Name, s.Query, recordingRules)
		}
		if (d.evidence() == "") != (s.evidence() == "") {
			t.Errorf("%s signal %s: evidence %q, the default's %q", atScaleConfig, s.Name, s.evidence(), d.evidence())
		} else if s.evidence() != "" && recordIn(s.evidence(), records) == "" {
			t.Errorf("%s signal %s: evidence %q reads no record of %s", atScaleConfig, s.Name, s.evidence(), recordingRules)
		}
	}
}

// recordIn is the record of records that expr reads, "" if none.
func recordIn(expr string, records map[string]bool) string {
	for r := range records {
		if mentions(expr, r) {
			return r
		}
	}
	return ""
}

// TestRecordsMatchSignalQueries evaluates, on the scenarios of every test
// file that loads the recording rules (the recording tests, and those of
// the gateway mappings, whose records the default queries then read), each
// default signal's query and its volume or samples query next to the
// at-scale policy's query of the same signal (reading a record), and wants
// the same value (or both NaN, or both absent) on every route. The
// comparisons run at each time a hand-written test reads that record,
// where its samples are known to exist.
func TestRecordsMatchSignalQueries(t *testing.T) {
	t.Parallel()
	bin := promtool(t)
	// queries maps each at-scale query to the default query it replaces.
	queries := map[string]string{}
	defaults, atScale := signals(t, defaultConfig), signals(t, atScaleConfig)
	for i, s := range atScale {
		if i < len(defaults) {
			queries[s.Query] = defaults[i].Query
			if s.evidence() != "" {
				queries[s.evidence()] = defaults[i].evidence()
			}
			// Each longer window's query and volume, as Hermes rewrites
			// them from the signal's own, on both sides.
			if !slices.Equal(s.Windows, defaults[i].Windows) {
				t.Errorf("%s signal %s: windows %v, the default's %v", atScaleConfig, s.Name, s.Windows, defaults[i].Windows)
			}
			for _, w := range s.Windows {
				d, err := model.ParseDuration(w)
				if err != nil {
					t.Fatalf("%s signal %s: window %q: %v", atScaleConfig, s.Name, w, err)
				}
				at, def := s.config(), defaults[i].config()
				atQ, atV := config.WindowQueries(at, time.Duration(d))
				defQ, defV := config.WindowQueries(def, time.Duration(d))
				queries[atQ], queries[atV] = defQ, defV
			}
		}
	}
	records := recordNames(t)
	covered := map[string]bool{}
	files := 0
	for _, srcPath := range glob(t, "tests/*.test.yml") {
		var src testFile
		readYAML(t, srcPath, &src)
		gen := testFile{EvaluationInterval: src.EvaluationInterval, GroupEvalOrder: src.GroupEvalOrder}
		loadsRecording := false
		for _, f := range src.RuleFiles {
			abs, err := filepath.Abs(filepath.Join(filepath.Dir(srcPath), f))
			if err != nil {
				t.Fatal(err)
			}
			gen.RuleFiles = append(gen.RuleFiles, abs)
			loadsRecording = loadsRecording || filepath.Base(f) == recordingRules
		}
		if !loadsRecording {
			continue
		}
		files++
		for _, g := range src.Tests {
			out := testGroup{Name: g.Name + " (records = signal queries)", Interval: g.Interval, InputSeries: g.InputSeries}
			seen := map[string]bool{}
			for _, e := range g.PromqlExprTest {
				for at, def := range queries {
					key := at + "@" + e.EvalTime
					if !mentions(e.Expr, recordIn(at, records)) || seen[key] {
						continue
					}
					seen[key] = true
					covered[at] = true
					out.PromqlExprTest = append(out.PromqlExprTest, promqlTest{Expr: mismatches(at, def), EvalTime: e.EvalTime})
				}
			}
			if len(out.PromqlExprTest) > 0 {
				slices.SortFunc(out.PromqlExprTest, func(a, b promqlTest) int { return strings.Compare(a.EvalTime+a.Expr, b.EvalTime+b.Expr) })
				gen.Tests = append(gen.Tests, out)
			}
		}
		if len(gen.Tests) == 0 {
			t.Errorf("%s loads %s but reads none of the records the at-scale policy reads", srcPath, recordingRules)
			continue
		}
		data, err := yaml.Marshal(gen)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(srcPath), ".test.yml")+".equivalence.test.yml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, g := range gen.Tests {
			n += len(g.PromqlExprTest)
		}
		t.Logf("%s: %d comparisons of a record with the default query", srcPath, n)
		runWith(t, bin, "test", "rules", path)
	}
	if files < 2 {
		t.Errorf("%d test files load %s, want the recording tests and the gateway mappings' tests", files, recordingRules)
	}
	for at := range queries {
		if !covered[at] {
			t.Errorf("%s: no recording test reads its record, so it is never compared with the default query", at)
		}
	}
}

// mismatches is a query for the routes where record and query differ: a
// route on one side only, or values that are neither equal to 12
// significant digits nor both NaN. (The hour-long baselines are means of
// recorded 1m rates, where the query takes the rate over the hour: the
// quantiles and ratios built on them agree up to the last bits.) The test
// expects it to return nothing.
func mismatches(record, query string) string {
	return "(count by (route) (" + record + ") or count by (route) (" + query + "))\n" +
		"unless on (route) (\n" +
		"    abs((" + record + ") - on (route) (" + query + ")) <= on (route) 1e-12 * abs(" + query + ")\n" +
		"  or\n" +
		"    ((" + record + ") != (" + record + ")) and on (route) ((" + query + ") != (" + query + "))\n" +
		")\n"
}

// mentions reports whether expr contains name as a whole metric name.
func mentions(expr, name string) bool {
	for i := 0; ; {
		j := strings.Index(expr[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		if (start == 0 || !isNameByte(expr[start-1])) && (end == len(expr) || !isNameByte(expr[end])) {
			return true
		}
		i = start + 1
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// promtool returns the path of promtool. Without it the test is skipped,
// except on CI (CI=true), where it fails.
func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatalf("promtool is required on CI: %v", err)
		}
		t.Skipf("promtool not found, skipping: %v", err)
	}
	return path
}

func runPromtool(t *testing.T, args ...string) {
	t.Helper()
	runWith(t, promtool(t), args...)
}

func runWith(t *testing.T, bin string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), promtoolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func glob(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no file matches %s", pattern)
	}
	return files
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// signal is the part of a Hermes signal configuration these tests compare.
type signal struct {
	Name            string   `yaml:"name"`
	Query           string   `yaml:"query"`
	Volume          string   `yaml:"volume"`
	Samples         string   `yaml:"samples"`
	Missing         string   `yaml:"missing"`
	RequiresTraffic bool     `yaml:"requires_traffic"`
	Help            string   `yaml:"help"`
	Windows         []string `yaml:"windows"`
}

// config is the signal as Hermes reads it, for its window queries.
func (s signal) config() hermesrules.SignalConfig {
	return hermesrules.SignalConfig{Name: s.Name, Query: s.Query, Volume: s.Volume, Samples: s.Samples}
}

func (s signal) settings() signal {
	s.Query, s.Volume, s.Samples, s.Windows = "", "", "", nil
	return s
}

// evidence is the signal's volume or samples query.
func (s signal) evidence() string {
	return s.Volume + s.Samples
}

// signals decodes the signals of the Hermes configuration at path.
func signals(t *testing.T, path string) []signal {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Signals []signal `yaml:"signals"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(cfg.Signals) == 0 {
		t.Fatalf("%s: no signals", path)
	}
	return cfg.Signals
}

func recordNames(t *testing.T) map[string]bool {
	t.Helper()
	var f ruleFile
	readYAML(t, recordingRules, &f)
	names := map[string]bool{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				names[r.Record] = true
			}
		}
	}
	return names
}

// ruleFile is the part of a Prometheus rule file these tests read.
type ruleFile struct {
	Groups []struct {
		Name     string `yaml:"name"`
		Interval string `yaml:"interval"`
		Rules    []struct {
			Record      string            `yaml:"record"`
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// testFile is a promtool unit-test file (Prometheus 2.42 field names).
type testFile struct {
	RuleFiles          []string    `yaml:"rule_files"`
	EvaluationInterval string      `yaml:"evaluation_interval,omitempty"`
	GroupEvalOrder     []string    `yaml:"group_eval_order,omitempty"`
	Tests              []testGroup `yaml:"tests"`
}

type testGroup struct {
	Name           string       `yaml:"name,omitempty"`
	Interval       string       `yaml:"interval,omitempty"`
	InputSeries    []yaml.Node  `yaml:"input_series,omitempty"`
	AlertRuleTest  []alertTest  `yaml:"alert_rule_test,omitempty"`
	PromqlExprTest []promqlTest `yaml:"promql_expr_test,omitempty"`
}

type alertTest struct {
	EvalTime  string      `yaml:"eval_time"`
	Alertname string      `yaml:"alertname"`
	ExpAlerts []yaml.Node `yaml:"exp_alerts"`
}

type promqlTest struct {
	Expr       string      `yaml:"expr"`
	EvalTime   string      `yaml:"eval_time"`
	ExpSamples []yaml.Node `yaml:"exp_samples,omitempty"`
}
