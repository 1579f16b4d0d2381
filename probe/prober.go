package probe

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/redirect"
)

// Doer sends HTTP requests; *http.Client is one.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Prober runs the probes of a configuration and exports their results.
type Prober struct {
	targets []*target
	client  Doer
	log     *slog.Logger
	m       *metrics

	// now is the clock; tests may replace it before Run.
	now func() time.Time
	// panicLogged says a probe run's panic was logged (the first is).
	panicLogged atomic.Bool
}

// target is a configured target with what the prober keeps for it.
type target struct {
	Target
	key        string
	budget     *budget
	prompts    []Prompt
	validators map[string]*validate.Validator
	// boundaryValidator judges the boundary layer's replies: a completion
	// in the target's API, by the default rules.
	boundaryValidator *validate.Validator

	mu     sync.Mutex
	fails  map[string]int // layer/probe → failures in a row
	paused bool           // the budget is spent: e2e and boundary wait for the next window
}

// New prepares a prober: it reads the API keys, compiles the validators
// and registers the metrics on reg. client sends the requests
// (http.Client with a fresh transport when nil).
func New(cfg *Config, reg prometheus.Registerer, client Doer, log *slog.Logger) (*Prober, error) {
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	if client == nil {
		// Redirects stay on the target's host: its API key and headers
		// must not follow one elsewhere.
		client = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), CheckRedirect: redirect.SameHost}
	}
	p := &Prober{client: client, log: log, m: m, now: time.Now}
	byName := map[string]Prompt{}
	for _, pr := range cfg.Prompts {
		byName[pr.Name] = pr
	}
	for _, tc := range cfg.Targets {
		t := &target{Target: tc, budget: newBudget(tc.TokenBudget), validators: map[string]*validate.Validator{}, fails: map[string]int{}}
		t.BaseURL = strings.TrimSuffix(t.BaseURL, "/")
		if t.key, err = apiKey(tc); err != nil {
			return nil, fmt.Errorf("target %s: %w", tc.Route, err)
		}
		names := tc.Probes
		if len(names) == 0 {
			for _, pr := range cfg.Prompts {
				names = append(names, pr.Name)
			}
		}
		t.boundaryValidator = validate.MustNew(validate.Rules{Format: t.format()})
		for _, name := range names {
			pr := byName[name]
			rules := pr.Validation
			if rules.Format == "" || rules.Format == validate.FormatOpenAIChat {
				rules.Format = t.format() // a completion, in the target's API
			}
			v, err := validate.New(rules)
			if err != nil {
				return nil, fmt.Errorf("target %s, prompt %s: %w", tc.Route, name, err)
			}
			t.prompts = append(t.prompts, pr)
			t.validators[name] = v
		}
		if tc.TokenBudget.Tokens > 0 {
			m.remaining.WithLabelValues(tc.Route).Set(float64(tc.TokenBudget.Tokens))
		}
		m.paused.WithLabelValues(tc.Route).Set(0)
		t.initResults(m)
		p.targets = append(p.targets, t)
	}
	return p, nil
}

// initResults creates the route's llm_probe_results_total series at 0, for
// every probe of every enabled layer and every (verdict, reason) it can
// be counted under (resultSeries), so that increase() sees its first result.
func (t *target) initResults(m *metrics) {
	for _, layer := range Layers {
		if t.Layer(layer).Disabled {
			continue
		}
		for _, probe := range t.probeNames(layer) {
			for _, vr := range resultSeries(layer) {
				m.results.WithLabelValues(t.Route, layer, probe, vr[0], vr[1])
			}
		}
		m.panics.WithLabelValues(t.Route, layer) // at 0 until a run panics
	}
}

// probeNames are the probe labels of a layer of the target.
func (t *target) probeNames(layer string) []string {
	switch layer {
	case Liveness:
		return []string{"http"}
	case Readiness:
		return []string{"models"}
	case E2E:
		names := make([]string, len(t.prompts))
		for i, pr := range t.prompts {
			names[i] = pr.Name
		}
		return names
	}
	names := make([]string, len(boundaryCases))
	for i, bc := range boundaryCases {
		names[i] = bc.name
	}
	return names
}

// apiKey reads a target's key from its file or variable; the error never
// holds the key.
func apiKey(t Target) (string, error) {
	switch {
	case t.APIKeyFile != "":
		b, err := os.ReadFile(t.APIKeyFile)
		if err != nil {
			return "", fmt.Errorf("reading api_key_file: %w", err)
		}
		key := strings.TrimSpace(string(b))
		if key == "" {
			return "", fmt.Errorf("api_key_file %s is empty", t.APIKeyFile)
		}
		return key, nil
	case t.APIKeyEnv != "":
		key := strings.TrimSpace(os.Getenv(t.APIKeyEnv))
		if key == "" {
			return "", fmt.Errorf("environment variable %s (api_key_env) is empty or unset", t.APIKeyEnv)
		}
		return key, nil
	}
	return "", nil
}

// Run probes every target's enabled layers, each on its own interval,
// until ctx ends. Each (target, layer) has one goroutine; a run starts at
// once and then every interval after the previous run started (a run
// that overruns its interval is followed at once by the next).
func (p *Prober) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, t := range p.targets {
		for _, layer := range Layers {
			lc := t.Layer(layer)
			if lc.Disabled {
				continue
			}
			wg.Go(func() {
				for {
					start := p.now()
					p.RunLayer(ctx, t.Route, layer)
					wait := lc.Interval - p.now().Sub(start)
					timer := time.NewTimer(max(wait, 0))
					select {
					case <-ctx.Done():
						timer.Stop()
						return
					case <-timer.C:
					}
				}
			})
		}
	}
	wg.Wait()
	return nil
}

