package main

import (
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/traffic"
	"github.com/hermes-failover/hermes/web"
)

// TestStatusShowsThePlannedStep: with max_shift_per_tick, the core plans
// the step the actuators write, so the status API, ctl status and explain
// show the step users get, not the target it walks to. An operator pins
// chat to paid-premium from free's 100 %; the limit is 30 points a tick.
func TestStatusShowsThePlannedStep(t *testing.T) {
	p := testenv.DefaultPolicy(t, func(c *config.Config) {
		c.Actuators = []config.ActuatorConfig{{Type: "file", MaxShiftPerTick: 30, Options: map[string]any{"path": "split.json"}}}
	})
	now := time.Unix(1000, 0).UTC()
	s, _ := evaluator.Step(p, evaluator.State{}, evaluator.Input{}, now)
	if w := s.Services["chat"].Weights; w["free"] != 100 {
		t.Fatalf("first plan %v, want free 100", w)
	}
	now = now.Add(15 * time.Second)
	pin := evaluator.Command{Kind: evaluator.CommandPin, Service: "chat", Route: "paid-premium", Reason: "test"}
	s, _ = evaluator.Step(p, s, evaluator.Input{Commands: []evaluator.Command{pin}}, now)
	b := served(p, s, now, nil)
	st := *b.st
	if len(st.Services) == 0 || st.Services[0].Name != "chat" {
		t.Fatalf("status services %+v", st.Services)
	}
	svc := st.Services[0]
	if w := svc.Weights; w["free"] != 70 || w["paid-premium"] != 30 || svc.Override == nil || svc.Override.Kind != traffic.Pin {
		t.Errorf("status: chat %v (override %v), want the first step free 70, paid-premium 30 under the pin", w, svc.Override)
	}
	for _, rt := range svc.Routes {
		if want := map[string]int{"free": 70, "paid-premium": 30}[rt.Name]; rt.Traffic != want {
			t.Errorf("status: route %s has %d%% of traffic, want %d%%", rt.Name, rt.Traffic, want)
		}
	}

	_, url := serve(t, b, "")
	code, out, errb := hermes(t, "explain", "--url", url, "--route", "paid-premium")
	if want := "route paid-premium of service chat: normal since"; code != 0 || !strings.Contains(out, want) || !strings.Contains(out, ", 30% of traffic\n") {
		t.Errorf("explain: exit %d (%s), want %q … 30%% of traffic:\n%s", code, errb, want, out)
	}
	code, out, errb = hermes(t, "ctl", "--url", url, "status")
	if code != 0 || !strings.Contains(out, "70%") || !strings.Contains(out, "30%") {
		t.Errorf("ctl status: exit %d (%s), want the step's 70%% and 30%%:\n%s", code, errb, out)
	}
}

// served is a backend serving the status `hermes run` serves for state s
// of p after its tick at at: web.StatusOf of a ready runner's view, which
// edit, when not nil, changes first.
func served(p *evaluator.Policy, s evaluator.State, at time.Time, edit func(*runner.View)) *backend {
	v := runner.View{Ticked: true, Ready: true, LastTick: at, Config: &config.Config{Policy: *p.Config}, Policy: p, State: s}
	if edit != nil {
		edit(&v)
	}
	st := web.StatusOf(v)
	return &backend{st: &st}
}
