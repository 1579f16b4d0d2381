// Package file is the `type: file` actuator: it keeps the desired state of
// its services in a JSON file that a gateway (or a sidecar) watches.
//
//	{
//	  "services": {
//	    "chat": {"weights": {"free": 95, "paid": 5}, "retries_enabled": true, ...,
//	             "writer": {"replica": "hermes-a", "tick": "2025-01-02T03:04:05Z"}}
//	  },
//	  "updated_at": "2025-01-02T03:04:05Z"
//	}
//
// A service the runner withholds this tick (it writes nothing for it: no
// data, a split it does not know) keeps the split the file held, or the
// last one Hermes saw it hold, and is named under "held" with the reason
// (Hold), so a consumer never reads a held service as "no split":
//
//	{"services": {...}, "held": {"chat": "no_data"}, "updated_at": ...}
//
// The file is replaced atomically (temporary file in the same directory,
// fsync, rename, fsync of the directory), and only when the traffic split
// or a flag changes, so readers never see a torn file and a watcher's
// mtime only moves on real changes. With two replicas (run --replica) the
// writer's stamp of each service is part of the state: the replica that
// holds the lease renews it, so the file is rewritten every tick. The
// replica that defers writes back the holder's split and stamp as it read
// them, possibly a moment before the holder's write of this tick:
// keepNewer makes sure such a relayed, older stamp never replaces the
// holder's newer one, nor its split.
package file

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hermes-failover/hermes/internal/atomicfile"

	"github.com/hermes-failover/hermes/actuators"
)

// Kind is the `type:` of this actuator.
const Kind = "file"

// Actuator writes the desired state to a file.
type Actuator struct {
	actuators.Named
	cfg    Config
	logger *slog.Logger
	now    func() time.Time

	mu sync.Mutex // serialises Apply; guards held and unreadable
	// held are the services the next Apply writes as held, with why
	// (Hold).
	held map[string]string
	// unreadable is the condition of a state file that does not parse,
	// logged when it starts, changes and ends.
	unreadable unreadable
}

// remindEvery is how often a state file that stays unreadable is logged
// again, as the runner's condition log reminds of a lasting condition.
const remindEvery = 10 * time.Minute

// unreadable logs a state file that cannot be read once per condition
// rather than at every Apply (a sidecar that keeps writing junk, a
// write-only mode): one line when it starts, one when its error changes,
// a reminder every remindEvery, and one when the file reads again.
// Hand-rolled like the runner's conditionLog, which this package cannot
// import; the Actuator's mutex guards it.
type unreadable struct {
	err         string // the error logged; "" while the file reads
	since, told time.Time
	ticks       int
}

// observe logs what changed in the condition at now: err is the read
// error (nil when the file reads or does not exist).
func (u *unreadable) observe(log *slog.Logger, path string, now time.Time, err error) {
	switch {
	case err == nil && u.err == "":
		return
	case err == nil:
		log.Info("ended: state file unreadable", "path", path, "err", u.err, "lasted", now.Sub(u.since), "ticks", u.ticks)
		*u = unreadable{}
		return
	}
	u.ticks++
	switch {
	case u.err == "":
		log.Warn("state file unreadable, rewriting it", "path", path, "err", err)
		u.since, u.told = now, now
	case u.err != err.Error():
		log.Warn("changed: state file unreadable, rewriting it", "path", path, "err", err, "since", u.since)
		u.told = now
	case now.Sub(u.told) >= remindEvery:
		log.Warn("still: state file unreadable, rewriting it", "path", path, "err", err, "since", u.since, "ticks", u.ticks)
		u.told = now
	}
	u.err = err.Error()
}

// New builds a file actuator from its settings.
func New(s actuators.Settings) (*Actuator, error) {
	c, err := ParseConfig(s.Options)
	if err != nil {
		return nil, err
	}
	return &Actuator{Named: actuators.Named(s.Name), cfg: c, logger: s.Logger, now: time.Now}, nil
}

var (
	_ actuators.Targeter     = (*Actuator)(nil)
	_ actuators.Preflighter  = (*Actuator)(nil)
	_ actuators.StampCarrier = (*Actuator)(nil)
)

// Register adds the file actuator to r.
func Register(r *actuators.Registry) { r.Register(Kind, actuators.FactoryOf(New)) }

// Path is the state file.
func (a *Actuator) Path() string { return a.cfg.Path }

// document is the file's content.
type document struct {
	Services actuators.Splits `json:"services"`
	// Held names the services Hermes writes nothing for this tick, with
	// the reason (the runner's hermes_service_actuation_held reason):
	// their entry in Services is the split the file held, or the last one
	// Hermes saw it hold, and is absent only when Hermes never knew one.
	Held      map[string]string `json:"held,omitempty"`
	UpdatedAt time.Time         `json:"updated_at"`
}

