// Package alerting sends Hermes's alerts to Alertmanager and restores them
// after a restart, the way Prometheus does.
//
// Stage (stage.go) is the alerting stage of the live loop. Every tick it
// hands the evaluator's State.Alerts to the Sender's Notify, which
// turns the alerts that are due into Alertmanager's v2 model (Payload) and
// queues them for every configured Alertmanager; Run delivers each queue in
// the background, retrying with backoff. Firing alerts are re-sent every
// resend delay with endsAt = now + ValidFor, resolved ones are sent with
// endsAt = their resolution time and re-sent for ResolvedRetention.
// Alertmanager deduplicates by label set, so every member of an HA cluster,
// and every Hermes replica, can send everything.
//
// What identifies an alert and how long it lives belong to the core
// (evaluator.Alert); its export for restore to package runner/persist.
package alerting

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/tick"
)

// Default backoff between two attempts to deliver one batch.
const (
	defaultMinBackoff = 500 * time.Millisecond
	defaultMaxBackoff = 10 * time.Second
)

// Sender sends alerts to the configured Alertmanagers. Its methods are safe
// for concurrent use.
type Sender struct {
	log     *slog.Logger
	metrics *metrics
	// minBackoff and maxBackoff bound the wait between delivery attempts.
	minBackoff, maxBackoff time.Duration

	mu       sync.Mutex
	cfg      config.AlertingConfig
	validFor time.Duration
	ams      []*alertmanager
	lastSent map[string]time.Time // alert key → last time it was queued
	// started are the startsAt sent for alerts of an incident that is
	// not over, by alert key (see NotifyIncidents).
	started  map[string]started
	running  bool
	stopped  bool
	stopping chan struct{} // closed by Stop
	stopOnce sync.Once
	done     chan struct{} // closed when Run returns
	workers  sync.WaitGroup
}

// New builds a Sender for cfg, whose alerts are evaluated every interval,
// and registers its metrics on reg. With no Alertmanager configured it only
// exports the alerts' state. It starts nothing: call Run.
func New(cfg config.AlertingConfig, interval time.Duration, reg prometheus.Registerer, logger *slog.Logger) (*Sender, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("registering alerting metrics: %w", err)
	}
	s := &Sender{
		log:        logger,
		metrics:    m,
		minBackoff: defaultMinBackoff,
		maxBackoff: defaultMaxBackoff,
		lastSent:   map[string]time.Time{},
		started:    map[string]started{},
		stopping:   make(chan struct{}),
		done:       make(chan struct{}),
	}
	if err := s.ApplyConfig(cfg, interval); err != nil {
		return nil, err
	}
	return s, nil
}

// ApplyConfig switches to a new alerting configuration (after a reload).
// Alertmanagers whose configuration is unchanged keep their queue; removed
// ones deliver what they hold and stop. On error nothing changes.
func (s *Sender) ApplyConfig(cfg config.AlertingConfig, interval time.Duration) error {
	cfg = withDefaults(cfg, interval)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := map[string]*alertmanager{}
	for _, am := range s.ams {
		old[am.name] = am
	}
	var next []*alertmanager
	for _, c := range cfg.Alertmanagers {
		am, err := newAlertmanager(c, cfg.QueueCapacity)
		if err != nil {
			return err
		}
		if o := old[am.name]; o != nil && reflect.DeepEqual(o.cfg, c) && o.q.capacity == am.q.capacity {
			am = o
		}
		next = append(next, am)
	}
	kept := map[*alertmanager]bool{}
	for _, am := range next {
		kept[am] = true
		if old[am.name] != am {
			// A new Alertmanager gets every alert at the next Notify,
			// not after the resend delay.
			clear(s.lastSent)
		}
		if !am.started && s.running && !s.stopped {
			s.start(am)
		}
		s.metrics.init(am.name)
	}
	for _, am := range s.ams {
		if !kept[am] {
			am.stop()
			if !slices.ContainsFunc(next, func(n *alertmanager) bool { return n.name == am.name }) {
				s.metrics.forget(am.name)
			}
		}
	}
	s.ams = next
	s.cfg = cfg
	s.validFor = ValidFor(interval, cfg.ResendDelay)
	s.metrics.queueCapacity.Set(float64(cfg.QueueCapacity))
	return nil
}

