package proxy

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// Config is a proxy configuration file.
type Config struct {
	// Defaults are the limits of every route that does not set its own.
	Defaults Limits `mapstructure:"defaults"`
	// Routes are the upstreams, one path prefix each.
	Routes []Route `mapstructure:"routes"`
}

// Limits bound the upstream calls of a route. In a route, zero fields
// take the defaults' values.
type Limits struct {
	// MaxConcurrentRequests is the most upstream calls of the route open at
	// once; a request over it is answered 503 and not sent (nor recorded).
	MaxConcurrentRequests int `mapstructure:"max_concurrent_requests"`
	// FirstByteTimeout bounds the wait for the reply's headers (a plain
	// completion sends them once it is complete): 504, code timeout.
	FirstByteTimeout time.Duration `mapstructure:"first_byte_timeout"`
	// IdleTimeout bounds the gap between two reads of the reply's body: a
	// stream that stalls longer is cut (truncated).
	IdleTimeout time.Duration `mapstructure:"idle_timeout"`
	// TotalTimeout bounds the whole call, reply body included.
	TotalTimeout time.Duration `mapstructure:"total_timeout"`
	// ClientBodyTimeout bounds the gap between two reads of the caller's
	// request body, as nginx's client_body_timeout does: a caller that
	// sends nothing for longer is answered 408 and its upstream call
	// cancelled, unrecorded.
	ClientBodyTimeout time.Duration `mapstructure:"client_body_timeout"`
}

// DefaultLimits suit chat completions: nginx's proxy_read_timeout between
// reads, two minutes for a long plain completion to arrive whole, and the
// ten minutes OpenAI's SDKs give a request; nginx's client_body_timeout
// for the caller's body.
var DefaultLimits = Limits{
	MaxConcurrentRequests: 2048,
	FirstByteTimeout:      2 * time.Minute,
	IdleTimeout:           time.Minute,
	TotalTimeout:          10 * time.Minute,
	ClientBodyTimeout:     time.Minute,
}

// Route is one upstream behind the path prefix /NAME.
type Route struct {
	// Name is the route label, as Hermes's configuration names it, and
	// the first segment of the proxy's path.
	Name string `mapstructure:"name"`
	// Upstream is the base URL the rest of the path is appended to.
	Upstream string `mapstructure:"upstream"`
	// Validation are the rules replies are judged by: the keys of the
	// prober's validation and of gateway/validate.
	Validation validate.Rules `mapstructure:"validation"`
	// HTTPConfig is the prometheus/common HTTP client configuration of the
	// upstream (tls_config, proxy_url, …). It injects no credentials
	// unless told to: the caller's Authorization passes through.
	HTTPConfig commoncfg.HTTPClientConfig `mapstructure:"http_config"`
	// JudgedPaths are the path endings (after /NAME) of the POST requests
	// that are judged and recorded (default DefaultJudgedPaths, or
	// MessagesJudgedPaths or ResponsesJudgedPaths when Validation.Format
	// is anthropic_messages or openai_responses); every other request
	// (GET /v1/models, embeddings, …) passes unrecorded.
	JudgedPaths []string `mapstructure:"judged_paths"`

	Limits `mapstructure:",squash"`
}

// DefaultJudgedPaths are the calls whose replies are chat completions.
var DefaultJudgedPaths = []string{"/chat/completions"}

// MessagesJudgedPaths are the calls of Anthropic's Messages API, judged
// by default on a route whose validation format is anthropic_messages
// (its token counting, /messages/count_tokens, is not one).
var MessagesJudgedPaths = []string{"/messages"}

// ResponsesJudgedPaths are the calls of OpenAI's Responses API, judged by
// default on a route whose validation format is openai_responses.
var ResponsesJudgedPaths = []string{"/responses"}

// judgedPaths are the paths judged on a route that names none.
func judgedPaths(f validate.Format) []string {
	switch f {
	case validate.FormatAnthropicMessages:
		return MessagesJudgedPaths
	case validate.FormatOpenAIResponses:
		return ResponsesJudgedPaths
	}
	return DefaultJudgedPaths
}

// LooksLikeConfig says whether a YAML document is a proxy configuration
// (it has a top-level routes key) rather than a Hermes or prober one.
func LooksLikeConfig(data []byte) bool {
	return config.HasTopKey(data, "routes")
}

// Load reads and validates a proxy configuration. Every problem is
// reported with its file and line.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading proxy config: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes and validates a proxy configuration; source names it in
// errors.
func Parse(data []byte, source string) (*Config, error) {
	cfg := &Config{Defaults: DefaultLimits}
	if err := config.ParseStrict(data, source, cfg, func() error {
		cfg.setDefaults()
		return cfg.Validate()
	}); err != nil {
		return nil, err
	}
	return cfg, nil
}

func (c *Config) setDefaults() {
	for i := range c.Routes {
		if c.Routes[i].JudgedPaths == nil {
			c.Routes[i].JudgedPaths = judgedPaths(c.Routes[i].Validation.Format)
		}
		l := &c.Routes[i].Limits
		if l.MaxConcurrentRequests == 0 {
			l.MaxConcurrentRequests = c.Defaults.MaxConcurrentRequests
		}
		if l.FirstByteTimeout == 0 {
			l.FirstByteTimeout = c.Defaults.FirstByteTimeout
		}
		if l.IdleTimeout == 0 {
			l.IdleTimeout = c.Defaults.IdleTimeout
		}
		if l.TotalTimeout == 0 {
			l.TotalTimeout = c.Defaults.TotalTimeout
		}
		if l.ClientBodyTimeout == 0 {
			l.ClientBodyTimeout = c.Defaults.ClientBodyTimeout
		}
	}
}

