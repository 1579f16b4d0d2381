package runner

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/actuators/file"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/traffic"
)

// TestBlindTickWritesNothing: once every query of a tick fails, the
// replica is not ready and writes nothing, so a split another replica
// (with data) wrote meanwhile stays; its stale desired state does not
// come back.
func TestBlindTickWritesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		r, reg, split, stop := startTestRunner(t, fp)
		tickFor(20 * time.Second)
		if w := weights(t, split); w["free"] != 100 || !r.Ready() {
			t.Fatalf("setup: split %v, ready %v", w, r.Ready())
		}
		fp.setFail(errors.New("500 Internal Server Error"))
		// The other replica, which sees free failing, moves the traffic.
		other, err := file.New(actuatortest.Settings(file.Kind, map[string]any{"path": split}))
		if err != nil {
			t.Fatal(err)
		}
		failed := actuators.Splits{"chat": {Weights: map[string]int{"free": 0, "paid-standard": 100, "paid-premium": 0}}}
		if err := other.Apply(t.Context(), failed); err != nil {
			t.Fatal(err)
		}
		tickFor(time.Minute)
		if w := weights(t, split); w["free"] != 0 || w["paid-standard"] != 100 {
			t.Errorf("a replica without data rewrote its stale split: %v", w)
		}
		if r.Ready() {
			t.Error("ready although the last ticks had no data")
		}
		if v := heldMetric(t, reg, HeldNoData); v != 1 {
			t.Errorf("hermes_service_actuation_held{reason=%q} = %v, want 1", HeldNoData, v)
		}
		stop()
	})
}

// TestUnknownSplitHoldsRatherThanPrimary: a backend that cannot say what
// it holds (a webhook after a restart), nothing in Prometheus, and free
// failing: the restart must not send free 100 % while the levels are
// placeholders; it holds until the core moved the traffic on data.
func TestUnknownSplitHoldsRatherThanPrimary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.5}
		flaky := &flakyActuator{}
		r, reg := newFlakyRunner(t, fp, flaky)
		stop := start(t, r)
		var sentPrimary bool
		for range 20 { // 5 minutes of ticks
			tickFor(15 * time.Second)
			if w, ok := flaky.lastSplits()["chat"]; ok && w.Weights["free"] == 100 {
				sentPrimary = true
			}
		}
		if sentPrimary {
			t.Error("a restart that could not learn the split sent free=100 while free was failing")
		}
		got := flaky.lastSplits()["chat"].Weights
		if got["free"] != 0 || got["paid-standard"] != 100 {
			t.Errorf("after the failover the backend got %v, want free=0", got)
		}
		if v := heldMetric(t, reg, HeldUnknownSplit); v == 1 {
			t.Errorf("still held once the core decided on data: %v", v)
		}
		stop()
	})
}

// TestPauseWithALostSplitHolds: an overrides file from before pauses
// saved their split ({kind: pause}), a backend that cannot say, free
// failing: the pause must not freeze free at 100 %; the service is held,
// loudly, until a person clears or pins it.
func TestPauseWithALostSplitHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.5}
		_, reg, flaky, stop := startWithOverrides(t, fp, `{"chat":{"kind":"pause","reason":"r","since":"2000-01-01T00:00:00Z"}}`)
		tickFor(5 * time.Minute)
		if last, applied := flaky.lastSplits()["chat"]; applied {
			t.Errorf("a pause whose split was lost applied %v", last)
		}
		if v := heldMetric(t, reg, HeldUnknownSplit); v != 1 {
			t.Errorf("held metric %v, want 1", v)
		}
		stop()
	})
}

// TestPauseOnAFailedRouteIsLoud: a pause that froze free at 100 % keeps
// it there once free fails over (a person decided), but says so in
// hermes_pause_on_failed_route.
func TestPauseOnAFailedRouteIsLoud(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		_, reg, flaky, stop := startWithOverrides(t, fp, `{"chat":{"kind":"pause","reason":"r","since":"2000-01-01T00:00:00Z",
"frozen":{"weights":{"free":100,"paid-standard":0,"paid-premium":0},"retries_enabled":true,"degraded_mode":false}}}`)
		tickFor(20 * time.Second)
		fp.setSoft(0.5)
		tickFor(5 * time.Minute)
		got := flaky.lastSplits()["chat"]
		if got.Weights["free"] != 100 || got.Levels["free"] != traffic.Failover {
			t.Fatalf("setup: backend got %+v, want the frozen free=100 with free failed over", got)
		}
		if v := testenv.Metric(t, reg, "hermes_pause_on_failed_route", map[string]string{"service": "chat", "route": "free"}); v != 1 {
			t.Errorf("hermes_pause_on_failed_route = %v, want 1", v)
		}
		stop()
	})
}

