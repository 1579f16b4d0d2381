package nginx

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/rules/config"
)

func TestParseConfig(t *testing.T) {
	chat := map[string]any{"chat": map[string]any{"free": []any{"127.0.0.1:8001"}}}
	actuatortest.ParseCases(t, ParseConfig, []actuatortest.ParseCase[Config]{
		{
			Name: "defaults",
			Opts: map[string]any{"include_path": "/etc/nginx/hermes/chat.conf", "upstreams": chat},
			Want: Config{
				IncludePath:    "/etc/nginx/hermes/chat.conf",
				UpstreamName:   "hermes_{service}",
				Upstreams:      map[string]map[string][]string{"chat": {"free": {"127.0.0.1:8001"}}},
				NginxBinary:    "nginx",
				TestArgs:       []string{"-t"},
				ReloadArgs:     []string{"-s", "reload"},
				CommandTimeout: 10 * time.Second,
				Mode:           0o644,
			},
		},
		{
			Name: "everything",
			Opts: map[string]any{
				"include_path":  "/etc/nginx/hermes/{service}.conf",
				"upstream_name": "llm_{service}",
				"upstreams": map[string]any{
					"chat":  map[string]any{"free": []any{"10.0.0.1:80 max_fails=3", "10.0.0.2:80"}, "paid": []any{"unix:/run/paid.sock"}},
					"embed": map[string]any{"embed-free": []any{"10.0.0.3:80"}},
				},
				"nginx_binary":    "/usr/sbin/nginx",
				"config_file":     "/etc/nginx/nginx.conf",
				"prefix":          "/etc/nginx",
				"test_args":       []any{"-t", "-q"},
				"pid_file":        "/run/nginx.pid",
				"command_timeout": "30s",
				"mode":            "0640",
			},
			Want: Config{
				IncludePath:  "/etc/nginx/hermes/{service}.conf",
				UpstreamName: "llm_{service}",
				Upstreams: map[string]map[string][]string{
					"chat":  {"free": {"10.0.0.1:80 max_fails=3", "10.0.0.2:80"}, "paid": {"unix:/run/paid.sock"}},
					"embed": {"embed-free": {"10.0.0.3:80"}},
				},
				NginxBinary:    "/usr/sbin/nginx",
				ConfigFile:     "/etc/nginx/nginx.conf",
				Prefix:         "/etc/nginx",
				TestArgs:       []string{"-t", "-q"},
				PIDFile:        "/run/nginx.pid",
				CommandTimeout: 30 * time.Second,
				Mode:           0o640,
			},
		},
		{
			Name: "empty",
			Opts: nil,
			Errs: []string{"include_path must be set", "upstreams: must list at least one service"},
		},
		{
			Name: "unknown keys",
			Opts: map[string]any{"include_path": "/x/c.conf", "upstreams": chat, "colour": "red", "pth": "/x"},
			Errs: []string{"colour: unknown key", "pth: unknown key"},
		},
		{
			Name: "every validation problem with its path",
			Opts: map[string]any{
				"include_path":  "hermes/{service}.conf",
				"upstream_name": "up_{service}",
				"upstreams": map[string]any{
					"chat": map[string]any{
						"free":  []any{},
						"paid":  []any{"127.0.0.1:8002 weight=5", "", "max_fails=1", "127.0.0.1:1; include /etc/passwd", "127.0.0.1:2 backup"},
						"spare": []any{"127.0.0.1:8003 down"},
					},
					"embed": map[string]any{},
					"a/b":   map[string]any{"r\nserver 10.0.0.1:1": []any{"127.0.0.1:1"}},
				},
				"nginx_binary":    "",
				"test_args":       []any{},
				"reload_args":     []any{"-s", "reload"},
				"pid_file":        "/run/nginx.pid",
				"command_timeout": "-1s",
				"mode":            0o1777,
			},
			Errs: []string{
				"reload_args and pid_file: set one, not both",
				`include_path: "hermes/{service}.conf" must be an absolute path`,
				`upstreams.a/b: upstream name "up_a/b" must match`,
				`upstreams.a/b: service name "a/b" cannot be part of a file name`,
				`upstreams.a/b: route name "r\nserver 10.0.0.1:1" must match`,
				"upstreams.chat.free: must list at least one server",
				`upstreams.chat.paid[0]: "127.0.0.1:8002 weight=5": weight is set by hermes from the route's share`,
				"upstreams.chat.paid[1]: must not be empty",
				`upstreams.chat.paid[2]: "max_fails=1" must start with an address`,
				`upstreams.chat.paid[3]: "127.0.0.1:1; include /etc/passwd": ";" is not allowed`,
				`upstreams.chat.paid[4]: "127.0.0.1:2 backup": backup servers`,
				`upstreams.chat.spare[0]: "127.0.0.1:8003 down": down is set by hermes`,
				"upstreams.embed: must list at least one route",
				"nginx_binary must not be empty",
				"test_args must not be empty",
				"command_timeout: must be positive, got -1s",
				"mode: 01777 is not a permission",
			},
		},
		{
			Name: "several services need {service}",
			Opts: map[string]any{
				"include_path":  "/etc/nginx/hermes.conf",
				"upstream_name": "hermes",
				"upstreams": map[string]any{
					"chat":  map[string]any{"free": []any{"127.0.0.1:1"}},
					"embed": map[string]any{"free": []any{"127.0.0.1:2"}},
				},
			},
			Errs: []string{
				"include_path: must contain {service} when upstreams lists several services",
				"upstream_name: must contain {service} when upstreams lists several services",
			},
		},
		{
			Name: "services equal but for case",
			Opts: map[string]any{
				"include_path": "/etc/nginx/{service}.conf",
				"upstreams": map[string]any{
					"Chat": map[string]any{"free": []any{"127.0.0.1:1"}},
					"chat": map[string]any{"free": []any{"127.0.0.1:2"}},
				},
			},
			Errs: []string{"upstreams.chat: same service as upstreams.Chat"},
		},
		{
			Name: "pid_file without reload_args",
			Opts: map[string]any{"include_path": "/x/c.conf", "upstreams": chat, "pid_file": "/run/nginx.pid", "reload_args": nil},
			Want: Config{
				IncludePath: "/x/c.conf", UpstreamName: "hermes_{service}",
				Upstreams:   map[string]map[string][]string{"chat": {"free": {"127.0.0.1:8001"}}},
				NginxBinary: "nginx", TestArgs: []string{"-t"}, PIDFile: "/run/nginx.pid",
				CommandTimeout: 10 * time.Second, Mode: 0o644,
			},
		},
		{
			Name: "a server is a list",
			Opts: map[string]any{"include_path": "/x/c.conf", "upstreams": map[string]any{"chat": map[string]any{"free": "127.0.0.1:1"}}},
			Errs: []string{"upstreams"},
		},
	}, actuatortest.OneLinePerProblem)
}

