package integration

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// answer is the route that answered one request sent through nginx.
type answer struct {
	at    time.Time
	route string // "" when the request failed
	err   error
}

// answers sends a request through n every 20ms until the test ends and
// keeps what answered each, as the gateway's clients would see it.
type answers struct {
	mu  sync.Mutex
	all []answer
}

func recordAnswers(t *testing.T, n *Nginx) *answers {
	a := &answers{}
	testenv.Go(t, func(ctx context.Context) {
		for ctx.Err() == nil {
			route, err := n.Route()
			a.mu.Lock()
			a.all = append(a.all, answer{at: time.Now(), route: route, err: err})
			a.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	return a
}

// since counts, per route (or error), the answers after from.
func (a *answers) since(from time.Time) map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]int{}
	for _, x := range a.all {
		if !x.at.After(from) {
			continue
		}
		if x.err != nil {
			out["error: "+x.err.Error()]++
			continue
		}
		out[x.route]++
	}
	return out
}

// writeInitial runs `hermes check --write-initial` on a policy with the
// nginx actuator, so that nginx can start (its proxy_pass names
// hermes_chat): the documented first start.
func writeInitial(t *testing.T, n *Nginx) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hermes.yaml")
	cfg := HermesConfig(ConfigOptions{PrometheusURL: "http://127.0.0.1:1", Actuators: n.Actuator()})
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(testenv.HermesBinary(t), "check", "--config", path, "--write-initial", "--replica", "a").CombinedOutput()
	if err != nil {
		t.Fatalf("hermes check --write-initial: %v\n%s", err, out)
	}
}

// TestReplicasSharingOneNginxDoNotFlap runs two real `hermes run`
// replicas with the same configuration writing one real nginx (the nginx
// actuator with state_listen), each querying its own Prometheus: replica
// a sees every route healthy, replica b sees route free degraded. a
// writes first; its stamp is in what nginx serves, so b reads a's lease
// back from nginx, fails free over in its own view, and holds
// (hermes_service_actuation_held{reason="replicas_disagree"}). Requests
// sent through nginx all the while must all reach free, and nginx must
// go on serving a's split, renewed by a. Once a is stopped, its lease
// expires and b's split is what nginx serves.
func TestReplicasSharingOneNginxDoNotFlap(t *testing.T) {
	testenv.Binary(t, testenv.Prometheus.Binary)
	n := NewNginx(t)
	writeInitial(t, n)
	n.Start(t)
	served := func() (Served, string) {
		s, err := n.Served()
		if err != nil {
			return s, err.Error()
		}
		return s, s.String()
	}
	o := ConfigOptions{Actuators: n.Actuator()}
	nowhere := filepath.Join(t.TempDir(), "no-split.json") // the gateways send everything to free
	a := startReplicaOf(t, "a", nowhere, nil, o)
	testenv.EventuallyDetail(t, time.Minute, "nginx serves replica a's free=100 with its stamp", func() (bool, string) {
		s, detail := served()
		return maps.Equal(s.Weights, split(100, 0, 0)) && s.Writer.Replica == "a", detail
	})
	rec := recordAnswers(t, n)
	b := startReplicaOf(t, "b", nowhere, func(g *Gateway) { g.SetMode("free", Degraded) }, o)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- replica a's log:\n%s", testenv.Tail(a.hermes.LogPath(), 30))
			t.Logf("--- replica b's log:\n%s", testenv.Tail(b.hermes.LogPath(), 30))
		}
	})
	// Not waiting for b to hold: a b that wrote its split instead must
	// show below, in what nginx serves and routes.
	testenv.EventuallyDetail(t, 2*time.Minute, "replica b fails free over", func() (bool, string) {
		st := b.hermes.Status(t)
		return st.Route("free").Level == "failover", st.Route("free").String()
	})

	from := time.Now()
	first, _ := served()
	firstTick := b.hermes.Status(t).LastTick
	var seen []string // the splits nginx served, once per change, or why it did not answer
	testenv.EventuallyDetail(t, time.Minute, "ten more ticks of replica b, nginx polled all the while", func() (bool, string) {
		var now string
		if s, err := n.Served(); err != nil {
			now = err.Error()
		} else {
			now = fmt.Sprintf("%v by %s", s.Weights, s.Writer.Replica)
		}
		if len(seen) == 0 || seen[len(seen)-1] != now {
			seen = append(seen, now)
		}
		st := b.hermes.Status(t)
		return st.LastTick.Sub(firstTick) >= 10*time.Second, fmt.Sprint(st.LastTick)
	})
	got := rec.since(from)
	if len(got) != 1 || got["free"] == 0 {
		t.Errorf("requests through nginx while the replicas disagreed reached %v, want free only", got)
	}
	if len(seen) != 1 {
		t.Errorf("nginx served %d splits while the replicas disagreed, want a's alone:\n%s", len(seen), strings.Join(seen, "\n"))
	}
	last, detail := served()
	if !maps.Equal(last.Weights, split(100, 0, 0)) || last.Writer.Replica != "a" {
		t.Errorf("nginx serves %s, want a's free=100", detail)
	}
	if !last.Writer.Tick.After(first.Writer.Tick) {
		t.Errorf("a's stamp in nginx went from %s to %s: the holder did not renew its lease through nginx", first, last)
	}
	checkDeferred(t, a, b)

	a.hermes.Stop(t)
	stopped := time.Now()
	testenv.EventuallyDetail(t, time.Minute, "nginx serves replica b's split once a's lease expired", func() (bool, string) {
		s, detail := served()
		return s.Weights["free"] == 0 && s.Writer.Replica == "b", detail
	})
	testenv.EventuallyDetail(t, 30*time.Second, "requests through nginx leave free", func() (bool, string) {
		got := rec.since(time.Now().Add(-time.Second))
		return got["free"] == 0 && len(got) > 0, fmt.Sprint(got)
	})
	t.Logf("answers through nginx after a stopped: %v", rec.since(stopped))
	testenv.EventuallyDetail(t, time.Minute, "replica b no longer held", func() (bool, string) {
		v := b.hermes.Metric(t, "hermes_service_actuation_held", disagree)
		return v == 0, fmt.Sprint(v)
	})
}
