package config

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/expr-lang/expr/vm"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

var (
	signalNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	alertNameRE  = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	labelNameRE  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// reservedLabels are set by Hermes on every alert and may not be overridden.
var reservedLabels = []string{"alertname", "tier", "route", "service", "actuator"}

// problem is one configuration problem. path is the plain location
// ("signals[3].query") used to find its line in the file; msg is the whole
// text, starting with the path as shown ("signals[3] (p99_ratio).query: …").
type problem struct {
	path string
	msg  string
}

func (p *problem) Error() string { return p.msg }

// loc is a location in the configuration, kept both plain (for line lookup)
// and as shown to people, with the name of list items.
type loc struct{ plain, shown string }

func at(key string) loc { return loc{key, key} }

// field is the location of a key below l.
func (l loc) field(key string) loc {
	return loc{l.plain + "." + key, l.shown + "." + key}
}

// item is the location of the i-th list element below l, shown with its name.
func (l loc) item(i int, name string) loc {
	n := loc{fmt.Sprintf("%s[%d]", l.plain, i), fmt.Sprintf("%s[%d]", l.shown, i)}
	if name != "" {
		// A name with control characters or quotes is shown quoted, so
		// that an error line cannot be split or forged by the file.
		if q := strconv.Quote(name); q[1:len(q)-1] != name {
			name = q
		}
		n.shown += " (" + name + ")"
	}
	return n
}

// checker collects problems.
type checker struct{ errs []error }

// errorf records "<where>: <message>".
func (c *checker) errorf(where loc, format string, args ...any) {
	c.errs = append(c.errs, &problem{path: where.plain, msg: where.shown + ": " + fmt.Sprintf(format, args...)})
}

// add records a message that names its location itself.
func (c *checker) add(where loc, msg string) {
	c.errs = append(c.errs, &problem{path: where.plain, msg: msg})
}

func (c *checker) err() error { return errors.Join(c.errs...) }

// Validate checks the whole configuration and returns every problem found,
// joined (one per line), each starting with its path, such as
// "levels[2].recover_above (70) must be above levels[2].below (75)". It
// expects the defaults that Parse applies.
func (c *Config) Validate() error {
	var ch checker
	c.validateGlobal(&ch)
	c.validatePrometheus(&ch)
	signals := c.validateSignals(&ch)
	c.validateScoring(&ch, signals)
	c.validateLevels(&ch)
	c.validateFailback(&ch)
	c.validateServices(&ch)
	c.validateAlerts(&ch, signals)
	c.validateActuators(&ch)
	c.validateAlerting(&ch)
	return ch.err()
}

func (c *Config) validateGlobal(ch *checker) {
	g := c.Global
	if g.EvaluationInterval <= 0 {
		ch.errorf(at("global.evaluation_interval"), "must be above 0, got %s", g.EvaluationInterval)
	}
	if g.QueryTimeout <= 0 {
		ch.errorf(at("global.query_timeout"), "must be above 0, got %s", g.QueryTimeout)
	} else if g.EvaluationInterval > 0 && g.QueryTimeout >= g.EvaluationInterval {
		ch.add(at("global.query_timeout"), fmt.Sprintf("global.query_timeout (%s) must be below global.evaluation_interval (%s)",
			g.QueryTimeout, g.EvaluationInterval))
	}
}

func (c *Config) validatePrometheus(ch *checker) {
	where := at("prometheus.url")
	if c.Prometheus.URL == "" {
		ch.errorf(where, "must be set")
	} else if err := checkHTTPURL(c.Prometheus.URL); err != nil {
		ch.errorf(where, "%v", err)
	}
	if err := c.Prometheus.HTTPClient.Validate(); err != nil {
		ch.errorf(at("prometheus.http_config"), "%v", err)
	}
	if c.Prometheus.MaxResponseBytes < 0 {
		ch.errorf(at("prometheus.max_response_bytes"), "must not be negative (0 means no bound), got %d", c.Prometheus.MaxResponseBytes)
	}
	if c.Prometheus.MaxSeriesPerQuery < 0 {
		ch.errorf(at("prometheus.max_series_per_query"), "must not be negative (0 means no bound), got %d", c.Prometheus.MaxSeriesPerQuery)
	}
}

// checkHTTPURL says why s is not an absolute http or https URL, if it is not.
func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	var uerr *url.Error
	shown := RedactURL(s) // never echo a password
	switch {
	case errors.As(err, &uerr):
		return fmt.Errorf("%q is not an absolute http or https URL (%v)", shown, uerr.Err)
	case err != nil:
		return fmt.Errorf("%q is not an absolute http or https URL (%v)", shown, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q is not an absolute http or https URL", shown)
	case u.Host == "":
		return fmt.Errorf("%q has no host", shown)
	}
	return nil
}

// validateSignals checks the signals and returns the set of their names.
func (c *Config) validateSignals(ch *checker) map[string]bool {
	names := map[string]bool{}
	if len(c.Signals) == 0 {
		ch.errorf(at("signals"), "must list at least one signal")
	}
	p := parser.NewParser(parser.Options{})
	for i, s := range c.Signals {
		where := at("signals").item(i, s.Name)
		switch {
		case s.Name == "":
			ch.errorf(where.field("name"), "must be set")
		case !signalNameRE.MatchString(s.Name):
			ch.errorf(where.field("name"), "%q must match %s", s.Name, signalNameRE)
		case names[s.Name]:
			ch.errorf(where.field("name"), "duplicate signal %q", s.Name)
		}
		if s.Name != "" {
			names[s.Name] = true
		}
		if strings.TrimSpace(s.Query) == "" {
			ch.errorf(where.field("query"), "must be set")
		} else if e, err := p.ParseExpr(s.Query); err != nil {
			ch.errorf(where.field("query"), "%s", firstLine(err))
		} else if e.Type() != parser.ValueTypeVector {
			ch.errorf(where.field("query"), "must return an instant vector, got %s", valueTypeName(e.Type()))
		}
		checkEvidenceQuery(ch, p, where, s)
		checkWindows(ch, where, s)
		if s.Missing != rules.MissingHold && s.Missing != rules.MissingIgnore {
			ch.errorf(where.field("missing"), "must be %q or %q, got %q", rules.MissingHold, rules.MissingIgnore, s.Missing)
		}
	}
	return names
}

// checkEvidenceQuery checks a signal's volume or samples query: at most
// one of them, an instant vector, with a range to name in explanations.
func checkEvidenceQuery(ch *checker, p parser.Parser, where loc, s rules.SignalConfig) {
	if s.Volume != "" && s.Samples != "" {
		ch.errorf(where.field("samples"), "a signal has a volume or samples, not both")
	}
	for _, f := range []struct{ key, q string }{{"volume", s.Volume}, {"samples", s.Samples}} {
		if f.q == "" {
			continue
		}
		if strings.TrimSpace(f.q) == "" {
			ch.errorf(where.field(f.key), "must not be blank")
		} else if e, err := p.ParseExpr(f.q); err != nil {
			ch.errorf(where.field(f.key), "%s", firstLine(err))
		} else if e.Type() != parser.ValueTypeVector {
			ch.errorf(where.field(f.key), "must return an instant vector, got %s", valueTypeName(e.Type()))
		} else if QueryWindow(f.q) == 0 {
			ch.errorf(where.field(f.key), "must count over a range such as [2m]")
		}
	}
}

// checkWindows checks a signal's longer windows: only beside a volume,
// whose window and the query's are one (so rewriting that window rewrites
// the same count in both), each longer than the one before and than it,
// at most MaxWindows.
func checkWindows(ch *checker, where loc, s rules.SignalConfig) {
	if len(s.Windows) == 0 {
		return
	}
	at := where.field("windows")
	if s.Volume == "" {
		ch.errorf(at, "needs a volume: only the calls behind a ratio accumulate over longer windows")
		return
	}
	if len(s.Windows) > rules.MaxWindows {
		ch.errorf(at, "at most %d windows, got %d", rules.MaxWindows, len(s.Windows))
	}
	own, q := countWindow(s.Volume), countWindow(s.Query)
	switch {
	case own == 0 || q == 0:
		ch.errorf(at, "the query and the volume must each count over a range such as [1m] (or read a recording named for one, such as route:x:rate1m)")
		return
	case own != q:
		ch.errorf(at, "the query counts over %s and the volume over %s: they must be one window", rules.WindowName(q), rules.WindowName(own))
		return
	}
	prev := own
	for i, w := range s.Windows {
		if w <= prev {
			ch.errorf(at.item(i, ""), "%s must be longer than %s (the windows ascend from the signal's own)", rules.WindowName(w), rules.WindowName(prev))
		}
		prev = max(prev, w)
	}
}

func (c *Config) validateScoring(ch *checker, signals map[string]bool) {
	sc := at("scoring")
	if !(c.Scoring.Confidence >= 0.5 && c.Scoring.Confidence < 1) {
		ch.errorf(sc.field("confidence"), "must be within [0.5, 1), got %g", c.Scoring.Confidence)
	}
	if !(c.Scoring.DecisiveConfidence >= c.Scoring.Confidence && c.Scoring.DecisiveConfidence < 1) {
		ch.errorf(sc.field("decisive_confidence"), "must be within [confidence, 1), got %g", c.Scoring.DecisiveConfidence)
	}
	if rc := c.Scoring.RecoveryConfidence; rc != 0 && !(rc >= 0.5 && rc < 1) {
		ch.errorf(sc.field("recovery_confidence"), "must be 0 (the confidence) or within [0.5, 1), got %g", rc)
	}
	if !(c.Scoring.MinSamples >= 0) {
		ch.errorf(sc.field("min_samples"), "must be 0 or more, got %g", c.Scoring.MinSamples)
	}
	for i, p := range c.Scoring.Penalties {
		where := sc.field("penalties").item(i, "")
		checkSignalRef(ch, where, p.Signal, signals)
		checkBound(ch, where, p.Bound)
		if !(p.PointsPerUnit >= 0) {
			ch.errorf(where.field("points_per_unit"), "must be 0 or more, got %g", p.PointsPerUnit)
		}
		if !(p.Max > 0) {
			ch.errorf(where.field("max"), "must be above 0, got %g", p.Max)
		}
	}
	for i, cp := range c.Scoring.Caps {
		where := sc.field("caps").item(i, "")
		checkSignalRef(ch, where, cp.Signal, signals)
		checkBound(ch, where, cp.Bound)
		if !(cp.MaxScore >= 0 && cp.MaxScore <= 100) {
			ch.errorf(where.field("max_score"), "must be within [0, 100], got %g", cp.MaxScore)
		}
	}
	for i, f := range c.Scoring.Floors {
		where := sc.field("floors").item(i, "")
		checkSignalRef(ch, where, f.Signal, signals)
		checkBound(ch, where, f.Bound)
		if !slices.Contains(rules.FloorLevels, f.Level) {
			ch.errorf(where.field("level"), "must be one of %s, got %q", strings.Join(rules.FloorLevels, ", "), f.Level)
		}
	}
}

func checkSignalRef(ch *checker, where loc, name string, signals map[string]bool) {
	switch {
	case name == "":
		ch.errorf(where.field("signal"), "must be set")
	case !signals[name]:
		ch.errorf(where.field("signal"), "unknown signal %q", name)
	}
}

func checkBound(ch *checker, where loc, b rules.Bound) {
	switch {
	case b.Above == nil && b.Below == nil:
		ch.errorf(where, "one of above or below must be set")
	case b.Above != nil && b.Below != nil:
		ch.errorf(where, "only one of above or below may be set")
	case b.Above != nil && math.IsNaN(*b.Above):
		ch.errorf(where.field("above"), "must be a number")
	case b.Below != nil && math.IsNaN(*b.Below):
		ch.errorf(where.field("below"), "must be a number")
	}
}

func (c *Config) validateLevels(ch *checker) {
	names := make([]string, len(c.Levels))
	for i, l := range c.Levels {
		names[i] = l.Name
	}
	if !slices.Equal(names, rules.LevelNames) {
		ch.errorf(at("levels"), "must list exactly %s in that order, got [%s]",
			strings.Join(rules.LevelNames, ", "), strings.Join(names, ", "))
	}
	lv := at("levels")
	for i, l := range c.Levels {
		where := lv.item(i, "")
		if !(l.Below > 0 && l.Below <= 100) {
			ch.errorf(where.field("below"), "must be within (0, 100], got %g", l.Below)
		}
		if !(l.RecoverAbove > l.Below) {
			ch.add(where.field("recover_above"), fmt.Sprintf("%s (%g) must be above %s (%g)",
				where.field("recover_above").shown, l.RecoverAbove, where.field("below").shown, l.Below))
		} else if l.RecoverAbove > 100 {
			ch.errorf(where.field("recover_above"), "must be at most 100, got %g", l.RecoverAbove)
		}
		for _, d := range []struct {
			key string
			d   time.Duration
		}{{"dwell", l.Dwell}, {"recover_for", l.RecoverFor}, {"cooldown", l.Cooldown}} {
			if d.d < 0 {
				ch.errorf(where.field(d.key), "must not be negative, got %s", d.d)
			}
		}
		if l.PrimaryPercent < 0 || l.PrimaryPercent > 100 {
			ch.errorf(where.field("primary_percent"), "must be within [0, 100], got %d", l.PrimaryPercent)
		}
		if i == 0 {
			continue
		}
		prev := lv.item(i-1, "")
		if !(l.Below < c.Levels[i-1].Below) {
			ch.add(where.field("below"), fmt.Sprintf("%s (%g) must be below %s (%g)",
				where.field("below").shown, l.Below, prev.field("below").shown, c.Levels[i-1].Below))
		}
		if l.PrimaryPercent > c.Levels[i-1].PrimaryPercent {
			ch.add(where.field("primary_percent"), fmt.Sprintf("%s (%d) must not be above %s (%d)",
				where.field("primary_percent").shown, l.PrimaryPercent, prev.field("primary_percent").shown, c.Levels[i-1].PrimaryPercent))
		}
	}
	for i, l := range c.Levels {
		if l.Name == traffic.Failover.String() && l.PrimaryPercent != 0 {
			ch.errorf(lv.item(i, "").field("primary_percent"), "must be 0 for failover, got %d", l.PrimaryPercent)
		}
	}
}

func (c *Config) validateFailback(ch *checker) {
	fb := c.Failback
	where := at("failback")
	if len(fb.Stages) == 0 {
		ch.errorf(where.field("stages"), "must list at least one stage")
	}
	for i, s := range fb.Stages {
		st := where.field("stages").item(i, "")
		if s < 1 || s > 100 {
			ch.errorf(st, "must be within 1..100, got %d", s)
		}
		if i > 0 && s <= fb.Stages[i-1] {
			ch.errorf(st, "%d must be above the previous stage (%d)", s, fb.Stages[i-1])
		}
	}
	if n := len(fb.Stages); n > 0 && fb.Stages[n-1] != 100 {
		ch.errorf(where.field("stages"), "the last stage must be 100, got %d", fb.Stages[n-1])
	}
	if fb.Observe <= 0 {
		ch.errorf(where.field("observe"), "must be above 0, got %s", fb.Observe)
	}
	if !(fb.MinScore > 0 && fb.MinScore <= 100) {
		ch.errorf(where.field("min_score"), "must be within (0, 100], got %g", fb.MinScore)
	}
	if fb.MaxCompleted < 1 {
		ch.errorf(where.field("max_completed"), "must be at least 1, got %d", fb.MaxCompleted)
	}
	if fb.Window <= 0 {
		ch.errorf(where.field("window"), "must be above 0, got %s", fb.Window)
	}
	if fb.ManualAfter <= 0 {
		ch.errorf(where.field("manual_after"), "must be above 0, got %s", fb.ManualAfter)
	}
}

func (c *Config) validateServices(ch *checker) {
	if len(c.Services) == 0 {
		ch.errorf(at("services"), "must list at least one service")
	}
	seen := map[string]bool{}
	services := map[string]string{} // lower case → as first spelled
	for i, s := range c.Services {
		where := at("services").item(i, s.Name)
		first, caseDup := services[strings.ToLower(s.Name)]
		switch {
		case s.Name == "":
			ch.errorf(where.field("name"), "must be set")
		case !rules.ValidRouteName(s.Name):
			// Service names become file names (nginx's <service>.conf),
			// record names and flag keys, as route names do.
			ch.errorf(where.field("name"), "%q must match %s", s.Name, rules.RouteNamePattern())
		case seen[s.Name]:
			ch.errorf(where.field("name"), "duplicate service %q", s.Name)
		case caseDup:
			// nginx's chat.conf would hold Chat's servers.
			ch.errorf(where.field("name"), "service %q differs from %q only in case (service names are matched case-insensitively: file names, dns records and flag keys do not tell them apart)", s.Name, first)
		}
		seen[s.Name] = true
		if !caseDup {
			services[strings.ToLower(s.Name)] = s.Name
		}
		if len(s.Routes) == 0 {
			ch.errorf(where.field("routes"), "must list at least one route")
		}
		routes := map[string]bool{}
		folded := map[string]string{} // lower case → as first spelled
		for j, r := range s.Routes {
			rw := where.field("routes").item(j, "")
			first, caseDup := folded[strings.ToLower(r)]
			switch {
			case r == "":
				ch.errorf(rw, "must not be empty")
			case !rules.ValidRouteName(r):
				ch.errorf(rw, "%q must match %s", r, rules.RouteNamePattern())
			case routes[r]:
				ch.errorf(rw, "duplicate route %q", r)
			case caseDup:
				// nginx would refuse every apply of the service.
				ch.errorf(rw, "route %q differs from %q only in case (route names are matched case-insensitively: configuration keys such as nginx upstreams and dns records arrive lower-cased)", r, first)
			}
			routes[r] = true
			if !caseDup {
				folded[strings.ToLower(r)] = r
			}
		}
	}
}

func (c *Config) validateAlerts(ch *checker, signals map[string]bool) {
	seen := map[string]bool{}
	sample := c.sampleTemplateData()
	for i, a := range c.Alerts {
		where := at("alerts").item(i, a.Name)
		switch {
		case a.Name == "":
			ch.errorf(where.field("name"), "must be set")
		case !alertNameRE.MatchString(a.Name):
			ch.errorf(where.field("name"), "%q must be CamelCase (match %s)", a.Name, alertNameRE)
		case seen[a.Name]:
			ch.errorf(where.field("name"), "duplicate alert %q", a.Name)
		}
		seen[a.Name] = true
		if a.Tier != rules.TierA && a.Tier != rules.TierB && a.Tier != rules.TierC {
			ch.errorf(where.field("tier"), "must be %s, %s or %s, got %q", rules.TierA, rules.TierB, rules.TierC, a.Tier)
		}
		if a.Scope != rules.ScopeRoute && a.Scope != rules.ScopeService && a.Scope != rules.ScopeActuator {
			ch.errorf(where.field("scope"), "must be %q, %q or %q, got %q", rules.ScopeRoute, rules.ScopeService, rules.ScopeActuator, a.Scope)
		}
		if cond, prog, err := CompileAlertExpr(a.Expr); err != nil {
			ch.errorf(where.field("expr"), "%v", err)
		} else {
			unknown := false
			for _, name := range cond.SignalRefs() {
				if !signals[name] {
					ch.errorf(where.field("expr"), "unknown signal %q", name)
					unknown = true
				}
			}
			if !unknown {
				if err := checkAlertExpr(prog, a.Scope, sample); err != nil {
					ch.errorf(where.field("expr"), "%v", err)
				}
			}
		}
		if a.For < 0 {
			ch.errorf(where.field("for"), "must not be negative, got %s", a.For)
		}
		if a.KeepFiringFor < 0 {
			ch.errorf(where.field("keep_firing_for"), "must not be negative, got %s", a.KeepFiringFor)
		}
		for _, k := range sortedKeys(a.Labels) {
			switch {
			case !labelNameRE.MatchString(k):
				ch.errorf(where.field("labels").field(k), "invalid label name %q", k)
			case slices.Contains(reservedLabels, k):
				ch.errorf(where.field("labels").field(k), "label %q is set by Hermes and cannot be overridden", k)
			}
		}
		for _, t := range []struct{ key, text string }{{"summary", a.Summary}, {"description", a.Description}} {
			if err := checkTemplate(a.Name+"."+t.key, t.text, sample); err != nil {
				ch.errorf(where.field(t.key), "%s", firstLine(err))
			}
		}
		if a.RunbookURL != "" {
			if u, err := url.Parse(a.RunbookURL); err != nil || !u.IsAbs() {
				ch.errorf(where.field("runbook_url"), "%q is not a URL, nor one relative to alerting.runbook_base_url", a.RunbookURL)
			}
		}
	}
}

// sampleTemplateData is TemplateData with every configured signal (also
// listed as missing) and route, to try templates on.
func (c *Config) sampleTemplateData() rules.TemplateData {
	d := rules.TemplateData{Route: "route", Service: "service", Level: traffic.Normal.String(), Score: 100,
		Signals: map[string]float64{}, Weights: map[string]int{}}
	for _, s := range c.Signals {
		d.Signals[s.Name] = 0
		d.Missing = append(d.Missing, s.Name)
	}
	for _, s := range c.Services {
		for _, r := range s.Routes {
			d.Weights[r] = 0
		}
	}
	return d
}

// sampleAlertEnv is what an alert expression of scope sees on the sample
// data templates are tried on: the route, service or actuator fields of
// that scope, stage 0 and every signal at 0.
func sampleAlertEnv(scope string, d rules.TemplateData) rules.AlertEnv {
	env := rules.AlertEnv{Service: d.Service, Score: d.Score, Level: d.Level, Signals: d.Signals}
	switch scope {
	case rules.ScopeService:
		env.Weights = d.Weights
	case rules.ScopeActuator:
		env.Service, env.Actuator = "", "actuator"
	default:
		env.Route, env.Stage, env.Missing = d.Route, d.Stage, d.Missing
	}
	return env
}

// checkAlertExpr runs a compiled alert expression on the sample data of its
// scope (see sampleAlertEnv), as each tick
// does, so that an expression that errors at run time (an integer modulo
// by zero, or a value that is not a bool) is reported by check rather than
// counted as not firing at every tick.
func checkAlertExpr(prog *vm.Program, scope string, sample rules.TemplateData) error {
	env := sampleAlertEnv(scope, sample)
	// CompileAlertExpr compiles with expr.AsBool, so the VM casts the result:
	// a value that is not a boolean is a run-time error too.
	if _, err := vm.Run(prog, AlertExprEnv(&env)); err != nil {
		return fmt.Errorf("fails at run time on sample data (%s scope, stage 0, every signal 0): %s", scope, firstLine(err))
	}
	return nil
}

// checkTemplate parses text and runs it on sample data, so that unknown
// fields and signals are caught before an alert fires.
func checkTemplate(name, text string, sample rules.TemplateData) error {
	t, err := ParseTemplate(name, text)
	if err != nil {
		return err
	}
	return t.Option("missingkey=error").Execute(io.Discard, sample)
}

func (c *Config) validateActuators(ch *checker) {
	services := map[string]bool{}
	for _, s := range c.Services {
		services[s.Name] = true
	}
	seen := map[string]bool{}
	for i, a := range c.Actuators {
		name := a.Name
		if name == "" {
			name = a.Type
		}
		where := at("actuators").item(i, name)
		if a.Type == "" {
			ch.errorf(where, "type must be set")
		}
		if name != "" && seen[name] {
			ch.errorf(where.field("name"), "duplicate actuator %q (the name defaults to the type)", name)
		}
		seen[name] = true
		if a.MaxShiftPerTick < 0 || a.MaxShiftPerTick > 100 {
			ch.errorf(where.field("max_shift_per_tick"), "%d is out of range (want 1..100, or 0 for no limit)", a.MaxShiftPerTick)
		}
		for j, s := range a.Services {
			if !services[s] {
				ch.errorf(where.field("services").item(j, ""), "unknown service %q", s)
			}
		}
	}
}

func (c *Config) validateAlerting(ch *checker) {
	al := c.Alerting
	where := at("alerting")
	seen := map[string]bool{}
	for i, am := range al.Alertmanagers {
		w := where.field("alertmanagers").item(i, "")
		switch {
		case am.URL == "":
			ch.errorf(w.field("url"), "must be set")
		case checkHTTPURL(am.URL) != nil:
			ch.errorf(w.field("url"), "%v", checkHTTPURL(am.URL))
		case seen[strings.TrimRight(am.URL, "/")]:
			ch.errorf(w.field("url"), "duplicate Alertmanager %q", RedactURL(am.URL))
		}
		seen[strings.TrimRight(am.URL, "/")] = true
		if am.Timeout <= 0 {
			ch.errorf(w.field("timeout"), "must be above 0, got %s", am.Timeout)
		}
		if err := am.HTTPClient.Validate(); err != nil {
			ch.errorf(w.field("http_config"), "%v", err)
		}
	}
	if err := checkHTTPURL(al.ExternalURL); err != nil {
		ch.errorf(where.field("external_url"), "%v", err)
	}
	if err := checkHTTPURL(al.RunbookBaseURL); err != nil {
		ch.errorf(where.field("runbook_base_url"), "%v", err)
	}
	if al.ResendDelay < 0 {
		ch.errorf(where.field("resend_delay"), "must not be negative, got %s", al.ResendDelay)
	}
	if al.QueueCapacity < 1 {
		ch.errorf(where.field("queue_capacity"), "must be at least 1, got %d", al.QueueCapacity)
	}
}

// valueTypeName names a PromQL result type as the documentation does.
func valueTypeName(t parser.ValueType) string {
	switch t {
	case parser.ValueTypeVector:
		return "instant vector"
	case parser.ValueTypeMatrix:
		return "range vector"
	}
	return string(t)
}

// firstLine keeps the first line of a (possibly multi-line) error message.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