// Hold tells the actuator which of its services the runner withholds
// from now on, and why (nil: none). The next Apply writes them under
// "held"; the runner gives their split as the file holds it, or as it
// last saw the file hold it.
func (a *Actuator) Hold(held map[string]string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(held) == 0 {
		a.held = nil
		return
	}
	a.held = maps.Clone(held)
}

// Apply writes the desired state, unless the file already holds an equal
// state (same services, each traffic.Split.Equal). A service whose split
// is a relayed write of the stamp the file holds (actuators.Relayed)
// keeps the file's split.
func (a *Actuator) Apply(ctx context.Context, want actuators.Splits) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	have, err := a.read()
	if err == nil {
		want = a.keepNewer(have.Services, want)
	}
	// The desired state is authoritative: a corrupt file is replaced.
	if errors.Is(err, fs.ErrNotExist) {
		a.unreadable.observe(a.logger, a.cfg.Path, a.now(), nil)
	} else {
		a.unreadable.observe(a.logger, a.cfg.Path, a.now(), err)
	}
	if err == nil && equal(have.Services, want) && maps.Equal(have.Held, a.held) && a.modeOK() {
		a.logger.Debug("state file up to date", "path", a.cfg.Path)
		return nil
	}
	if want == nil {
		want = actuators.Splits{}
	}
	doc := document{Services: want, Held: a.held, UpdatedAt: a.now().UTC().Truncate(time.Second)}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // ends with a newline
	enc.SetEscapeHTML(false)     // reasons hold "<" and ">"
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encoding state for %s: %w", a.cfg.Path, err)
	}
	if err := atomicfile.Write(a.cfg.Path, buf.Bytes(), a.cfg.Mode); err != nil {
		return fmt.Errorf("writing %s: %w", a.cfg.Path, err)
	}
	a.logger.Info("wrote state file", "path", a.cfg.Path, "services", len(want), "held", len(a.held))
	return nil
}

// keepNewer returns want, with the split have holds for every service
// whose split in want is a relayed write of have's stamp. want itself is
// never changed.
func (a *Actuator) keepNewer(have, want actuators.Splits) actuators.Splits {
	var out actuators.Splits
	for svc, st := range want {
		h, ok := have[svc]
		if !ok || !actuators.Relayed(st.Writer, h.Writer) {
			continue
		}
		if out == nil {
			out = maps.Clone(want)
		}
		a.logger.Debug("keeping the newer stamp of the state file", "path", a.cfg.Path, "service", svc,
			"writer", h.Writer.Replica, "holds", h.Writer.Tick, "given", st.Writer.Tick)
		out[svc] = h
	}
	if out == nil {
		return want
	}
	return out
}

// Current reads the file back. A missing file is an empty state.
func (a *Actuator) Current(ctx context.Context) (actuators.Splits, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	doc, err := a.read()
	if errors.Is(err, fs.ErrNotExist) {
		return actuators.Splits{}, nil
	}
	if err != nil {
		return nil, err
	}
	return doc.Services, nil
}

// read parses the file; its errors name the path.
func (a *Actuator) read() (document, error) {
	var doc document
	data, err := os.ReadFile(a.cfg.Path)
	if err != nil {
		return doc, err // *fs.PathError names the path
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return doc, fmt.Errorf("parsing %s: %w", a.cfg.Path, err)
	}
	if doc.Services == nil {
		doc.Services = actuators.Splits{}
	}
	return doc, nil
}

// modeOK reports whether the file has the configured permission bits.
func (a *Actuator) modeOK() bool {
	fi, err := os.Stat(a.cfg.Path)
	return err == nil && fi.Mode().Perm() == a.cfg.Mode
}

// equal reports whether two states hold the same services, each Equal
// and with the same writer's stamp (a replica renews its stamp every tick).
func equal(a, b actuators.Splits) bool {
	if len(a) != len(b) {
		return false
	}
	for k, s := range a {
		o, ok := b[k]
		if !ok || !s.Equal(o) || !s.Writer.Equal(o.Writer) {
			return false
		}
	}
	return true
}

// Targets is the state file, absolute: no other actuator may write it.
func (a *Actuator) Targets() []string {
	p, err := filepath.Abs(a.cfg.Path)
	if err != nil {
		p = filepath.Clean(a.cfg.Path)
	}
	return []string{p}
}

// Preflight reports a state file whose directory does not exist: the
// actuator creates the file, not its directory.
func (a *Actuator) Preflight() error { return actuators.CheckDir("path", a.cfg.Path) }

// CarriesStamp reports true: the writer's stamp is part of the file.
func (a *Actuator) CarriesStamp() bool { return true }
