package alerting

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
)

func newSender(t *testing.T, reg *prometheus.Registry, capacity int, ams ...*testenv.FakeAlertmanager) *Sender {
	t.Helper()
	cfg := config.AlertingConfig{ExternalURL: "http://hermes.test:9797", QueueCapacity: capacity}
	for _, am := range ams {
		cfg.Alertmanagers = append(cfg.Alertmanagers, config.AlertmanagerConfig{URL: am.URL, Timeout: 5 * time.Second})
	}
	s, err := New(cfg, 15*time.Second, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.minBackoff, s.maxBackoff = 5*time.Millisecond, 20*time.Millisecond
	return s
}

// wait is how long the tests wait for the sender.
const wait = 10 * time.Second

func one(key string, as *evaluator.Alert) map[string]*evaluator.Alert {
	return map[string]*evaluator.Alert{key: as}
}

func counter(c *prometheus.CounterVec, labels ...string) float64 {
	return testutil.ToFloat64(c.WithLabelValues(labels...))
}

func TestResendAndResolve(t *testing.T) {
	am := testenv.NewFakeAlertmanager(t)
	s := newSender(t, prometheus.NewRegistry(), 100, am)
	testenv.Go(t, s.Run)
	const key = "HermesRouteFailedOver/chat/free"
	as := firing("HermesRouteFailedOver", "A", "free", t0, t0)
	tick := 15 * time.Second

	s.Notify(context.Background(), one(key, as), t0)
	testenv.Eventually(t, wait, "the first send", func() bool { return len(am.Received()) == 1 })
	s.Notify(context.Background(), one(key, as), t0.Add(tick)) // resend delay = interval: every tick
	testenv.Eventually(t, wait, "two sends", func() bool { return len(am.Received()) == 2 })
	if got := time.Time(am.Received()[1].EndsAt); got != t0.Add(tick+4*tick) {
		t.Errorf("re-sent endsAt = %s, want now + 4 × interval", got)
	}

	res := *as
	res.State, res.ResolvedAt = evaluator.StateInactive, t0.Add(2*tick)
	s.Notify(context.Background(), one(key, &res), t0.Add(2*tick))
	testenv.Eventually(t, wait, "the resolve", func() bool { return len(am.Received()) == 3 })
	s.Notify(context.Background(), one(key, &res), t0.Add(3*tick))
	testenv.Eventually(t, wait, "the resolve re-sent", func() bool { return len(am.Received()) == 4 })
	s.Notify(context.Background(), one(key, &res), t0.Add(2*tick+evaluator.ResolvedRetention)) // too old: not sent
	testenv.Eventually(t, wait, "resolved sends", func() bool { return len(am.Received()) == 4 })
	for _, a := range am.Received()[2:] {
		if time.Time(a.EndsAt) != res.ResolvedAt {
			t.Errorf("resolved endsAt = %s, want the resolution time %s", a.EndsAt, res.ResolvedAt)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(am.Received()); n != 4 {
		t.Errorf("%d alerts received, want 4 (no resolve sent past the retention)", n)
	}
	if got := counter(s.metrics.sent, amName(am)); got != 4 {
		t.Errorf("hermes_alerts_sent_total = %g, want 4", got)
	}
}

// amName is how the sender calls f in its metrics.
func amName(f *testenv.FakeAlertmanager) string { return f.URL + alertsPath }

func TestResendDelay(t *testing.T) {
	am := testenv.NewFakeAlertmanager(t)
	cfg := config.AlertingConfig{Alertmanagers: []config.AlertmanagerConfig{{URL: am.URL}}, ResendDelay: time.Minute}
	s, err := New(cfg, 15*time.Second, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, s.Run)
	const key = "HermesRouteFailedOver/chat/free"
	as := firing("HermesRouteFailedOver", "A", "free", t0, t0)
	for i, want := range []int{1, 1, 1, 1, 2} { // ticks at 0, 15, 30, 45 s and 1 m: sent at 0 and 1 m
		s.Notify(context.Background(), one(key, as), t0.Add(time.Duration(i)*15*time.Second))
		testenv.Eventually(t, wait, "the queue to empty", func() bool { return queueOf(s, am).len() == 0 })
		time.Sleep(20 * time.Millisecond)
		if n := len(am.Received()); n != want {
			t.Fatalf("tick %d: %d sends, want %d", i, n, want)
		}
	}
	res := *as
	res.State, res.ResolvedAt = evaluator.StateInactive, t0.Add(75*time.Second)
	s.Notify(context.Background(), one(key, &res), res.ResolvedAt) // a resolve does not wait
	testenv.Eventually(t, wait, "three sends", func() bool { return len(am.Received()) == 3 })
	got := am.Received()
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
	good1, down, good2 := testenv.NewFakeAlertmanager(t), testenv.NewFakeAlertmanager(t, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503), testenv.NewFakeAlertmanager(t)
	s := newSender(t, prometheus.NewRegistry(), 100, good1, down, good2)
	testenv.Go(t, s.Run)
	s.Notify(context.Background(), one("k", firing("HermesRouteFailedOver", "A", "free", t0, t0)), t0)
	testenv.Eventually(t, wait, "both healthy Alertmanagers", func() bool {
		return good1.Names() == "HermesRouteFailedOver" && good2.Names() == "HermesRouteFailedOver"
	})
	testenv.Eventually(t, wait, "the failing one to recover", func() bool { return down.Names() == "HermesRouteFailedOver" })
	if got := counter(s.metrics.errors, amName(down)); got != 10 {
		t.Errorf("errors for the failing Alertmanager = %g, want 10", got)
	}
	if got := counter(s.metrics.errors, amName(good1)); got != 0 {
		t.Errorf("errors for a healthy Alertmanager = %g", got)
	}
}

func TestRejectedIsDropped(t *testing.T) {
	am := testenv.NewFakeAlertmanager(t, 400)
	s := newSender(t, prometheus.NewRegistry(), 100, am)
	testenv.Go(t, s.Run)
	s.Notify(context.Background(), one("k", firing("HermesRouteFailedOver", "A", "free", t0, t0)), t0)
	testenv.Eventually(t, wait, "the drop", func() bool { return counter(s.metrics.dropped, amName(am), DropRejected) == 1 })
	time.Sleep(50 * time.Millisecond)
	if req, _ := am.Count(); req != 1 {
		t.Errorf("%d requests, want 1: a 4xx is not retried", req)
	}
	if got := counter(s.metrics.errors, amName(am)); got != 1 {
		t.Errorf("errors = %g, want 1", got)
	}
}

// While an Alertmanager is away, newer batches take the undelivered alerts
// along: nothing is lost, only the latest version of each is sent.
func TestRetryUntilNextBatch(t *testing.T) {
	am := testenv.NewFakeAlertmanager(t, 503, 503, 503, 503, 503, 503)
	s := newSender(t, prometheus.NewRegistry(), 100, am)
	s.cfg.ResendDelay = time.Hour // the second batch carries only what is new
	testenv.Go(t, s.Run)
	x := firing("HermesRouteFailedOver", "A", "free", t0, t0)
	s.Notify(context.Background(), map[string]*evaluator.Alert{"x": x}, t0)
	testenv.Eventually(t, wait, "a failed attempt", func() bool { req, _ := am.Count(); return req >= 2 })
	y := firing("HermesRouteScoreDegraded", "B", "free", t0, t0)
	s.Notify(context.Background(), map[string]*evaluator.Alert{"x": x, "y": y}, t0.Add(15*time.Second))
	testenv.Eventually(t, wait, "delivery", func() bool { return len(am.Received()) == 2 })
	if got := am.Names(); got != "HermesRouteFailedOver HermesRouteScoreDegraded" {
		t.Errorf("received %s", got)
	}
	for _, r := range []string{DropQueueFull, DropRejected, DropShutdown} {
		if got := counter(s.metrics.dropped, amName(am), r); got != 0 {
			t.Errorf("dropped{reason=%s} = %g, want 0", r, got)
		}
	}
}

func TestQueueOverflowDropsOldest(t *testing.T) {
	am := testenv.NewFakeAlertmanager(t)
	release := am.Hold()
	s := newSender(t, prometheus.NewRegistry(), 3, am)
	testenv.Go(t, s.Run)
	alert := func(i int) map[string]*evaluator.Alert {
		return one(fmt.Sprint(i), firing(fmt.Sprintf("HermesAlert%d", i), "B", "free", t0, t0))
	}
	s.Notify(context.Background(), alert(0), t0) // taken by the worker, stuck in flight
	testenv.Eventually(t, wait, "the first request in flight", func() bool { return queueOf(s, am).len() == 0 })
	for i := 1; i <= 5; i++ {
		s.Notify(context.Background(), alert(i), t0)
	}
	if got := counter(s.metrics.dropped, amName(am), DropQueueFull); got != 2 {
		t.Errorf("dropped{queue_full} = %g, want 2", got)
	}
	if got := testutil.ToFloat64(s.metrics.queueLength.WithLabelValues(amName(am))); got != 3 {
		t.Errorf("queue length = %g, want 3", got)
	}
	release()
	testenv.Eventually(t, wait, "the rest", func() bool { return len(am.Received()) == 4 })
	if got := am.Names(); got != "HermesAlert0 HermesAlert3 HermesAlert4 HermesAlert5" {
		t.Errorf("received %s, want the first and the three newest", got)
	}
}

// queueOf returns the sender's queue for f.
func queueOf(s *Sender, f *testenv.FakeAlertmanager) *queue {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, am := range s.ams {
		if am.name == amName(f) {
			return am.q
		}
	}
	return nil
}

func TestStopDrains(t *testing.T) {
	am, down := testenv.NewFakeAlertmanager(t), testenv.NewFakeAlertmanager(t, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503)
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
	if got := am.Names(); got != "HermesRouteFailedOver" {
		t.Errorf("received %q, want the queued alert delivered on Stop", got)
	}
	if got := counter(s.metrics.dropped, amName(down), DropShutdown); got != 1 {
		t.Errorf("dropped{shutdown} = %g, want 1", got)
	}
}

func TestNoAlertmanagers(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, err := New(config.AlertingConfig{}, 15*time.Second, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, s.Run)
	// Nothing to send to: Notify neither blocks nor queues.
	s.Notify(context.Background(), one("HermesRouteFailedOver/chat/free", firing("HermesRouteFailedOver", "A", "free", t0, t0)), t0)
	if len(s.ams) != 0 {
		t.Errorf("%d Alertmanagers, want none", len(s.ams))
	}
}

func TestApplyConfigKeepsUnchangedAlertmanagers(t *testing.T) {
	a, b := testenv.NewFakeAlertmanager(t), testenv.NewFakeAlertmanager(t)
	reg := prometheus.NewRegistry()
	s := newSender(t, reg, 100, a)
	testenv.Go(t, s.Run)
	first := s.ams[0]
	cfg := s.cfg
	cfg.Alertmanagers = append(cfg.Alertmanagers, config.AlertmanagerConfig{URL: b.URL, Timeout: 5 * time.Second})
	if err := s.ApplyConfig(cfg, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	if s.ams[0] != first || len(s.ams) != 2 {
		t.Fatalf("unchanged Alertmanager rebuilt or new one missing: %v", s.ams)
	}
	s.Notify(context.Background(), one("k", firing("HermesRouteFailedOver", "A", "free", t0, t0)), t0)
	testenv.Eventually(t, wait, "both", func() bool { return a.Names() != "" && b.Names() != "" })
	// A second Sender on the same registry shares the metrics.
	if _, err := New(cfg, 15*time.Second, reg, nil); err != nil {
		t.Errorf("New on a used registry: %v", err)
	}
}
