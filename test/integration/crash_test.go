package integration

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// hangingReload writes a wrapper of nginx for the actuator's nginx_binary:
// it runs nginx, except for a reload while the file hang exists and the
// include file holds free at 0 %: then it creates reached and waits,
// without reloading, until hang is gone. A Hermes killed in that wait
// dies with the failover written to the include file and not loaded.
func hangingReload(t *testing.T, n *Nginx, hang, reached string) string {
	t.Helper()
	include := filepath.Join(n.Dir, "hermes", Service+".conf")
	script := fmt.Sprintf(`#!/bin/sh
case " $* " in
*" -s reload "*)
	if [ -e %[1]q ] && grep -q '"free":0[,}]' %[2]q; then
		: > %[3]q
		while [ -e %[1]q ]; do sleep 0.05; done
		exit 1
	fi;;
esac
exec %[4]q "$@"
`, hang, include, reached, n.bin)
	path := filepath.Join(t.TempDir(), "nginx-hanging-reload")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// A failed test must not leave the wrapper waiting.
	t.Cleanup(func() { _ = os.Remove(hang) })
	return path
}

// startWithActuators starts the gateway (sending everything to free,
// whatever Hermes decides), a Prometheus scraping it and Hermes, and
// Hermes itself on the test policy with the given actuators
// (ConfigOptions.Actuators).
func startWithActuators(t *testing.T, actuators string) (*Hermes, *Gateway, *testenv.TSDB) {
	t.Helper()
	h := NewHermes(t, t.TempDir())
	gw := StartGateway(t, filepath.Join(t.TempDir(), "no-split.json"))
	db := StartTSDB(t, testenv.Prometheus, map[string]string{"gateway": gw.Target, "hermes": h.Addr})
	h.WriteConfig(t, HermesConfig(ConfigOptions{PrometheusURL: db.URL, Actuators: actuators}))
	h.Start(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- hermes log:\n%s", testenv.Tail(h.LogPath(), 40))
		}
	})
	return h, gw, db
}

// waitFailoverScraped waits until db (named engine in messages) holds
// Hermes's series of free failed over: level 3 and no traffic.
func waitFailoverScraped(t *testing.T, db *testenv.TSDB, engine string) {
	t.Helper()
	testenv.EventuallyDetail(t, 30*time.Second, engine+" holding free's failover state", func() (bool, string) {
		lv, err1 := db.QueryValue(`hermes_route_level{job="hermes",route="free"}`)
		tp, err2 := db.QueryValue(`hermes_route_traffic_ratio{job="hermes",service="chat",route="free"}`)
		return err1 == nil && err2 == nil && lv == 3 && tp == 0, fmt.Sprintf("level %v (%v), traffic %v (%v)", lv, err1, tp, err2)
	})
}

