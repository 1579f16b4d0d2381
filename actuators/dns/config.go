package dns

import (
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/hermes-failover/hermes/actuators"
)

// Defaults of the optional keys.
const (
	DefaultTimeout   = 5 * time.Second
	DefaultTTL       = 30
	DefaultAlgorithm = "hmac-sha256"
	DefaultPriority  = 10
)

// Record modes.
const (
	ModeSRV      = "srv"
	ModeFailover = "failover"
)

// Config holds the keys of a `type: dns` actuator, decoded and normalised:
// every name is lower case and fully qualified.
type Config struct {
	// Server is the primary's host:port; updates and reads go to it over TCP.
	Server string
	// Zone is the zone the records live in, e.g. "hermes.test.".
	Zone string
	// TSIG signs the updates; a zero TSIG sends them unsigned.
	TSIG TSIG
	// Timeout bounds each DNS exchange (dial, query, update).
	Timeout time.Duration
	// TTL of every record written.
	TTL uint32
	// Flags says whether each service's flags are kept in a TXT record
	// at _hermes-flags.<name> (default true).
	Flags bool
	// Records maps each service to the records it drives.
	Records map[string]Record
}

// TSIG is the key that signs updates.
type TSIG struct {
	// Name is the key's name as the server knows it, fully qualified.
	Name string
	// Algorithm is the miekg/dns name, e.g. dns.HmacSHA256 ("hmac-sha256.").
	Algorithm string
	// Secret is the base64 key (from `secret` or `secret_file`).
	Secret Secret
}

// Enabled reports whether updates are signed.
func (t TSIG) Enabled() bool { return t.Name != "" }

// Secret is a TSIG secret. It formats as "<secret>" so that a printed
// Config never reveals it.
type Secret string

// String implements fmt.Stringer.
func (Secret) String() string { return "<secret>" }

// GoString implements fmt.GoStringer.
func (Secret) GoString() string { return `"<secret>"` }

// Record is the DNS side of one service.
type Record struct {
	// Name is the owner name, fully qualified.
	Name string
	// Mode is ModeSRV or ModeFailover.
	Mode string
	// Type is the record type: SRV in srv mode; A, AAAA or CNAME in
	// failover mode.
	Type string
	// Order lists every route by preference (failover mode): when two
	// routes have the same largest share, the earlier one wins. From
	// `order` when set, else the route names sorted.
	Order []string
	// SRV holds each route's SRV target (srv mode).
	SRV map[string]SRVRoute
	// Values holds each route's addresses or CNAME target (failover mode),
	// normalised (canonical IPs, lower-case FQDNs) and sorted.
	Values map[string][]string
}

// SRVRoute is where one route's SRV record points.
type SRVRoute struct {
	Target   string // FQDN
	Port     uint16
	Priority uint16
}

// rrtype is the record type as a miekg/dns constant.
func (r Record) rrtype() uint16 { return dns.StringToType[r.Type] }

// flagsName is the owner of the TXT record holding the service's flags.
func (r Record) flagsName() string { return "_hermes-flags." + r.Name }

// routes lists the configured routes, sorted.
func (r Record) routes() []string {
	if r.Mode == ModeSRV {
		return slices.Sorted(maps.Keys(r.SRV))
	}
	return slices.Sorted(maps.Keys(r.Values))
}

// The raw shapes, decoded strictly in stages so that every error carries
// its full path (records.chat.routes.free.port) and so that `routes` can
// take the shape its record's mode asks for.
type (
	rawConfig struct {
		Server  string         `mapstructure:"server"`
		Zone    string         `mapstructure:"zone"`
		TSIG    rawTSIG        `mapstructure:"tsig"`
		Timeout time.Duration  `mapstructure:"timeout"`
		TTL     int64          `mapstructure:"ttl"`
		Flags   bool           `mapstructure:"flags"`
		Records map[string]any `mapstructure:"records"`
	}
	rawTSIG struct {
		Name       string `mapstructure:"name"`
		Algorithm  string `mapstructure:"algorithm"`
		Secret     string `mapstructure:"secret"`
		SecretFile string `mapstructure:"secret_file"`
	}
	rawRecord struct {
		Name   string         `mapstructure:"name"`
		Mode   string         `mapstructure:"mode"`
		Type   string         `mapstructure:"type"`
		Order  []string       `mapstructure:"order"`
		Routes map[string]any `mapstructure:"routes"`
	}
	rawSRV struct {
		Target   string `mapstructure:"target"`
		Port     int64  `mapstructure:"port"`
		Priority *int64 `mapstructure:"priority"`
	}
)

