package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	yamlv2 "go.yaml.in/yaml/v2"
	yaml "go.yaml.in/yaml/v3"

	"github.com/hermes-failover/hermes/rules"
)

// EnvPrefix prefixes the environment variables that override configuration
// keys: HERMES_PROMETHEUS_URL overrides prometheus.url.
const EnvPrefix = "HERMES"

// Defaults filled in when the configuration leaves a field out.
const (
	DefaultEvaluationInterval  = 15 * time.Second
	DefaultQueryTimeout        = 10 * time.Second
	DefaultExternalURL         = "http://localhost:9797"
	DefaultRunbookBaseURL      = "https://github.com/hermes-failover/hermes/blob/main/docs/runbooks.md"
	DefaultQueueCapacity       = 10000
	DefaultAlertmanagerTimeout = 10 * time.Second
	DefaultConfidence          = 0.999
	DefaultDecisiveConfidence  = 0.999999
	DefaultMinSamples          = 200
)

// Load reads, decodes and validates the configuration file at path.
// Relative file names in every http_config (ca_file, password_file, …)
// and in actuator options ending in _file are resolved against the file's
// directory, as Prometheus does.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	cfg, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	for _, hc := range cfg.httpClientConfigs() {
		hc.SetDirectory(dir)
	}
	for i := range cfg.Actuators {
		resolveFileOptions(cfg.Actuators[i].Options, dir)
	}
	return cfg, nil
}

// resolveFileOptions makes relative paths in actuator options whose key
// ends in "_file" (secret_file, admin_token_file, an http_config's
// credentials_file, …) relative to the configuration file's directory, as
// for http_config, at any depth.
func resolveFileOptions(opts map[string]any, dir string) {
	for k, v := range opts {
		switch v := v.(type) {
		case string:
			if strings.HasSuffix(k, "_file") && v != "" && !filepath.IsAbs(v) {
				opts[k] = filepath.Join(dir, v)
			}
		case map[string]any:
			resolveFileOptions(v, dir)
		}
	}
}

// Parse decodes and validates a YAML configuration; source names it in
// errors. Environment variables HERMES_<KEY> (dots as underscores) override
// scalar keys outside lists. Unknown keys are errors. Every problem found is
// returned, one per line, as "source:line: path: message".
func Parse(data []byte, source string) (*Config, error) {
	t, err := readTree(data, source)
	if err != nil {
		return nil, err
	}
	root := t.root
	cfg, err := decode(t)
	// Keys that do not decode do not stop the check: what was read is
	// validated too, so that every problem is reported at once.
	cfg.setDefaults()
	if verr := cfg.Validate(); verr != nil || err != nil || len(t.repeats) > 0 {
		return nil, locate(source, root, joinErrs(slices.Concat(t.repeats, problems(err), besides(err, verr))))
	}
	cfg.Policy = *cfg.Rules()
	cfg.src = &configSource{name: source, doc: root}
	return cfg, nil
}

// decode applies the environment to t and decodes it strictly into a
// newConfig. It returns the Config even when some keys do not decode
// (unknown keys, a bad duration), with those problems as its error: what
// did decode is validated too, so that every problem is reported at once.
func decode(t *tree) (*Config, error) {
	cfg := newConfig()
	return cfg, decodeInto(t.settings(EnvKeys()), cfg, true)
}

// newConfig is a Config pre-filled with the defaults that a zero value
// cannot express.
func newConfig() *Config {
	return &Config{
		Policy: rules.Policy{
			Global: rules.GlobalConfig{
				EvaluationInterval: DefaultEvaluationInterval,
				QueryTimeout:       DefaultQueryTimeout,
			},
			Scoring: rules.ScoringConfig{
				Confidence:         DefaultConfidence,
				DecisiveConfidence: DefaultDecisiveConfidence,
				MinSamples:         DefaultMinSamples,
			},
		},
		Prometheus: PrometheusConfig{HTTPClient: commoncfg.DefaultHTTPClientConfig,
			MaxResponseBytes: DefaultMaxResponseBytes, MaxSeriesPerQuery: DefaultMaxSeriesPerQuery},
	}
}

