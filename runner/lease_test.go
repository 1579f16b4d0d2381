package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/actuators/file"
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
		held := map[string]string{"service": "chat", "reason": HeldReplicasDisagree}
		if v := testenv.Metric(t, regB, "hermes_service_actuation_held", held); v != 1 {
			t.Errorf("replica b: hermes_service_actuation_held{reason=%q} = %v, want 1", HeldReplicasDisagree, v)
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

// fastConfig writes the shipped policy at a one-second interval, as the
// issue's replicas ran, with a file actuator writing shared.
func fastConfig(t *testing.T, shared string) string {
	t.Helper()
	path := writeConfig(t, t.TempDir(), shared)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(string(b), "evaluation_interval: 15s\n  query_timeout: 10s", "evaluation_interval: 1s\n  query_timeout: 500ms", 1)
	if body == string(b) {
		t.Fatal("the shipped policy's global block changed: fastConfig cannot set a one-second interval")
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// stamped is chat's split in the shared file and who wrote it.
func stamped(t *testing.T, shared string) traffic.Split {
	t.Helper()
	a, err := file.New(actuatortest.Settings(file.Kind, map[string]any{"path": shared}))
	if err != nil {
		t.Fatal(err)
	}
	d, err := a.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d["chat"]
}

// TestLeaseHoldsUnderClockSkew: two replicas at one-second ticks write
// one file; the holder a sees every route healthy, b sees free failing
// and fails it over in its own view. b's wall clock is off by 2 s or 10 s,
// behind or ahead (injected through Options.Now). Whatever the skew, b
// never writes while a renews its lease: b holds (replicas_disagree), and
// every split the file holds is a's, as a decided it, also once a sees
// free fail too and moves the split. Once a stops,
// b takes the lease after four of its own intervals.
func TestLeaseHoldsUnderClockSkew(t *testing.T) {
	for _, skew := range []time.Duration{-2 * time.Second, -10 * time.Second, 10 * time.Second} {
		t.Run(skew.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				shared := filepath.Join(t.TempDir(), "split.json")
				cfg := fastConfig(t, shared)
				fpA := &fakeProm{soft: 0.02}
				a, _ := newFileRunner(t, fpA, t.TempDir(), Options{ConfigPath: cfg, Replica: "a"})
				stopA := start(t, a)
				time.Sleep(5 * time.Second)
				synctest.Wait()
				if got := stamped(t, shared); got.Weights["free"] != 100 || got.Writer.Replica != "a" {
					t.Fatalf("setup: the file holds %v by %q, want free=100 by a", got.Weights, got.Writer.Replica)
				}
				regB := prometheus.NewRegistry()
				b, _ := newFileRunner(t, &fakeProm{soft: 0.5}, t.TempDir(), Options{ConfigPath: cfg, Replica: "b", Registerer: regB,
					Now: func() time.Time { return time.Now().Add(skew) }})
				stopB := start(t, b)
				changes := 0
				last := stamped(t, shared)
				held := map[string]string{"service": "chat", "reason": HeldReplicasDisagree}
				for i := range 240 { // two minutes: b fails free over, then a does
					time.Sleep(500 * time.Millisecond)
					synctest.Wait()
					if i == 120 {
						if own := b.View().State.Services["chat"]; own.Weights["free"] != 0 {
							t.Fatalf("replica b's own decision %v, want free failed over (else the test shows nothing)", own.Weights)
						}
						if v := testenv.Metric(t, regB, "hermes_service_actuation_held", held); v != 1 {
							t.Errorf("replica b: hermes_service_actuation_held{reason=%q} = %v, want 1", HeldReplicasDisagree, v)
						}
						fpA.mu.Lock()
						fpA.soft = 0.5 // now a sees free failing too, and moves the split
						fpA.mu.Unlock()
					}
					got := stamped(t, shared)
					if got.Writer.Replica != "a" {
						t.Fatalf("%d ms after b started, b wrote %v over a's lease (b's clock off by %s)", 500*(i+1), got.Weights, skew)
					}
					want := a.View().State.Services["chat"]
					if !got.Equal(*want) {
						t.Fatalf("the file holds %v, a decided %v", got.Weights, want.Weights)
					}
					if !got.Equal(last) {
						changes++
					}
					last = got
				}
				if changes == 0 || last.Weights["free"] != 0 {
					t.Errorf("a saw free fail, but the file holds %v after %d changes: the holder's decisions do not reach it", last.Weights, changes)
				}
				stopA()
				time.Sleep(6 * time.Second) // four of b's intervals, and its next tick
				synctest.Wait()
				if got := stamped(t, shared); got.Writer.Replica != "b" {
					t.Errorf("a stopped 6 s ago, but the file holds %v by %q, want b's split", got.Weights, got.Writer.Replica)
				}
				stopB()
			})
		})
	}
}
