package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/traffic"
)

const (
	testSecret = "hmac-key-0123456789"
	testToken  = "bearer-token-abcdef"
)

// receiver is a real HTTP server standing for the webhook's receiver.
type receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []request
	statuses []int         // answers to the next requests; then 204
	body     string        // body of non-2xx answers
	delay    time.Duration // before answering
	broken   bool          // answer 500, echoing the request's credentials
	acked    int           // requests answered with a 2xx
}

type request struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.requests = append(r.requests, request{header: req.Header.Clone(), body: body})
	status := http.StatusNoContent
	if len(r.statuses) > 0 {
		status, r.statuses = r.statuses[0], r.statuses[1:]
	}
	if r.broken {
		status = http.StatusInternalServerError
	}
	delay, broken, msg := r.delay, r.broken, r.body
	if status/100 == 2 && delay == 0 {
		r.acked++
	}
	r.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-req.Context().Done():
			return
		}
	}
	if broken {
		// A careless receiver echoing what it got: errors must not.
		msg = "cannot handle " + req.Header.Get("Authorization") + " key " + testSecret
	}
	w.WriteHeader(status)
	io.WriteString(w, msg)
}

func (r *receiver) count() (all, acked int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.requests), r.acked
}

func (r *receiver) request(t *testing.T, i int) request {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if i >= len(r.requests) {
		t.Fatalf("request %d not received (%d received)", i, len(r.requests))
	}
	return r.requests[i]
}

func options(url string, extra ...any) map[string]any {
	o := map[string]any{
		"url":         url,
		"secret":      testSecret,
		"http_config": map[string]any{"authorization": map[string]any{"credentials": testToken}},
	}
	for i := 0; i+1 < len(extra); i += 2 {
		o[extra[i].(string)] = extra[i+1]
	}
	return o
}

func newActuator(t *testing.T, opts map[string]any) *Actuator {
	t.Helper()
	a, err := New(actuatortest.Settings(Kind, opts))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	a.backoff = time.Millisecond
	a.now = func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 600, time.FixedZone("CET", 3600)) }
	return a
}

func TestSuite(t *testing.T) {
	var (
		r    *receiver
		seen int
	)
	actuatortest.Run(t, actuatortest.Harness{
		New: func(t *testing.T) actuators.Actuator {
			r, seen = newReceiver(t), 0
			return newActuator(t, options(r.srv.URL))
		},
		Changed: func(t *testing.T) bool {
			_, acked := r.count()
			changed := acked != seen
			seen = acked
			return changed
		},
		Break:   func(t *testing.T) { r.mu.Lock(); r.broken = true; r.mu.Unlock() },
		Repair:  func(t *testing.T) { r.mu.Lock(); r.broken = false; r.mu.Unlock() },
		Secrets: []string{testSecret, testToken},
	})
}

