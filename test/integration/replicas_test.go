package integration

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// replicaEnv is one replica of a pair: its own gateway replica (whose
// routes behave as the test says), its own Prometheus scraping it and the
// replica, and a `hermes run --replica name` writing the shared file.
type replicaEnv struct {
	gw     *Gateway
	db     *testenv.TSDB
	hermes *Hermes
}

// disagree labels the held services of a replica that defers to the
// other's lease.
var disagree = map[string]string{"service": Service, "reason": "replicas_disagree"}

// checkDeferred checks that replica b, which sees free failing, decided
// to fail it over yet holds (replicas_disagree) while a holds the lease
// and does not.
func checkDeferred(t *testing.T, a, b *replicaEnv) {
	t.Helper()
	if w := b.hermes.Status(t).Weights(); w["free"] != 0 {
		t.Errorf("replica b's own decision %v, want free failed over (else the test shows nothing)", w)
	}
	if v := b.hermes.Metric(t, "hermes_service_actuation_held", disagree); v != 1 {
		t.Errorf("replica b: held{reason=replicas_disagree} = %v, want 1", v)
	}
	if v := a.hermes.Metric(t, "hermes_service_actuation_held", disagree); v != 0 {
		t.Errorf("replica a, the lease holder: held{reason=replicas_disagree} = %v, want 0", v)
	}
}

func startReplica(t *testing.T, name, shared string, setup func(*Gateway)) *replicaEnv {
	t.Helper()
	return startReplicaOf(t, name, shared, setup, ConfigOptions{SplitPath: shared})
}

// startReplicaOf starts a replica whose gateway follows the split file
// follow (a missing file: all traffic on the primary route) and whose
// policy is o, querying the replica's own Prometheus.
func startReplicaOf(t *testing.T, name, follow string, setup func(*Gateway), o ConfigOptions) *replicaEnv {
	t.Helper()
	dir := t.TempDir()
	h := NewHermes(t, dir)
	h.SplitPath = follow
	h.SetReplica(name)
	e := &replicaEnv{hermes: h, gw: StartGateway(t, follow)}
	if setup != nil {
		setup(e.gw)
	}
	e.db = StartTSDB(t, testenv.Prometheus, map[string]string{"gateway": e.gw.Target, "hermes": h.Addr})
	o.PrometheusURL = e.db.URL
	h.WriteConfig(t, HermesConfig(o))
	h.Start(t)
	return e
}

// writer is the replica that stamped the test service in the split file.
func writer(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var doc struct {
		Services map[string]struct {
			Writer struct {
				Replica string `json:"replica"`
			} `json:"writer"`
		} `json:"services"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return ""
	}
	return doc.Services[Service].Writer.Replica
}

// TestReplicasThatSeeDifferentDataDoNotFlap runs two real `hermes run`
// replicas with the same configuration writing one file, each querying
// its own Prometheus: replica a sees every route healthy, replica b sees
// route free degraded. a writes first and holds the lease; b decides to
// fail free over, does not overwrite a's split, and says why
// (hermes_service_actuation_held{reason="replicas_disagree"}). The split
// must not move over many of b's ticks. Once a is stopped, its lease
// expires and b moves the traffic.
func TestReplicasThatSeeDifferentDataDoNotFlap(t *testing.T) {
	testenv.Binary(t, testenv.Prometheus.Binary)
	shared := filepath.Join(t.TempDir(), "split.json")
	rec := RecordSplit(t, shared)
	a := startReplica(t, "a", shared, nil)
	testenv.EventuallyDetail(t, time.Minute, "replica a writes free=100 with its stamp", func() (bool, string) {
		cur := rec.Current()
		return maps.Equal(cur, split(100, 0, 0)) && writer(t, shared) == "a", fmt.Sprint(cur, " by ", writer(t, shared))
	})
	b := startReplica(t, "b", shared, func(g *Gateway) { g.SetMode("free", Degraded) })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- split changes:\n%s", joinChanges(rec.Changes()))
			t.Logf("--- replica b's log:\n%s", testenv.Tail(b.hermes.LogPath(), 30))
		}
	})
	testenv.EventuallyDetail(t, 2*time.Minute, "replica b fails free over and holds", func() (bool, string) {
		st := b.hermes.Status(t)
		held := b.hermes.Metric(t, "hermes_service_actuation_held", disagree)
		return st.Route("free").Level == "failover" && held == 1, fmt.Sprintf("%s, held %v", st.Route("free"), held)
	})
	from := len(rec.Changes())
	first := b.hermes.Status(t).LastTick
	testenv.EventuallyDetail(t, time.Minute, "ten more ticks of replica b", func() (bool, string) {
		st := b.hermes.Status(t)
		return st.LastTick.Sub(first) >= 10*time.Second, fmt.Sprint(st.LastTick)
	})
	if changes := rec.Changes()[from:]; len(changes) != 0 {
		t.Errorf("the split moved while the replicas disagreed:\n%s", joinChanges(changes))
	}
	if cur, by := rec.Current(), writer(t, shared); !maps.Equal(cur, split(100, 0, 0)) || by != "a" {
		t.Errorf("split %v by %q, want a's free=100", cur, by)
	}
	checkDeferred(t, a, b)
	if code, _ := b.hermes.ReadyCode(t); code != 200 {
		t.Errorf("replica b /-/ready %d: it has data, it only defers", code)
	}

	a.hermes.Stop(t)
	testenv.EventuallyDetail(t, time.Minute, "replica b takes the lease once a's expired", func() (bool, string) {
		cur, by := rec.Current(), writer(t, shared)
		return cur["free"] == 0 && by == "b", fmt.Sprint(cur, " by ", by)
	})
	testenv.EventuallyDetail(t, time.Minute, "replica b no longer held", func() (bool, string) {
		v := b.hermes.Metric(t, "hermes_service_actuation_held", disagree)
		return v == 0, fmt.Sprint(v)
	})
}