// TestPauseWhileBlindWritesNothing: a backend that cannot say what it
// holds, a restart while Prometheus answers 503, then `hermes ctl pause`.
// The core's split is the placeholder (free at 100 %); the pause must not
// write it. It holds, writes nothing and says so in its event and in
// hermes_service_actuation_held{reason="unknown_split"}. Once data comes
// back with free failing, the pause still writes nothing, and
// hermes_pause_on_failed_route names free: the backend may send it
// traffic, and Hermes cannot see whether it does. (It used to write
// free=100 and stay silent until data came back.)
func TestPauseWhileBlindWritesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, reg, flaky, fp, stop := startBlindFlaky(t, 0.5)
		res, err := r.Submit(t.Context(), evaluator.Command{Kind: evaluator.CommandPause, Service: "chat", Reason: "incident", By: "bob"})
		if err != nil || !res.Applied {
			t.Fatalf("pause: %v (applied %v)", err, res.Applied)
		}
		var said bool
		for _, e := range res.Events {
			said = said || slices.ContainsFunc(e.Reasons, func(s string) bool { return strings.Contains(s, "the split is unknown") })
		}
		if !said {
			t.Errorf("the pause's events do not say the split is unknown: %+v", res.Events)
		}
		if o := status(r).Services[0].Override; o == nil || o.Frozen != nil {
			t.Errorf("override %+v, want a pause that froze nothing", o)
		}
		tickFor(time.Minute)
		if last := flaky.lastSplits(); len(last) != 0 {
			t.Errorf("a pause while blind wrote %v", last)
		}
		held := func() float64 {
			return heldMetric(t, reg, HeldUnknownSplit)
		}
		if v := held(); v != 1 {
			t.Errorf("hermes_service_actuation_held{reason=unknown_split} = %v, want 1", v)
		}
		fp.setFail(nil) // data again: free fails
		tickFor(5 * time.Minute)
		if lvl := status(r).Services[0].Routes[0]; lvl.Name != "free" || lvl.Level != "failover" {
			t.Fatalf("setup: %+v, want free failed over", lvl)
		}
		if last := flaky.lastSplits(); len(last) != 0 {
			t.Errorf("the pause of an unknown split wrote %v once data came back", last)
		}
		if v := held(); v != 1 {
			t.Errorf("hermes_service_actuation_held{reason=unknown_split} = %v with data, want 1 while paused", v)
		}
		if v := testenv.Metric(t, reg, "hermes_pause_on_failed_route", map[string]string{"service": "chat", "route": "free"}); v != 1 {
			t.Errorf("hermes_pause_on_failed_route{route=free} = %v, want 1: the held split may send free traffic", v)
		}
		// Clearing the pause hands the service back to the core, which
		// writes it once decided on data: free drained.
		if _, err := r.Submit(t.Context(), evaluator.Command{Kind: evaluator.CommandClear, Service: "chat", Reason: "over"}); err != nil {
			t.Fatal(err)
		}
		tickFor(30 * time.Second)
		if last := flaky.lastSplits(); last["chat"].Weights["free"] != 0 || last["chat"].Weights["paid-standard"] != 100 {
			t.Errorf("after the clear the backend got %v, want free drained", last["chat"].Weights)
		}
		stop()
	})
}

