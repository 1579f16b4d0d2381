package evaluator

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules/config"
)

// TestReloadClearsAPinToARemovedRoute pins chat to paid-premium, then
// steps with a configuration whose chat no longer has that route (a
// reload): the pin is cleared with an event saying why, and no traffic
// goes to the removed route.
func TestReloadClearsAPinToARemovedRoute(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Unix(1_700_000_000, 0).UTC()
	pin := Command{ID: "1", Kind: CommandPin, Service: "chat", Route: "paid-premium", Reason: "launch", By: "alice"}
	s, _ := Step(p, State{}, Input{Snapshot: snap(p, t0, nil), Commands: []Command{pin}}, t0)
	if s.Services["chat"].Weights["paid-premium"] != 100 {
		t.Fatalf("setup: pinned split %v", s.Services["chat"].Weights)
	}

	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Services[0].Routes = slices.DeleteFunc(slices.Clone(cfg.Services[0].Routes), func(r string) bool { return r == "paid-premium" })
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p2, err := NewPolicy(cfg.Rules())
	if err != nil {
		t.Fatal(err)
	}
	t1 := t0.Add(15 * time.Second)
	s, evs := Step(p2, s, Input{Snapshot: snap(p2, t1, nil)}, t1)
	if o, ok := s.Overrides["chat"]; ok {
		t.Errorf("the pin to a removed route survived the reload: %+v", o)
	}
	if w := s.Services["chat"].Weights; w["paid-premium"] != 0 || w["free"] != 100 {
		t.Errorf("split after the reload: %v", w)
	}
	var cleared *Event
	for i, e := range evs {
		if e.Type == EventOverride && e.State == "cleared" {
			cleared = &evs[i]
		}
	}
	if cleared == nil || cleared.Route != "paid-premium" || cleared.By != "alice" ||
		!strings.Contains(cleared.Reasons[0], `route "paid-premium" is no longer in service "chat"`) {
		t.Errorf("override event after the reload: %+v (all: %+v)", cleared, evs)
	}
}

// TestPauseKeepsItsSplitAcrossARestart pauses chat while it is pinned to
// paid-premium, saves the override as the runner does (JSON) and steps a
// state that knows nothing else (a restart that restored nothing): the
// pause must keep the split it froze, not plan free=100 afresh.
func TestPauseKeepsItsSplitAcrossARestart(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Unix(1_700_000_000, 0).UTC()
	pin := Command{ID: "1", Kind: CommandPin, Service: "chat", Route: "paid-premium", Reason: "incident"}
	s, _ := Step(p, State{}, Input{Snapshot: snap(p, t0, nil), Commands: []Command{pin}}, t0)
	t1 := t0.Add(15 * time.Second)
	pause := Command{ID: "2", Kind: CommandPause, Service: "chat", Reason: "hold", Replace: true}
	s, _ = Step(p, s, Input{Snapshot: snap(p, t1, nil), Commands: []Command{pause}}, t1)
	if w := s.Services["chat"].Weights; w["paid-premium"] != 100 {
		t.Fatalf("setup: paused split %v", w)
	}

	b, err := json.Marshal(s.Overrides)
	if err != nil {
		t.Fatal(err)
	}
	var saved map[string]Override
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	if !saved["chat"].Equal(s.Overrides["chat"]) {
		t.Errorf("override after a JSON round trip %+v, want %+v", saved["chat"], s.Overrides["chat"])
	}
	t2 := t1.Add(15 * time.Second)
	s2, _ := Step(p, State{Overrides: saved}, Input{Snapshot: snap(p, t2, nil)}, t2)
	if w := s2.Services["chat"].Weights; w["paid-premium"] != 100 || w["free"] != 0 {
		t.Errorf("paused split after a restart that restored nothing: %v (saved %s), want the frozen paid-premium=100", w, b)
	}
}