// resolveRunbooks resolves every relative runbook_url against
// alerting.runbook_base_url; Validate reports a base or a link that is not
// a URL.
func (c *Config) resolveRunbooks() {
	base, err := url.Parse(c.Alerting.RunbookBaseURL)
	if err != nil || !base.IsAbs() {
		return
	}
	for i := range c.Alerts {
		ref, err := url.Parse(c.Alerts[i].RunbookURL)
		if err != nil || ref.IsAbs() || c.Alerts[i].RunbookURL == "" {
			continue
		}
		c.Alerts[i].RunbookURL = base.ResolveReference(ref).String()
	}
}

// setDefaults fills the per-item defaults after decoding.
func (c *Config) setDefaults() {
	for i := range c.Signals {
		if c.Signals[i].Missing == "" {
			c.Signals[i].Missing = rules.MissingHold
		}
	}
	for i := range c.Alerts {
		if c.Alerts[i].Scope == "" {
			c.Alerts[i].Scope = rules.ScopeRoute
		}
	}
	for i := range c.Actuators {
		if c.Actuators[i].Name == "" {
			c.Actuators[i].Name = c.Actuators[i].Type
		}
	}
	al := &c.Alerting
	if al.ExternalURL == "" {
		al.ExternalURL = DefaultExternalURL
	}
	if al.RunbookBaseURL == "" {
		al.RunbookBaseURL = DefaultRunbookBaseURL
	}
	c.resolveRunbooks()
	if al.ResendDelay == 0 {
		al.ResendDelay = c.Global.EvaluationInterval
	}
	if al.QueueCapacity == 0 {
		al.QueueCapacity = DefaultQueueCapacity
	}
	for i := range al.Alertmanagers {
		if al.Alertmanagers[i].Timeout == 0 {
			al.Alertmanagers[i].Timeout = DefaultAlertmanagerTimeout
		}
	}
}

// httpClientConfigs returns every http_config block of c. Together with
// httpClientConfigHook, the one place that knows where they are.
func (c *Config) httpClientConfigs() []*commoncfg.HTTPClientConfig {
	out := []*commoncfg.HTTPClientConfig{&c.Prometheus.HTTPClient}
	for i := range c.Alerting.Alertmanagers {
		out = append(out, &c.Alerting.Alertmanagers[i].HTTPClient)
	}
	return out
}

// EnvKeys lists the keys an environment variable overrides even when the
// file leaves them out: every scalar reachable from Config without crossing
// a list or a map (prometheus.http_config excluded). Other scalar keys
// outside lists are overridden only when the file sets them. EnvVar names
// a key's variable.
func EnvKeys() []string {
	return envKeys(reflect.TypeFor[Config](), "")
}

// EnvVar is the environment variable that overrides key.
func EnvVar(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// envOverride says whether the value at path (or a key above it) may come
// from the environment, and from which variable.
func envOverride(path string) (string, bool) {
	key, _, _ := strings.Cut(path, "[") // lists are overridden whole
	var prefix string
	for seg := range strings.SplitSeq(key, ".") {
		prefix = joinPath(prefix, seg)
		name := EnvVar(prefix)
		if v, ok := os.LookupEnv(name); ok && v != "" {
			return name, true
		}
	}
	return "", false
}

func envKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		if f.Anonymous && opts == "squash" {
			keys = append(keys, envKeys(f.Type, prefix)...)
			continue
		}
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		key := prefix + name
		switch {
		case f.Type == reflect.TypeFor[commoncfg.HTTPClientConfig]():
		case f.Type.Kind() == reflect.Struct:
			keys = append(keys, envKeys(f.Type, key+".")...)
		case f.Type.Kind() == reflect.Slice, f.Type.Kind() == reflect.Map, f.Type.Kind() == reflect.Pointer:
		default:
			keys = append(keys, key)
		}
	}
	return keys
}

// durationHook decodes durations from strings in Prometheus notation
// ("15s", "1h30m", "1d") or Go notation ("1.5s", "500ms"). A bare number is
// refused, except 0, since it would silently mean nanoseconds.
func durationHook(from, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeFor[time.Duration]() {
		return data, nil
	}
	switch from.Kind() {
	case reflect.String:
		return parseDuration(data.(string))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if reflect.ValueOf(data).IsZero() {
			return time.Duration(0), nil
		}
		return nil, fmt.Errorf("duration %v needs a unit, e.g. \"%vs\"", data, data)
	}
	return data, nil
}

