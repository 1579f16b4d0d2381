package probe

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/rules/config"
)

// Layer names, the layer label of llm_probe_success.
const (
	Liveness  = "liveness"
	Readiness = "readiness"
	E2E       = "e2e"
	Boundary  = "boundary"
)

// Layers lists the layers in the order they are configured and started.
var Layers = []string{Liveness, Readiness, E2E, Boundary}

// Config is a prober configuration file.
type Config struct {
	// Defaults apply to every target that does not set its own.
	Defaults Defaults `mapstructure:"defaults"`
	// Targets are the routes to probe.
	Targets []Target `mapstructure:"targets"`
	// Prompts replace the built-in e2e prompt set (DefaultPrompts) when set.
	Prompts []Prompt `mapstructure:"prompts"`
}

// Defaults are the per-layer settings and the budget every target starts from.
type Defaults struct {
	Liveness    LayerConfig `mapstructure:"liveness"`
	Readiness   LayerConfig `mapstructure:"readiness"`
	E2E         LayerConfig `mapstructure:"e2e"`
	Boundary    LayerConfig `mapstructure:"boundary"`
	TokenBudget Budget      `mapstructure:"token_budget"`
}

// LayerConfig is how one layer runs. In a target, zero fields take the
// defaults' values.
type LayerConfig struct {
	// Disabled turns the layer off.
	Disabled bool `mapstructure:"disabled"`
	// Interval between two runs.
	Interval time.Duration `mapstructure:"interval"`
	// Timeout of one request.
	Timeout time.Duration `mapstructure:"timeout"`
	// FailureThreshold is how many failures in a row set success to 0.
	FailureThreshold int `mapstructure:"failure_threshold"`
}

// Budget bounds the tokens the e2e and boundary probes of a route spend
// per window; once spent they pause until the next window.
type Budget struct {
	// Tokens per window; 0 means no limit.
	Tokens int `mapstructure:"tokens"`
	// Per is the window, aligned to multiples of it since the Unix epoch
	// (24h: UTC days).
	Per time.Duration `mapstructure:"per"`
}

// Target is one route to probe.
type Target struct {
	// Route is the route label, as Hermes's configuration names it.
	Route string `mapstructure:"route"`
	// BaseURL is the API base, ending in /v1.
	BaseURL string `mapstructure:"base_url"`
	// API is the API the route serves and the prober calls:
	// validate.FormatOpenAIChat (the default: POST {base_url}/chat/completions,
	// the key as a bearer token), validate.FormatAnthropicMessages
	// (Anthropic's Messages API: POST {base_url}/messages, the key in
	// x-api-key) or validate.FormatOpenAIResponses (OpenAI's Responses
	// API: POST {base_url}/responses). Its replies are judged in that
	// format.
	API validate.Format `mapstructure:"api"`
	// Model is the model to find in /models and to ask.
	Model string `mapstructure:"model"`
	// APIKeyFile holds the API key (relative to the configuration file);
	// APIKeyEnv names an environment variable holding it. At most one.
	APIKeyFile string `mapstructure:"api_key_file"`
	APIKeyEnv  string `mapstructure:"api_key_env"`
	// Headers are sent with every request (e.g. an organisation header).
	Headers map[string]string `mapstructure:"headers"`
	// Probes selects prompts by name (default: every prompt).
	Probes []string `mapstructure:"probes"`

	Liveness    LayerConfig `mapstructure:"liveness"`
	Readiness   LayerConfig `mapstructure:"readiness"`
	E2E         LayerConfig `mapstructure:"e2e"`
	Boundary    LayerConfig `mapstructure:"boundary"`
	TokenBudget Budget      `mapstructure:"token_budget"`
}

// Prompt is one e2e probe: a fixed request and the rules its reply is
// judged by.
type Prompt struct {
	Name     string    `mapstructure:"name"`
	Messages []Message `mapstructure:"messages"`
	// MaxTokens bounds the reply (and the cost).
	MaxTokens int `mapstructure:"max_tokens"`
	// Stream asks for server-sent events.
	Stream bool `mapstructure:"stream"`
	// ResponseFormat, e.g. "json_object", is sent as response_format.type.
	ResponseFormat string `mapstructure:"response_format"`
	// Validation are the rules the reply must meet.
	Validation validate.Rules `mapstructure:"validation"`
}