// TestPauseOverAPinAsksForReplace: a pause over a pin is refused with what
// the pin is, unless it says Replace; then it replaces the pin and its
// expiry. Mistyped names are answered with the valid ones.
func TestPauseOverAPinAsksForReplace(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Unix(1_700_000_000, 0).UTC()
	pin := Command{ID: "1", Kind: CommandPin, Service: "chat", Route: "paid-premium", Reason: "launch", By: "alice", Expires: t0.Add(2 * time.Hour)}
	s, _ := Step(p, State{}, Input{Snapshot: snap(p, t0, nil), Commands: []Command{pin}}, t0)

	pause := Command{Kind: CommandPause, Service: "chat", Reason: "freeze"}
	err := Check(p, s, pause)
	want := `service "chat" is pinned to "paid-premium" by alice ("launch", expires 2023-11-15T00:13:20Z): a pause would replace the pin and its expiry; ask again with replace (hermes ctl pause --replace; "replace": true in the admin API), or clear the pin first`
	if err == nil || err.Error() != want {
		t.Errorf("pause over a pin: %v, want %s", err, want)
	}
	if next, _, err := Apply(p, s, pause, t0.Add(time.Second)); err == nil || next.Overrides["chat"].Kind != "pin" {
		t.Errorf("Apply of a pause over a pin: %v, override %+v; want refused, pin kept", err, next.Overrides["chat"])
	}
	pause.Replace = true
	next, _, err := Apply(p, s, pause, t0.Add(time.Second))
	if o := next.Overrides["chat"]; err != nil || o.Kind != "pause" || !o.Expires.IsZero() {
		t.Errorf("pause with replace: %v, override %+v; want a pause without expiry", err, o)
	}
	// A pause over a pause, and a pin over a pause, need no replace.
	if err := Check(p, next, Command{Kind: CommandPause, Service: "chat", Reason: "again"}); err != nil {
		t.Errorf("pause over a pause: %v", err)
	}

	for _, tc := range []struct {
		cmd  Command
		want string
	}{
		{Command{Kind: CommandPin, Service: "chta", Route: "free", Reason: "x"}, `unknown service "chta"; the services are "chat"`},
		{Command{Kind: CommandPin, Service: "chat", Route: "fre", Reason: "x"}, `route "fre" is not in service "chat"; its routes are "free", "paid-standard", "paid-premium"`},
		{Command{Kind: CommandRelease, Route: "fre", Reason: "x"}, `release: unknown route "fre"; the routes are "free", "paid-standard", "paid-premium"`},
	} {
		if err := Check(p, s, tc.cmd); err == nil || err.Error() != tc.want {
			t.Errorf("Check(%+v) = %v, want %s", tc.cmd, err, tc.want)
		}
	}
}

// TestPauseOfAnUnknownSplitFreezesNothing: after a restart that learned
// no split (the stage says so in Input.UnknownSplits), the core's split
// is the placeholder, the first route at 100 %. A pause must not freeze
// it: it keeps no frozen split, which the override saves, and its event
// says so. Where the split is known, the pause freezes it as before.
func TestPauseOfAnUnknownSplitFreezesNothing(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Unix(1_700_000_000, 0).UTC()
	s, _ := Step(p, State{}, Input{Snapshot: snap(p, t0, nil)}, t0)
	if s.Services["chat"].Weights["free"] != 100 {
		t.Fatalf("setup: placeholder split %v", s.Services["chat"].Weights)
	}
	t1 := t0.Add(15 * time.Second)
	pause := Command{ID: "7", Kind: CommandPause, Service: "chat", Reason: "incident", By: "bob"}
	next, evs := Step(p, s, Input{Snapshot: snap(p, t1, nil), Commands: []Command{pause}, UnknownSplits: map[string]bool{"chat": true}}, t1)
	o, ok := next.Overrides["chat"]
	if !ok || o.Kind != "pause" || o.Frozen != nil {
		t.Fatalf("pause of an unknown split: override %+v (set %v), want a pause with no frozen split", o, ok)
	}
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var saved Override
	if err := json.Unmarshal(data, &saved); err != nil || saved.Frozen != nil || saved.Kind != "pause" {
		t.Errorf("saved as %s (%v), want a pause without a frozen split", data, err)
	}
	var said bool
	for _, e := range evs {
		said = said || e.Type == EventOverride && e.Command == "7" && slices.Contains(e.Reasons, splitUnknownReason)
	}
	if !said {
		t.Errorf("no override event says the split is unknown: %+v", evs)
	}
	known, _ := Step(p, s, Input{Snapshot: snap(p, t1, nil), Commands: []Command{pause}}, t1)
	if f := known.Overrides["chat"].Frozen; f == nil || f.Weights["free"] != 100 {
		t.Errorf("pause of a known split froze %+v, want free=100", f)
	}
}