// parseDuration accepts Prometheus durations (with d, w, y units) and Go
// durations (fractions, ms/us/ns, a sign).
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if d, err := model.ParseDuration(s); err == nil {
		return time.Duration(d), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (want e.g. 30s, 5m, 1h30m, 1d)", s)
	}
	return d, nil
}

// numberHook parses numbers given as strings (environment overrides, quoted
// YAML) with a readable error, and refuses to truncate a fractional number
// into an integer field.
func numberHook(from, to reflect.Type, data any) (any, error) {
	isInt := to.Kind() == reflect.Int && to != reflect.TypeFor[time.Duration]()
	if !isInt && to.Kind() != reflect.Float64 {
		return data, nil
	}
	var f float64
	switch from.Kind() {
	case reflect.String:
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(data.(string)), 64); err != nil {
			return nil, fmt.Errorf("%q is not a number", data)
		}
		data = f
	case reflect.Float64, reflect.Float32:
		f = reflect.ValueOf(data).Float()
	default:
		return data, nil
	}
	if isInt {
		if f != math.Trunc(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%v is not an integer", f)
		}
		return int(f), nil
	}
	return f, nil
}

// httpClientConfigHook decodes every http_config sub-tree
// (prometheus.http_config, alerting.alertmanagers[].http_config) into a
// commoncfg.HTTPClientConfig. mapstructure does not call UnmarshalYAML, so
// this is the one place where such a sub-tree takes a YAML round trip: it
// is marshalled back to YAML and decoded strictly by the type's own
// UnmarshalYAML, which applies commoncfg.DefaultHTTPClientConfig and
// validates. (Keys arrive lower-cased by readTree; the type's keys all are.)
// A struct with an http_config field whose key the file leaves out gets an
// empty one first, so that list items, which no pre-filled default
// reaches, get prometheus/common's defaults too.
func httpClientConfigHook(from, to reflect.Type, data any) (any, error) {
	hcType := reflect.TypeFor[commoncfg.HTTPClientConfig]()
	if to.Kind() == reflect.Struct && to != hcType {
		m, ok := data.(map[string]any)
		if !ok {
			return data, nil
		}
		for f := range to.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
			if f.Type != hcType || name == "" {
				continue
			}
			if _, ok := m[name]; !ok {
				m = maps.Clone(m)
				m[name] = map[string]any{}
			}
		}
		return m, nil
	}
	if to != hcType || from == to {
		return data, nil
	}
	out, err := yamlv2.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("re-encoding http_config: %w", err)
	}
	hc := commoncfg.DefaultHTTPClientConfig
	if err := yamlv2.UnmarshalStrict(out, &hc); err != nil {
		var te *yamlv2.TypeError
		if errors.As(err, &te) {
			msgs := make([]string, len(te.Errors))
			for i, m := range te.Errors {
				msgs[i] = cleanYAMLTypeError(m)
			}
			return nil, errors.New(strings.Join(msgs, "; "))
		}
		return nil, err
	}
	return hc, nil
}

var (
	yamlLineRE     = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	yamlFieldRE    = regexp.MustCompile(`^field (\S+) not found in type \S+$`)
	unusedKeysText = "has invalid keys: "
)

// cleanYAMLTypeError drops the line of a message about a re-encoded document
// (it would point nowhere useful) and names unknown fields as unknown keys.
func cleanYAMLTypeError(msg string) string {
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		msg = m[2]
	}
	if m := yamlFieldRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("unknown key %q", m[1])
	}
	return msg
}

// yamlError turns a YAML syntax or type error into "source:line: message"
// lines.
func yamlError(source string, err error) error {
	var te *yaml.TypeError
	var msgs []string
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	errs := make([]error, len(msgs))
	for i, m := range msgs {
		if sm := yamlLineRE.FindStringSubmatch(m); sm != nil {
			errs[i] = fmt.Errorf("%s:%s: %s", source, sm[1], sm[2])
		} else {
			errs[i] = fmt.Errorf("%s: %s", source, strings.TrimPrefix(m, "yaml: "))
		}
	}
	return errors.Join(errs...)
}

