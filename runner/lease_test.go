package runner

import (
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/internal/testenv"
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
		held := map[string]string{"service": "chat", "reason": withheldReplicasDisagree}
		if v := testenv.Metric(t, regB, "hermes_service_actuation_held", held); v != 1 {
			t.Errorf("replica b: hermes_service_actuation_held{reason=%q} = %v, want 1", withheldReplicasDisagree, v)
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
