package runner

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/actuators/file"
	"github.com/hermes-failover/hermes/actuators/webhook"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
)

// hookReceiver is a real HTTP receiver of the webhook actuator that
// verifies the signature and keeps every payload it took.
type hookReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []webhook.Payload
}

const hookSecret = "hold-test-secret"

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	h := &hookReceiver{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !webhook.Verify(body, r.Header.Get(webhook.HeaderSignature), []byte(hookSecret)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		p, err := decodePayload(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.got = append(h.got, p)
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) payloads() []webhook.Payload {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]webhook.Payload(nil), h.got...)
}

// newHookRunner is a runner on 1 s ticks (real time: the webhook's
// receiver is a real server) with a webhook actuator posting to h and a
// file actuator writing dir/split.json, over fp.
func newHookRunner(t *testing.T, fp *fakeProm, h *hookReceiver, dir string) (*Runner, *prometheus.Registry, string) {
	t.Helper()
	split := filepath.Join(dir, "split.json")
	cfg := string(rules.DefaultYAML)
	for old, repl := range map[string]string{
		"evaluation_interval: 15s": "evaluation_interval: 1s",
		"query_timeout: 10s":       "query_timeout: 500ms",
		"actuators: []": "actuators:\n  - name: hook\n    type: webhook\n    url: " + h.srv.URL + "\n    secret: " + hookSecret +
			"\n    max_retries: 0\n  - name: state\n    type: file\n    path: " + split,
	} {
		if !strings.Contains(cfg, old) {
			t.Fatalf("the shipped policy has no %q", old)
		}
		cfg = strings.Replace(cfg, old, repl, 1)
	}
	cfgPath := filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	kinds := &actuators.Registry{}
	file.Register(kinds)
	webhook.Register(kinds)
	reg := prometheus.NewRegistry()
	r, _ := newFileRunner(t, fp, dir, Options{ConfigPath: cfgPath, Registerer: reg, Actuators: kinds})
	return r, reg, split
}

// waitTicks waits, up to 30 s, until r has run n more ticks.
func waitTicks(t *testing.T, reg prometheus.Gatherer, n int) {
	t.Helper()
	ticks := func() float64 { return testenv.Metric(t, reg, "hermes_ticks_total", nil) }
	want := max(ticks(), 0) + float64(n)
	deadline := time.Now().Add(30 * time.Second)
	for ticks() < want {
		if time.Now().After(deadline) {
			t.Fatalf("%v ticks after 30 s, want %v", ticks(), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPauseWhileBlindAcrossARestart is issue 31's item 2 with a real
// webhook receiver and the file actuator: a restart while Prometheus
// answers 503 learns no split (the receiver cannot be read back, the
// state file holds none), and `hermes ctl pause chat` used to write the
// placeholder, free=100, to both. The pause holds and writes nothing;
// it is saved as a pause without a frozen split, so after a second
// restart it still holds, and still writes nothing once data is back.
func TestPauseWhileBlindAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	h := newHookReceiver(t)
	fp := &fakeProm{soft: 0.02, fail: errors.New("503 Service Unavailable")}
	chatInFile := func(split string) bool {
		a, err := file.New(actuatortest.Settings(file.Kind, map[string]any{"path": split}))
		if err != nil {
			t.Fatal(err)
		}
		cur, err := a.Current(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		_, ok := cur["chat"]
		return ok
	}
	check := func(phase string, reg prometheus.Gatherer, split string) {
		t.Helper()
		if got := h.payloads(); len(got) != 0 {
			t.Errorf("%s: the receiver got %+v", phase, got)
		}
		if chatInFile(split) {
			t.Errorf("%s: the state file holds a split for chat", phase)
		}
		if doc := readStateFile(t, split); doc.Held["chat"] != HeldUnknownSplit {
			t.Errorf("%s: the state file's held = %v, want chat: %s (item 13)", phase, doc.Held, HeldUnknownSplit)
		}
		if v := testenv.Metric(t, reg, "hermes_service_actuation_held", map[string]string{"service": "chat", "reason": HeldUnknownSplit}); v != 1 {
			t.Errorf("%s: hermes_service_actuation_held{reason=unknown_split} = %v, want 1", phase, v)
		}
	}

	r, reg, split := newHookRunner(t, fp, h, dir)
	stop := start(t, r)
	waitTicks(t, reg, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := r.Submit(ctx, evaluator.Command{Kind: evaluator.CommandPause, Service: "chat", Reason: "incident", By: "bob"}); err != nil {
		t.Fatalf("pause: %v", err)
	}
	// Submit may return before its tick on a loaded machine (the tick
	// more than an interval late): wait for the pause itself.
	for deadline := time.Now().Add(30 * time.Second); status(r).Services[0].Override == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the pause was not applied within 30 s")
		}
	}
	waitTicks(t, reg, 3)
	check("paused while blind", reg, split)
	stop()

	r, reg, split = newHookRunner(t, fp, h, dir)
	stop = start(t, r)
	waitTicks(t, reg, 2)
	if o := status(r).Services[0].Override; o == nil || o.Kind != "pause" || o.Frozen != nil {
		t.Fatalf("after the restart the override is %+v, want the pause without a frozen split", o)
	}
	check("restarted blind", reg, split)
	fp.mu.Lock()
	fp.fail = nil
	fp.mu.Unlock()
	waitTicks(t, reg, 3)
	if !r.Ready() {
		t.Fatal("not ready with data")
	}
	check("data back", reg, split)
	stop()
}

func decodePayload(body []byte) (webhook.Payload, error) {
	var p webhook.Payload
	err := json.Unmarshal(body, &p)
	return p, err
}