func TestPayloadAndSignature(t *testing.T) {
	r := newReceiver(t)
	a := newActuator(t, options(r.srv.URL, "headers", map[string]any{"x-tenant": "search"}))
	if err := a.Apply(t.Context(), actuators.Filter(actuatortest.Shed(), []string{"chat"})); err != nil {
		t.Fatal(err)
	}
	req := r.request(t, 0)
	key := IdempotencyKey("chat", actuatortest.Shed()["chat"])
	want := `{"version":1,"service":"chat","weights":{"free":50,"paid":50},"retries_enabled":true,"degraded_mode":false,` +
		`"levels":{"free":"shed","paid":"normal"},"reasons":["free: score 72 < 75 for 2m"],` +
		`"idempotency_key":"` + key + `","sent_at":"2025-01-02T02:04:05Z"}`
	if string(req.body) != want {
		t.Errorf("body =\n%s\nwant\n%s", req.body, want)
	}
	for h, want := range map[string]string{
		"Content-Type":       "application/json",
		"Idempotency-Key":    key,
		"Authorization":      "Bearer " + testToken,
		"X-Tenant":           "search",
		"User-Agent":         "hermes-webhook",
		"X-Hermes-Signature": Sign(req.body, []byte(testSecret)),
	} {
		if got := req.header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	sig := req.header.Get("X-Hermes-Signature")
	if !Verify(req.body, sig, []byte(testSecret)) {
		t.Error("the signature does not verify")
	}
	tampered := strings.Replace(string(req.body), `"free":50,"paid":50`, `"free":0,"paid":100`, 1)
	if Verify([]byte(tampered), sig, []byte(testSecret)) {
		t.Error("a tampered body verifies")
	}
	if Verify(req.body, sig, []byte("another key")) {
		t.Error("the signature verifies with another key")
	}
	var p Payload
	if err := json.Unmarshal(req.body, &p); err != nil || p.IdempotencyKey != key || p.Weights["paid"] != 50 {
		t.Errorf("Payload = %+v, %v", p, err)
	}
	// Empty levels and reasons are {} and [], never null.
	body, _, err := Body("embed", traffic.Split{Weights: map[string]int{"embed-free": 100}}, time.Unix(0, 0))
	if err != nil || !strings.Contains(string(body), `"levels":{},"reasons":[]`) {
		t.Errorf("Body = %s, %v", body, err)
	}
}

func TestIdempotencyKey(t *testing.T) {
	st := actuatortest.Shed()["chat"]
	k := IdempotencyKey("chat", st)
	if len(k) != 64 || strings.Trim(k, "0123456789abcdef") != "" {
		t.Errorf("key %q is not a sha256 hex", k)
	}
	other := st
	other.Reasons, other.Levels = nil, nil
	if IdempotencyKey("chat", other) != k {
		t.Error("reasons or levels change the key")
	}
	other.RetriesEnabled = false
	if IdempotencyKey("chat", other) == k {
		t.Error("the retries flag does not change the key")
	}
	if IdempotencyKey("embed", st) == k {
		t.Error("the service does not change the key")
	}
	// The canonical form documented in docs/webhook.md.
	sum := sha256.Sum256([]byte(`{"service":"chat","weights":{"free":95,"paid":5},"retries_enabled":true,"degraded_mode":false}`))
	if got := IdempotencyKey("chat", traffic.Split{Weights: map[string]int{"paid": 5, "free": 95}, RetriesEnabled: true}); got != hex.EncodeToString(sum[:]) {
		t.Errorf("IdempotencyKey = %s, not the documented form", got)
	}
}

func TestRetriesOn503ThenSuccess(t *testing.T) {
	r := newReceiver(t)
	r.statuses = []int{503, 503, 200}
	a := newActuator(t, options(r.srv.URL))
	if err := a.Apply(t.Context(), actuators.Filter(actuatortest.Shed(), []string{"chat"})); err != nil {
		t.Fatal(err)
	}
	if all, _ := r.count(); all != 3 {
		t.Fatalf("%d requests, want 3", all)
	}
	first := r.request(t, 0)
	for i := 1; i < 3; i++ {
		if req := r.request(t, i); string(req.body) != string(first.body) || req.header.Get("Idempotency-Key") != first.header.Get("Idempotency-Key") {
			t.Errorf("retry %d sent another body or key", i)
		}
	}
	if got, _ := a.Current(t.Context()); !got["chat"].Equal(actuatortest.Shed()["chat"]) {
		t.Errorf("Current = %v after a late success", got)
	}
}

func TestRetriesExhausted(t *testing.T) {
	r := newReceiver(t)
	r.statuses = []int{429, 502, 503}
	r.body = "try later"
	a := newActuator(t, options(r.srv.URL, "max_retries", 2))
	err := a.Apply(t.Context(), actuators.Filter(actuatortest.Shed(), []string{"chat"}))
	if all, _ := r.count(); all != 3 {
		t.Errorf("%d requests, want 1 + max_retries 2", all)
	}
	want := `service chat: POST ` + r.srv.URL + `: 503 Service Unavailable: "try later" (after 3 attempts)`
	if err == nil || err.Error() != want {
		t.Errorf("err =\n%v\nwant\n%s", err, want)
	}
	if !actuators.IsRetryable(err) {
		t.Error("a 503 is not retryable")
	}
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 503 {
		t.Errorf("no StatusError in %v", err)
	}
	if got, _ := a.Current(t.Context()); len(got) != 0 {
		t.Errorf("Current = %v, want nothing acknowledged", got)
	}
}

func TestNoRetryOn400(t *testing.T) {
	r := newReceiver(t)
	r.statuses = []int{400}
	r.body = "unknown route\n  free"
	a := newActuator(t, options(r.srv.URL))
	err := a.Apply(t.Context(), actuators.Filter(actuatortest.Shed(), []string{"chat"}))
	if all, _ := r.count(); all != 1 {
		t.Errorf("%d requests, want 1", all)
	}
	if want := `service chat: POST ` + r.srv.URL + `: 400 Bad Request: "unknown route free"`; err == nil || err.Error() != want {
		t.Errorf("err =\n%v\nwant\n%s", err, want)
	}
	if actuators.IsRetryable(err) {
		t.Error("a 400 is retryable")
	}
}

func TestTimeoutIsRetryable(t *testing.T) {
	r := newReceiver(t)
	r.delay = time.Second
	a := newActuator(t, options(r.srv.URL, "timeout", "50ms", "max_retries", 1))
	start := time.Now()
	err := a.Apply(t.Context(), actuators.Filter(actuatortest.Shed(), []string{"chat"}))
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("Apply took %v, the timeout is 50ms", d)
	}
	if err == nil || !strings.Contains(err.Error(), "no response within 50ms (after 2 attempts)") {
		t.Errorf("err = %v", err)
	}
	if !actuators.IsRetryable(err) {
		t.Error("a timeout is not retryable")
	}
	if all, _ := r.count(); all != 2 {
		t.Errorf("%d requests, want 2", all)
	}
}

