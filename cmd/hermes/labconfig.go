package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/hermes-failover/hermes/internal/nginxconf"
	"github.com/hermes-failover/hermes/rules"
)

// labRoutes are the routes of the shipped policy's one service, chat, in
// its order: the lab serves each from the fake provider.
var labRoutes = []string{"free", "paid-standard", "paid-premium"}

// labService is the shipped policy's service.
const labService = "chat"

// labPorts are the loopback ports of the lab, in the order of
// labPortNames; --port-base B gives them B, B+1, …
type labPorts struct {
	Hermes, Probe, Proxy, Provider, Prometheus, Alertmanager, Gateway, NginxState, Pager int
	// Routes are nginx's listeners, one per route, in labRoutes' order:
	// each passes its requests to hermes proxy under the route's prefix.
	Routes []int
}

// labPortNames names the ports of --port-base in their order.
var labPortNames = []string{"hermes run", "hermes probe", "hermes proxy", "fake provider", "prometheus", "alertmanager",
	"nginx (the gateway)", "nginx (Hermes's state)", "pager", "nginx route free", "nginx route paid-standard", "nginx route paid-premium"}

// labFast is how much faster than the shipped policy the --fast lab's
// timers run: every level's dwell, recover_for and cooldown and the
// failback's observe, divided. Its tick and scrape
// are labFastInterval.
const (
	labFast         = 30
	labFastInterval = 3 * time.Second
	// labFastQueryTimeout is the --fast lab's query_timeout: it must be
	// below the tick.
	labFastQueryTimeout = 2 * time.Second
	labScrape           = 5 * time.Second
)

// labPolicy is the shipped policy (rules/hermes.yaml) for the lab: its
// Prometheus, its Alertmanager, external URL and actuator (nginx) set,
// and with fast its timers divided by labFast and its tick labFastInterval.
// It edits the YAML tree, so every other key and comment stays the
// shipped one, whatever other edits rules/hermes.yaml gets.
func labPolicy(l *lab, fast bool) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(rules.DefaultYAML, &doc); err != nil {
		return nil, fmt.Errorf("rules/hermes.yaml: %w", err)
	}
	root := doc.Content[0]
	if err := setKey(root, "prometheus", mapping("url", l.url(l.ports.Prometheus))); err != nil {
		return nil, err
	}
	var actuator yaml.Node
	if err := actuator.Encode(l.nginxActuator()); err != nil {
		return nil, err
	}
	if err := setKey(root, "actuators", &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{&actuator}}); err != nil {
		return nil, err
	}
	var alerting yaml.Node
	if err := alerting.Encode(map[string]any{
		"external_url":  l.url(l.ports.Hermes),
		"alertmanagers": []any{map[string]any{"url": l.url(l.ports.Alertmanager)}},
	}); err != nil {
		return nil, err
	}
	if err := setKey(root, "alerting", &alerting); err != nil {
		return nil, err
	}
	if fast {
		global := lookup(root, "global")
		if global == nil {
			return nil, fmt.Errorf("rules/hermes.yaml: no global")
		}
		if err := setKey(global, "evaluation_interval", scalar(model.Duration(labFastInterval).String())); err != nil {
			return nil, err
		}
		if err := setKey(global, "query_timeout", scalar(model.Duration(labFastQueryTimeout).String())); err != nil {
			return nil, err
		}
		levels := lookup(root, "levels")
		if levels == nil || levels.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("rules/hermes.yaml: no levels list")
		}
		for _, lv := range levels.Content {
			if err := divide(lv, labFast, "dwell", "recover_for", "cooldown"); err != nil {
				return nil, err
			}
		}
		// manual_after is kept: a failed-over route goes to manual after it,
		// and the tour's failover lasts a few minutes.
		if err := divide(lookup(root, "failback"), labFast, "observe"); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	head := "# The lab's policy: rules/hermes.yaml with the lab's Prometheus, Alertmanager and nginx"
	if fast {
		head += fmt.Sprintf(";\n# --fast: every level's dwell, recover_for and cooldown and the failback's observe\n# divided by %d, a tick of %s\n# (query_timeout %s). NOT a policy for production", labFast, labFastInterval, labFastQueryTimeout)
	}
	b.WriteString(head + ".\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// divide divides the durations at keys of the mapping m by n (those
// absent are left out).
func divide(m *yaml.Node, n int, keys ...string) error {
	if m == nil || m.Kind != yaml.MappingNode {
		return fmt.Errorf("rules/hermes.yaml: not a mapping where %v were expected", keys)
	}
	for _, k := range keys {
		v := lookup(m, k)
		if v == nil {
			continue
		}
		d, err := model.ParseDuration(v.Value)
		if err != nil {
			return fmt.Errorf("rules/hermes.yaml:%d: %s: %w", v.Line, k, err)
		}
		v.Value = model.Duration(max(time.Duration(d)/time.Duration(n), time.Second).Round(time.Second)).String()
	}
	return nil
}

func lookup(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setKey sets key of the mapping m to v, appending it when absent.
func setKey(m *yaml.Node, key string, v *yaml.Node) error {
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("rules/hermes.yaml: setting %s: not a mapping", key)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v.HeadComment, v.LineComment = m.Content[i+1].HeadComment, m.Content[i+1].LineComment
			m.Content[i+1] = v
			return nil
		}
	}
	m.Content = append(m.Content, scalar(key), v)
	return nil
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }

func mapping(kv ...string) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Content = append(m.Content, scalar(kv[i]), scalar(kv[i+1]))
	}
	return m
}

