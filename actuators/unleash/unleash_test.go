package unleash

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/traffic"
)

// testFlags gives each service fresh flags (routes and both toggles), so
// that every test starts from an Unleash that never saw them.
func testFlags(services ...string) map[string]any {
	out := map[string]any{}
	for _, s := range services {
		out[s] = map[string]any{
			"routes_flag":          uniqueName("hermes-" + s + "-route"),
			"degraded_mode_flag":   uniqueName("hermes-" + s + "-degraded"),
			"retries_enabled_flag": uniqueName("hermes-" + s + "-retries"),
		}
	}
	return out
}

func newActuator(t *testing.T, opts map[string]any, services ...string) *Actuator {
	t.Helper()
	a, err := New(actuatortest.Settings(Kind, opts, services...))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

// flagsOf returns the flag names the actuator uses for a service.
func flagsOf(a *Actuator, service string) Flags { return a.flags(service) }

func TestSuite(t *testing.T) {
	s := unleashServer(t)
	var p *recordingProxy
	actuatortest.Run(t, actuatortest.Harness{
		New: func(t *testing.T) actuators.Actuator {
			p = newRecordingProxy(t, s.URL)
			return newActuator(t, map[string]any{
				"url":         p.URL,
				"admin_token": s.AdminToken,
				"environment": s.Environment,
				"flags":       testFlags("chat", "embed"),
			}, "chat", "embed")
		},
		Changed: func(t *testing.T) bool {
			w := p.takeWrites()
			t.Logf("writes: %q", w)
			return len(w) > 0
		},
		Break:   func(t *testing.T) { p.broken.Store(true) },
		Repair:  func(t *testing.T) { p.broken.Store(false) },
		Secrets: []string{s.AdminToken},
	})
}

// clientFeature is a flag as SDKs receive it from /api/client/features.
type clientFeature struct {
	Name       string `json:"name"`
	Enabled    bool   `json:"enabled"`
	Strategies []struct {
		Name        string         `json:"name"`
		Parameters  map[string]any `json:"parameters"`
		Constraints []any          `json:"constraints"`
		Variants    []variant      `json:"variants"`
	} `json:"strategies"`
}

// clientFeatures reads the flags through the client (backend SDK) API.
func clientFeatures(t *testing.T, s *server) map[string]clientFeature {
	t.Helper()
	var resp struct {
		Features []clientFeature `json:"features"`
	}
	if code := s.api(t, s.ClientToken, "GET", "/api/client/features", "", &resp); code != 200 {
		t.Fatalf("GET /api/client/features: %d", code)
	}
	out := map[string]clientFeature{}
	for _, f := range resp.Features {
		out[f.Name] = f
	}
	return out
}

// sdkSplit checks that SDKs see the routes flag on, with one strategy
// (flexibleRollout at 100 %, no constraints) whose variant weights are
// want (per mille).
func sdkSplit(t *testing.T, s *server, flag string, want map[string]int) error {
	f, ok := clientFeatures(t, s)[flag]
	switch {
	case !ok:
		return fmt.Errorf("client API: no flag %s", flag)
	case !f.Enabled:
		return fmt.Errorf("client API: %s is off", flag)
	case len(f.Strategies) != 1:
		return fmt.Errorf("client API: %s has %d strategies, want 1: %+v", flag, len(f.Strategies), f.Strategies)
	}
	st := f.Strategies[0]
	if st.Name != "flexibleRollout" || param(st.Parameters, "rollout") != "100" || len(st.Constraints) != 0 {
		return fmt.Errorf("client API: strategy %s %v %v, want flexibleRollout at 100%% without constraints", st.Name, st.Parameters, st.Constraints)
	}
	got := map[string]int{}
	sum := 0
	for _, v := range st.Variants {
		got[v.Name] = v.Weight
		sum += v.Weight
	}
	if !maps.Equal(got, want) || sum != 1000 {
		return fmt.Errorf("client API: variant weights %v, want %v", got, want)
	}
	return nil
}

// frontendVariants evaluates the flag for n users through the frontend
// API, which runs the SDK's own evaluation, and counts the variants.
func frontendVariants(t *testing.T, s *server, flag string, n int) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for i := range n {
		var resp struct {
			Toggles []struct {
				Name    string `json:"name"`
				Variant struct {
					Name string `json:"name"`
				} `json:"variant"`
			} `json:"toggles"`
		}
		path := fmt.Sprintf("/api/frontend?userId=user-%d", i)
		if code := s.api(t, s.FrontendToken, "GET", path, "", &resp); code != 200 {
			t.Fatalf("GET %s: %d", path, code)
		}
		name := "(flag off)"
		for _, tg := range resp.Toggles {
			if tg.Name == flag {
				name = tg.Variant.Name
			}
		}
		counts[name]++
	}
	return counts
}