func TestConnectionErrorHidesURLSecrets(t *testing.T) {
	r := newReceiver(t)
	url := strings.Replace(r.srv.URL, "http://", "http://user:url-password@", 1) + "/hook?token=query-token"
	r.srv.Close() // connection refused from now on
	a := newActuator(t, options(url, "max_retries", 0))
	err := a.Apply(t.Context(), actuators.Filter(actuatortest.Shed(), []string{"chat"}))
	if err == nil || !actuators.IsRetryable(err) {
		t.Fatalf("err = %v, want a retryable error", err)
	}
	for _, s := range []string{"url-password", "query-token", testSecret, testToken} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error reveals %q: %v", s, err)
		}
	}
	if !strings.Contains(err.Error(), "POST "+strings.TrimSuffix(r.srv.URL, "/")+"/hook: ") {
		t.Errorf("error does not name the endpoint: %v", err)
	}
}

func TestIdempotentReapply(t *testing.T) {
	ctx := t.Context()
	r := newReceiver(t)
	a := newActuator(t, options(r.srv.URL))
	for range 3 {
		if err := a.Apply(ctx, actuatortest.Shed()); err != nil {
			t.Fatal(err)
		}
	}
	if all, _ := r.count(); all != 2 {
		t.Fatalf("%d requests after 3 applies of one state, want 2 (chat, embed)", all)
	}
	key := r.request(t, 0).header.Get("Idempotency-Key")
	// After a restart the memory is empty: each service is sent once, with
	// the same key, which lets the receiver see it already holds the state.
	b := newActuator(t, options(r.srv.URL))
	if got, _ := b.Current(ctx); len(got) != 0 {
		t.Errorf("Current after a restart = %v, want empty", got)
	}
	for range 2 {
		if err := b.Apply(ctx, actuatortest.Shed()); err != nil {
			t.Fatal(err)
		}
	}
	if all, _ := r.count(); all != 4 {
		t.Fatalf("%d requests after a restart, want 4", all)
	}
	if got := r.request(t, 2).header.Get("Idempotency-Key"); got != key {
		t.Errorf("key after a restart = %s, want %s", got, key)
	}
	// Only the service that changed is sent.
	d := actuatortest.Shed()
	d["embed"] = actuatortest.Failover()["embed"]
	if err := b.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
	if all, _ := r.count(); all != 5 || !strings.Contains(string(r.request(t, 4).body), `"service":"embed"`) {
		t.Errorf("%d requests; want a 5th, for embed", all)
	}
}

