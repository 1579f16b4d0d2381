package alerting

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/api/v2/models"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
)

// fakeAM is an Alertmanager's /api/v2/alerts: it records what it gets and
// answers with the status codes queued in fail (200 once they run out).
type fakeAM struct {
	*httptest.Server
	mu       sync.Mutex
	requests int
	posts    []models.PostableAlerts
	fail     []int
	block    chan struct{} // when set, requests wait for it to close
}

func newFakeAM(t *testing.T, fail ...int) *fakeAM {
	f := &fakeAM{fail: fail}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v2/alerts" || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "unexpected request "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		f.mu.Lock()
		block := f.block
		f.mu.Unlock()
		if block != nil {
			<-block
		}
		var alerts models.PostableAlerts
		if err := json.NewDecoder(r.Body).Decode(&alerts); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.requests++
		if len(f.fail) > 0 {
			code := f.fail[0]
			f.fail = f.fail[1:]
			http.Error(w, fmt.Sprintf("failing with %d", code), code)
			return
		}
		f.posts = append(f.posts, alerts)
	}))
	t.Cleanup(f.Close)
	return f
}

// received returns every alert received, in order, as "alertname@endsAt".
func (f *fakeAM) received() []*models.PostableAlert {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*models.PostableAlert
	for _, p := range f.posts {
		out = append(out, p...)
	}
	return out
}

func (f *fakeAM) names() string {
	var names []string
	for _, a := range f.received() {
		names = append(names, a.Labels["alertname"])
	}
	return strings.Join(names, " ")
}

func (f *fakeAM) count() (requests, posts int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, len(f.posts)
}

