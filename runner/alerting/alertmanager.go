package alerting

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/alertmanager/api/v2/models"

	"github.com/hermes-failover/hermes/rules/config"
)

// alertsPath is where Alertmanager's v2 API takes alerts.
const alertsPath = "/api/v2/alerts"

// maxBatch is the most alerts one request carries, as in Prometheus.
const maxBatch = 256

// alertmanager is one Alertmanager: its queue and its HTTP client. A worker
// goroutine delivers the queue.
type alertmanager struct {
	cfg      config.AlertmanagerConfig
	endpoint string // where alerts are POSTed
	name     string // endpoint without credentials: logs and metric labels
	client   *http.Client
	q        *queue
	started  bool // a worker runs; guarded by Sender.mu
	// failing: the last attempt failed (for logging the change only);
	// used by the worker alone.
	failing  bool
	stopCh   chan struct{}
	stopOnce sync.Once
}

func newAlertmanager(c config.AlertmanagerConfig, capacity int) (*alertmanager, error) {
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil, fmt.Errorf("alertmanager %q: %w", config.RedactURL(c.URL), config.RedactError(err))
	}
	u = u.JoinPath(alertsPath)
	// Its http_headers and credentials never go to another host on a
	// redirect (config.NewClient).
	client, err := config.NewClient(c.HTTPClient, "hermes-alertmanager")
	if err != nil {
		return nil, fmt.Errorf("alertmanager %s: http_config: %w", u.Redacted(), err)
	}
	return &alertmanager{cfg: c, endpoint: u.String(), name: u.Redacted(), client: client,
		q: newQueue(capacity), stopCh: make(chan struct{})}, nil
}

func (am *alertmanager) stop() { am.stopOnce.Do(func() { close(am.stopCh) }) }

// work delivers am's queue until am is stopped, then drains it and
// closes its idle connections.
func (s *Sender) work(am *alertmanager) {
	for {
		select { // stopping wins over a queued wake-up
		case <-am.stopCh:
			s.drain(am)
			am.client.CloseIdleConnections() // a reload dropped it: no conn left behind
			return
		default:
		}
		select {
		case <-am.stopCh:
			s.drain(am)
			am.client.CloseIdleConnections() // a reload dropped it: no conn left behind
			return
		case <-am.q.wake:
			s.deliver(am, am.q.take())
			s.metrics.queueLength.WithLabelValues(am.name).Set(float64(am.q.len()))
		}
	}
}

// deliver sends batch to am. Connection errors, timeouts, 5xx and 429 are
// retried with exponential backoff until they succeed or a newer batch is
// queued: the alerts still undelivered then join it (only their latest
// version is sent), so nothing is lost while an Alertmanager is away, and
// nothing stale is retried for ever. Other 4xx answers drop their requests'
// alerts (retrying cannot help), counted.
func (s *Sender) deliver(am *alertmanager, batch []item) {
	backoff := s.minBackoff
	for len(batch) > 0 {
		select {
		case <-am.stopCh:
			s.requeue(am, batch)
			return
		default:
		}
		n := min(len(batch), maxBatch)
		err := am.post(context.Background(), batch[:n])
		if err == nil {
			s.metrics.sent.WithLabelValues(am.name).Add(float64(n))
			if am.failing {
				am.failing = false
				s.log.Info("Alertmanager reachable again; alerts delivered", "alertmanager", am.name)
			}
			batch, backoff = batch[n:], s.minBackoff
			continue
		}
		s.metrics.errors.WithLabelValues(am.name).Inc()
		var rej *rejectedError
		if errors.As(err, &rej) {
			s.metrics.dropped.WithLabelValues(am.name, DropRejected).Add(float64(n))
			s.log.Error("Alertmanager rejected alerts; dropped", "alertmanager", am.name, "alerts", n, "err", err)
			batch = batch[n:]
			continue
		}
		if !am.failing {
			am.failing = true
			s.log.Warn("cannot send alerts; retrying with backoff, newer alerts take the undelivered ones along",
				"alertmanager", am.name, "alerts", len(batch), "err", err)
		} else {
			s.log.Debug("cannot send alerts", "alertmanager", am.name, "alerts", len(batch), "err", err)
		}
		wait := time.NewTimer(jitter(backoff))
		select {
		case <-wait.C:
			backoff = min(2*backoff, s.maxBackoff)
		case <-am.q.wake: // a newer batch: send it with what is left of this one
			wait.Stop()
			s.requeue(am, batch)
			return
		case <-am.stopCh:
			wait.Stop()
			s.requeue(am, batch)
			return
		}
	}
}

func (s *Sender) requeue(am *alertmanager, batch []item) {
	if n := am.q.requeue(batch); n > 0 {
		s.metrics.dropped.WithLabelValues(am.name, DropQueueFull).Add(float64(n))
	}
	s.metrics.queueLength.WithLabelValues(am.name).Set(float64(am.q.len()))
}

// drain makes one attempt at what am still holds; what fails is dropped.
func (s *Sender) drain(am *alertmanager) {
	batch := am.q.take()
	for len(batch) > 0 {
		n := min(len(batch), maxBatch)
		if err := am.post(context.Background(), batch[:n]); err != nil {
			s.metrics.errors.WithLabelValues(am.name).Inc()
			s.metrics.dropped.WithLabelValues(am.name, DropShutdown).Add(float64(len(batch)))
			s.log.Warn("stopping: alerts not delivered", "alertmanager", am.name, "alerts", len(batch), "err", err)
			break
		}
		s.metrics.sent.WithLabelValues(am.name).Add(float64(n))
		batch = batch[n:]
	}
	s.metrics.queueLength.WithLabelValues(am.name).Set(0)
}

// rejectedError is a 4xx answer that retrying cannot fix.
type rejectedError struct{ err error }

func (e *rejectedError) Error() string { return e.err.Error() }
func (e *rejectedError) Unwrap() error { return e.err }

// post sends one request of alerts, bounded by the configured timeout.
func (am *alertmanager) post(ctx context.Context, batch []item) error {
	alerts := make(models.PostableAlerts, len(batch))
	for i, it := range batch {
		alerts[i] = it.alert
	}
	body, err := json.Marshal(alerts)
	if err != nil {
		return &rejectedError{fmt.Errorf("encoding alerts: %w", err)}
	}
	ctx, cancel := context.WithTimeout(ctx, am.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, am.endpoint, bytes.NewReader(body))
	if err != nil {
		return &rejectedError{err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Hermes")
	resp, err := am.client.Do(req)
	if err != nil {
		return err // *url.Error: the URL in it has no password
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	err = fmt.Errorf("%s answered %s: %s", am.name, resp.Status, strings.TrimSpace(string(msg)))
	if resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusRequestTimeout {
		return &rejectedError{err}
	}
	return err
}

// jitter spreads d by ±20 %, so that replicas do not retry in step.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}