// locate flattens err into its problems and prefixes each with the source
// and, when its path can be found in the document, the line.
// The problems are ordered by line; those without one come last.
func locate(source string, root *yaml.Node, err error) error {
	type located struct {
		line int
		err  error
	}
	var out []located
	lines := lineFinder{root: root}
	for _, e := range problems(err) {
		var lp *lineProblem
		if errors.As(e, &lp) {
			out = append(out, located{lp.line, fmt.Errorf("%s:%d: %w", source, lp.line, e)})
			continue
		}
		var p *problem
		if errors.As(e, &p) {
			if name, ok := envOverride(p.path); ok {
				out = append(out, located{0, fmt.Errorf("%s: %w (set by $%s)", source, e, name)})
				continue
			}
			if line := lines.of(p.path); line > 0 {
				out = append(out, located{line, fmt.Errorf("%s:%d: %w", source, line, e)})
				continue
			}
		}
		out = append(out, located{math.MaxInt, fmt.Errorf("%s: %w", source, e)})
	}
	slices.SortStableFunc(out, func(a, b located) int { return cmp.Compare(a.line, b.line) })
	errs := make([]error, len(out))
	for i, l := range out {
		errs[i] = l.err
	}
	return errors.Join(errs...)
}

// problems flattens joined errors and turns mapstructure decode errors into
// problems with a path.
func problems(err error) []error {
	switch e := err.(type) {
	case nil:
		return nil
	case *problem, *lineProblem:
		return []error{err}
	case *mapstructure.DecodeError:
		return decodeProblems(e)
	case interface{ Unwrap() []error }:
		var out []error
		for _, inner := range e.Unwrap() {
			out = append(out, problems(inner)...)
		}
		return out
	}
	// mapstructure wraps several errors in one "decoding failed" line.
	switch inner := errors.Unwrap(err).(type) {
	case *mapstructure.DecodeError, interface{ Unwrap() []error }:
		return problems(inner)
	}
	return []error{err}
}

// decodeProblems rewrites one mapstructure error: unknown keys become one
// problem each, named by their full path.
func decodeProblems(de *mapstructure.DecodeError) []error {
	path := de.Name()
	if path == reflect.TypeFor[Config]().String() {
		path = ""
	}
	inner := de.Unwrap()
	if _, ok := inner.(interface{ Unwrap() []error }); ok {
		return problems(inner)
	}
	msg := inner.Error()
	if keys, ok := strings.CutPrefix(msg, unusedKeysText); ok {
		var out []error
		for _, k := range strings.Split(keys, ", ") {
			kp := joinPath(path, k)
			out = append(out, &problem{path: kp, msg: kp + ": unknown key"})
		}
		return out
	}
	if path == "" {
		return []error{&problem{msg: msg}}
	}
	return []error{&problem{path: path, msg: path + ": " + msg}}
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// lineOf finds the line of path ("alerts[3].labels.team") in the document,
// or of its deepest ancestor present there; 0 if none is.
func lineOf(root *yaml.Node, path string) int {
	f := lineFinder{root: root}
	return f.of(path)
}

// lineFinder finds the lines of paths in one document. It indexes each
// mapping it looks into once, so that many problems in a wide mapping
// (thousands of unknown keys) are located in linear time.
type lineFinder struct {
	root *yaml.Node
	keys map[*yaml.Node]map[string]int // mapping → lower-cased key → index in Content
}

// of is the line of path, as lineOf.
func (f *lineFinder) of(path string) int {
	if f.root == nil || path == "" {
		return 0
	}
	n := f.root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := 0
	for _, seg := range splitPath(path) {
		switch n.Kind {
		case yaml.MappingNode:
			i, found := f.index(n)[strings.ToLower(seg)]
			if !found {
				return line
			}
			line, n = n.Content[i].Line, n.Content[i+1]
		case yaml.SequenceNode:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		default:
			return line
		}
	}
	return line
}

// index is the lower-cased keys of mapping n, the first of each.
func (f *lineFinder) index(n *yaml.Node) map[string]int {
	if idx, ok := f.keys[n]; ok {
		return idx
	}
	if f.keys == nil {
		f.keys = map[*yaml.Node]map[string]int{}
	}
	idx := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := strings.ToLower(n.Content[i].Value)
		if _, ok := idx[k]; !ok {
			idx[k] = i
		}
	}
	f.keys[n] = idx
	return idx
}

// splitPath splits "a.b[2].c[key]" into a, b, 2, c, key.
func splitPath(path string) []string {
	var segs []string
	for part := range strings.SplitSeq(path, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			segs = append(segs, name)
		}
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			segs = append(segs, idx)
			_, rest, _ = strings.Cut(after, "[")
		}
	}
	return segs
}