// Validate reports every problem of a configuration with defaults applied.
func (c *Config) Validate() error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, config.Problem(path, format, args...)) }
	if len(c.Routes) == 0 {
		add("routes", "at least one route is needed")
	}
	errs = append(errs, c.Defaults.validate("defaults")...)
	folded := map[string]string{} // lower case → as first spelled
	for i, r := range c.Routes {
		at := fmt.Sprintf("routes[%d]", i)
		first, twin := folded[strings.ToLower(r.Name)]
		switch {
		case r.Name == "":
			add(at+".name", "must be set")
		case !rules.ValidRouteName(r.Name) || r.Name == "." || r.Name == "..":
			add(at+".name", "%q must match %s (and be a path segment)", r.Name, rules.RouteNamePattern())
		case reserved[r.Name]:
			add(at+".name", "%q is reserved for the proxy's own endpoints (/metrics, /-/…, /debug/pprof/)", r.Name)
		case first == r.Name:
			add(at+".name", "duplicate route %q", r.Name)
		case twin:
			add(at+".name", "route %q differs from %q only in case (route names are matched case-insensitively elsewhere in Hermes)", r.Name, first)
		default:
			folded[strings.ToLower(r.Name)] = r.Name
		}
		// The URL is not quoted: it may hold a token.
		if u, err := url.Parse(r.Upstream); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add(at+".upstream", "must be an absolute http:// or https:// URL")
		} else if u.User != nil || u.Fragment != "" {
			add(at+".upstream", "must not hold credentials or a fragment (use http_config for credentials)")
		}
		if _, err := validate.New(r.Validation); err != nil {
			for _, e := range strings.Split(err.Error(), "\n") {
				path := at + ".validation"
				if strings.HasPrefix(e, "rejected_codes[") {
					path += ".rejected_codes"
				}
				add(path, "%s", e)
			}
		}
		for j, p := range r.JudgedPaths {
			if !strings.HasPrefix(p, "/") {
				add(fmt.Sprintf("%s.judged_paths[%d]", at, j), "%q must start with /", p)
			} else if api, ok := otherAPI(p, r.Validation.Format); ok {
				add(fmt.Sprintf("%s.judged_paths[%d]", at, j), "%q is the path of %s, whose replies validation.format %q would judge all as failed: set validation.format to %s, or judge this path on a route of its own", p, api.name, formatName(r.Validation.Format), api.format)
			}
		}
		if r.Limits != c.Defaults {
			errs = append(errs, r.Limits.validate(at)...)
		}
	}
	return errors.Join(errs...)
}

// apiPath is the path ending of an API whose replies a format of its
// own reads.
type apiPath struct {
	path   string
	name   string
	format validate.Format
}

var apiPaths = []apiPath{
	{"/chat/completions", "OpenAI's Chat Completions API", validate.FormatOpenAIChat},
	{"/messages", "Anthropic's Messages API", validate.FormatAnthropicMessages},
	{"/responses", "OpenAI's Responses API", validate.FormatOpenAIResponses},
}

// otherAPI names the API whose path judged ends with when format reads
// another API's replies: a chat completion judged as a Messages reply
// has no content block and no stop_reason, so every call would count as
// the route failing. The generic formats (json, text) read any API.
func otherAPI(judged string, format validate.Format) (api apiPath, ok bool) {
	format = formatName(format)
	if format == validate.FormatJSON || format == validate.FormatText {
		return api, false
	}
	for _, a := range apiPaths {
		if strings.HasSuffix(judged, a.path) && a.format != format {
			return a, true
		}
	}
	return api, false
}

// formatName is format as a user reads it: the default spelled out.
func formatName(format validate.Format) validate.Format {
	if format == "" {
		return validate.FormatOpenAIChat
	}
	return format
}

// reserved are path prefixes the proxy serves itself. debug is reserved
// even when --web.enable-pprof is off, so that a file valid without the
// flag stays valid with it (a route named debug would take /debug/pprof/).
var reserved = map[string]bool{"metrics": true, "-": true, "debug": true}

// validate reports the problems of limits at path.
func (l Limits) validate(path string) []error {
	var errs []error
	if l.MaxConcurrentRequests < 1 {
		errs = append(errs, config.Problem(path+".max_concurrent_requests", "must be at least 1"))
	}
	for _, d := range []struct {
		key string
		d   time.Duration
	}{{"first_byte_timeout", l.FirstByteTimeout}, {"idle_timeout", l.IdleTimeout}, {"total_timeout", l.TotalTimeout}, {"client_body_timeout", l.ClientBodyTimeout}} {
		if d.d <= 0 {
			errs = append(errs, config.Problem(path+"."+d.key, "must be positive"))
		}
	}
	if l.FirstByteTimeout > l.TotalTimeout {
		errs = append(errs, config.Problem(path+".first_byte_timeout", "%s is longer than total_timeout %s", l.FirstByteTimeout, l.TotalTimeout))
	}
	return errs
}
