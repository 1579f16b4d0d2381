package config

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/expr-lang/expr"
	yaml "go.yaml.in/yaml/v3"

	"github.com/hermes-failover/hermes/rules"
)

const fixtures = "../../testdata/config"

// wants returns the "# want: …" lines at the top of a fixture.
func wants(data []byte) []string {
	var out []string
	for line := range strings.Lines(string(data)) {
		w, ok := strings.CutPrefix(strings.TrimSpace(line), "# want:")
		if !ok {
			break
		}
		out = append(out, strings.TrimSpace(w))
	}
	return out
}

func TestFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtures, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var good, bad int
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			switch {
			case strings.HasSuffix(name, ".good.yaml"):
				good++
				if _, err := Load(path); err != nil {
					t.Fatalf("Load: %v", err)
				}
			case strings.HasSuffix(name, ".bad.yaml"):
				bad++
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				want := wants(data)
				if len(want) == 0 {
					t.Fatal("a bad fixture must start with '# want: <substring>' lines")
				}
				_, err = Load(path)
				if err == nil {
					t.Fatalf("Load succeeded, want errors containing %q", want)
				}
				msg := err.Error()
				for _, w := range want {
					if !strings.Contains(msg, w) {
						t.Errorf("error does not contain %q:\n%s", w, msg)
					}
				}
				// Every problem is named by a want: the fixture tests one thing.
				if lines := strings.Count(msg, "\n") + 1; lines > len(want) {
					t.Errorf("%d problems, %d wanted; unexpected extra problems:\n%s", lines, len(want), msg)
				}
			default:
				t.Fatalf("fixture name must end in .good.yaml or .bad.yaml")
			}
		})
	}
	if good < 2 || bad < 8 {
		t.Errorf("found %d good and %d bad fixtures, want at least 2 and 8", good, bad)
	}
}

func TestDefault(t *testing.T) {
	cfg, err := Default()
	if err != nil {
		t.Fatalf("Default: %v", err)
	}
	if cfg.Global.EvaluationInterval != 15*time.Second || cfg.Global.QueryTimeout != 10*time.Second {
		t.Errorf("global = %+v", cfg.Global)
	}
	if n := len(cfg.Signals); n < 10 {
		t.Errorf("%d signals, want the full default set", n)
	}
	for _, s := range cfg.Signals {
		if s.Missing != rules.MissingHold && s.Missing != rules.MissingIgnore {
			t.Errorf("signal %s: missing = %q, want the default applied", s.Name, s.Missing)
		}
	}
	for _, a := range cfg.Alerts {
		if a.Scope == "" {
			t.Errorf("alert %s: scope not defaulted", a.Name)
		}
	}
	if got := cfg.Failback.Window; got != 24*time.Hour {
		t.Errorf("failback.window = %s", got)
	}
	if !cfg.Prometheus.HTTPClient.FollowRedirects {
		t.Error("http_config left out should take prometheus/common's defaults (follow_redirects: true)")
	}
}

