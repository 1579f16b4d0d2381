package runner

import (
	"errors"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/actuators/file"
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
		r, reg, _, split := newTestRunner(t, fp)
		stop := start(t, r)
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if w := weights(t, split); w["free"] != 100 || !r.Ready() {
			t.Fatalf("setup: split %v, ready %v", w, r.Ready())
		}
		fp.mu.Lock()
		fp.fail = errors.New("500 Internal Server Error")
		fp.mu.Unlock()
		// The other replica, which sees free failing, moves the traffic.
		other, err := file.New(actuatortest.Settings(file.Kind, map[string]any{"path": split}))
		if err != nil {
			t.Fatal(err)
		}
		failed := actuators.Splits{"chat": {Weights: map[string]int{"free": 0, "paid-standard": 100, "paid-premium": 0}}}
		if err := other.Apply(t.Context(), failed); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if w := weights(t, split); w["free"] != 0 || w["paid-standard"] != 100 {
			t.Errorf("a replica without data rewrote its stale split: %v", w)
		}
		if r.Ready() {
			t.Error("ready although the last ticks had no data")
		}
		if v := testenv.Metric(t, reg, "hermes_service_actuation_held", map[string]string{"service": "chat", "reason": withheldNoData}); v != 1 {
			t.Errorf("hermes_service_actuation_held{reason=%q} = %v, want 1", withheldNoData, v)
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
			time.Sleep(15 * time.Second)
			synctest.Wait()
			flaky.mu.Lock()
			if w, ok := flaky.last["chat"]; ok && w.Weights["free"] == 100 {
				sentPrimary = true
			}
			flaky.mu.Unlock()
		}
		if sentPrimary {
			t.Error("a restart that could not learn the split sent free=100 while free was failing")
		}
		flaky.mu.Lock()
		got := flaky.last["chat"].Weights
		flaky.mu.Unlock()
		if got["free"] != 0 || got["paid-standard"] != 100 {
			t.Errorf("after the failover the backend got %v, want free=0", got)
		}
		if v := testenv.Metric(t, reg, "hermes_service_actuation_held", map[string]string{"service": "chat", "reason": withheldUnknownSplit}); v == 1 {
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
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		flaky.mu.Lock()
		_, applied := flaky.last["chat"]
		flaky.mu.Unlock()
		if applied {
			t.Errorf("a pause whose split was lost applied %v", flaky.last["chat"])
		}
		if v := testenv.Metric(t, reg, "hermes_service_actuation_held", map[string]string{"service": "chat", "reason": withheldUnknownSplit}); v != 1 {
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
		time.Sleep(20 * time.Second)
		synctest.Wait()
		fp.mu.Lock()
		fp.soft = 0.5
		fp.mu.Unlock()
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		flaky.mu.Lock()
		got := flaky.last["chat"]
		flaky.mu.Unlock()
		if got.Weights["free"] != 100 || got.Levels["free"] != traffic.Failover {
			t.Fatalf("setup: backend got %+v, want the frozen free=100 with free failed over", got)
		}
		if v := testenv.Metric(t, reg, "hermes_pause_on_failed_route", map[string]string{"service": "chat", "route": "free"}); v != 1 {
			t.Errorf("hermes_pause_on_failed_route = %v, want 1", v)
		}
		stop()
	})
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