func TestSplitsAsSDKsSeeThem(t *testing.T) {
	s := unleashServer(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(s.AdminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newActuator(t, map[string]any{
		"url":              s.URL,
		"admin_token_file": tokenFile,
		"environment":      s.Environment,
		"flags":            testFlags("chat"),
	}, "chat")
	flag := flagsOf(a, "chat").Routes
	ctx := context.Background()
	const users = 200
	for _, step := range []struct {
		weights map[string]int
		// SDK evaluations for `users` users: [min, max] per variant.
		bounds map[string][2]int
	}{
		{map[string]int{"primary": 100, "secondary": 0, "tertiary": 0}, map[string][2]int{"primary": {users, users}}},
		{map[string]int{"primary": 95, "secondary": 5, "tertiary": 0}, map[string][2]int{"primary": {175, 199}, "secondary": {1, 25}}},
		{map[string]int{"primary": 50, "secondary": 50, "tertiary": 0}, map[string][2]int{"primary": {70, 130}, "secondary": {70, 130}}},
		{map[string]int{"primary": 0, "secondary": 100, "tertiary": 0}, map[string][2]int{"secondary": {users, users}}},
	} {
		t.Run(fmt.Sprint(step.weights["primary"], "/", step.weights["secondary"], "/", step.weights["tertiary"]), func(t *testing.T) {
			want := actuators.Splits{"chat": {Weights: step.weights, RetriesEnabled: true}}
			if err := a.Apply(ctx, want); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			got, err := a.Current(ctx)
			if err != nil {
				t.Fatalf("Current: %v", err)
			}
			if !got["chat"].Equal(want["chat"]) {
				t.Errorf("Current = %+v, want %+v", got["chat"], want["chat"])
			}
			perMille := map[string]int{}
			for r, w := range step.weights {
				perMille[r] = w * 10
			}
			eventually(t, 15*time.Second, func() error { return sdkSplit(t, s, flag, perMille) })
			eventually(t, 15*time.Second, func() error {
				counts := frontendVariants(t, s, flag, users)
				for r, n := range counts {
					b, ok := step.bounds[r]
					if !ok || n < b[0] || n > b[1] {
						return fmt.Errorf("frontend API: %d of %d users got %q; want per variant %v", n, users, r, step.bounds)
					}
				}
				t.Logf("frontend API, %d users: %v", users, counts)
				return nil
			})
		})
	}
}

func TestTogglesAsSDKsSeeThem(t *testing.T) {
	s := unleashServer(t)
	a := newActuator(t, map[string]any{
		"url": s.URL, "admin_token": s.AdminToken, "environment": s.Environment,
		"flags": testFlags("chat"),
	}, "chat")
	fl := flagsOf(a, "chat")
	ctx := context.Background()
	for _, st := range []traffic.Split{
		{Weights: map[string]int{"free": 100}, RetriesEnabled: true},
		{Weights: map[string]int{"free": 100}, Degraded: true},
		{Weights: map[string]int{"free": 100}, Degraded: true, RetriesEnabled: true},
		{Weights: map[string]int{"free": 100}},
	} {
		if err := a.Apply(ctx, actuators.Splits{"chat": st}); err != nil {
			t.Fatalf("Apply(%+v): %v", st, err)
		}
		got, err := a.Current(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !got["chat"].Equal(st) {
			t.Errorf("Current = %+v, want %+v", got["chat"], st)
		}
		eventually(t, 15*time.Second, func() error {
			fs := clientFeatures(t, s)
			for flag, want := range map[string]bool{fl.DegradedMode: st.Degraded, fl.RetriesEnabled: st.RetriesEnabled} {
				f, ok := fs[flag]
				if !ok {
					return fmt.Errorf("client API: no flag %s", flag)
				}
				if f.Enabled != want {
					return fmt.Errorf("client API: %s enabled = %v, want %v", flag, f.Enabled, want)
				}
			}
			return nil
		})
	}
}

// latestEvent is the id of Unleash's newest event (every change makes one).
func latestEvent(t *testing.T, s *server) int {
	t.Helper()
	var resp struct {
		Events []struct {
			ID int `json:"id"`
		} `json:"events"`
	}
	if code := s.api(t, s.AdminToken, "GET", "/api/admin/events", "", &resp); code != 200 || len(resp.Events) == 0 {
		t.Fatalf("GET /api/admin/events: %d, %d events", code, len(resp.Events))
	}
	return resp.Events[0].ID
}

func TestUnchangedReapplyMakesNoWrite(t *testing.T) {
	s := unleashServer(t)
	p := newRecordingProxy(t, s.URL)
	a := newActuator(t, map[string]any{
		"url": p.URL, "admin_token": s.AdminToken, "environment": s.Environment,
		"flags": testFlags("chat", "embed"),
	}, "chat", "embed")
	ctx := context.Background()
	if err := a.Apply(ctx, actuatortest.Failover()); err != nil {
		t.Fatal(err)
	}
	// chat: routes flag created, strategy added, switched on, two toggle
	// flags created; embed: the same and its degraded flag switched on.
	if w := p.takeWrites(); len(w) != 11 {
		t.Errorf("first Apply made %d writes, want 11:\n%s", len(w), strings.Join(w, "\n"))
	}
	before := latestEvent(t, s)
	for range 3 {
		if err := a.Apply(ctx, actuatortest.Failover()); err != nil {
			t.Fatal(err)
		}
	}
	if w := p.takeWrites(); len(w) != 0 {
		t.Errorf("re-applying the same state made writes:\n%s", strings.Join(w, "\n"))
	}
	if after := latestEvent(t, s); after != before {
		t.Errorf("re-applying the same state made events %d..%d in Unleash", before+1, after)
	}
	// One route moves: one write, the strategy.
	d := actuatortest.Failover()
	d["chat"] = traffic.Split{Weights: map[string]int{"free": 10, "paid": 90}}
	if err := a.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
	if w := p.takeWrites(); len(w) != 1 || !strings.HasPrefix(w[0], "PUT ") || !strings.Contains(w[0], "/strategies/") {
		t.Errorf("moving one route made writes %q, want one PUT of the strategy", w)
	}
}

func TestWrongAdminToken(t *testing.T) {
	s := unleashServer(t)
	wrong := "*:*." + randomHex()
	a := actuators.Scope(newActuator(t, map[string]any{
		"url": s.URL, "admin_token": wrong, "environment": s.Environment,
		"flags": testFlags("chat"),
	}, "chat"), []string{"chat"})
	ctx := context.Background()
	err := a.Apply(ctx, actuatortest.Normal())
	if err == nil {
		t.Fatal("Apply with a wrong token: nil error")
	}
	t.Logf("Apply: %v", err)
	msg := err.Error()
	if !strings.Contains(msg, "401 Unauthorized (is the admin token valid?)") || !strings.Contains(msg, "You must log in") {
		t.Errorf("error %q does not say 401 with Unleash's message", msg)
	}
	if strings.Contains(msg, wrong) || strings.Contains(msg, randomHexOf(wrong)) {
		t.Errorf("error reveals the token: %q", msg)
	}
	if IsRetryable(err) {
		t.Errorf("a 401 is retryable: %v", err)
	}
	if _, err := a.Current(ctx); err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), wrong) {
		t.Errorf("Current with a wrong token: %v", err)
	}
	// A client token is refused by the Admin API too.
	b := actuators.Scope(newActuator(t, map[string]any{
		"url": s.URL, "admin_token": s.ClientToken, "environment": s.Environment,
	}, "chat"), []string{"chat"})
	if err := b.Apply(ctx, actuatortest.Normal()); err == nil || !strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), s.ClientToken) {
		t.Errorf("Apply with a client token: %v", err)
	}
}

