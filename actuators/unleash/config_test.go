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
	"github.com/hermes-failover/hermes/rules/config"
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
	actuatortest.ParseServiceCases(t, ParseConfig, []actuatortest.ParseCase[Config]{
		{
			Name: "defaults",
			Opts: base(),
			Want: Config{URL: "http://unleash:4242", AdminToken: "*:*.s3cret", Project: "default", Environment: "development", Timeout: 10 * time.Second},
		},
		{
			Name:     "services get default routes flags",
			Opts:     base("flags", map[string]any{"chat": map[string]any{"degraded_mode_flag": "chat-degraded"}}),
			Services: []string{"chat", "embed"},
			Want: Config{URL: "http://unleash:4242", AdminToken: "*:*.s3cret", Project: "default", Environment: "development", Timeout: 10 * time.Second,
				Flags: map[string]Flags{
					"chat":  {Routes: "hermes-chat-route", DegradedMode: "chat-degraded"},
					"embed": {Routes: "hermes-embed-route"},
				}},
		},
		{
			Name: "everything set",
			Opts: base("admin_token", nil, "admin_token_file", "/run/secrets/unleash", "project", "llm", "environment", "production", "timeout", "3s",
				"flags", map[string]any{"chat": map[string]any{"routes_flag": "chat-routes", "degraded_mode_flag": "chat-degraded", "retries_enabled_flag": "chat-retries"}}),
			Want: Config{URL: "http://unleash:4242", AdminTokenFile: "/run/secrets/unleash", Project: "llm", Environment: "production", Timeout: 3 * time.Second,
				Flags: map[string]Flags{"chat": {Routes: "chat-routes", DegradedMode: "chat-degraded", RetriesEnabled: "chat-retries"}}},
		},
		{Name: "empty", Opts: nil, Errs: []string{"url must be set", "admin_token or admin_token_file must be set"}},
		{Name: "both tokens", Opts: base("admin_token_file", "/x"), Errs: []string{"admin_token and admin_token_file are mutually exclusive"}},
		{Name: "not http", Opts: base("url", "unleash:4242"), Errs: []string{`url: "unleash:4242" is not an http(s) URL`}},
		{Name: "credentials in url", Opts: base("url", "http://admin:hunter2@unleash"), Errs: []string{"url: must not hold credentials"}},
		{Name: "zero timeout", Opts: base("timeout", "0s", "project", "", "environment", ""),
			Errs: []string{"timeout must be positive", "project must not be empty", "environment must not be empty"}},
		{
			Name: "bad flags",
			Opts: base("flags", map[string]any{
				"chat":  map[string]any{"routes_flag": "chat/routes", "degraded_mode_flag": "shared"},
				"embed": map[string]any{"retries_enabled_flag": "shared"},
			}),
			Errs: []string{
				`flags[chat].routes_flag: "chat/routes" holds '/'`,
				`flags[embed].retries_enabled_flag: flag "shared" is also flags[chat].degraded_mode_flag`,
			},
		},
		{Name: "flags of another service", Opts: base("flags", map[string]any{"chta": map[string]any{}}), Services: []string{"chat"},
			Errs: []string{`flags[chta]: "chta" is not one of the actuator's services (chat)`}},
		{Name: "service name unfit for a flag", Opts: base(), Services: []string{"chat bot"},
			Errs: []string{`flags[chat bot].routes_flag: "hermes-chat bot-route" holds ' '`}},
		{
			Name: "unknown keys",
			Opts: base("colour", "red", "flags", map[string]any{"chat": map[string]any{"route_flag": "x"}}),
			Errs: []string{"colour: unknown key", "flags[chat].route_flag: unknown key"},
		},
		{Name: "bad timeout", Opts: base("timeout", 10), Errs: []string{`timeout: duration 10 needs a unit`}},
	}, actuatortest.NoSecrets("s3cret", "hunter2"))
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
	acts, err := r.Build([]config.ActuatorConfig{
		{Name: "flags", Type: "unleash", Services: []string{"chat"}, Options: map[string]any{"url": "http://unleash:4242", "admin_token": "t"}},
	}, nil)
	if err != nil || len(acts) != 1 || acts[0].Name() != "flags" {
		t.Fatalf("Build = %v, %v; want the flags actuator", acts, err)
	}
	_, err = r.Build([]config.ActuatorConfig{
		{Type: "unleash", Options: map[string]any{"admin_token": "t", "timeout": "soon"}},
		{Name: "u2", Type: "unleash", Options: map[string]any{"url": "http://x"}},
	}, nil)
	want := `actuators[0] (unleash): timeout: invalid duration "soon" (want e.g. 5s, 1m30s, 1d)
actuators[1] (u2): admin_token or admin_token_file must be set`
	if err == nil || err.Error() != want {
		t.Errorf("Build error =\n%v\nwant\n%s", err, want)
	}
}

// TestFromConfigFile goes through config.Parse, as the binary does: the
// nested flags map reaches the actuator from YAML.
func TestFromConfigFile(t *testing.T) {
	cfgs := actuatortest.ParseActuators(t, `
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
`)
	c, err := ParseConfig(cfgs[0].Options, cfgs[0].Services...)
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
