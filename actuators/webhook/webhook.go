// Package webhook is the `type: webhook` actuator: it POSTs each service's
// desired state, as signed JSON, to a URL the receiver owns (a feature-flag
// service, a gateway's admin API, a chat bot).
//
//	POST /hook HTTP/1.1
//	Content-Type: application/json
//	X-Hermes-Signature: sha256=<hex HMAC-SHA256 of the body>
//	Idempotency-Key: <payload.idempotency_key>
//
//	{"version":1,"service":"chat","weights":{"free":95,"paid":5},
//	 "retries_enabled":true,"degraded_mode":false,
//	 "levels":{"free":"warm","paid":"normal"},"reasons":["free: warm"],
//	 "idempotency_key":"…","sent_at":"2025-01-02T03:04:05Z"}
//
// One POST per service whose traffic split or flags changed since the last
// POST the receiver acknowledged with a 2xx; an unchanged state sends
// nothing. The acknowledged states live in memory: after a restart the
// first tick sends every service once (the idempotency key lets the
// receiver see it already holds that state). Transient failures (5xx, 429,
// timeouts, connection errors) are retried with exponential backoff and
// jitter; other statuses are permanent. A webhook cannot be read back:
// Current returns the last acknowledged state, so drift in the receiver
// cannot be detected. docs/webhook.md describes the protocol.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/internal/redirect"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/traffic"
)

// Kind is the `type:` of this actuator.
const Kind = "webhook"

// Version is the payload's version field.
const Version = 1

// Backoff between attempts: the first retry waits about initialBackoff,
// each next one twice as long, up to maxBackoff (or the receiver's
// Retry-After, up to maxBackoff).
const (
	initialBackoff = 500 * time.Millisecond
	maxBackoff     = 10 * time.Second
)

// Payload is the JSON body of every POST.
type Payload struct {
	// Version is 1; a change that breaks receivers gets a new version.
	Version int    `json:"version"`
	Service string `json:"service"`
	// Weights are integer percentages per route, summing to 100.
	Weights        map[string]int `json:"weights"`
	RetriesEnabled bool           `json:"retries_enabled"`
	DegradedMode   bool           `json:"degraded_mode"`
	// Levels (traffic.Level names, "failback" for a route being failed
	// back) and Reasons are informative: a change in them alone sends
	// nothing. Always present ({} and [] when empty).
	Levels  map[string]string `json:"levels"`
	Reasons []string          `json:"reasons"`
	// IdempotencyKey identifies the state (see IdempotencyKey).
	IdempotencyKey string `json:"idempotency_key"`
	// SentAt is when this attempt was made (RFC 3339, UTC, to the
	// second): every attempt, retries included, carries a fresh one under
	// the same idempotency key, so a receiver may refuse an old sent_at.
	SentAt string `json:"sent_at"`
}

// Actuator POSTs desired states to a webhook.
type Actuator struct {
	actuators.Named
	cfg      Config
	secret   []byte
	client   *http.Client
	endpoint string // the URL without credentials or query, for messages
	redact   *strings.Replacer
	logger   *slog.Logger

	now     func() time.Time
	backoff time.Duration // first retry wait
	jitter  func(d time.Duration) time.Duration

	mu    sync.Mutex       // serialises Apply; guards acked
	acked actuators.Splits // last state each service's receiver acknowledged
}

// New builds a webhook actuator from its settings.
func New(s actuators.Settings) (*Actuator, error) {
	c, err := ParseConfig(s.Options)
	if err != nil {
		return nil, err
	}
	secret := []byte(c.Secret)
	if c.SecretFile != "" {
		data, err := os.ReadFile(c.SecretFile)
		if err != nil {
			return nil, fmt.Errorf("secret_file: %w", err) // names the file, not its content
		}
		secret = bytes.TrimRight(data, "\r\n")
		if len(secret) == 0 {
			return nil, fmt.Errorf("secret_file: %s is empty", c.SecretFile)
		}
	}
	// rules/config's client, as Prometheus's and Alertmanager's: its
	// transport sends a request a redirect took to another host without
	// http_config's headers and credentials, a second line behind
	// checkRedirect, which refuses such a redirect.
	client, err := config.NewClient(c.HTTPConfig, Kind, commoncfg.WithUserAgent("hermes-webhook"))
	if err != nil {
		return nil, fmt.Errorf("http_config: %w", err)
	}
	if c.HTTPConfig.FollowRedirects {
		client.CheckRedirect = checkRedirect
	}
	return &Actuator{
		Named:    actuators.Named(s.Name),
		cfg:      c,
		secret:   secret,
		client:   client,
		endpoint: endpoint(c.URL),
		redact:   redactor(c, secret),
		logger:   s.Logger,
		now:      time.Now,
		backoff:  initialBackoff,
		jitter:   equalJitter,
		acked:    actuators.Splits{},
	}, nil
}

// Register adds the webhook actuator to r.
func Register(r *actuators.Registry) { r.Register(Kind, actuators.FactoryOf(New)) }