// withDefaults fills in what config.Parse would, for configurations built
// in code.
func withDefaults(cfg config.AlertingConfig, interval time.Duration) config.AlertingConfig {
	if cfg.ExternalURL == "" {
		cfg.ExternalURL = config.DefaultExternalURL
	}
	if cfg.ResendDelay == 0 {
		cfg.ResendDelay = interval
	}
	if cfg.QueueCapacity <= 0 {
		cfg.QueueCapacity = config.DefaultQueueCapacity
	}
	cfg.Alertmanagers = slices.Clone(cfg.Alertmanagers)
	for i := range cfg.Alertmanagers {
		if cfg.Alertmanagers[i].Timeout <= 0 {
			cfg.Alertmanagers[i].Timeout = config.DefaultAlertmanagerTimeout
		}
	}
	return cfg
}

// Notify takes the evaluator's alerts after a tick at now. It queues for every
// Alertmanager the alerts that are due: firing or resolved alerts not sent
// since they fired or resolved, or not within the resend delay. It never
// blocks on the network. Give it the whole State.Alerts every tick.
func (s *Sender) Notify(ctx context.Context, alerts map[string]*evaluator.Alert, now time.Time) {
	s.NotifyIncidents(ctx, alerts, nil, now)
}

// IncidentFunc says since when the route of a route-scope alert has been
// in its incident (evaluator.Move.Incident: since it left normal); zero
// when it is at normal.
type IncidentFunc func(route string) time.Time

// IncidentsOf is the IncidentFunc of a state's routes.
func IncidentsOf(routes map[string]*evaluator.RouteState) IncidentFunc {
	return func(route string) time.Time {
		if rs := routes[route]; rs != nil && rs.Move != nil {
			return rs.Move.Incident
		}
		return time.Time{}
	}
}

// started is the startsAt an alert was first sent with in an incident.
type started struct {
	route    string
	incident time.Time // the route's incident
	startsAt time.Time // what Alertmanager and the on-call person saw
	firedAt  time.Time // the FiredAt of the alert's last firing
}

// NotifyIncidents is Notify for alerts of routes in incidents: an alert
// that fires again while its route has not been back at normal since it
// first fired (a failback stage stepped back to no traffic, and
// HermesRouteFailedOver fires again) keeps the startsAt it was first sent
// with, so Alertmanager, and the on-call person, see one incident, and
// its later resolve carries the startsAt of the page they got. What it
// keeps survives a restart through IncidentStarts and RestoreIncidents.
func (s *Sender) NotifyIncidents(_ context.Context, alerts map[string]*evaluator.Alert, incident IncidentFunc, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var batch []item
	for _, k := range slices.Sorted(maps.Keys(alerts)) {
		as := alerts[k]
		pa := postable(as, now, s.validFor, s.cfg.ExternalURL)
		if pa == nil || !s.due(k, as, now) {
			continue
		}
		annotate(pa, as)
		if at := s.startOf(k, as, incident); !at.IsZero() {
			pa.StartsAt = strfmt.DateTime(at.UTC())
		}
		s.lastSent[k] = now
		batch = append(batch, item{key: fingerprint(pa.Labels), alert: pa})
	}
	for k := range s.lastSent {
		if _, ok := alerts[k]; !ok {
			delete(s.lastSent, k)
		}
	}
	for k, st := range s.started {
		if _, ok := alerts[k]; !ok && (incident == nil || !incident(st.route).Equal(st.incident)) {
			delete(s.started, k)
		}
	}
	if len(batch) == 0 {
		return
	}
	for _, am := range s.ams {
		if n := am.q.push(batch); n > 0 {
			s.metrics.dropped.WithLabelValues(am.name, DropQueueFull).Add(float64(n))
			s.log.Warn("alert queue full; dropped the oldest alerts", "alertmanager", am.name, "dropped", n)
		}
		s.metrics.queueLength.WithLabelValues(am.name).Set(float64(am.q.len()))
	}
}