// Message is one chat message of a prompt.
type Message struct {
	Role    string `mapstructure:"role"`
	Content string `mapstructure:"content"`
}

// The defaults a configuration starts from. An e2e failure sets its
// success to 0 at once: each result counts as itself, where a threshold of
// 2 read a 30 % intermittent fault as about 90 % success (issue 33).
var defaultDefaults = Defaults{
	Liveness:  LayerConfig{Interval: 30 * time.Second, Timeout: 5 * time.Second, FailureThreshold: 2},
	Readiness: LayerConfig{Interval: 10 * time.Second, Timeout: 5 * time.Second, FailureThreshold: 2},
	E2E:       LayerConfig{Interval: 2 * time.Minute, Timeout: 60 * time.Second, FailureThreshold: 1},
	Boundary:  LayerConfig{Interval: 24 * time.Hour, Timeout: 60 * time.Second, FailureThreshold: 1},
	// The built-in prompts cost about 321 tokens a run, 231,000 a day at
	// the 2m interval, and at most 403,000 if every reply used all its
	// max_tokens: a million leaves room for both (TestDefaultScheduleFitsBudget).
	TokenBudget: Budget{Tokens: 1000000, Per: 24 * time.Hour},
}

// Limits the configuration is held to.
const (
	MinInterval = 1 * time.Second
	MinTimeout  = 100 * time.Millisecond
)

var (
	routeRE = regexp.MustCompile(`^[a-zA-Z0-9_.:-]+$`)
	nameRE  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// LooksLikeConfig says whether a YAML document is a prober configuration
// (it has a top-level targets key) rather than a Hermes one.
func LooksLikeConfig(data []byte) bool {
	return config.HasTopKey(data, "targets")
}

// Load reads and validates a prober configuration; api_key_file paths are
// resolved against the file's directory. Every problem is reported with
// its file and line.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading probe config: %w", err)
	}
	cfg, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	for i := range cfg.Targets {
		if f := cfg.Targets[i].APIKeyFile; f != "" && !filepath.IsAbs(f) {
			cfg.Targets[i].APIKeyFile = filepath.Join(dir, f)
		}
	}
	return cfg, nil
}

// Parse decodes and validates a prober configuration; source names it in
// errors.
func Parse(data []byte, source string) (*Config, error) {
	cfg := &Config{Defaults: defaultDefaults}
	if err := config.ParseStrict(data, source, cfg, func() error {
		cfg.setDefaults()
		return cfg.Validate()
	}); err != nil {
		return nil, err
	}
	return cfg, nil
}

func (c *Config) setDefaults() {
	if c.Prompts == nil {
		c.Prompts = DefaultPrompts()
	}
	for i := range c.Targets {
		t := &c.Targets[i]
		t.Liveness = merge(t.Liveness, c.Defaults.Liveness)
		t.Readiness = merge(t.Readiness, c.Defaults.Readiness)
		t.E2E = merge(t.E2E, c.Defaults.E2E)
		t.Boundary = merge(t.Boundary, c.Defaults.Boundary)
		if t.TokenBudget.Tokens == 0 {
			t.TokenBudget.Tokens = c.Defaults.TokenBudget.Tokens
		}
		if t.TokenBudget.Per == 0 {
			t.TokenBudget.Per = c.Defaults.TokenBudget.Per
		}
	}
}

func merge(l, def LayerConfig) LayerConfig {
	l.Disabled = l.Disabled || def.Disabled
	if l.Interval == 0 {
		l.Interval = def.Interval
	}
	if l.Timeout == 0 {
		l.Timeout = def.Timeout
	}
	if l.FailureThreshold == 0 {
		l.FailureThreshold = def.FailureThreshold
	}
	return l
}

// Layer returns the target's settings of a layer.
func (t *Target) Layer(name string) LayerConfig {
	switch name {
	case Liveness:
		return t.Liveness
	case Readiness:
		return t.Readiness
	case E2E:
		return t.E2E
	}
	return t.Boundary
}