func TestNewChecksServices(t *testing.T) {
	opts := map[string]any{
		"include_path": "/etc/nginx/hermes/{service}.conf",
		"upstreams": map[string]any{
			"chat":  map[string]any{"free": []any{"127.0.0.1:1"}},
			"embed": map[string]any{"free": []any{"127.0.0.1:2"}},
		},
	}
	_, err := New(actuatortest.Settings(Kind, opts, "Chat", "search"))
	want := `upstreams: service "search" (from services) must be listed
upstreams.embed: not in this actuator's services ["Chat" "search"]`
	if err == nil || err.Error() != want {
		t.Errorf("New error =\n%v\nwant\n%s", err, want)
	}
	if _, err := New(actuatortest.Settings(Kind, opts, "embed", "chat")); err != nil {
		t.Errorf("New: %v", err)
	}
}

func TestRegistryBuild(t *testing.T) {
	var r actuators.Registry
	Register(&r)
	acts, err := r.Build([]config.ActuatorConfig{
		{Name: "edge", Type: Kind, Options: map[string]any{
			"include_path": "/etc/nginx/hermes/{service}.conf",
			"upstreams":    map[string]any{"chat": map[string]any{"free": []any{"127.0.0.1:1"}}},
		}},
	}, nil)
	if err != nil || len(acts) != 1 || acts[0].Name() != "edge" {
		t.Fatalf("Build = %v, %v; want the edge actuator", acts, err)
	}
	acts, err = r.Build([]config.ActuatorConfig{{Type: Kind, Options: map[string]any{"upstreams": map[string]any{}}}}, nil)
	want := "actuators[0] (nginx): include_path must be set (e.g. /etc/nginx/hermes/{service}.conf)\n" +
		"actuators[0] (nginx): upstreams: must list at least one service"
	if acts != nil || err == nil || err.Error() != want {
		t.Errorf("Build = %v, error\n%v\nwant\n%s", acts, err, want)
	}
}

// TestFromConfigFile goes through config.Parse, as the binary does.
func TestFromConfigFile(t *testing.T) {
	cfgs := actuatortest.ParseActuators(t, `
actuators:
  - type: nginx
    services: [chat]
    include_path: /etc/nginx/hermes/{service}.conf
    upstreams:
      chat:
        free: [127.0.0.1:8001]
        paid: ["127.0.0.1:8002 max_fails=3 fail_timeout=10s", 127.0.0.1:8003]
    config_file: /etc/nginx/nginx.conf
    command_timeout: 5s
    mode: 0640
  - {name: typo, type: nginx, include_path: "/x/{service}.conf", upstream: {}}
`)
	var r actuators.Registry
	Register(&r)
	_, err := r.Build(cfgs, nil)
	if want := "actuators[1] (typo): upstream: unknown key"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Build error = %v, want %q", err, want)
	}
	acts, err := r.Build(cfgs[:1], nil)
	if err != nil {
		t.Fatal(err)
	}
	got := backend(t, acts[0]).cfg
	want := map[string]map[string][]string{"chat": {
		"free": {"127.0.0.1:8001"},
		"paid": {"127.0.0.1:8002 max_fails=3 fail_timeout=10s", "127.0.0.1:8003"},
	}}
	if !reflect.DeepEqual(got.Upstreams, want) || got.Mode != 0o640 || got.CommandTimeout != 5*time.Second || got.ConfigFile != "/etc/nginx/nginx.conf" {
		t.Errorf("config = %+v", got)
	}
}

// backend unwraps what Registry.Build returns down to the *Actuator.
func backend(t *testing.T, a actuators.Actuator) *Actuator {
	t.Helper()
	for {
		if b, ok := a.(*Actuator); ok {
			return b
		}
		u, ok := a.(interface{ Unwrap() actuators.Actuator })
		if !ok {
			t.Fatalf("Build returned %T, not an nginx actuator", a)
		}
		a = u.Unwrap()
	}
}
