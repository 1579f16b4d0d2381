package persist

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/auditlog"
	"github.com/hermes-failover/hermes/runner/condlog"
	"github.com/hermes-failover/hermes/runner/tick"
	"github.com/hermes-failover/hermes/traffic"
)

// Stage is the persist stage of the live loop, the one owner of Hermes's
// restart memory: it restores the state at start-up (Load: Hermes's own
// series in Prometheus, else the actuators, plus the local state file),
// keeps the local state file (overrides, drills, active alerts) in step
// with the state, exports the saved series each tick (Exporter) and
// reads them back for the status page. It reads the tick's Result and
// its own state only. Tick and Restore are called by the loop's
// goroutine, one at a time; ReadSeries is safe for concurrent use.
type Stage struct {
	// path is the local state file; legacy, when set, its old name, read
	// when path does not exist yet.
	path, legacy string
	opts         RestoreOptions
	log          *slog.Logger
	audit        *auditlog.Log
	now          func() time.Time
	// unsaved: the last write of the local state file failed; logged
	// says so when it starts, changes and ends (condlog.Log). Only the
	// loop's goroutine (Tick) uses them, so they need no lock.
	unsaved bool
	logged  *condlog.Log
	// starts are the alerting stage's incident startsAt last saved.
	starts []tick.IncidentStart
	// saved exports the saved-state series (level, since, failback stage,
	// split, ...) that restore reads back from Prometheus.
	saved *Exporter
}

// StageOptions configure a Stage.
type StageOptions struct {
	// Path is the local state file; empty: DefaultLocalPath of
	// ConfigPath, or LegacyLocalPath, its old name, until the first save.
	Path, ConfigPath string
	Restore          RestoreOptions
	Logger           *slog.Logger
	// Audit receives the restore's record.
	Audit *auditlog.Log
	// Registerer takes the saved series (Exporter).
	Registerer prometheus.Registerer
	Now        func() time.Time
}

// NewStage builds the persist stage; it reads nothing until Restore.
func NewStage(o StageOptions) *Stage {
	s := &Stage{path: o.Path, opts: o.Restore, log: o.Logger, audit: o.Audit, now: o.Now, logged: condlog.New(o.Logger), saved: NewExporter(o.Registerer)}
	if s.path == "" {
		s.path, s.legacy = DefaultLocalPath(o.ConfigPath), LegacyLocalPath(o.ConfigPath)
	}
	return s
}

// Path is the local state file the stage keeps.
func (s *Stage) Path() string { return s.path }

// Tick saves the local state file when what it keeps changed; a failed
// write is retried every tick until it succeeds, so a restart does not
// lose an override, nor an alert that began since Prometheus last scraped
// Hermes.
//
// The alerting stage's incident startsAt (t.IncidentStarts) are those of
// the tick before, as the loop hands them: the startsAt of a first page
// is its FiredAt, saved with the alert in the same tick, so the lag loses
// nothing a restart needs.
func (s *Stage) Tick(_ context.Context, t *tick.Result) {
	s.saved.Export(t.Policy, t.Next, unknownAfter(t), t.Time)
	if !s.unsaved && !LocalChanged(t.Prev, t.Next) && slices.Equal(s.starts, t.IncidentStarts) {
		return
	}
	l := LocalOf(t.Next, t.Time)
	l.IncidentStarts = t.IncidentStarts
	err := SaveLocal(s.path, l)
	s.unsaved = err != nil
	failing := map[string]condlog.Line{}
	if err == nil {
		s.starts = t.IncidentStarts
	}
	if err != nil {
		failing[""] = condlog.Line{Level: slog.LevelError, Msg: "cannot save the state file; retrying every tick (the overrides hold meanwhile, but not across a restart)",
			Attrs: []any{"file", s.path, "err", err}, Same: promapi.ErrorDetail(err), End: "the state file is saved again", EndAttrs: []any{"file", s.path}}
	}
	s.logged.Observe(t.Time, "save", failing)
}

// readLocal reads the local state file, or the file of its old name
// while only that one exists.
func (s *Stage) readLocal() (Local, error) {
	path := s.path
	if s.legacy != "" {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			if _, err := os.Stat(s.legacy); err == nil {
				s.log.Info("reading the state file under its old name; the first tick saves it under the new one, and the old file can go", "old", s.legacy, "file", s.path)
				path = s.legacy
				s.unsaved = true
			}
		}
	}
	return ReadLocal(path)
}