func TestPartialFailure(t *testing.T) {
	ctx := t.Context()
	r := newReceiver(t)
	r.statuses = []int{204, 422} // chat acknowledged, embed refused
	a := newActuator(t, options(r.srv.URL))
	err := a.Apply(ctx, actuatortest.Shed())
	if err == nil || !strings.HasPrefix(err.Error(), "service embed: POST") || strings.Contains(err.Error(), "chat") {
		t.Fatalf("err = %v, want embed's failure only", err)
	}
	got, _ := a.Current(ctx)
	if _, ok := got["embed"]; ok || !got["chat"].Equal(actuatortest.Shed()["chat"]) {
		t.Errorf("Current = %v, want chat only", got)
	}
	if err := a.Apply(ctx, actuatortest.Shed()); err != nil {
		t.Fatal(err)
	}
	if all, _ := r.count(); all != 3 || !strings.Contains(string(r.request(t, 2).body), `"service":"embed"`) {
		t.Errorf("%d requests; the next tick should resend embed only", all)
	}
}

func TestApplyCanceled(t *testing.T) {
	r := newReceiver(t)
	a := newActuator(t, options(r.srv.URL))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := a.Apply(ctx, actuatortest.Shed()); err == nil {
		t.Fatal("Apply with a canceled context: nil error")
	}
	if all, _ := r.count(); all != 0 {
		t.Errorf("%d requests with a canceled context", all)
	}
}

