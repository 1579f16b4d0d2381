package runner

import (
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/traffic"
)

// replica is a runner named name whose file actuator writes the shared
// split file, querying fp.
func replica(t *testing.T, fp *fakeProm, shared, name string) (*Runner, *prometheus.Registry) {
	t.Helper()
	dir := t.TempDir()
	reg := prometheus.NewRegistry()
	r, _ := newFileRunner(t, fp, dir, Options{ConfigPath: writeConfig(t, dir, shared), Registerer: reg, Replica: name})
	return r, reg
}

// TestReplicasThatDisagreeDoNotFlap: two replicas write one file, one
// sees free healthy and the other sees it failing. The first to write
// holds the lease: the other does not overwrite its split, holds, and
// says so (replicas_disagree); the split does not move on any tick. Once
// the holder stops, its stamp ages, and after four intervals the other
// replica writes its own split.
func TestReplicasThatDisagreeDoNotFlap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := filepath.Join(t.TempDir(), "split.json")
		a, _ := replica(t, &fakeProm{soft: 0.02}, shared, "a")
		stopA := start(t, a)
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if w := weights(t, shared); w["free"] != 100 {
			t.Fatalf("setup: split %v, want free=100", w)
		}
		b, regB := replica(t, &fakeProm{soft: 0.5}, shared, "b")
		stopB := start(t, b)
		for i := range 20 { // 5 minutes: b fails free over many times over
			time.Sleep(15 * time.Second)
			synctest.Wait()
			if w := weights(t, shared); w["free"] != 100 {
				t.Fatalf("tick %d: the split moved to %v while replica a holds it at free=100", i, w)
			}
		}
		held := map[string]string{"service": "chat", "reason": holdReplicasDisagree}
		if v := testenv.Metric(t, regB, "hermes_service_actuation_held", held); v != 1 {
			t.Errorf("replica b: hermes_service_actuation_held{reason=%q} = %v, want 1", holdReplicasDisagree, v)
		}
		stopA()
		time.Sleep(75 * time.Second) // a's stamp is older than four intervals
		synctest.Wait()
		if w := weights(t, shared); w["free"] != 0 {
			t.Errorf("a's lease expired but b did not write its split: %v", w)
		}
		if v := testenv.Metric(t, regB, "hermes_service_actuation_held", held); v == 1 {
			t.Errorf("replica b still held once a's lease expired: %v", v)
		}
		stopB()
	})
}

// TestLeaseRenewsHalfway: the holder keeps its own stamp on a split that
// stands still until the stamp is renewIntervals old, then renews it; a
// new split is stamped at once; another replica's fresh stamp is kept
// and, on another split, reported as a disagreement.
func TestLeaseRenewsHalfway(t *testing.T) {
	const interval = 15 * time.Second
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	split := func(free int, by string, at time.Time) traffic.Split {
		return traffic.Split{Weights: map[string]int{"free": free, "paid": 100 - free}, Writer: traffic.Stamp{Replica: by, Tick: at}}
	}
	run := func(want traffic.Split, cur traffic.Split, now time.Time) (traffic.Split, []string) {
		out := actuators.Splits{"chat": want}
		d := lease("a", out, actuators.Splits{"chat": cur}, nil, map[string]bool{}, now, interval)
		return out["chat"], d
	}
	held := split(100, "a", t0)
	for _, c := range []struct {
		name  string
		want  traffic.Split
		cur   traffic.Split
		now   time.Time
		stamp traffic.Stamp
		dis   int
	}{
		{"own stamp one interval old, same split: kept", split(100, "", time.Time{}), held, t0.Add(interval), held.Writer, 0},
		{"own stamp two intervals old: renewed", split(100, "", time.Time{}), held, t0.Add(renewIntervals * interval), traffic.Stamp{Replica: "a", Tick: t0.Add(renewIntervals * interval)}, 0},
		{"own stamp, new split: stamped now", split(0, "", time.Time{}), held, t0.Add(interval), traffic.Stamp{Replica: "a", Tick: t0.Add(interval)}, 0},
		{"the other replica's fresh stamp, other split: kept, disagreeing", split(0, "", time.Time{}), split(100, "b", t0), t0.Add(interval), traffic.Stamp{Replica: "b", Tick: t0}, 1},
	} {
		got, dis := run(c.want, c.cur, c.now)
		if !got.Writer.Equal(c.stamp) || len(dis) != c.dis {
			t.Errorf("%s: stamp %+v, disagree %v; want %+v, %d", c.name, got.Writer, dis, c.stamp, c.dis)
		}
	}
}