// RunLayer runs one layer of one route once, now, and records the results.
func (p *Prober) RunLayer(ctx context.Context, route, layer string) {
	var t *target
	for _, c := range p.targets {
		if c.Route == route {
			t = c
		}
	}
	if t == nil || ctx.Err() != nil {
		return
	}
	lc := t.Layer(layer)
	run := func(f func(context.Context) outcome) {
		cctx, cancel := context.WithTimeout(ctx, lc.Timeout)
		defer cancel()
		o, ok := p.guard(t, layer, func() outcome { return f(cctx) })
		if !ok || ctx.Err() != nil {
			return // shutting down, or a bug of the prober: not a probe failure
		}
		p.record(t, layer, lc, o)
	}
	switch layer {
	case Liveness:
		run(func(c context.Context) outcome { return p.liveness(c, t) })
	case Readiness:
		run(func(c context.Context) outcome { return p.readiness(c, t) })
	case E2E:
		for _, pr := range t.prompts {
			if !p.allow(t) {
				return
			}
			run(func(c context.Context) outcome { return p.prompt(c, t, pr) })
		}
	case Boundary:
		for _, bc := range boundaryCases {
			if !p.allow(t) {
				return
			}
			run(func(c context.Context) outcome { return p.boundary(c, t, bc) })
		}
	}
}

// guard runs a probe and recovers its panic: the judge reads whatever a
// route sends, and a bug it trips on must not stop the prober, and with
// it every route's probes. A run that panicked records no result (no
// verdict is evidence); it is counted in llm_probe_panics_total, and the
// first is logged with its stack.
func (p *Prober) guard(t *target, layer string, run func() outcome) (o outcome, ok bool) {
	defer func() {
		if v := recover(); v != nil {
			ok = false
			p.m.panics.WithLabelValues(t.Route, layer).Inc()
			if p.panicLogged.CompareAndSwap(false, true) {
				p.log.Error("a probe run panicked: no result recorded; later panics are only counted in llm_probe_panics_total",
					"route", t.Route, "layer", layer, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			}
		}
	}()
	return run(), true
}

// allow checks the route's token budget; a spent budget pauses the
// route's e2e and boundary probes and withdraws their success series
// (stale results are not health).
// The pause is logged at warn once, when it begins, and exported as
// llm_probe_paused (the shipped rule HermesProbeBudgetSpent alerts on it).
func (p *Prober) allow(t *target) bool {
	now := p.now()
	ok, resume := t.budget.allow(now)
	t.mu.Lock()
	began, ended := !ok && !t.paused, ok && t.paused
	t.paused = !ok
	t.mu.Unlock()
	if ok {
		p.m.paused.WithLabelValues(t.Route).Set(0)
		if ended {
			p.log.Info("token budget renewed: e2e and boundary probes resumed", "route", t.Route)
		}
		return true
	}
	p.m.paused.WithLabelValues(t.Route).Set(1)
	for _, layer := range []string{E2E, Boundary} {
		p.m.success.DeletePartialMatch(prometheus.Labels{"route": t.Route, "layer": layer})
		p.m.ttft.DeletePartialMatch(prometheus.Labels{"route": t.Route, "layer": layer})
	}
	if began {
		p.log.Warn("token budget spent: e2e and boundary probes paused", "route", t.Route,
			"budget", t.TokenBudget.Tokens, "per", t.TokenBudget.Per, "resume", resume)
	}
	return false
}

// record exports one outcome: it counts the result in
// llm_probe_results_total, each result as itself, and applies the failure
// threshold to llm_probe_success.
func (p *Prober) record(t *target, layer string, lc LayerConfig, o outcome) {
	route := t.Route
	verdict, reason := resultLabels(o)
	p.m.results.WithLabelValues(route, layer, o.probe, string(verdict), string(reason)).Inc()
	p.m.duration.WithLabelValues(route, o.probe, layer).Set(o.took.Seconds())
	if o.ttft > 0 {
		p.m.ttft.WithLabelValues(route, o.probe, layer).Set(o.ttft.Seconds())
	}
	p.m.verdicts.WithLabelValues(route, o.probe, string(o.res.Verdict), string(o.res.Reason)).Inc()
	if o.tokens > 0 {
		p.m.tokens.WithLabelValues(route, o.probe).Add(float64(o.tokens))
		if left := t.budget.spend(p.now(), o.tokens); left >= 0 {
			p.m.remaining.WithLabelValues(route).Set(float64(left))
		}
	}
	key := layer + "/" + o.probe
	t.mu.Lock()
	before := t.fails[key]
	if o.ok {
		t.fails[key] = 0
	} else {
		t.fails[key]++
	}
	fails := t.fails[key]
	t.mu.Unlock()

	g := p.m.success.WithLabelValues(route, o.probe, layer)
	switch {
	case o.ok:
		g.Set(1)
		if before >= lc.FailureThreshold {
			p.log.Info("probe recovered", "route", route, "layer", layer, "probe", o.probe)
		}
	case fails >= lc.FailureThreshold:
		g.Set(0)
		if fails == lc.FailureThreshold {
			p.log.Warn("probe failing", "route", route, "layer", layer, "probe", o.probe,
				"verdict", o.res.Verdict, "reason", o.res.Reason, "code", o.code, "detail", o.res.Detail, "failures", fails)
		}
	default:
		p.log.Debug("probe failed, below its threshold", "route", route, "layer", layer, "probe", o.probe,
			"verdict", o.res.Verdict, "reason", o.res.Reason, "code", o.code, "detail", o.res.Detail)
	}
}