// randomHexOf is the secret part of a token ("*:*.<secret>").
func randomHexOf(tok string) string {
	_, after, _ := strings.Cut(tok, ".")
	return after
}

func TestUnavailableIsRetryable(t *testing.T) {
	s := unleashServer(t)
	p := newRecordingProxy(t, s.URL)
	a := actuators.Scope(newActuator(t, map[string]any{
		"url": p.URL, "admin_token": s.AdminToken, "environment": s.Environment,
		"flags": testFlags("chat"),
	}, "chat"), []string{"chat"})
	ctx := context.Background()
	p.broken.Store(true)
	err := a.Apply(ctx, actuatortest.Normal())
	if err == nil || !IsRetryable(err) || !strings.Contains(err.Error(), "503 Service Unavailable: Unleash is down for maintenance") {
		t.Errorf("Apply on a 503: err = %v, retryable = %v; want a retryable 503 with Unleash's message", err, IsRetryable(err))
	}
	p.broken.Store(false)
	if err := a.Apply(ctx, actuatortest.Normal()); err != nil {
		t.Fatal(err)
	}
}

func TestAdoptsAnExistingFlag(t *testing.T) {
	s := unleashServer(t)
	flag := uniqueName("existing-route")
	base := "/api/admin/projects/default/features"
	env := base + "/" + flag + "/environments/" + s.Environment
	// Someone made the flag by hand: switching it on adds Unleash's default
	// strategy (flexibleRollout, no variants); they added another one.
	for _, r := range []struct{ method, path, body string }{
		{"POST", base, `{"name":"` + flag + `","type":"release"}`},
		{"POST", env + "/on", ""},
		{"POST", env + "/strategies", `{"name":"default"}`},
	} {
		if code := s.api(t, s.AdminToken, r.method, r.path, r.body, nil); code != 200 && code != 201 {
			t.Fatalf("%s %s: %d", r.method, r.path, code)
		}
	}
	a := newActuator(t, map[string]any{
		"url": s.URL, "admin_token": s.AdminToken, "environment": s.Environment,
		"flags": map[string]any{"chat": map[string]any{"routes_flag": flag}},
	}, "chat")
	want := actuators.Splits{"chat": {Weights: map[string]int{"free": 30, "paid": 70}}}
	if err := a.Apply(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, func() error { return sdkSplit(t, s, flag, map[string]int{"free": 300, "paid": 700}) })
	got, err := a.Current(context.Background())
	if err != nil || !got["chat"].Equal(want["chat"]) {
		t.Errorf("Current = %+v, %v; want %+v", got, err, want)
	}
}

