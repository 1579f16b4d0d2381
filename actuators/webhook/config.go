package webhook

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	commoncfg "github.com/prometheus/common/config"
	yamlv2 "go.yaml.in/yaml/v2"

	"github.com/hermes-failover/hermes/actuators"
)

// Defaults of a `type: webhook` actuator.
const (
	DefaultTimeout    = 10 * time.Second
	DefaultMaxRetries = 3
	MaxMaxRetries     = 10
)

// Headers the actuator sets itself; `headers` may not set them.
const (
	HeaderSignature      = "X-Hermes-Signature"
	HeaderIdempotencyKey = "Idempotency-Key"
)

// Config holds the keys of a `type: webhook` actuator.
type Config struct {
	// URL receives the POSTs (http or https).
	URL string `mapstructure:"url"`
	// Secret is the HMAC-SHA256 key of the X-Hermes-Signature header.
	Secret string `mapstructure:"secret"`
	// SecretFile holds the key instead (read when the actuator is built,
	// trailing newline dropped).
	SecretFile string `mapstructure:"secret_file"`
	// HTTPConfig is the prometheus/common HTTP client configuration
	// (authorization, basic_auth, oauth2, tls_config, proxy_url, …), key
	// `http_config`.
	HTTPConfig commoncfg.HTTPClientConfig `mapstructure:"-"`
	// Timeout bounds each attempt (default 10s).
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxRetries is how many times a transient failure (5xx, 429, timeout,
	// connection error) is retried within one Apply (default 3).
	MaxRetries int `mapstructure:"max_retries"`
	// Headers are static headers added to every POST.
	Headers map[string]string `mapstructure:"headers"`
}

// rawConfig is Config as decoded: http_config goes through a YAML round
// trip into commoncfg.HTTPClientConfig, which has yaml tags only.
type rawConfig struct {
	Config     `mapstructure:",squash"`
	HTTPConfig any `mapstructure:"http_config"`
}

// ParseConfig decodes the type-specific keys strictly, applies the
// defaults and validates the result.
func ParseConfig(opts map[string]any) (Config, error) {
	raw := rawConfig{Config: Config{
		Timeout:    DefaultTimeout,
		MaxRetries: DefaultMaxRetries,
		HTTPConfig: commoncfg.DefaultHTTPClientConfig,
	}}
	if err := actuators.DecodeOptions(opts, &raw); err != nil {
		return Config{}, err
	}
	c := raw.Config
	var errs []error
	if raw.HTTPConfig != nil {
		hc, err := decodeHTTPConfig(raw.HTTPConfig)
		if err != nil {
			errs = append(errs, fmt.Errorf("http_config: %w", err))
		}
		c.HTTPConfig = hc
	}
	if err := errors.Join(append(errs, c.Validate())...); err != nil {
		return Config{}, err
	}
	return c, nil
}

// decodeHTTPConfig decodes an http_config sub-map as Prometheus does: by
// its own (strict) UnmarshalYAML, which applies the defaults.
func decodeHTTPConfig(v any) (commoncfg.HTTPClientConfig, error) {
	hc := commoncfg.DefaultHTTPClientConfig
	out, err := yamlv2.Marshal(v)
	if err != nil {
		return hc, err
	}
	if err := yamlv2.UnmarshalStrict(out, &hc); err != nil {
		var te *yamlv2.TypeError
		if errors.As(err, &te) {
			return hc, errors.New(strings.Join(te.Errors, "; "))
		}
		return hc, err
	}
	return hc, nil
}

// Validate reports every problem of c.
func (c Config) Validate() error {
	var errs []error
	if c.URL == "" {
		errs = append(errs, errors.New("url must be set"))
	} else if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL is not quoted: it may hold a token.
		errs = append(errs, errors.New("url: must be an absolute http:// or https:// URL"))
	}
	switch {
	case c.Secret == "" && c.SecretFile == "":
		errs = append(errs, errors.New("secret or secret_file must be set (the key that signs every request)"))
	case c.Secret != "" && c.SecretFile != "":
		errs = append(errs, errors.New("at most one of secret and secret_file may be set"))
	}
	if err := c.HTTPConfig.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("http_config: %w", err))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout: must be positive, got %v", c.Timeout))
	}
	if c.MaxRetries < 0 || c.MaxRetries > MaxMaxRetries {
		errs = append(errs, fmt.Errorf("max_retries: %d is out of range (want 0..%d)", c.MaxRetries, MaxMaxRetries))
	}
	for name := range c.Headers {
		switch k := http.CanonicalHeaderKey(name); {
		case !validHeaderName(name):
			errs = append(errs, fmt.Errorf("headers: %q is not a valid header name", name))
		case k == "Content-Type" || k == HeaderSignature || k == HeaderIdempotencyKey:
			errs = append(errs, fmt.Errorf("headers: %s is set by the actuator", k))
		case k == "Authorization":
			errs = append(errs, errors.New("headers: set Authorization with http_config (authorization, basic_auth, oauth2), which keeps it secret"))
		}
	}
	return errors.Join(errs...)
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}