func TestVerify(t *testing.T) {
	body, key := []byte(`{"version":1}`), []byte("k")
	sig := Sign(body, key)
	for _, tc := range []struct {
		header string
		secret []byte
		want   bool
	}{
		{sig, key, true},
		{" " + sig + " ", key, true},
		{strings.TrimPrefix(sig, "sha256="), key, false},
		{"sha1=" + strings.TrimPrefix(sig, "sha256="), key, false},
		{"sha256=zz", key, false},
		{"sha256=", key, false},
		{sig, nil, false},
		{Sign(body, nil), nil, false},
	} {
		if got := Verify(body, tc.header, tc.secret); got != tc.want {
			t.Errorf("Verify(%q, %q) = %v, want %v", tc.header, tc.secret, got, tc.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	for h, want := range map[string]time.Duration{"": 0, "3": 3 * time.Second, " 1 ": time.Second, "-1": 0, "Wed, 21 Oct 2015 07:28:00 GMT": 0} {
		if got := retryAfter(h); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", h, got, want)
		}
	}
}

func TestParseConfig(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(secretFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	actuatortest.ParseCases(t, ParseConfig, []actuatortest.ParseCase[Config]{
		{
			Name: "defaults",
			Opts: map[string]any{"url": "https://flags.example.com/hook", "secret": "k"},
			Check: func(t *testing.T, c Config) {
				if c.Timeout != DefaultTimeout || c.MaxRetries != DefaultMaxRetries || !c.HTTPConfig.FollowRedirects || !c.HTTPConfig.EnableHTTP2 {
					t.Errorf("defaults not applied: %+v", c)
				}
			},
		},
		{
			Name: "http_config, bearer_token becomes authorization",
			Opts: map[string]any{"url": "https://x/", "secret_file": secretFile, "timeout": "2s", "max_retries": 0,
				"http_config": map[string]any{"bearer_token": "t0k", "tls_config": map[string]any{"insecure_skip_verify": true}}},
			Check: func(t *testing.T, c Config) {
				if c.HTTPConfig.Authorization == nil || string(c.HTTPConfig.Authorization.Credentials) != "t0k" ||
					!c.HTTPConfig.TLSConfig.InsecureSkipVerify || c.Timeout != 2*time.Second || c.MaxRetries != 0 {
					t.Errorf("got %+v", c)
				}
			},
		},
		{Name: "empty", Opts: nil, Errs: []string{"url must be set", "secret or secret_file must be set"}},
		{
			Name: "unknown key",
			Opts: map[string]any{
				"url": "ftp://x/?token=hidden", "secret": "k", "secret_file": "/k", "timeout": "0s", "max_retries": 11, "colour": "red",
				"headers": map[string]any{"content-type": "text/plain", "authorization": "Bearer x", "bad name": "v"},
			},
			Errs: []string{
				"colour: unknown key",
			},
		},
		{
			Name: "validation problems",
			Opts: map[string]any{
				"url": "ftp://x/?token=hidden", "secret": "k", "secret_file": "/k", "timeout": "0s", "max_retries": 11,
				"headers": map[string]any{"content-type": "text/plain", "authorization": "Bearer x", "bad name": "v", "x-hermes-signature": "s"},
			},
			Errs: []string{
				"url: must be an absolute http:// or https:// URL",
				"at most one of secret and secret_file may be set",
				"timeout: must be positive, got 0s",
				"max_retries: 11 is out of range (want 0..10)",
				"headers: Content-Type is set by the actuator",
				"headers: X-Hermes-Signature is set by the actuator",
				"headers: set Authorization with http_config",
				`headers: "bad name" is not a valid header name`,
			},
		},
		{
			Name: "http_config problems",
			Opts: map[string]any{"url": "https://x/", "secret": "k", "http_config": map[string]any{"bearer_token": "a", "bearer_token_file": "/b"}},
			Errs: []string{"http_config: at most one of bearer_token & bearer_token_file must be configured"},
		},
		{
			Name: "http_config unknown key",
			Opts: map[string]any{"url": "https://x/", "secret": "k", "http_config": map[string]any{"bearer": "a"}},
			Errs: []string{"http_config: ", "bearer"},
		},
		{
			Name: "http_config not a map",
			Opts: map[string]any{"url": "https://x/", "secret": "k", "http_config": "yes"},
			Errs: []string{"http_config: "},
		},
	}, actuatortest.NoSecrets("hidden"))
}

func TestSecretFile(t *testing.T) {
	r := newReceiver(t)
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte("file-key\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newActuator(t, map[string]any{"url": r.srv.URL, "secret_file": path})
	if err := a.Apply(t.Context(), actuatortest.Normal()); err != nil {
		t.Fatal(err)
	}
	req := r.request(t, 0)
	if !Verify(req.body, req.header.Get(HeaderSignature), []byte("file-key")) {
		t.Error("not signed with the file's key (trailing newline dropped)")
	}
	for _, content := range []string{"", "\n"} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := New(actuatortest.Settings(Kind, map[string]any{"url": r.srv.URL, "secret_file": path})); err == nil {
			t.Errorf("secret_file holding %q accepted", content)
		}
	}
	if _, err := New(actuatortest.Settings(Kind, map[string]any{"url": r.srv.URL, "secret_file": path + ".missing"})); err == nil || !strings.Contains(err.Error(), "secret_file: ") {
		t.Errorf("missing secret_file: err = %v", err)
	}
}

func TestRegistryBuild(t *testing.T) {
	var reg actuators.Registry
	Register(&reg)
	r := newReceiver(t)
	opts := options(r.srv.URL, "retry", map[string]any{"attempts": 2})
	acts, err := reg.Build([]config.ActuatorConfig{{Name: "flags", Type: Kind, Services: []string{"chat"}, MaxShiftPerTick: 10, Options: opts}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := actuators.Backend(acts[0]).(*Actuator); !ok || w.Name() != "flags" {
		t.Fatalf("Backend = %T", actuators.Backend(acts[0]))
	}
	_, err = reg.Build([]config.ActuatorConfig{{Type: Kind, Options: map[string]any{"url": r.srv.URL}}}, nil)
	if want := "actuators[0] (webhook): secret or secret_file must be set (the key that signs every request)"; err == nil || err.Error() != want {
		t.Errorf("Build error = %v, want %q", err, want)
	}
}

// TestFromConfigFile goes through config.Parse, as the binary does: nested
// http_config and headers maps and the reserved keys reach Build intact.
func TestFromConfigFile(t *testing.T) {
	r := newReceiver(t)
	cfgs := actuatortest.ParseActuators(t, `
actuators:
  - name: flags
    type: webhook
    url: `+r.srv.URL+`/hook
    secret: `+testSecret+`
    timeout: 2s
    headers: {X-Tenant: search}
    http_config:
      authorization: {credentials: `+testToken+`}
    retry: {attempts: 2, backoff: 10ms}
    max_shift_per_tick: 50
`)
	var reg actuators.Registry
	Register(&reg)
	acts, err := reg.Build(cfgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := actuators.Backend(acts[0]).(*Actuator)
	if a.cfg.Timeout != 2*time.Second || a.cfg.HTTPConfig.Authorization == nil {
		t.Errorf("config = %+v", a.cfg)
	}
	if err := acts[0].Apply(t.Context(), actuatortest.Normal()); err != nil {
		t.Fatal(err)
	}
	req := r.request(t, 0)
	if req.header.Get("X-Tenant") != "search" || req.header.Get("Authorization") != "Bearer "+testToken {
		t.Errorf("headers = %v", req.header)
	}
}

// TestUnknownOutcomeIsNotDelivered: a POST that timed out may have been
// delivered or not. Returning to the state acknowledged before must POST
// again (the receiver may hold the timed-out state), Current must not
// report the old acknowledgement meanwhile, and retrying the timed-out
// state sends the same state under the same idempotency key, with a
// fresh sent_at.
func TestUnknownOutcomeIsNotDelivered(t *testing.T) {
	ctx := t.Context()
	r := newReceiver(t)
	a := newActuator(t, options(r.srv.URL, "timeout", "50ms", "max_retries", 0))
	clock := newClock(a)
	normal := actuators.Filter(actuatortest.Normal(), []string{"chat"})
	failover := actuators.Filter(actuatortest.Failover(), []string{"chat"})
	if err := a.Apply(ctx, normal); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.delay = time.Second
	r.mu.Unlock()
	if err := a.Apply(ctx, failover); err == nil {
		t.Fatal("a timed-out POST succeeded")
	}
	clock.add(15 * time.Second) // the next tick
	if got, _ := a.Current(ctx); len(got) != 0 {
		t.Errorf("Current after a timed-out POST = %v, want nothing (the outcome is unknown)", got)
	}
	r.mu.Lock()
	r.delay = 0
	r.mu.Unlock()
	if err := a.Apply(ctx, failover); err != nil {
		t.Fatal(err)
	}
	first, retry := r.request(t, 1), r.request(t, 2)
	if first.header.Get(HeaderIdempotencyKey) != retry.header.Get(HeaderIdempotencyKey) {
		t.Errorf("the retry of an unknown outcome has another key:\n%s\n%s", first.body, retry.body)
	}
	if p, q := payload(t, first.body), payload(t, retry.body); p.SentAt == q.SentAt || !maps.Equal(p.Weights, q.Weights) {
		t.Errorf("the retry of an unknown outcome should carry the same weights with a fresh sent_at:\n%s\n%s", first.body, retry.body)
	}
	// The same with the way back: after a timeout, the old state is sent.
	r.mu.Lock()
	r.delay = time.Second
	r.mu.Unlock()
	_ = a.Apply(ctx, normal)
	r.mu.Lock()
	r.delay = 0
	r.mu.Unlock()
	if err := a.Apply(ctx, failover); err != nil {
		t.Fatal(err)
	}
	if all, _ := r.count(); all != 5 {
		t.Errorf("%d requests, want 5: going back to the state sent before a timeout must POST it again", all)
	}
}

// TestRedirectToAnotherHostIsRefused: a receiver that redirects to
// another host does not get the static headers, nor the body, sent on:
// the apply fails and the other host sees nothing.
func TestRedirectToAnotherHostIsRefused(t *testing.T) {
	var leaked atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
	}))
	defer other.Close()
	// 127.0.0.1 and localhost are other hosts to net/http.
	target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+"/steal", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	a := newActuator(t, options(redirector.URL, "headers", map[string]any{"x-api-key": "s3cret"}))
	err := a.Apply(t.Context(), actuators.Filter(actuatortest.Shed(), []string{"chat"}))
	if err == nil || !strings.Contains(err.Error(), "another host") {
		t.Errorf("Apply through a redirect to another host: %v, want an error naming it", err)
	}
	if n := leaked.Load(); n != 0 {
		t.Errorf("the other host got %d requests", n)
	}
}

// clock is an Actuator's injected clock, moved by the test.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

// newClock returns a clock at 2025-01-02T03:04:05Z; a, when not nil,
// reads it.
func newClock(a *Actuator) *clock {
	c := &clock{now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	if a != nil {
		a.now = c.read
	}
	return c
}

func (c *clock) read() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func payload(t *testing.T, body []byte) Payload {
	t.Helper()
	var p Payload
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return p
}

// TestRetryAfterAnOutageIsFresh: a receiver that refuses a sent_at older
// than 20 s, as docs/webhook.md advises, down for 40 s. Each tick (15 s
// apart, the clock injected) and each retry within it carries a fresh
// sent_at under the same idempotency key, so the first attempt after
// the outage is taken. (Before, every retry resent the first body, whose
// sent_at the receiver refused for ever.)
func TestRetryAfterAnOutageIsFresh(t *testing.T) {
	ctx := t.Context()
	var down atomic.Bool
	var mu sync.Mutex
	var got []Payload
	var refused int
	clock := newClock(nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if !Verify(body, req.Header.Get(HeaderSignature), []byte(testSecret)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			clock.add(time.Second) // the retry comes later
			return
		}
		var p Payload
		if err := json.Unmarshal(body, &p); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sent, err := time.Parse(time.RFC3339, p.SentAt)
		mu.Lock()
		defer mu.Unlock()
		if err != nil || clock.read().Sub(sent) > 20*time.Second {
			refused++
			http.Error(w, "stale sent_at", http.StatusBadRequest) // a replay: refused for good
			return
		}
		got = append(got, p)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	a := newActuator(t, options(srv.URL, "max_retries", 2))
	a.now = clock.read
	failover := actuators.Filter(actuatortest.Failover(), []string{"chat"})
	down.Store(true)
	start := clock.read()
	for clock.read().Sub(start) < 40*time.Second {
		if err := a.Apply(ctx, failover); err == nil {
			t.Fatal("an apply to a receiver that is down succeeded")
		}
		clock.add(15 * time.Second)
	}
	down.Store(false)
	if err := a.Apply(ctx, failover); err != nil {
		t.Fatalf("the first apply after a 40 s outage: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if refused != 0 || len(got) != 1 {
		t.Fatalf("refused %d as stale, took %d; want the first attempt after the outage taken", refused, len(got))
	}
	if want := IdempotencyKey("chat", failover["chat"]); got[0].IdempotencyKey != want {
		t.Errorf("idempotency key %s, want %s (the same state)", got[0].IdempotencyKey, want)
	}
	if sent, _ := time.Parse(time.RFC3339, got[0].SentAt); !sent.Equal(clock.read()) {
		t.Errorf("sent_at %s, want the attempt's time %s", got[0].SentAt, clock.read().Format(time.RFC3339))
	}
}

// TestMethodChangingRedirectIsRefused: a same-host 301, 302 or 303 turns
// the POST into a body-less GET, whose 2xx used to be recorded as
// applied (result ok, drift 0). It is refused, the state is not
// acknowledged and the GET is never sent. A 307 or 308 keeps the POST
// and its signed body and is followed on the same host.
func TestMethodChangingRedirectIsRefused(t *testing.T) {
	for _, c := range []struct {
		code   int
		follow bool
	}{
		{http.StatusMovedPermanently, false},
		{http.StatusFound, false},
		{http.StatusSeeOther, false},
		{http.StatusTemporaryRedirect, true},
		{http.StatusPermanentRedirect, true},
	} {
		t.Run(strconv.Itoa(c.code), func(t *testing.T) {
			var mu sync.Mutex
			var methods []string
			var signed bool
			mux := http.NewServeMux()
			mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/moved", c.code)
			})
			mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				methods = append(methods, r.Method)
				signed = Verify(body, r.Header.Get(HeaderSignature), []byte(testSecret))
				mu.Unlock()
				w.WriteHeader(http.StatusNoContent)
			})
			srv := httptest.NewServer(mux)
			defer srv.Close()
			a := newActuator(t, options(srv.URL+"/hook"))
			desired := actuators.Filter(actuatortest.Failover(), []string{"chat"})
			err := a.Apply(t.Context(), desired)
			cur, _ := a.Current(t.Context())
			mu.Lock()
			defer mu.Unlock()
			if !c.follow {
				if err == nil || !strings.Contains(err.Error(), "refusing a "+strconv.Itoa(c.code)+" redirect") {
					t.Errorf("Apply through a %d: %v, want it refused", c.code, err)
				}
				if actuators.IsRetryable(err) {
					t.Errorf("a refused redirect is retryable: %v", err)
				}
				if len(cur) != 0 {
					t.Errorf("Current after a refused redirect = %v, want nothing acknowledged", cur)
				}
				if len(methods) != 0 {
					t.Errorf("the redirect target got %v", methods)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply through a same-host %d: %v", c.code, err)
			}
			if len(methods) != 1 || methods[0] != http.MethodPost || !signed {
				t.Errorf("the target got %v (signed %v), want one signed POST", methods, signed)
			}
			if !cur["chat"].Equal(desired["chat"]) {
				t.Errorf("Current = %v, want the state acknowledged", cur)
			}
		})
	}
}
