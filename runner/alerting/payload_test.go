package alerting

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func firing(rule, tier, route string, activeAt, firedAt time.Time) *evaluator.Alert {
	sev := evaluator.Severity(tier)
	labels := map[string]string{"alertname": rule, "severity": sev, "tier": tier, "service": "chat"}
	if route != "" {
		labels["route"], labels["level"] = route, "failover"
	}
	return &evaluator.Alert{Rule: rule, Tier: tier, Service: "chat", Route: route, State: evaluator.StateFiring,
		ActiveAt: activeAt, FiredAt: firedAt, LastTrue: firedAt, Labels: labels,
		Annotations: map[string]string{"summary": rule + " fired", "description": "score 42.0, level failover; hard_fail_ratio=0.3", "runbook_url": ""}}
}

func TestValidFor(t *testing.T) {
	if got := ValidFor(15*time.Second, 15*time.Second); got != time.Minute {
		t.Errorf("ValidFor(15s, 15s) = %s, want 1m", got)
	}
	if got := ValidFor(15*time.Second, time.Minute); got != 4*time.Minute {
		t.Errorf("ValidFor(15s, 1m) = %s, want 4m", got)
	}
}

func TestPayload(t *testing.T) {
	now := t0.Add(10 * time.Minute)
	fire := firing("HermesRouteFailedOver", "A", "free", t0, t0.Add(5*time.Minute))
	resolved := firing("HermesRouteScoreDegraded", "B", "free", t0, t0.Add(time.Minute))
	resolved.State, resolved.ResolvedAt = evaluator.StateInactive, now.Add(-14*time.Minute)
	expired := firing("HermesStatus422High", "B", "free", t0, t0.Add(time.Minute))
	expired.State, expired.ResolvedAt = evaluator.StateInactive, now.Add(-15*time.Minute)
	pending := firing("HermesLatencyP95High", "B", "free", now, time.Time{})
	pending.State = evaluator.StatePending
	service := firing("HermesAllRoutesBad", "A", "", now, now)
	alerts := map[string]*evaluator.Alert{
		"HermesRouteFailedOver/chat/free":    fire,
		"HermesRouteScoreDegraded/chat/free": resolved,
		"HermesStatus422High/chat/free":      expired,
		"HermesLatencyP95High/chat/free":     pending,
		"HermesAllRoutesBad/chat/":           service,
	}

	got := Payload(alerts, now, time.Minute, "https://hermes.example.com/ops/")
	if len(got) != 3 {
		t.Fatalf("got %d alerts, want firing, resolved and service-scope ones:\n%s", len(got), mustJSON(t, got))
	}
	// Ordered by key: AllRoutesBad, RouteFailedOver, RouteScoreDegraded.
	svc, fo, deg := got[0], got[1], got[2]

	if fo.Labels["alertname"] != "HermesRouteFailedOver" || fo.Labels["severity"] != "critical" || fo.Labels["route"] != "free" || fo.Labels["level"] != "failover" {
		t.Errorf("labels = %v", fo.Labels)
	}
	if time.Time(fo.StartsAt) != t0.Add(5*time.Minute) || time.Time(fo.EndsAt) != now.Add(time.Minute) {
		t.Errorf("firing: startsAt %s endsAt %s, want FiredAt and now+validFor", fo.StartsAt, fo.EndsAt)
	}
	if fo.GeneratorURL != "https://hermes.example.com/ops/#route-free" {
		t.Errorf("generatorURL = %s", fo.GeneratorURL)
	}
	if _, ok := fo.Annotations["runbook_url"]; ok || fo.Annotations["summary"] == "" || fo.Annotations["description"] == "" {
		t.Errorf("annotations = %v, want summary and description, no empty runbook_url", fo.Annotations)
	}
	if time.Time(deg.EndsAt) != resolved.ResolvedAt || time.Time(deg.StartsAt) != resolved.FiredAt {
		t.Errorf("resolved: startsAt %s endsAt %s, want FiredAt and ResolvedAt", deg.StartsAt, deg.EndsAt)
	}
	if svc.GeneratorURL != "https://hermes.example.com/ops/#service-chat" {
		t.Errorf("service generatorURL = %s", svc.GeneratorURL)
	}
	if _, ok := svc.Labels["route"]; ok {
		t.Errorf("service-scope labels = %v, want no route", svc.Labels)
	}
	for _, a := range got {
		if err := a.Validate(nil); err != nil {
			t.Errorf("%v: invalid PostableAlert: %v", a.Labels, err)
		}
	}
}

func TestGeneratorURL(t *testing.T) {
	for _, c := range []struct{ ext, svc, route, want string }{
		{"http://localhost:9797", "chat", "free", "http://localhost:9797/#route-free"},
		{"https://x.example.com/hermes", "chat", "paid-standard", "https://x.example.com/hermes/#route-paid-standard"},
		{"https://x.example.com/", "chat bot", "", "https://x.example.com/#service-chat%20bot"},
	} {
		if got := GeneratorURL(c.ext, c.svc, c.route); got != c.want {
			t.Errorf("GeneratorURL(%q, %q, %q) = %q, want %q", c.ext, c.svc, c.route, got, c.want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