func TestCurrentFindsDefaultFlags(t *testing.T) {
	s := unleashServer(t)
	service := uniqueName("svc")
	// No services and no flags: routes flags have their default names.
	a := newActuator(t, map[string]any{"url": s.URL, "admin_token": s.AdminToken, "environment": s.Environment})
	ctx := context.Background()
	got, err := a.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got[service]; ok {
		t.Fatalf("Current before Apply holds %s", service)
	}
	want := actuators.Splits{service: {Weights: map[string]int{"a": 25, "b": 75}}}
	if err := a.Apply(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err = a.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !got[service].Equal(want[service]) {
		t.Errorf("Current[%s] = %+v, want %+v", service, got[service], want[service])
	}
	if code := s.api(t, s.AdminToken, "GET", "/api/admin/projects/default/features/"+DefaultRoutesFlag(service), "", nil); code != 200 {
		t.Errorf("flag %s: %d", DefaultRoutesFlag(service), code)
	}
	// A routes flag that is off routes nothing: the service is absent.
	s.api(t, s.AdminToken, "POST", "/api/admin/projects/default/features/"+DefaultRoutesFlag(service)+"/environments/"+s.Environment+"/off", "", nil)
	if got, err := a.Current(ctx); err != nil || got[service].Weights != nil {
		t.Errorf("Current with the routes flag off = %+v, %v; want %s absent", got, err, service)
	}
}