// TestPinWhileBlindThenClearHolds: a restart that learned no split, a
// pin while Prometheus answers 503 (written: a person chose the route),
// then data with free failing and the pin cleared at its first tick. The core's
// levels are still the restart's placeholders, so the service goes back
// to being held until the core has decided it on data: free=100 is never
// written. (The pin used to end the hold for good, and the clear wrote
// the placeholder.)
func TestPinWhileBlindThenClearHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, reg, flaky, fp, stop := startBlindFlaky(t, 0.15)
		if _, err := r.Submit(t.Context(), evaluator.Command{Kind: evaluator.CommandPin, Service: "chat", Route: "paid-standard", Reason: "incident"}); err != nil {
			t.Fatal(err)
		}
		tickFor(15 * time.Second)
		last := func() map[string]int { return flaky.lastSplits()["chat"].Weights }
		if w := last(); w["paid-standard"] != 100 {
			t.Fatalf("setup: the pin wrote %v", w)
		}
		fp.setFail(nil)
		// The clear applies at the first tick with data.
		if _, err := r.Submit(t.Context(), evaluator.Command{Kind: evaluator.CommandClear, Service: "chat", Reason: "over"}); err != nil {
			t.Fatal(err)
		}
		for range 20 { // 5 minutes of ticks
			if w := last(); w["free"] == 100 {
				t.Fatalf("after the pin was cleared the backend got %v while free was failing", w)
			}
			tickFor(15 * time.Second)
		}
		// free is shed and keeps 50 % in the plan: not settled (actuation's withheld.go),
		// so the backend keeps the pin's split, and says so.
		if w := last(); w["paid-standard"] != 100 {
			t.Errorf("in the end the backend holds %v, want the pin's paid-standard=100, held", w)
		}
		if v := heldMetric(t, reg, HeldUnknownSplit); v != 1 {
			t.Errorf("hermes_service_actuation_held{reason=unknown_split} = %v, want 1", v)
		}
		stop()
	})
}

// TestHeldServiceStaysInTheStateFile: while every query fails, chat is
// withheld (no_data) and the state file is written again (here: it was
// lost). The file used to be written without chat, which a consumer
// reads as "no split"; it keeps chat's last known split and says it is
// held, and the mark goes once data is back.
func TestHeldServiceStaysInTheStateFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		_, _, split, stop := startTestRunner(t, fp)
		tickFor(20 * time.Second)
		if w := weights(t, split); w["free"] != 100 {
			t.Fatalf("setup: split %v", w)
		}
		fp.setFail(errors.New("503 Service Unavailable"))
		if err := os.Remove(split); err != nil {
			t.Fatal(err)
		}
		tickFor(30 * time.Second)
		doc := readStateFile(t, split)
		if w := doc.Services["chat"].Weights; w["free"] != 100 || w["paid-standard"] != 0 {
			t.Errorf("the state file written while chat is held has chat %v, want its last known split free=100", w)
		}
		if why := doc.Held["chat"]; why != HeldNoData {
			t.Errorf("the state file's held = %v, want chat: %s", doc.Held, HeldNoData)
		}
		fp.setFail(nil)
		tickFor(15 * time.Second)
		if doc := readStateFile(t, split); len(doc.Held) != 0 || doc.Services["chat"].Weights["free"] != 100 {
			t.Errorf("with data again the file holds %+v, want chat free=100 and nothing held", doc)
		}
		stop()
	})
}

// stateFile is the file actuator's document as a consumer reads it.
type stateFile struct {
	Services actuators.Splits  `json:"services"`
	Held     map[string]string `json:"held"`
}

func readStateFile(t *testing.T, path string) stateFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc stateFile
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// startWithOverrides starts a runner over a flakyActuator (a backend that
// cannot say what it holds after a restart) whose overrides file holds
// overrides (JSON, by service).
func startWithOverrides(t *testing.T, fp *fakeProm, overrides string) (*Runner, *prometheus.Registry, *flakyActuator, func()) {
	t.Helper()
	flaky := &flakyActuator{}
	r, reg := newFlakyRunner(t, fp, flaky)
	if err := os.WriteFile(r.opts.OverridesPath, []byte(`{"overrides":`+overrides+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return r, reg, flaky, start(t, r)
}

// startBlindFlaky starts a runner over a flakyActuator (a backend that
// cannot say what it holds after a restart) while Prometheus answers 503,
// free's soft failures at soft once it answers again, and lets 20 s of
// ticks pass.
func startBlindFlaky(t *testing.T, soft float64) (*Runner, *prometheus.Registry, *flakyActuator, *fakeProm, func()) {
	t.Helper()
	fp := &fakeProm{soft: soft, fail: errors.New("503 Service Unavailable")}
	flaky := &flakyActuator{}
	r, reg := newFlakyRunner(t, fp, flaky)
	stop := start(t, r)
	tickFor(20 * time.Second)
	return r, reg, flaky, fp, stop
}

// heldMetric is hermes_service_actuation_held{service="chat",reason} in reg.
func heldMetric(t *testing.T, reg *prometheus.Registry, reason string) float64 {
	t.Helper()
	return testenv.Metric(t, reg, "hermes_service_actuation_held", map[string]string{"service": "chat", "reason": reason})
}