// startOf is the startsAt to send for alert as under key k, zero for its
// own (FiredAt), and remembers it; s.mu is held.
func (s *Sender) startOf(k string, as *evaluator.Alert, incident IncidentFunc) time.Time {
	if as.FiredAt.IsZero() {
		return time.Time{}
	}
	var inc time.Time
	if incident != nil && as.Route != "" {
		inc = incident(as.Route)
	}
	st, ok := s.started[k]
	switch {
	case ok && as.FiredAt.Equal(st.firedAt):
		// The same firing (its resends, its resolve).
		return st.startsAt
	case ok && !inc.IsZero() && inc.Equal(st.incident) && !st.startsAt.After(as.FiredAt):
		// Fired again in the same incident: the startsAt it began with.
		st.firedAt = as.FiredAt
		s.started[k] = st
		return st.startsAt
	case inc.IsZero():
		delete(s.started, k)
		return time.Time{}
	}
	s.started[k] = started{route: as.Route, incident: inc, startsAt: as.FiredAt, firedAt: as.FiredAt}
	return time.Time{}
}

// IncidentStarts are the startsAt kept for alerts of incidents not over,
// ordered by key; nil when none.
func (s *Sender) IncidentStarts() []tick.IncidentStart {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []tick.IncidentStart
	for _, k := range slices.Sorted(maps.Keys(s.started)) {
		st := s.started[k]
		out = append(out, tick.IncidentStart{Key: k, Route: st.route, Incident: st.incident.UTC(), StartsAt: st.startsAt.UTC()})
	}
	return out
}

// RestoreIncidents takes the startsAt saved by a process before a restart
// (IncidentStarts), before the first Notify. After a crash it reconciles,
// never assumes: it keeps only those whose route the restored state still
// has in the same incident, and the next Notify keeps one only for an
// alert that fired no earlier than it (startOf). It returns how many it
// kept.
func (s *Sender) RestoreIncidents(saved []tick.IncidentStart, incident IncidentFunc) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, is := range saved {
		if is.Key == "" || is.StartsAt.IsZero() || incident == nil {
			continue
		}
		if inc := incident(is.Route); inc.IsZero() || !inc.Equal(is.Incident) {
			continue // the route was back at normal, or in another incident
		}
		s.started[is.Key] = started{route: is.Route, incident: is.Incident, startsAt: is.StartsAt}
		n++
	}
	return n
}

// due says whether the alert under key must be sent at now, as Prometheus's
// needsSending: it fired or resolved since it was last sent, or the resend
// delay has passed.
func (s *Sender) due(key string, as *evaluator.Alert, now time.Time) bool {
	last, ok := s.lastSent[key]
	switch {
	case !ok:
		return true
	case as.ResolvedAt.After(last), as.FiredAt.After(last):
		return true
	}
	return !now.Before(last.Add(s.cfg.ResendDelay))
}

// Run delivers the queued alerts until ctx is done or Stop is called; then
// every Alertmanager gets one last attempt at what it still holds (bounded
// by its timeout) and Run returns. Call it once.
func (s *Sender) Run(ctx context.Context) {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return
	}
	s.running = true
	for _, am := range s.ams {
		s.start(am)
	}
	s.mu.Unlock()

	select {
	case <-ctx.Done():
	case <-s.stopping:
	}
	s.mu.Lock()
	s.stopped = true
	for _, am := range s.ams {
		am.stop()
	}
	s.mu.Unlock()
	s.workers.Wait()
	close(s.done)
}

// Stop makes Run deliver what is queued and return, and waits for it.
func (s *Sender) Stop() {
	s.stopOnce.Do(func() { close(s.stopping) })
	s.mu.Lock()
	running := s.running
	s.mu.Unlock()
	if running {
		<-s.done
	}
}

// start runs am's worker; s.mu is held.
func (s *Sender) start(am *alertmanager) {
	am.started = true
	s.workers.Add(1)
	go func() {
		defer s.workers.Done()
		s.work(am)
	}()
}