// Apply POSTs, one service at a time in name order, the state of each
// service whose weights or flags differ from what its receiver last
// acknowledged. A failed service does not stop the others; the error
// names each failed service and is retryable (actuators.IsRetryable) when
// one failure is transient.
func (a *Actuator) Apply(ctx context.Context, desired actuators.Splits) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for svc := range a.acked {
		if _, ok := desired[svc]; !ok {
			delete(a.acked, svc) // no longer ours: forget it
		}
	}
	var errs []error
	for _, svc := range slices.Sorted(maps.Keys(desired)) {
		st := desired[svc]
		if have, ok := a.acked[svc]; ok && have.Equal(st) {
			continue
		}
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("service %s: not sent: %w", svc, err))
			continue
		}
		key, err := a.send(ctx, svc, st)
		if err != nil {
			errs = append(errs, fmt.Errorf("service %s: %w", svc, err))
			continue
		}
		a.acked[svc] = st.Clone()
		a.logger.Info("webhook acknowledged the state", "service", svc,
			"weights", actuators.FormatWeights(st.Weights), "idempotency_key", key)
	}
	return errors.Join(errs...)
}

// Current returns the state each service's receiver last acknowledged (a
// webhook cannot be read back); empty after a restart until the first
// Apply, and a service whose last POST has an unknown outcome is absent:
// it counts as drift until a POST is acknowledged.
func (a *Actuator) Current(ctx context.Context) (actuators.Splits, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	out := actuators.Splits{}
	for svc, st := range a.acked {
		out[svc] = st.Clone()
	}
	return out, nil
}

// Body returns the JSON body of a POST carrying st, and its idempotency
// key.
func Body(service string, st traffic.Split, sentAt time.Time) ([]byte, string, error) {
	key := IdempotencyKey(service, st)
	p := Payload{
		Version:        Version,
		Service:        service,
		Weights:        st.Weights,
		RetriesEnabled: st.RetriesEnabled,
		DegradedMode:   st.Degraded,
		Levels:         levelNames(st.Levels),
		Reasons:        st.Reasons,
		IdempotencyKey: key,
		SentAt:         sentAt.UTC().Format(time.RFC3339),
	}
	if p.Weights == nil {
		p.Weights = map[string]int{}
	}
	if p.Reasons == nil {
		p.Reasons = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // reasons hold "<" and ">"
	if err := enc.Encode(p); err != nil {
		return nil, "", err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), key, nil
}

// IdempotencyKey is the hex SHA-256 of the compact JSON
// {"service":…,"weights":{…},"retries_enabled":…,"degraded_mode":…}, in
// that order, routes sorted: equal keys mean the same split and flags.
// It repeats when a service returns to an earlier state.
func IdempotencyKey(service string, st traffic.Split) string {
	w := st.Weights
	if w == nil {
		w = map[string]int{}
	}
	data, _ := json.Marshal(struct { // cannot fail: strings, ints, bools
		Service        string         `json:"service"`
		Weights        map[string]int `json:"weights"`
		RetriesEnabled bool           `json:"retries_enabled"`
		DegradedMode   bool           `json:"degraded_mode"`
	}{service, w, st.RetriesEnabled, st.Degraded})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Sign returns the X-Hermes-Signature header of body: "sha256=" and the
// hex HMAC-SHA256 of body keyed with secret.
func Sign(body, secret []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether header is the signature of body with secret, in
// constant time. Receivers call it on the raw body, before parsing it. An
// empty secret verifies nothing.
func Verify(body []byte, header string, secret []byte) bool {
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(header), "sha256=")
	if !ok || len(secret) == 0 {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

// send delivers one state, retrying transient failures; it returns the
// idempotency key. Every attempt encodes a fresh body: the same key, a new
// sent_at, so a receiver that refuses an old sent_at (a replay) takes a
// retry after an outage of any length.
func (a *Actuator) send(ctx context.Context, svc string, st traffic.Split) (string, error) {
	// Until it is acknowledged, the receiver may hold this state or the
	// one before: neither is known (a timeout, a lost connection or an
	// error answer leaves the outcome unknown).
	delete(a.acked, svc)
	wait := a.backoff
	for attempt := 1; ; attempt++ {
		body, key, err := Body(svc, st, a.now())
		if err != nil {
			return "", fmt.Errorf("encoding the payload: %w", err)
		}
		retryAfter, err := a.post(ctx, body, key)
		if err == nil {
			return key, nil
		}
		if !actuators.IsRetryable(err) || attempt > a.cfg.MaxRetries || ctx.Err() != nil {
			if attempt > 1 {
				err = fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return "", err
		}
		d := min(max(a.jitter(wait), retryAfter), maxBackoff)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return "", fmt.Errorf("%w (after %d attempts; the tick ends before the next one)", err, attempt)
		}
		a.logger.Warn("webhook failed; retrying", "attempt", attempt, "wait", d, "err", err)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("%w (after %d attempts: %v)", err, attempt, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, maxBackoff)
	}
}

// post makes one attempt. Transient failures come back marked retryable,
// with the receiver's Retry-After if it gave one.
func (a *Actuator) post(ctx context.Context, body []byte, key string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("POST %s: %s", a.endpoint, a.redact.Replace(err.Error()))
	}
	for k, v := range a.cfg.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderIdempotencyKey, key)
	req.Header.Set(HeaderSignature, Sign(body, a.secret))
	resp, err := a.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the URL, which may hold a token
		}
		msg := a.redact.Replace(err.Error())
		var re *redirectError
		if errors.As(err, &re) {
			// The receiver's answer is a refused redirect: the same next
			// attempt, so permanent within the tick.
			return 0, &sendError{msg: fmt.Sprintf("POST %s: %s", a.endpoint, msg), err: err}
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			msg = "no response within " + a.cfg.Timeout.String()
		}
		return 0, actuators.Retryable(&sendError{msg: fmt.Sprintf("POST %s: %s", a.endpoint, msg), err: err})
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	if resp.StatusCode/100 == 2 {
		return 0, nil
	}
	err = &StatusError{StatusCode: resp.StatusCode, Body: a.redact.Replace(oneLine(snippet)), endpoint: a.endpoint}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return retryAfter(resp.Header.Get("Retry-After")), actuators.Retryable(err)
	}
	return 0, err
}