// TestCrashMidActuationReconciles kills `hermes run` (SIGKILL) in the
// middle of an nginx actuation: the failover of free is in the include
// file, nginx has not reloaded it and still serves free. Started again
// with the same flags, Hermes must read what nginx serves (state_listen),
// not the file that already says what it wants, and reload nginx to the
// failover without anyone touching nginx or Hermes.
func TestCrashMidActuationReconciles(t *testing.T) {
	testenv.Binary(t, testenv.Prometheus.Binary)
	n := NewNginx(t)
	hang := filepath.Join(t.TempDir(), "hang")
	reached := filepath.Join(t.TempDir(), "reached")
	n.Binary = hangingReload(t, n, hang, reached)
	writeInitial(t, n)
	n.Start(t)

	// A reload that outlasts command_timeout is rolled back (the file goes
	// back to what nginx serves): the test kills Hermes well before.
	acts := strings.Replace(n.Actuator(), "command_timeout: 5s", "command_timeout: 2m", 1)
	if acts == n.Actuator() {
		t.Fatalf("Nginx.Actuator no longer sets command_timeout: 5s: update this test\n%s", acts)
	}
	h, gw, db := startWithActuators(t, acts)
	served := func() (Served, string) {
		s, err := n.Served()
		if err != nil {
			return s, err.Error()
		}
		return s, s.String()
	}
	testenv.EventuallyDetail(t, time.Minute, "nginx serves free=100", func() (bool, string) {
		s, detail := served()
		return maps.Equal(s.Weights, split(100, 0, 0)), detail
	})

	if err := os.WriteFile(hang, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	gw.SetMode("free", Degraded)
	testenv.EventuallyDetail(t, 2*time.Minute, "Hermes reloading nginx to the failover (the wrapper holds the reload)", func() (bool, string) {
		_, err := os.Stat(reached)
		return err == nil, fmt.Sprint(h.Status(t).Route("free"))
	})
	// Prometheus holds the failover Hermes decided (telemetry runs before
	// the actuation), so the restart restores it: it wants what the file
	// already says, and only reading nginx tells it nginx does not run it.
	waitFailoverScraped(t, db, "Prometheus")
	// The reload held above may have been cut meanwhile by the tick's
	// deadline (an interval: the file is then put back to what nginx
	// serves), and the next tick holds the next one: kill Hermes while
	// one is held, as soon as it is.
	if err := os.Remove(reached); err != nil {
		t.Fatal(err)
	}
	testenv.EventuallyDetail(t, time.Minute, "Hermes holding a reload to the failover again", func() (bool, string) {
		_, err := os.Stat(reached)
		return err == nil, fmt.Sprint(h.Status(t).Route("free"))
	})
	h.Process().Kill()
	killed := time.Now()
	if err := os.Remove(hang); err != nil {
		t.Fatal(err)
	}
	include, err := os.ReadFile(filepath.Join(n.Dir, "hermes", Service+".conf"))
	if err != nil {
		t.Fatal(err)
	}
	before, detail := served()
	if !strings.Contains(string(include), `"free":0,`) || before.Weights["free"] == 0 {
		t.Fatalf("setup: not killed mid-actuation: nginx serves %s, the include file holds:\n%s", detail, include)
	}
	t.Logf("hermes killed with SIGKILL after writing the failover, before nginx reloaded it; nginx serves %s", detail)

	h.Start(t)
	testenv.EventuallyDetail(t, time.Minute, "nginx serves the failover after the restart", func() (bool, string) {
		s, detail := served()
		return s.Weights["free"] == 0 && s.Weights["paid-standard"] == 100, detail
	})
	t.Logf("converged %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	if log, err := os.ReadFile(h.LogPath()); err != nil || !strings.Contains(string(log), "nginx does not serve what its include files hold: reloading") {
		t.Errorf("the restarted Hermes's log does not say it found nginx serving other than the files (%v)", err)
	}
	testenv.EventuallyDetail(t, 30*time.Second, "requests through nginx leave free", func() (bool, string) {
		route, err := n.Route()
		if err != nil {
			return false, err.Error()
		}
		return route == "paid-standard", route
	})
}

// holdingReceiver is a webhook receiver that acknowledges every POST,
// except, while hold is set, one moving free to 0 %: that one it
// answers never (until the sender goes away), as a receiver that took
// the state and crashed before its reply, or whose reply was lost.
type holdingReceiver struct {
	URL string

	mu    sync.Mutex
	hold  bool
	held  bool
	acked []receivedSplit
}

// receivedSplit is one acknowledged POST.
type receivedSplit struct {
	at      time.Time
	weights map[string]int
}

func startHoldingReceiver(t *testing.T) *holdingReceiver {
	rc := &holdingReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			Weights map[string]int `json:"weights"`
		}
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		if rc.hold && p.Weights["free"] == 0 {
			rc.held = true
			rc.mu.Unlock()
			<-r.Context().Done()
			return
		}
		rc.acked = append(rc.acked, receivedSplit{time.Now(), p.Weights})
		rc.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

func (rc *holdingReceiver) setHold(v bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.hold = v
}

func (rc *holdingReceiver) holding() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.held
}

// since is every split acknowledged after from, oldest first.
func (rc *holdingReceiver) since(from time.Time) []map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []map[string]int
	for _, a := range rc.acked {
		if a.at.After(from) {
			out = append(out, a.weights)
		}
	}
	return out
}

// TestCrashWithAWebhookUnansweredReconciles kills `hermes run` (SIGKILL)
// while the webhook POST of free's failover waits for its reply: nobody
// knows whether the receiver took it. Started again, Hermes cannot read a
// webhook back; it must neither assume the receiver holds the failover
// nor send the restart's placeholder (free at 100 %), and must send the
// failover again, on its own, once its core decided on data.
func TestCrashWithAWebhookUnansweredReconciles(t *testing.T) {
	testenv.Binary(t, testenv.Prometheus.Binary)
	rc := startHoldingReceiver(t)
	h, gw, db := startWithActuators(t, fmt.Sprintf("  - type: webhook\n    url: %s\n    secret: s3cret\n    timeout: 2m\n    max_retries: 0\n", rc.URL))
	start := time.Now().Add(-time.Minute)
	testenv.EventuallyDetail(t, time.Minute, "the receiver acknowledging free=100", func() (bool, string) {
		got := rc.since(start)
		return len(got) > 0 && maps.Equal(got[len(got)-1], split(100, 0, 0)), fmt.Sprint(got)
	})

	rc.setHold(true)
	gw.SetMode("free", Degraded)
	testenv.EventuallyDetail(t, 2*time.Minute, "the failover's POST waiting for its reply", func() (bool, string) {
		return rc.holding(), fmt.Sprint(h.Status(t).Route("free"))
	})
	waitFailoverScraped(t, db, "Prometheus")
	h.Process().Kill()
	killed := time.Now()
	rc.setHold(false)
	t.Logf("hermes killed with SIGKILL while the failover's POST had no reply; last acknowledged: %v", rc.since(start)[len(rc.since(start))-1])

	h.Start(t)
	testenv.EventuallyDetail(t, time.Minute, "the receiver acknowledging the failover after the restart", func() (bool, string) {
		got := rc.since(killed)
		return len(got) > 0 && got[len(got)-1]["free"] == 0 && got[len(got)-1]["paid-standard"] == 100, fmt.Sprint(got)
	})
	t.Logf("converged %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	for _, w := range rc.since(killed) {
		if w["free"] != 0 {
			t.Errorf("after the restart the receiver was sent %v while free was failing; sent: %v", w, rc.since(killed))
		}
	}
}