// Validate reports every problem of a configuration with defaults applied.
func (c *Config) Validate() error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, config.Problem(path, format, args...)) }
	if len(c.Targets) == 0 {
		add("targets", "at least one target is needed")
	}
	prompts := map[string]bool{}
	for i, p := range c.Prompts {
		at := fmt.Sprintf("prompts[%d]", i)
		switch {
		case !nameRE.MatchString(p.Name):
			add(at+".name", "%q is not a valid probe name (letters, digits, _)", p.Name)
		case prompts[p.Name]:
			add(at+".name", "%q is defined twice", p.Name)
		}
		prompts[p.Name] = true
		if len(p.Messages) == 0 {
			add(at+".messages", "at least one message is needed")
		}
		for j, m := range p.Messages {
			if !slices.Contains([]string{"system", "user", "assistant"}, m.Role) {
				add(fmt.Sprintf("%s.messages[%d].role", at, j), "%q: want system, user or assistant", m.Role)
			}
			if strings.TrimSpace(m.Content) == "" {
				add(fmt.Sprintf("%s.messages[%d].content", at, j), "must not be empty")
			}
		}
		if p.MaxTokens < 0 {
			add(at+".max_tokens", "must not be negative")
		}
		if f := p.Validation.Format; f == validate.FormatAnthropicMessages || f == validate.FormatOpenAIResponses {
			add(at+".validation.format", "a completion is read in its target's API: set api: %s on the target", f)
		}
		if _, err := validate.New(p.Validation); err != nil {
			for _, e := range strings.Split(err.Error(), "\n") {
				path := at + ".validation"
				if strings.HasPrefix(e, "rejected_codes[") {
					path += ".rejected_codes" // its line, not the validation block's
				}
				add(path, "%s", e)
			}
		}
	}
	for _, layer := range Layers {
		errs = append(errs, c.Defaults.layer(layer).validate("defaults."+layer)...)
	}
	routes := map[string]bool{}
	for i, t := range c.Targets {
		at := fmt.Sprintf("targets[%d]", i)
		switch {
		case !routeRE.MatchString(t.Route):
			add(at+".route", "%q is not a valid route name", t.Route)
		case routes[t.Route]:
			add(at+".route", "%q is probed twice", t.Route)
		}
		routes[t.Route] = true
		if u, err := url.Parse(t.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add(at+".base_url", "%q is not an http(s) URL", t.BaseURL)
		}
		if t.Model == "" {
			add(at+".model", "must be set")
		}
		switch t.API {
		case "", validate.FormatOpenAIChat, validate.FormatAnthropicMessages, validate.FormatOpenAIResponses:
		default:
			add(at+".api", "%q: want %s, %s or %s", t.API, validate.FormatOpenAIChat, validate.FormatAnthropicMessages, validate.FormatOpenAIResponses)
		}
		if t.APIKeyFile != "" && t.APIKeyEnv != "" {
			add(at+".api_key_env", "set api_key_file or api_key_env, not both")
		}
		for _, name := range t.Probes {
			if !prompts[name] {
				add(at+".probes", "unknown prompt %q", name)
			}
		}
		for _, layer := range Layers {
			// A layer the target leaves as the defaults have it is
			// reported once, under defaults.
			if l := t.Layer(layer); l != c.Defaults.layer(layer) {
				errs = append(errs, l.validate(at+"."+layer)...)
			}
		}
		if t.TokenBudget.Tokens < 0 {
			add(at+".token_budget.tokens", "must not be negative")
		}
		if t.TokenBudget.Per < time.Minute {
			add(at+".token_budget.per", "%s is below the minimum 1m", t.TokenBudget.Per)
		}
	}
	return errors.Join(errs...)
}

func (d *Defaults) layer(name string) LayerConfig {
	t := Target{Liveness: d.Liveness, Readiness: d.Readiness, E2E: d.E2E, Boundary: d.Boundary}
	return t.Layer(name)
}

// validate reports the problems of a layer's settings at path.
func (l LayerConfig) validate(path string) []error {
	var errs []error
	if l.Interval < MinInterval {
		errs = append(errs, config.Problem(path+".interval", "%s is below the minimum %s", l.Interval, MinInterval))
	}
	if l.Timeout < MinTimeout {
		errs = append(errs, config.Problem(path+".timeout", "%s is below the minimum %s", l.Timeout, MinTimeout))
	} else if l.Timeout > l.Interval {
		errs = append(errs, config.Problem(path+".timeout", "%s is longer than the interval %s", l.Timeout, l.Interval))
	}
	if l.FailureThreshold < 1 {
		errs = append(errs, config.Problem(path+".failure_threshold", "must be at least 1"))
	}
	return errs
}