// checkRedirect is the client's CheckRedirect with follow_redirects on.
// A redirect that turns the POST into a body-less GET (a 301, 302 or 303:
// net/http changes the method) is refused: a 2xx to that GET would be
// taken for the receiver's acknowledgement of a state it never got. A
// 307 or 308 keeps the method and the body (and so the signature and the
// idempotency key) and is followed, but only to the receiver's own scheme
// and host (redirect.SameHost), so the static headers never go elsewhere.
// Either refusal fails the attempt, not retried within the tick.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if req.Method != via[0].Method {
		code := 0
		if req.Response != nil {
			code = req.Response.StatusCode
		}
		return &redirectError{fmt.Sprintf("refusing a %d redirect to %s: it turns the %s into a %s without the body, whose answer would not acknowledge the state (only 307 and 308 to the same host are followed)",
			code, req.URL.Path, via[0].Method, req.Method)}
	}
	if err := redirect.SameHost(req, via); err != nil {
		return &redirectError{err.Error()}
	}
	return nil
}

// redirectError is a redirect checkRedirect refused.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }

// StatusError is a non-2xx answer. Retryable (wrapped by
// actuators.Retryable) for 5xx and 429.
type StatusError struct {
	StatusCode int
	// Body is the start of the response body, on one line, with every
	// configured secret replaced by <secret>.
	Body     string
	endpoint string
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("POST %s: %d %s", e.endpoint, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Body != "" {
		s += ": " + strconv.Quote(e.Body)
	}
	return s
}

// sendError is a transport error whose message was cleaned of the URL and
// secrets.
type sendError struct {
	msg string
	err error
}

func (e *sendError) Error() string { return e.msg }
func (e *sendError) Unwrap() error { return e.err }

// retryAfter parses a Retry-After header given in seconds.
func retryAfter(h string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

// equalJitter returns a duration between d/2 and d.
func equalJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// endpoint is u without credentials, query or fragment: what messages show.
func endpoint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the webhook URL"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// minHeaderSecret is the length from which a static header's value is
// treated as a secret: shorter ones ("1", "chat") would garble messages.
const minHeaderSecret = 8

// redactor replaces every secret the configuration holds (the HMAC key,
// http_config credentials and headers, static header values of
// minHeaderSecret characters or more, the URL's password and query) with
// <secret>, longest first.
func redactor(c Config, secret []byte) *strings.Replacer {
	secrets := []string{string(secret)}
	hc := c.HTTPConfig
	if hc.Authorization != nil {
		secrets = append(secrets, string(hc.Authorization.Credentials))
	}
	if hc.BasicAuth != nil {
		secrets = append(secrets, string(hc.BasicAuth.Password))
	}
	if hc.OAuth2 != nil {
		secrets = append(secrets, string(hc.OAuth2.ClientSecret))
	}
	secrets = append(secrets, string(hc.BearerToken))
	if hc.HTTPHeaders != nil {
		for _, h := range hc.HTTPHeaders.Headers {
			for _, v := range h.Values {
				if len(v) >= minHeaderSecret {
					secrets = append(secrets, v)
				}
			}
			for _, s := range h.Secrets {
				secrets = append(secrets, string(s))
			}
		}
	}
	for _, v := range c.Headers {
		if len(v) >= minHeaderSecret {
			secrets = append(secrets, v)
		}
	}
	if u, err := url.Parse(c.URL); err == nil {
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p)
		}
		if u.RawQuery != "" {
			secrets = append(secrets, u.RawQuery)
		}
	}
	secrets = slices.DeleteFunc(secrets, func(s string) bool { return strings.TrimSpace(s) == "" })
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, s := range secrets {
		pairs = append(pairs, s, "<secret>")
	}
	return strings.NewReplacer(pairs...)
}

// oneLine folds a response body onto one line.
func oneLine(b []byte) string {
	return strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "?")), " ")
}

// levelNames turns levels into the names the payload carries; never nil.
func levelNames(levels map[string]traffic.Level) map[string]string {
	out := make(map[string]string, len(levels))
	for r, l := range levels {
		out[r] = l.String()
	}
	return out
}