func newSender(t *testing.T, reg *prometheus.Registry, capacity int, ams ...*fakeAM) *Sender {
	t.Helper()
	cfg := rules.AlertingConfig{ExternalURL: "http://hermes.test:9797", QueueCapacity: capacity}
	for _, am := range ams {
		cfg.Alertmanagers = append(cfg.Alertmanagers, rules.AlertmanagerConfig{URL: am.URL, Timeout: 5 * time.Second})
	}
	s, err := New(cfg, 15*time.Second, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.minBackoff, s.maxBackoff = 5*time.Millisecond, 20*time.Millisecond
	return s
}

func run(t *testing.T, s *Sender) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func one(key string, as *evaluator.Alert) map[string]*evaluator.Alert {
	return map[string]*evaluator.Alert{key: as}
}

func counter(c *prometheus.CounterVec, labels ...string) float64 {
	return testutil.ToFloat64(c.WithLabelValues(labels...))
}

func TestResendAndResolve(t *testing.T) {
	am := newFakeAM(t)
	s := newSender(t, prometheus.NewRegistry(), 100, am)
	run(t, s)
	const key = "HermesRouteFailedOver/chat/free"
	as := firing("HermesRouteFailedOver", "A", "free", t0, t0)
	tick := 15 * time.Second

	s.Notify(context.Background(), one(key, as), t0)
	eventually(t, "the first send", func() bool { return len(am.received()) == 1 })
	s.Notify(context.Background(), one(key, as), t0.Add(tick)) // resend delay = interval: every tick
	eventually(t, "two sends", func() bool { return len(am.received()) == 2 })
	if got := time.Time(am.received()[1].EndsAt); got != t0.Add(tick+4*tick) {
		t.Errorf("re-sent endsAt = %s, want now + 4 × interval", got)
	}

	res := *as
	res.State, res.ResolvedAt = evaluator.StateInactive, t0.Add(2*tick)
	s.Notify(context.Background(), one(key, &res), t0.Add(2*tick))
	eventually(t, "the resolve", func() bool { return len(am.received()) == 3 })
	s.Notify(context.Background(), one(key, &res), t0.Add(3*tick))
	eventually(t, "the resolve re-sent", func() bool { return len(am.received()) == 4 })
	s.Notify(context.Background(), one(key, &res), t0.Add(2*tick+evaluator.ResolvedRetention)) // too old: not sent
	eventually(t, "resolved sends", func() bool { return len(am.received()) == 4 })
	for _, a := range am.received()[2:] {
		if time.Time(a.EndsAt) != res.ResolvedAt {
			t.Errorf("resolved endsAt = %s, want the resolution time %s", a.EndsAt, res.ResolvedAt)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(am.received()); n != 4 {
		t.Errorf("%d alerts received, want 4 (no resolve sent past the retention)", n)
	}
	if got := counter(s.metrics.sent, am.name()); got != 4 {
		t.Errorf("hermes_alerts_sent_total = %g, want 4", got)
	}
}

func (f *fakeAM) name() string { return f.URL + alertsPath }

func TestResendDelay(t *testing.T) {
	am := newFakeAM(t)
	cfg := rules.AlertingConfig{Alertmanagers: []rules.AlertmanagerConfig{{URL: am.URL}}, ResendDelay: time.Minute}
	s, err := New(cfg, 15*time.Second, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	run(t, s)
	const key = "HermesRouteFailedOver/chat/free"
	as := firing("HermesRouteFailedOver", "A", "free", t0, t0)
	for i, want := range []int{1, 1, 1, 1, 2} { // ticks at 0, 15, 30, 45 s and 1 m: sent at 0 and 1 m
		s.Notify(context.Background(), one(key, as), t0.Add(time.Duration(i)*15*time.Second))
		eventually(t, "the queue to empty", func() bool { return am.q(s).len() == 0 })
		time.Sleep(20 * time.Millisecond)
		if n := len(am.received()); n != want {
			t.Fatalf("tick %d: %d sends, want %d", i, n, want)
		}
	}
	res := *as
	res.State, res.ResolvedAt = evaluator.StateInactive, t0.Add(75*time.Second)
	s.Notify(context.Background(), one(key, &res), res.ResolvedAt) // a resolve does not wait
	eventually(t, "three sends", func() bool { return len(am.received()) == 3 })
	got := am.received()
	if e := time.Time(got[0].EndsAt); e != t0.Add(4*time.Minute) {
		t.Errorf("endsAt = %s, want now + 4 × resend delay", e)
	}
	if e := time.Time(got[1].EndsAt); e != t0.Add(5*time.Minute) {
		t.Errorf("second send endsAt = %s, want at 1m + 4m", e)
	}
	if e := time.Time(got[2].EndsAt); e != res.ResolvedAt {
		t.Errorf("resolve endsAt = %s", e)
	}
}

func TestFanOutToEveryAlertmanager(t *testing.T) {
	good1, down, good2 := newFakeAM(t), newFakeAM(t, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503), newFakeAM(t)
	s := newSender(t, prometheus.NewRegistry(), 100, good1, down, good2)
	run(t, s)
	s.Notify(context.Background(), one("k", firing("HermesRouteFailedOver", "A", "free", t0, t0)), t0)
	eventually(t, "both healthy Alertmanagers", func() bool {
		return good1.names() == "HermesRouteFailedOver" && good2.names() == "HermesRouteFailedOver"
	})
	eventually(t, "the failing one to recover", func() bool { return down.names() == "HermesRouteFailedOver" })
	if got := counter(s.metrics.errors, down.name()); got != 10 {
		t.Errorf("errors for the failing Alertmanager = %g, want 10", got)
	}
	if got := counter(s.metrics.errors, good1.name()); got != 0 {
		t.Errorf("errors for a healthy Alertmanager = %g", got)
	}
}

func TestRejectedIsDropped(t *testing.T) {
	am := newFakeAM(t, 400)
	s := newSender(t, prometheus.NewRegistry(), 100, am)
	run(t, s)
	s.Notify(context.Background(), one("k", firing("HermesRouteFailedOver", "A", "free", t0, t0)), t0)
	eventually(t, "the drop", func() bool { return counter(s.metrics.dropped, am.name(), DropRejected) == 1 })
	time.Sleep(50 * time.Millisecond)
	if req, _ := am.count(); req != 1 {
		t.Errorf("%d requests, want 1: a 4xx is not retried", req)
	}
	if got := counter(s.metrics.errors, am.name()); got != 1 {
		t.Errorf("errors = %g, want 1", got)
	}
}

// While an Alertmanager is away, newer batches take the undelivered alerts
// along: nothing is lost, only the latest version of each is sent.
func TestRetryUntilNextBatch(t *testing.T) {
	am := newFakeAM(t, 503, 503, 503, 503, 503, 503)
	s := newSender(t, prometheus.NewRegistry(), 100, am)
	s.cfg.ResendDelay = time.Hour // the second batch carries only what is new
	run(t, s)
	x := firing("HermesRouteFailedOver", "A", "free", t0, t0)
	s.Notify(context.Background(), map[string]*evaluator.Alert{"x": x}, t0)
	eventually(t, "a failed attempt", func() bool { req, _ := am.count(); return req >= 2 })
	y := firing("HermesRouteScoreDegraded", "B", "free", t0, t0)
	s.Notify(context.Background(), map[string]*evaluator.Alert{"x": x, "y": y}, t0.Add(15*time.Second))
	eventually(t, "delivery", func() bool { return len(am.received()) == 2 })
	if got := am.names(); got != "HermesRouteFailedOver HermesRouteScoreDegraded" {
		t.Errorf("received %s", got)
	}
	for _, r := range []string{DropQueueFull, DropRejected, DropShutdown} {
		if got := counter(s.metrics.dropped, am.name(), r); got != 0 {
			t.Errorf("dropped{reason=%s} = %g, want 0", r, got)
		}
	}
}

func TestQueueOverflowDropsOldest(t *testing.T) {
	am := newFakeAM(t)
	block := make(chan struct{})
	am.block = block
	s := newSender(t, prometheus.NewRegistry(), 3, am)
	run(t, s)
	alert := func(i int) map[string]*evaluator.Alert {
		return one(fmt.Sprint(i), firing(fmt.Sprintf("HermesAlert%d", i), "B", "free", t0, t0))
	}
	s.Notify(context.Background(), alert(0), t0) // taken by the worker, stuck in flight
	eventually(t, "the first request in flight", func() bool { return am.q(s).len() == 0 })
	for i := 1; i <= 5; i++ {
		s.Notify(context.Background(), alert(i), t0)
	}
	if got := counter(s.metrics.dropped, am.name(), DropQueueFull); got != 2 {
		t.Errorf("dropped{queue_full} = %g, want 2", got)
	}
	if got := testutil.ToFloat64(s.metrics.queueLength.WithLabelValues(am.name())); got != 3 {
		t.Errorf("queue length = %g, want 3", got)
	}
	am.mu.Lock()
	am.block = nil
	am.mu.Unlock()
	close(block)
	eventually(t, "the rest", func() bool { return len(am.received()) == 4 })
	if got := am.names(); got != "HermesAlert0 HermesAlert3 HermesAlert4 HermesAlert5" {
		t.Errorf("received %s, want the first and the three newest", got)
	}
}

func (f *fakeAM) q(s *Sender) *queue {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, am := range s.ams {
		if am.name == f.name() {
			return am.q
		}
	}
	return nil
}

func TestStopDrains(t *testing.T) {
	am, down := newFakeAM(t), newFakeAM(t, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503)
	s := newSender(t, prometheus.NewRegistry(), 100, am, down)
	s.Notify(context.Background(), one("k", firing("HermesRouteFailedOver", "A", "free", t0, t0)), t0)
	done := make(chan struct{})
	go func() { s.Run(context.Background()); close(done) }()
	s.Stop()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after Stop")
	}
	if got := am.names(); got != "HermesRouteFailedOver" {
		t.Errorf("received %q, want the queued alert delivered on Stop", got)
	}
	if got := counter(s.metrics.dropped, down.name(), DropShutdown); got != 1 {
		t.Errorf("dropped{shutdown} = %g, want 1", got)
	}
}

func TestNoAlertmanagers(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, err := New(rules.AlertingConfig{}, 15*time.Second, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	run(t, s)
	// Nothing to send to: Notify neither blocks nor queues.
	s.Notify(context.Background(), one("HermesRouteFailedOver/chat/free", firing("HermesRouteFailedOver", "A", "free", t0, t0)), t0)
	if len(s.ams) != 0 {
		t.Errorf("%d Alertmanagers, want none", len(s.ams))
	}
}

func TestApplyConfigKeepsUnchangedAlertmanagers(t *testing.T) {
	a, b := newFakeAM(t), newFakeAM(t)
	reg := prometheus.NewRegistry()
	s := newSender(t, reg, 100, a)
	run(t, s)
	first := s.ams[0]
	cfg := s.cfg
	cfg.Alertmanagers = append(cfg.Alertmanagers, rules.AlertmanagerConfig{URL: b.URL, Timeout: 5 * time.Second})
	if err := s.ApplyConfig(cfg, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	if s.ams[0] != first || len(s.ams) != 2 {
		t.Fatalf("unchanged Alertmanager rebuilt or new one missing: %v", s.ams)
	}
	s.Notify(context.Background(), one("k", firing("HermesRouteFailedOver", "A", "free", t0, t0)), t0)
	eventually(t, "both", func() bool { return a.names() != "" && b.names() != "" })
	// A second Sender on the same registry shares the metrics.
	if _, err := New(cfg, 15*time.Second, reg, nil); err != nil {
		t.Errorf("New on a used registry: %v", err)
	}
}
