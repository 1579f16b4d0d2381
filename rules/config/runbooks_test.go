package config

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/hermes-failover/hermes/rules"
)

// anchors are the GitHub anchors of the Markdown headings of path: the
// heading lowercased, spaces as dashes, punctuation dropped.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	out := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			h = strings.TrimSpace(strings.TrimLeft(h, "#"))
			out[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")] = true
		}
	}
	return out
}

// checkRunbook fails t unless link points at a heading of the file it
// names in this repository (…/blob/main/PATH#anchor).
func checkRunbook(t *testing.T, who, link string) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || u.Fragment == "" {
		t.Errorf("%s: runbook_url %q has no anchor", who, link)
		return
	}
	_, path, ok := strings.Cut(u.Path, "/blob/main/")
	if !ok {
		t.Errorf("%s: runbook_url %q is not a file of the repository", who, link)
		return
	}
	if !anchors(t, filepath.Join("../..", path))[u.Fragment] {
		t.Errorf("%s: runbook_url %q: %s has no heading with anchor #%s", who, link, path, u.Fragment)
	}
}

// TestEveryRunbookAnchorResolves: every runbook_url of the shipped
// policies (resolved against the default alerting.runbook_base_url) and of
// the watchdog rules points at an existing heading of docs/runbooks.md or
// rules/prometheus/README.md.
func TestEveryRunbookAnchorResolves(t *testing.T) {
	for _, file := range []string{"../hermes.yaml", "../hermes-at-scale.yaml"} {
		cfg, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range cfg.Alerts {
			checkRunbook(t, file+" "+a.Name, a.RunbookURL)
		}
	}
	b, err := os.ReadFile("../prometheus/hermes-watchdog.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rf struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &rf); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				n++
				checkRunbook(t, "watchdog "+r.Alert, r.Annotations["runbook_url"])
			}
		}
	}
	if n < 5 {
		t.Errorf("only %d watchdog alerts read", n)
	}
}

// TestRunbookBaseURL: alerting.runbook_base_url moves every relative
// runbook_url; an absolute one stays.
func TestRunbookBaseURL(t *testing.T) {
	src := strings.Replace(string(rules.DefaultYAML), "alerts:\n", "alerting: {runbook_base_url: 'https://wiki.example.com/hermes/runbooks.html'}\nalerts:\n", 1)
	src = strings.Replace(src, "runbook_url: '#hermesquotalow'", "runbook_url: 'https://quota.example.com/runbook'", 1)
	cfg, err := Parse([]byte(src), "hermes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range cfg.Alerts {
		got[a.Name] = a.RunbookURL
	}
	if got["HermesRouteFailedOver"] != "https://wiki.example.com/hermes/runbooks.html#hermesroutefailedover" || got["HermesQuotaLow"] != "https://quota.example.com/runbook" {
		t.Errorf("runbook URLs %v", got)
	}
	bad := strings.Replace(string(rules.DefaultYAML), "alerts:\n", "alerting: {runbook_base_url: 'wiki/runbooks'}\nalerts:\n", 1)
	cfg, err = Parse([]byte(bad), "hermes.yaml")
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "alerting.runbook_base_url") {
		t.Errorf("a relative base: %v", err)
	}
}