func TestHTTPClientConfig(t *testing.T) {
	cfg, err := Load(filepath.Join(fixtures, "http_auth_tls.good.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	hc := cfg.Prometheus.HTTPClient
	if hc.BasicAuth == nil || hc.BasicAuth.Username != "hermes" || string(hc.BasicAuth.Password) != "s3cret" {
		t.Errorf("basic_auth = %+v", hc.BasicAuth)
	}
	// Relative to the configuration file, as in Prometheus.
	if want := filepath.Join(fixtures, "certs/ca.pem"); hc.TLSConfig.CAFile != want || hc.TLSConfig.ServerName != "prometheus.example.com" {
		t.Errorf("tls_config = %+v, want ca_file %s", hc.TLSConfig, want)
	}
	if hc.FollowRedirects {
		t.Error("follow_redirects: false was not applied")
	}
	if !hc.EnableHTTP2 {
		t.Error("enable_http2 left out should default to true")
	}
	acts := cfg.Actuators
	if len(acts) != 2 || acts[0].Name != "nginx" || acts[1].Name != "flags-embed" {
		t.Fatalf("actuators = %+v", acts)
	}
	if got := acts[0].Options["include_path"]; got != "/etc/nginx/hermes/{service}.conf" {
		t.Errorf("nginx options = %v", acts[0].Options)
	}
	if _, ok := acts[0].Options["type"]; ok {
		t.Error("options must hold only the type-specific keys")
	}
	if cfg.Alerts[0].Labels["team"] != "llm-platform" || cfg.Alerts[0].KeepFiringFor != time.Minute {
		t.Errorf("alert = %+v", cfg.Alerts[0])
	}
}

func TestEnvOverride(t *testing.T) {
	t.Setenv("HERMES_PROMETHEUS_URL", "https://thanos.example.com")
	// Not in the file at all: bound explicitly, still applied.
	t.Setenv("HERMES_GLOBAL_EVALUATION_INTERVAL", "1m")
	t.Setenv("HERMES_FAILBACK_MIN_SCORE", "70")
	cfg, err := Load(filepath.Join(fixtures, "minimal.good.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Prometheus.URL != "https://thanos.example.com" {
		t.Errorf("prometheus.url = %q, want the environment's", cfg.Prometheus.URL)
	}
	if cfg.Global.EvaluationInterval != time.Minute {
		t.Errorf("global.evaluation_interval = %s, want 1m", cfg.Global.EvaluationInterval)
	}
	if cfg.Failback.MinScore != 70 {
		t.Errorf("failback.min_score = %g, want 70", cfg.Failback.MinScore)
	}

	t.Setenv("HERMES_GLOBAL_QUERY_TIMEOUT", "soon")
	_, err = Load(filepath.Join(fixtures, "minimal.good.yaml"))
	if err == nil || !strings.Contains(err.Error(), `global.query_timeout: invalid duration "soon" (want e.g. 30s, 5m, 1h30m, 1d) (set by $HERMES_GLOBAL_QUERY_TIMEOUT)`) {
		t.Errorf("bad override: err = %v", err)
	}
}

func TestEnvOverrideNested(t *testing.T) {
	// Keys present in the file can be overridden at any depth outside lists,
	// which keeps secrets out of the file.
	t.Setenv("HERMES_PROMETHEUS_HTTP_CONFIG_BASIC_AUTH_PASSWORD", "from-env")
	cfg, err := Load(filepath.Join(fixtures, "http_auth_tls.good.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(cfg.Prometheus.HTTPClient.BasicAuth.Password); got != "from-env" {
		t.Errorf("password = %q, want the environment's", got)
	}
}

func TestEnvKeys(t *testing.T) {
	got := strings.Join(EnvKeys(), " ")
	// The policy's keys (rules.Policy) come first, then the shell's.
	want := "global.evaluation_interval global.query_timeout scoring.confidence scoring.decisive_confidence scoring.recovery_confidence scoring.min_samples failback.observe failback.min_score failback.max_completed failback.window failback.manual_after prometheus.url prometheus.max_response_bytes prometheus.max_series_per_query alerting.external_url alerting.runbook_base_url alerting.resend_delay alerting.queue_capacity"
	if got != want {
		t.Errorf("EnvKeys = %s\nwant       %s", got, want)
	}
	if got := EnvVar("global.evaluation_interval"); got != "HERMES_GLOBAL_EVALUATION_INTERVAL" {
		t.Errorf("EnvVar = %s", got)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtures, "minimal.good.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	for _, r := range [][2]string{
		{"recover_above: 80", "recover_above: 50"},       // failover hysteresis
		{"routes: [free, paid]", "routes: [free, free]"}, // duplicate route
		{"{signal: hard_fail_ratio", "{signal: nosuch"},  // unknown signal
	} {
		if !strings.Contains(src, r[0]) {
			t.Fatalf("fixture lacks %q", r[0])
		}
		src = strings.Replace(src, r[0], r[1], 1)
	}
	_, err = Parse([]byte(src), "three.yaml")
	if err == nil {
		t.Fatal("Parse succeeded")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 problems, one per line, got %d:\n%s", len(lines), err)
	}
	for i, want := range []string{
		`three.yaml:14: scoring.penalties[0].signal: unknown signal "nosuch"`,
		`three.yaml:19: levels[2].recover_above (50) must be above levels[2].below (60)`,
		`three.yaml:31: services[0] (chat).routes[1]: duplicate route "free"`,
	} {
		if lines[i] != want {
			t.Errorf("line %d = %q, want %q", i, lines[i], want)
		}
	}
}

func TestDurations(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"15s": 15 * time.Second, "1h30m": 90 * time.Minute, "1d": 24 * time.Hour,
		"1w": 7 * 24 * time.Hour, "1.5s": 1500 * time.Millisecond, "250ms": 250 * time.Millisecond, "0": 0,
	} {
		got, err := parseDuration(in)
		if err != nil || got != want {
			t.Errorf("parseDuration(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := parseDuration("fast"); err == nil {
		t.Error(`parseDuration("fast") succeeded`)
	}
}

func TestLineOf(t *testing.T) {
	src := "a:\n  b:\n    - x: 1\n    - X: 2\n      y: 3\n"
	cfgErr := locate("f.yaml", mustNode(t, src), &problem{path: "a.b[1].x", msg: "a.b[1].x: bad"})
	if got := cfgErr.Error(); got != "f.yaml:4: a.b[1].x: bad" {
		t.Errorf("case-insensitive key: %q", got)
	}
	// A missing key is placed at its deepest existing ancestor.
	if got := locate("f.yaml", mustNode(t, src), &problem{path: "a.b[1].z", msg: "m"}).Error(); got != "f.yaml:4: m" {
		t.Errorf("missing key: %q", got)
	}
	if got := locate("f.yaml", mustNode(t, src), &problem{path: "q", msg: "m"}).Error(); got != "f.yaml: m" {
		t.Errorf("unknown path: %q", got)
	}
}

// The alert environment, shared with the evaluator.

func TestAlertExpr(t *testing.T) {
	cond, prog, err := CompileAlertExpr(`level == "failover" && signals.hard_fail_ratio > 0.2 && signals["quota"] < 1 && len(missing) == 0`)
	if err != nil {
		t.Fatal(err)
	}
	if got := cond.SignalRefs(); strings.Join(got, ",") != "hard_fail_ratio,quota" {
		t.Errorf("SignalRefs = %v", got)
	}
	env := rules.AlertEnv{Level: "failover", Signals: map[string]float64{"hard_fail_ratio": 0.5, "quota": math.NaN()}}
	out, err := expr.Run(prog, AlertExprEnv(&env))
	if err != nil {
		t.Fatal(err)
	}
	if out != false { // NaN < 1 is false: a signal without data never fires a comparison
		t.Errorf("got %v, want false", out)
	}
	env.Signals["quota"] = 0.5
	if out, _ := expr.Run(prog, AlertExprEnv(&env)); out != true {
		t.Errorf("got %v, want true", out)
	}

	for src, want := range map[string]string{
		"score":        "expected bool",
		"nosuch > 1":   "unknown name nosuch",
		"score < ":     "(1:",
		"   ":          "expression is empty",
		"weights.free": "expected bool",
	} {
		_, _, err := CompileAlertExpr(src)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("CompileAlertExpr(%q) = %v, want one line containing %q", src, err, want)
		}
	}
}

func mustNode(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

func TestActuatorFileOptionsAreRelativeToTheConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := strings.Replace(string(rules.DefaultYAML), "actuators: []", `actuators:
  - name: hook
    type: webhook
    url: https://example.com/hook
    secret_file: secrets/hook.key
    http_config:
      authorization: {credentials_file: /abs/token}
      tls_config: {ca_file: certs/ca.pem}`, 1)
	path := filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	o := c.Actuators[0].Options
	if got := o["secret_file"]; got != filepath.Join(dir, "secrets/hook.key") {
		t.Errorf("secret_file = %v", got)
	}
	hc := o["http_config"].(map[string]any)
	if got := hc["authorization"].(map[string]any)["credentials_file"]; got != "/abs/token" {
		t.Errorf("an absolute path changed: %v", got)
	}
	if got := hc["tls_config"].(map[string]any)["ca_file"]; got != filepath.Join(dir, "certs/ca.pem") {
		t.Errorf("nested ca_file = %v", got)
	}
}
