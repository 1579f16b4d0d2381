package unleash

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/rules"
)

func TestParseConfig(t *testing.T) {
	base := func(kv ...any) map[string]any {
		m := map[string]any{"url": "http://unleash:4242/", "admin_token": "*:*.s3cret"}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	for _, tc := range []struct {
		name     string
		opts     map[string]any
		services []string
		want     Config
		errs     []string
	}{
		{
			name: "defaults",
			opts: base(),
			want: Config{URL: "http://unleash:4242", AdminToken: "*:*.s3cret", Project: "default", Environment: "development", Timeout: 10 * time.Second},
		},
		{
			name:     "services get default routes flags",
			opts:     base("flags", map[string]any{"chat": map[string]any{"degraded_mode_flag": "chat-degraded"}}),
			services: []string{"chat", "embed"},
			want: Config{URL: "http://unleash:4242", AdminToken: "*:*.s3cret", Project: "default", Environment: "development", Timeout: 10 * time.Second,
				Flags: map[string]Flags{
					"chat":  {Routes: "hermes-chat-route", DegradedMode: "chat-degraded"},
					"embed": {Routes: "hermes-embed-route"},
				}},
		},
		{
			name: "everything set",
			opts: base("admin_token", nil, "admin_token_file", "/run/secrets/unleash", "project", "llm", "environment", "production", "timeout", "3s",
				"flags", map[string]any{"chat": map[string]any{"routes_flag": "chat-routes", "degraded_mode_flag": "chat-degraded", "retries_enabled_flag": "chat-retries"}}),
			want: Config{URL: "http://unleash:4242", AdminTokenFile: "/run/secrets/unleash", Project: "llm", Environment: "production", Timeout: 3 * time.Second,
				Flags: map[string]Flags{"chat": {Routes: "chat-routes", DegradedMode: "chat-degraded", RetriesEnabled: "chat-retries"}}},
		},
		{name: "empty", opts: nil, errs: []string{"url must be set", "admin_token or admin_token_file must be set"}},
		{name: "both tokens", opts: base("admin_token_file", "/x"), errs: []string{"admin_token and admin_token_file are mutually exclusive"}},
		{name: "not http", opts: base("url", "unleash:4242"), errs: []string{`url: "unleash:4242" is not an http(s) URL`}},
		{name: "credentials in url", opts: base("url", "http://admin:hunter2@unleash"), errs: []string{"url: must not hold credentials"}},
		{name: "zero timeout", opts: base("timeout", "0s", "project", "", "environment", ""),
			errs: []string{"timeout must be positive", "project must not be empty", "environment must not be empty"}},
		{
			name: "bad flags",
			opts: base("flags", map[string]any{
				"chat":  map[string]any{"routes_flag": "chat/routes", "degraded_mode_flag": "shared"},
				"embed": map[string]any{"retries_enabled_flag": "shared"},
			}),
			errs: []string{
				`flags[chat].routes_flag: "chat/routes" holds '/'`,
				`flags[embed].retries_enabled_flag: flag "shared" is also flags[chat].degraded_mode_flag`,
			},
		},
		{name: "flags of another service", opts: base("flags", map[string]any{"chta": map[string]any{}}), services: []string{"chat"},
			errs: []string{`flags[chta]: "chta" is not one of the actuator's services (chat)`}},
		{name: "service name unfit for a flag", opts: base(), services: []string{"chat bot"},
			errs: []string{`flags[chat bot].routes_flag: "hermes-chat bot-route" holds ' '`}},
		{
			name: "unknown keys",
			opts: base("colour", "red", "flags", map[string]any{"chat": map[string]any{"route_flag": "x"}}),
			errs: []string{"colour: unknown key", "flags[chat].route_flag: unknown key"},
		},
		{name: "bad timeout", opts: base("timeout", 10), errs: []string{`timeout: duration 10 needs a unit`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfig(tc.opts, tc.services...)
			if len(tc.errs) == 0 {
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("ParseConfig = %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseConfig = %+v, want errors %q", got, tc.errs)
			}
			for _, e := range tc.errs {
				if !strings.Contains(err.Error(), e) {
					t.Errorf("error %q does not contain %q", err, e)
				}
			}
			for _, secret := range []string{"s3cret", "hunter2"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error reveals a secret: %q", err)
				}
			}
		})
	}
}

func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	opts := map[string]any{"url": "http://127.0.0.1:1", "admin_token_file": path}
	if _, err := New(actuatortest.Settings(Kind, opts)); err == nil || !strings.Contains(err.Error(), "admin_token_file: open "+path) {
		t.Errorf("New with a missing token file: %v", err)
	}
	if err := os.WriteFile(path, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(actuatortest.Settings(Kind, opts)); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("New with an empty token file: %v", err)
	}
	if err := os.WriteFile(path, []byte("*:*.abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := New(actuatortest.Settings(Kind, opts))
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := a.cfg.token(); tok != "*:*.abc" || err != nil {
		t.Errorf("token = %q, %v; want it trimmed", tok, err)
	}
	// A rotated token is read on the next call.
	if err := os.WriteFile(path, []byte("*:*.def"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, _ := a.cfg.token(); tok != "*:*.def" {
		t.Errorf("token after rotation = %q", tok)
	}
}

func TestRegistryBuild(t *testing.T) {
	var r actuators.Registry
	Register(&r)
	acts, err := r.Build([]rules.ActuatorConfig{
		{Name: "flags", Type: "unleash", Services: []string{"chat"}, Options: map[string]any{"url": "http://unleash:4242", "admin_token": "t"}},
	}, nil)
	if err != nil || len(acts) != 1 || acts[0].Name() != "flags" {
		t.Fatalf("Build = %v, %v; want the flags actuator", acts, err)
	}
	_, err = r.Build([]rules.ActuatorConfig{
		{Type: "unleash", Options: map[string]any{"admin_token": "t", "timeout": "soon"}},
		{Name: "u2", Type: "unleash", Options: map[string]any{"url": "http://x"}},
	}, nil)
	want := `actuators[0] (unleash): timeout: invalid duration "soon" (want e.g. 5s, 1m30s, 1d)
actuators[1] (u2): admin_token or admin_token_file must be set`
	if err == nil || err.Error() != want {
		t.Errorf("Build error =\n%v\nwant\n%s", err, want)
	}
}

// TestFromConfigFile goes through rules.Parse, as the binary does: the
// nested flags map reaches the actuator from YAML.
func TestFromConfigFile(t *testing.T) {
	base, err := os.ReadFile("../../testdata/config/minimal.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rules.Parse(append(base, []byte(`
actuators:
  - name: flags
    type: unleash
    services: [chat]
    url: http://unleash.internal:4242
    admin_token_file: /run/secrets/unleash-admin-token
    project: default
    environment: production
    timeout: 5s
    flags:
      chat:
        routes_flag: llm-chat-route
        degraded_mode_flag: llm-chat-degraded
        retries_enabled_flag: llm-chat-retries
`)...), "hermes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig(cfg.Actuators[0].Options, cfg.Actuators[0].Services...)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		URL: "http://unleash.internal:4242", AdminTokenFile: "/run/secrets/unleash-admin-token",
		Project: "default", Environment: "production", Timeout: 5 * time.Second,
		Flags: map[string]Flags{"chat": {Routes: "llm-chat-route", DegradedMode: "llm-chat-degraded", RetriesEnabled: "llm-chat-retries"}},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("config = %+v, want %+v", c, want)
	}
}