// nginxActuator is the lab's nginx actuator: each route of chat is its
// nginx listener, which passes the request on to hermes proxy.
func (l *lab) nginxActuator() map[string]any {
	routes := map[string]any{}
	for i, r := range labRoutes {
		routes[r] = []string{l.addr(l.ports.Routes[i])}
	}
	return map[string]any{
		"type":            "nginx",
		"include_path":    filepath.Join(l.dir, "nginx", "hermes", "{service}.conf"),
		"upstreams":       map[string]any{labService: routes},
		"nginx_binary":    l.bins.nginx,
		"prefix":          filepath.Join(l.dir, "nginx"),
		"config_file":     filepath.Join(l.dir, "nginx", "nginx.conf"),
		"test_args":       []string{"-t", "-q", "-e", filepath.Join(l.dir, "nginx", "error.log")},
		"reload_args":     []string{"-s", "reload", "-e", filepath.Join(l.dir, "nginx", "error.log")},
		"command_timeout": "5s",
		"state_listen":    l.addr(l.ports.NginxState),
	}
}

// nginxConf is the lab's nginx: the gateway's listener proxies to the
// upstream Hermes writes (hermes_chat); one listener per route passes
// its requests to hermes proxy under the route's prefix, streaming
// (proxy_buffering off), as docs/proxy.md's "nginx in front".
func (l *lab) nginxConf() string {
	dir := filepath.Join(l.dir, "nginx")
	var routes strings.Builder
	for i, r := range labRoutes {
		fmt.Fprintf(&routes, `    server {
        listen %s;
        location / {
            proxy_pass http://%s/%s/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_read_timeout 600s;
        }
    }
`, l.addr(l.ports.Routes[i]), l.addr(l.ports.Proxy), r)
	}
	gateway := l.addr(l.ports.Gateway)
	return "# The lab's nginx (hermes lab): the gateway on " + gateway + ".\n" +
		nginxconf.Conf(dir, 1024, fmt.Sprintf(`    # The split Hermes writes: upstream hermes_%[2]s.
    include %[1]s/hermes/*.conf;
    server {
        listen %[4]s;
        location / {
            proxy_pass http://hermes_%[2]s;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_read_timeout 600s;
        }
    }
%[3]s`, dir, labService, routes.String(), gateway))
}

// prometheusConf scrapes Hermes, the prober and the proxy, as
// deploy/prometheus.yml does, every interval.
func (l *lab) prometheusConf(interval time.Duration) string {
	return fmt.Sprintf(`# The lab's Prometheus (hermes lab): deploy/prometheus.yml's jobs on the lab's ports.
global:
  scrape_interval: %[1]s
  evaluation_interval: %[1]s
scrape_configs:
  - job_name: hermes
    static_configs: [{targets: ['%[2]s']}]
  - job_name: hermes-probe
    static_configs: [{targets: ['%[3]s']}]
  - job_name: hermes-proxy
    static_configs: [{targets: ['%[4]s']}]
`, model.Duration(interval), l.addr(l.ports.Hermes), l.addr(l.ports.Probe), l.addr(l.ports.Proxy))
}

// alertmanagerConf sends every alert to the lab's pager, grouped by
// route and muted by tier as rules/alertmanager/alertmanager.yml does
// (its inhibit rules, copied), with short timers so the pager follows the
// alerts within seconds, resolved ones too.
func (l *lab) alertmanagerConf() string {
	return fmt.Sprintf(`# The lab's Alertmanager (hermes lab): every alert to the lab's pager.
route:
  receiver: lab-pager
  group_by: [alertname, service, route]
  group_wait: 5s
  group_interval: 10s
  repeat_interval: 4h
receivers:
  - name: lab-pager
    webhook_configs:
      - url: %s/notify
        send_resolved: true
# rules/alertmanager/alertmanager.yml's: a page (tier A) mutes the tickets
# (B) and information (C) of its route, a ticket mutes information.
inhibit_rules:
  - source_matchers: ['alertname=~"Hermes.+"', 'severity="critical"', 'service=~".+"']
    target_matchers: ['alertname=~"Hermes.+"', 'severity=~"warning|info"']
    equal: [service, route, drill]
  - source_matchers: ['alertname=~"Hermes.+"', 'severity="warning"', 'service=~".+"']
    target_matchers: ['alertname=~"Hermes.+"', 'severity="info"']
    equal: [service, route, drill]
`, l.url(l.ports.Pager))
}

// proxyConf is hermes proxy with one route per fake route.
func (l *lab) proxyConf() string {
	var b strings.Builder
	b.WriteString("# The lab's hermes proxy: one route per route of the fake provider.\nroutes:\n")
	for _, r := range labRoutes {
		fmt.Fprintf(&b, "  - name: %s\n    upstream: %s/%s\n", r, l.url(l.ports.Provider), r)
	}
	return b.String()
}

// probeConf probes every route at the fake provider directly, as a
// prober next to the gateway would, with end-to-end probes every e2e.
func (l *lab) probeConf(e2e time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, `# The lab's hermes probe: every route of the fake provider, end to end every %s.
defaults:
  readiness: {interval: 5s, timeout: 2s}
  e2e: {interval: %s, timeout: %s}
  boundary: {disabled: true}
  token_budget: {tokens: 0, per: 24h}   # the fake provider costs nothing
targets:
`, model.Duration(e2e), model.Duration(e2e), model.Duration(min(e2e, 5*time.Second)))
	for _, r := range labRoutes {
		fmt.Fprintf(&b, "  - route: %s\n    base_url: %s/%s/v1\n    model: %s\n", r, l.url(l.ports.Provider), r, "fake-model")
	}
	return b.String()
}