// StartUp is what the start-up restore gives the loop: the state, and
// the services whose split no backend could say, which the actuation
// stage withholds until the core decides them on data.
type StartUp struct {
	State        evaluator.State
	UnknownSplit []string
	// IncidentStarts are the alerting stage's, as saved (that stage
	// reconciles them with the state).
	IncidentStarts []tick.IncidentStart
}

// Restore rebuilds the state before the first decision (Load):
// from Hermes's own series in Prometheus, else from what the actuators
// hold now; overrides, drills and the alerts saved on disk come from the
// local state file.
func (s *Stage) Restore(ctx context.Context, pol *evaluator.Policy, query promapi.QueryFunc, acts []actuators.Actuator) (StartUp, error) {
	now := s.now()
	local, err := s.readLocal()
	if err != nil {
		return StartUp{}, err
	}
	// A hung Prometheus must not keep Hermes from starting: every restore
	// query gets the query timeout, then Hermes falls back to the actuators.
	timeout := pol.Config.Global.QueryTimeout
	bounded := func(ctx context.Context, q string, t time.Time) (model.Vector, error) {
		qctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return query(qctx, q, t)
	}
	// FanOut.Current takes each service from the first actuator (by name)
	// that can say, and reports those that cannot.
	var known map[string]traffic.Split
	current := func(ctx context.Context) (map[string]traffic.Split, error) {
		var err error
		known, err = actuators.FanOut("actuators", acts...).Current(ctx)
		return known, err
	}
	got := Load(ctx, pol, bounded, current, local, now, s.opts)
	for _, err := range got.Problems {
		s.log.Warn("restore", "err", err)
	}
	// One line for the fleet: the audit record below has every route's
	// and service's line.
	s.log.Info("restored", "source", got.Source, "lines", len(got.Report), "first", strings.Join(condlog.FirstFew(got.Report), "; "))
	s.audit.Write(auditlog.Record{Time: now.UTC(), Type: "restore", Result: got.Source, Reason: strings.Join(got.Report, "; ")})
	out := StartUp{State: got.State, IncidentStarts: local.IncidentStarts}
	if got.Source == "actuators" && len(acts) > 0 {
		for _, svc := range pol.Config.Services {
			if _, ok := known[svc.Name]; !ok {
				out.UnknownSplit = append(out.UnknownSplit, svc.Name)
			}
		}
	}
	if n := len(out.UnknownSplit); n > 0 {
		s.log.Warn("no backend can say what it holds for these services and Prometheus has no saved state: writing nothing for them until the core decides them on data",
			"services", n, "first", condlog.FirstFew(out.UnknownSplit))
	}
	return out, nil
}

// historyTimeout bounds the range queries of one status page.
const historyTimeout = 3 * time.Second

// ReadSeries calls read with the Prometheus API of cfg and the range of
// the status page's history (from since, on the tick grid, to the last
// tick, lastTick), bounded by historyTimeout. An error (no tick yet, no
// API, or read's) means the caller draws this process's memory instead.
func (s *Stage) ReadSeries(ctx context.Context, cfg *config.Config, lastTick, since time.Time, read func(ctx context.Context, api v1.API, from, to time.Time, step time.Duration) error) error {
	if lastTick.IsZero() {
		return errors.New("no tick yet")
	}
	api, err := promapi.NewAPI(cfg.Prometheus)
	if err == nil {
		defer api.CloseIdleConnections() // one client per page: none left open
		qctx, cancel := context.WithTimeout(ctx, historyTimeout)
		defer cancel()
		step := cfg.Global.EvaluationInterval
		err = read(qctx, api, since.Truncate(step), lastTick, step)
	}
	if err != nil {
		s.log.Debug("history from Prometheus failed; drawing this process's", "err", err)
	}
	return err
}

// unknownAfter are the services whose split is unknown in t.Next: unknown
// when the tick began, and given by no override (a pin or a pause that
// froze its split) after it. The tick that decides one on data still
// counts it (the actuation stage decides that after the series are
// exported); the next tick exports its split.
func unknownAfter(t *tick.Result) map[string]bool {
	var out map[string]bool
	for svc := range t.UnknownSplits {
		if o, ok := t.Next.Overrides[svc]; ok && o.GivesSplit() {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[svc] = true
	}
	return out
}
