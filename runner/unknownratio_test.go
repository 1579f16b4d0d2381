package runner

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner/persist"
)

// TestUnknownSplitExportsNoRatio: after a restart that could not learn
// the split (nothing in Prometheus, a backend that cannot say), with
// free failing, the series must not show the core's placeholder (free at
// 100 %, which Grafana would chart and the next restart would read back
// as the split): no hermes_route_traffic_ratio of the service while its
// split is unknown, the decided split once the core moved it on data.
func TestUnknownSplitExportsNoRatio(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.5}
		flaky := &flakyActuator{}
		r, reg := newFlakyRunner(t, fp, flaky)
		stop := start(t, r)
		ratio := func(route string) float64 {
			return testenv.Metric(t, reg, persist.MetricRouteTrafficRatio, map[string]string{"service": "chat", "route": route})
		}
		time.Sleep(15 * time.Second)
		synctest.Wait()
		if !r.View().Ticked {
			t.Fatal("no tick after one interval")
		}
		if v := ratio("free"); v != -1 {
			t.Errorf("hermes_route_traffic_ratio{route=free} = %v while the split is unknown, want no series", v)
		}
		for range 20 { // 5 minutes of ticks: the failover
			time.Sleep(15 * time.Second)
			synctest.Wait()
		}
		if !r.View().SplitUnknown("chat") {
			if free, paid := ratio("free"), ratio("paid-standard"); free != 0 || paid != 1 {
				t.Errorf("after the failover on data: ratio free=%v paid-standard=%v, want 0 and 1", free, paid)
			}
		} else {
			t.Error("the split is still unknown after 5 minutes of failing data")
		}
		stop()
	})
}
