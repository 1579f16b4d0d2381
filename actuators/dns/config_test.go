package dns

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
)

// secretForTests is a valid base64 secret that no error may show.
const secretForTests = "aGVybWVzLXRlc3Qtc2VjcmV0LWRvLW5vdC1sZWFr"

func validOptions() map[string]any {
	return map[string]any{
		"server": "192.0.2.53:53",
		"zone":   "Hermes.Test",
		"tsig":   map[string]any{"name": "hermes-update", "secret": secretForTests},
		"records": map[string]any{
			"chat": map[string]any{"name": "_chat._tcp", "mode": "srv", "routes": map[string]any{
				"free": map[string]any{"target": "free.example.net", "port": 443},
				"paid": map[string]any{"target": "paid.example.net.", "port": 8443, "priority": 0},
			}},
			"embed": map[string]any{"name": "embed.hermes.test.", "mode": "failover", "type": "A", "routes": map[string]any{
				"embed-free": []any{"192.0.2.2", "192.0.2.1"},
				"embed-paid": "198.51.100.1",
			}},
		},
	}
}

func TestParseConfigDefaults(t *testing.T) {
	c, err := ParseConfig(validOptions())
	if err != nil {
		t.Fatal(err)
	}
	if c.Zone != "hermes.test." || c.Timeout != DefaultTimeout || c.TTL != DefaultTTL || !c.Flags {
		t.Errorf("zone, timeout, ttl, flags = %q, %v, %d, %v", c.Zone, c.Timeout, c.TTL, c.Flags)
	}
	if c.TSIG.Name != "hermes-update." || c.TSIG.Algorithm != dns.HmacSHA256 || string(c.TSIG.Secret) != secretForTests {
		t.Errorf("tsig = %+v", c.TSIG)
	}
	chat := c.Records["chat"]
	if chat.Name != "_chat._tcp.hermes.test." || chat.Type != "SRV" {
		t.Errorf("chat = %+v", chat)
	}
	if got, want := chat.SRV["free"], (SRVRoute{"free.example.net.", 443, DefaultPriority}); got != want {
		t.Errorf("chat free = %+v, want %+v", got, want)
	}
	if got, want := chat.SRV["paid"], (SRVRoute{"paid.example.net.", 8443, 0}); got != want {
		t.Errorf("chat paid = %+v, want %+v (priority 0 is not the default)", got, want)
	}
	embed := c.Records["embed"]
	if embed.Name != "embed.hermes.test." || embed.Type != "A" ||
		fmt.Sprint(embed.Order) != "[embed-free embed-paid]" ||
		fmt.Sprint(embed.Values["embed-free"]) != "[192.0.2.1 192.0.2.2]" {
		t.Errorf("embed = %+v", embed)
	}
	for _, s := range []string{fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c)} {
		if strings.Contains(s, secretForTests) {
			t.Errorf("a printed Config reveals the secret: %s", s)
		}
	}
}

func TestParseConfigSecretFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tsig.key")
	if err := os.WriteFile(path, []byte(secretForTests+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := validOptions()
	opts["tsig"] = map[string]any{"name": "k", "algorithm": "HMAC-SHA512.", "secret_file": path}
	c, err := ParseConfig(opts)
	if err != nil {
		t.Fatal(err)
	}
	if string(c.TSIG.Secret) != secretForTests || c.TSIG.Algorithm != dns.HmacSHA512 {
		t.Errorf("tsig = %q %q", c.TSIG.Algorithm, string(c.TSIG.Secret))
	}
	if err := os.WriteFile(path, []byte("not base64: "+secretForTests), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = ParseConfig(opts)
	if err == nil || err.Error() != "tsig.secret_file: not valid base64" {
		t.Errorf("err = %v, want tsig.secret_file: not valid base64", err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	with := func(edit func(o map[string]any)) map[string]any {
		o := validOptions()
		edit(o)
		return o
	}
	records := func(o map[string]any) map[string]any { return o["records"].(map[string]any) }
	rec := func(o map[string]any, svc string) map[string]any { return records(o)[svc].(map[string]any) }
	routes := func(o map[string]any, svc string) map[string]any { return rec(o, svc)["routes"].(map[string]any) }

	actuatortest.ParseCases(t, ParseConfig, []actuatortest.ParseCase[Config]{
		{Name: "empty", Opts: nil, Errs: []string{"server: must be set", "zone: must be set", "records: must hold at least one service"}},
		{Name: "unknown keys", Opts: with(func(o map[string]any) {
			o["colour"] = "red"
			o["tsig"].(map[string]any)["secrett"] = "x"
			rec(o, "chat")["weight"] = 3
			routes(o, "chat")["free"].(map[string]any)["prio"] = 1
		}), Errs: []string{
			"colour: unknown key", "tsig.secrett: unknown key",
			"records.chat.weight: unknown key", "records.chat.routes.free.prio: unknown key",
		}},
		{Name: "server", Opts: with(func(o map[string]any) { o["server"] = "192.0.2.53" }), Errs: []string{`server: "192.0.2.53" is not host:port`}},
		{Name: "timeout and ttl", Opts: with(func(o map[string]any) { o["timeout"] = "0s"; o["ttl"] = -1 }), Errs: []string{"timeout: must be positive", "ttl: -1 is out of range"}},
		{Name: "bad base64", Opts: with(func(o map[string]any) { o["tsig"].(map[string]any)["secret"] = "%%" + secretForTests }), Errs: []string{"tsig.secret: not valid base64"}},
		{Name: "tsig incomplete", Opts: with(func(o map[string]any) { o["tsig"] = map[string]any{"algorithm": "hmac-md5"} }), Errs: []string{
			"tsig.name: must be set", `tsig.algorithm: "hmac-md5" is not supported`, "tsig: secret or secret_file must be set",
		}},
		{Name: "both secrets", Opts: with(func(o map[string]any) { o["tsig"].(map[string]any)["secret_file"] = "/x" }), Errs: []string{"tsig: set secret or secret_file, not both"}},
		{Name: "missing secret file", Opts: with(func(o map[string]any) {
			o["tsig"] = map[string]any{"name": "k", "secret_file": "/nonexistent/tsig.key"}
		}), Errs: []string{"tsig.secret_file: open /nonexistent/tsig.key: no such file"}},
		{Name: "target", Opts: with(func(o map[string]any) {
			routes(o, "chat")["free"].(map[string]any)["target"] = "free_example.net"
			routes(o, "chat")["paid"].(map[string]any)["port"] = 0
		}), Errs: []string{"records.chat.routes.free.target: must be a host name", "records.chat.routes.paid.port: must be 1..65535, got 0"}},
		{Name: "duplicate target", Opts: with(func(o map[string]any) {
			routes(o, "chat")["paid"] = map[string]any{"target": "FREE.example.net.", "port": 443}
		}), Errs: []string{"records.chat.routes.paid: same target and port as route free"}},
		{Name: "mode and name", Opts: with(func(o map[string]any) {
			rec(o, "chat")["mode"] = "weighted"
			rec(o, "embed")["name"] = "embed.other.test."
		}), Errs: []string{`records.chat.mode: "weighted" is not srv or failover`, "records.embed.name: embed.other.test. is not in zone hermes.test."}},
		{Name: "srv with type and order", Opts: with(func(o map[string]any) {
			rec(o, "chat")["type"] = "A"
			rec(o, "chat")["order"] = []any{"free"}
		}), Errs: []string{"records.chat.type: mode srv writes SRV records", "records.chat.order: only mode failover uses order"}},
		{Name: "failover values", Opts: with(func(o map[string]any) {
			routes(o, "embed")["embed-free"] = []any{"2001:db8::1", "not-an-ip", 7}
			routes(o, "embed")["embed-paid"] = []any{}
		}), Errs: []string{
			`records.embed.routes.embed-free[0]: "2001:db8::1" is not an IPv4 address (type A)`,
			`records.embed.routes.embed-free[1]: "not-an-ip" is not an IP address`,
			"records.embed.routes.embed-free[2]: must be a string, got a number",
			"records.embed.routes.embed-paid: must hold at least one value",
		}},
		{Name: "failover type", Opts: with(func(o map[string]any) { delete(rec(o, "embed"), "type") }), Errs: []string{"records.embed.type: must be set for mode failover"}},
		{Name: "cname", Opts: with(func(o map[string]any) {
			rec(o, "embed")["type"] = "cname"
			rec(o, "embed")["name"] = "@"
			routes(o, "embed")["embed-free"] = []any{"a.example.net", "b.example.net"}
		}), Errs: []string{
			"records.embed.name: a CNAME cannot live at the zone apex hermes.test.",
			"records.embed.routes.embed-free: a CNAME takes exactly one target, got 2",
			`records.embed.routes.embed-paid[0]: must be a host name, got "198.51.100.1"`,
		}},
		{Name: "same values", Opts: with(func(o map[string]any) { routes(o, "embed")["embed-paid"] = []any{"192.0.2.1", "192.0.2.2"} }), Errs: []string{
			"records.embed.routes.embed-paid: same values as route embed-free",
		}},
		{Name: "order", Opts: with(func(o map[string]any) { rec(o, "embed")["order"] = []any{"embed-paid", "ghost", "embed-paid"} }), Errs: []string{
			`records.embed.order: "ghost" is not a route of this record`,
			`records.embed.order: "embed-paid" is listed twice`,
			`records.embed.order: must list every route; "embed-free" is missing`,
		}},
		{Name: "shared name", Opts: with(func(o map[string]any) { rec(o, "embed")["name"] = "_chat._tcp.hermes.test" }), Errs: []string{
			"records.embed.name: _chat._tcp.hermes.test. is already used by records.chat",
		}},
		{Name: "record shapes", Opts: with(func(o map[string]any) {
			records(o)["chat"] = "srv"
			routes(o, "embed")["embed-free"] = map[string]any{"values": "192.0.2.1"}
		}), Errs: []string{"records.chat: must be a mapping, got a string", "records.embed.routes.embed-free: must be a list of values, got a mapping"}},
	}, actuatortest.NoSecrets(secretForTests))
}

func TestNewServices(t *testing.T) {
	a, err := New(actuatortest.Settings(Kind, validOptions()))
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != Kind || fmt.Sprint(a.services) != "[chat embed]" {
		t.Errorf("name %q, services %v", a.Name(), a.services)
	}
	_, err = New(actuatortest.Settings(Kind, validOptions(), "chat", "rerank"))
	if err == nil || err.Error() != `services: "rerank" has no entry under records` {
		t.Errorf("err = %v", err)
	}
}

// TestFromConfigFile goes through config.Parse and the registry, as the
// binary does, with the example of the package documentation.
func TestFromConfigFile(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "tsig.key")
	if err := os.WriteFile(keyFile, []byte(secretForTests), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgs := actuatortest.ParseActuators(t, `
actuators:
  - name: dns
    type: dns
    services: [chat]
    server: 192.0.2.53:53
    zone: hermes.example.com
    tsig:
      name: hermes-update
      algorithm: hmac-sha256
      secret_file: `+keyFile+`
    timeout: 3s
    ttl: 30
    records:
      chat:
        name: _chat._tcp
        mode: srv
        routes:
          free: {target: free.llm.example.com, port: 443}
          paid: {target: paid.llm.example.com, port: 443, priority: 10}
      embed:
        name: embed
        mode: failover
        type: A
        order: [embed-free, embed-paid]
        routes:
          embed-free: [192.0.2.10, 192.0.2.11]
          embed-paid: [198.51.100.10]
  - name: typo
    type: dns
    server: 192.0.2.53:53
    zone: hermes.example.com
    records:
      chat:
        name: _chat._tcp
        mode: srv
        routes:
          free: {target: free.llm.example.com, port: 443, weight: 5}
`)
	var r actuators.Registry
	Register(&r)
	_, err := r.Build(cfgs, nil)
	if want := "actuators[1] (typo): records.chat.routes.free.weight: unknown key"; err == nil || err.Error() != want {
		t.Fatalf("Build error = %v, want %q", err, want)
	}
	acts, err := r.Build(cfgs[:1], nil)
	if err != nil || len(acts) != 1 || acts[0].Name() != "dns" {
		t.Fatalf("Build = %v, %v; want the dns actuator", acts, err)
	}
	a := actuators.Backend(acts[0]).(*Actuator)
	if a.cfg.Timeout != 3*time.Second || string(a.cfg.TSIG.Secret) != secretForTests || a.cfg.Records["embed"].Order[0] != "embed-free" ||
		a.cfg.Records["chat"].SRV["paid"].Target != "paid.llm.example.com." || fmt.Sprint(a.services) != "[chat]" {
		t.Errorf("config = %+v, services %v", a.cfg, a.services)
	}
}