// ParseConfig decodes the type-specific keys strictly, applies the
// defaults, reads tsig.secret_file and validates the result. Every problem
// is reported with its path; a secret is never part of an error.
func ParseConfig(opts map[string]any) (Config, error) {
	raw := rawConfig{Timeout: DefaultTimeout, TTL: DefaultTTL, Flags: true}
	p := &parser{}
	if err := actuators.DecodeOptions(opts, &raw); err != nil {
		// Keep going: the records may hold more problems to report.
		p.decodeErrors("", err)
	}
	c := Config{
		Server:  p.server(raw.Server),
		Timeout: raw.Timeout,
		Flags:   raw.Flags,
		Records: map[string]Record{},
	}
	c.Zone = p.zone(raw.Zone)
	c.TSIG = p.tsig(raw.TSIG)
	if raw.Timeout <= 0 && !p.bad("timeout") {
		p.errorf("timeout: must be positive")
	}
	if (raw.TTL < 0 || raw.TTL > 1<<31-1) && !p.bad("ttl") {
		p.errorf("ttl: %d is out of range (0..2147483647 seconds)", raw.TTL)
	}
	c.TTL = uint32(raw.TTL)
	if len(raw.Records) == 0 && !p.bad("records") {
		p.errorf("records: must hold at least one service")
	}
	owners := map[string]string{} // owner name → service
	for _, svc := range slices.Sorted(maps.Keys(raw.Records)) {
		rec, ok := p.record("records."+svc, raw.Records[svc], c.Zone)
		if !ok {
			continue
		}
		if other, dup := owners[rec.Name]; dup {
			p.errorf("records.%s.name: %s is already used by records.%s", svc, rec.Name, other)
			continue
		}
		owners[rec.Name] = svc
		c.Records[svc] = rec
	}
	if err := errors.Join(p.errs...); err != nil {
		return Config{}, err
	}
	return c, nil
}

// parser collects every problem found while building a Config.
type parser struct {
	errs   []error
	failed map[string]bool // keys that could not be decoded
}

// bad reports whether the key at path could not be decoded; its checks are
// skipped rather than piling up a second error.
func (p *parser) bad(path string) bool { return p.failed[path] }

// decodeErrors records DecodeOptions' errors, each "key: message", under
// prefix.
func (p *parser) decodeErrors(prefix string, err error) {
	if p.failed == nil {
		p.failed = map[string]bool{}
	}
	for _, e := range flatten(err) {
		key, _, _ := strings.Cut(e.Error(), ":")
		p.failed[prefix+key] = true
		if prefix == "" {
			p.errs = append(p.errs, e)
		} else {
			p.errs = append(p.errs, fmt.Errorf("%s%w", prefix, e))
		}
	}
}

func (p *parser) errorf(format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf(format, args...))
}

// decode is DecodeOptions with every error prefixed by path. It returns
// false when v is not a mapping; after other errors into holds what could
// be decoded, so that the caller can look for more problems.
func (p *parser) decode(path string, v any, into any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		p.errorf("%s: must be a mapping, got %s", path, describe(v))
		return false
	}
	if err := actuators.DecodeOptions(m, into); err != nil {
		p.decodeErrors(path+".", err)
	}
	return true
}

func (p *parser) server(s string) string {
	if p.bad("server") {
		return ""
	}
	if s == "" {
		p.errorf("server: must be set (host:port of the primary, e.g. 192.0.2.53:53)")
		return ""
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		p.errorf("server: %q is not host:port (e.g. 192.0.2.53:53 or [2001:db8::53]:53)", s)
		return s
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		p.errorf("server: port %q is not a port number", port)
	}
	return s
}

func (p *parser) zone(s string) string {
	if p.bad("zone") {
		return ""
	}
	if s == "" {
		p.errorf("zone: must be set")
		return ""
	}
	z := strings.ToLower(dns.Fqdn(strings.TrimSpace(s)))
	if _, ok := dns.IsDomainName(z); !ok || z == "." {
		p.errorf("zone: %q is not a domain name", s)
		return ""
	}
	return z
}

// algorithms maps the accepted `tsig.algorithm` values to miekg/dns names.
var algorithms = map[string]string{
	"hmac-sha1":   dns.HmacSHA1,
	"hmac-sha224": dns.HmacSHA224,
	"hmac-sha256": dns.HmacSHA256,
	"hmac-sha384": dns.HmacSHA384,
	"hmac-sha512": dns.HmacSHA512,
}

func (p *parser) tsig(r rawTSIG) TSIG {
	if r == (rawTSIG{}) {
		return TSIG{} // unsigned updates, for servers that allow them by address
	}
	var t TSIG
	if r.Name == "" {
		p.errorf("tsig.name: must be set (the key's name as the server knows it)")
	} else if name := strings.ToLower(dns.Fqdn(strings.TrimSpace(r.Name))); !isDomainName(name) {
		p.errorf("tsig.name: %q is not a domain name", r.Name)
	} else {
		t.Name = name
	}
	alg := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(r.Algorithm), "."))
	if alg == "" {
		alg = DefaultAlgorithm
	}
	if t.Algorithm = algorithms[alg]; t.Algorithm == "" {
		p.errorf("tsig.algorithm: %q is not supported (want one of %s)", r.Algorithm, strings.Join(slices.Sorted(maps.Keys(algorithms)), ", "))
	}
	secret, key := r.Secret, "tsig.secret"
	switch {
	case r.Secret != "" && r.SecretFile != "":
		p.errorf("tsig: set secret or secret_file, not both")
		return t
	case r.SecretFile != "":
		key = "tsig.secret_file"
		data, err := os.ReadFile(r.SecretFile)
		if err != nil {
			p.errorf("%s: %v", key, err) // names the file, not its content
			return t
		}
		secret = string(data)
	case r.Secret == "":
		p.errorf("tsig: secret or secret_file must be set")
		return t
	}
	secret = strings.TrimSpace(secret)
	raw, err := base64.StdEncoding.DecodeString(secret)
	switch {
	case err != nil:
		p.errorf("%s: not valid base64", key) // never the secret itself
	case len(raw) == 0:
		p.errorf("%s: is empty", key)
	default:
		t.Secret = Secret(secret)
	}
	return t
}

// describe names a value's YAML kind for error messages, without the value
// (it could be a misplaced secret).
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}

// flatten splits joined errors.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
