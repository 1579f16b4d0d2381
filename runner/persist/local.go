package persist

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/atomicfile"
	"github.com/hermes-failover/hermes/runner/tick"
	"github.com/hermes-failover/hermes/traffic"
)

// LocalFileName is the default name of the local state file, next to the
// configuration file: what Hermes keeps on disk across restarts.
const LocalFileName = "hermes-state.json"

// legacyLocalFileName is the name the local state file had before it held
// drills and alerts too; it is read when the file of LocalFileName is not
// there yet, so an upgrade keeps the operators' overrides.
const legacyLocalFileName = "hermes-overrides.json"

// DefaultLocalPath puts the local state file next to the configuration.
func DefaultLocalPath(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), LocalFileName)
}

// LegacyLocalPath is the local state file's path before 2026-12, next to
// the configuration.
func LegacyLocalPath(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), legacyLocalFileName)
}

// Local is what this process kept on disk (the local state file), what
// must survive a restart and Prometheus may not know yet: the operators'
// overrides by service, running drills by route (a drill ends by itself
// at its end time, also when that passed while Hermes was down), and the
// active alerts, for a restart before Prometheus scraped an alert that
// just began (SavedAlerts).
type Local struct {
	Overrides map[string]evaluator.Override `json:"overrides"`
	Drills    map[string]evaluator.Drill    `json:"drills,omitempty"`
	Alerts    SavedAlerts                   `json:"alerts,omitzero"`
	// Moves are the move records of the routes below normal, by route
	// (evaluator.Move: what moved each, which its pages and status row
	// name). Strings and lists do not fit the saved-state series.
	Moves map[string]*evaluator.Move `json:"moves,omitempty"`
	// IncidentStarts are the startsAt the alerting stage kept for the
	// alerts of incidents not over (alerting.Sender.IncidentStarts): a
	// page that fired again after an aborted failback, restored by a
	// restart, is still sent with the startsAt of the first page.
	IncidentStarts []tick.IncidentStart `json:"incident_starts,omitempty"`
}

// LocalOf is what state s, of tick, keeps on disk.
func LocalOf(s evaluator.State, tick time.Time) Local {
	return Local{Overrides: s.Overrides, Drills: s.Drills, Alerts: SaveAlerts(s.Alerts, tick), Moves: movesOf(s)}
}

// movesOf are the move records of s's routes, by route; nil when none.
func movesOf(s evaluator.State) map[string]*evaluator.Move {
	var out map[string]*evaluator.Move
	for name, rs := range s.Routes {
		if rs.Move == nil {
			continue
		}
		if out == nil {
			out = map[string]*evaluator.Move{}
		}
		out[name] = rs.Move
	}
	return out
}

// sameMoves reports whether prev and next hold the same move records.
// The core never writes a Move in place: a record that changed is a new
// pointer.
func sameMoves(prev, next evaluator.State) bool {
	for name, rs := range next.Routes {
		var was *evaluator.Move
		if p := prev.Routes[name]; p != nil {
			was = p.Move
		}
		if was != rs.Move {
			return false
		}
	}
	for name, rs := range prev.Routes {
		if _, ok := next.Routes[name]; !ok && rs.Move != nil {
			return false
		}
	}
	return true
}

// restoreMoves puts the saved move records back on the restored routes
// still below normal (a route restored at normal has no incident).
func restoreMoves(st *evaluator.State, moves map[string]*evaluator.Move) {
	for name, m := range moves {
		if rs := st.Routes[name]; rs != nil && rs.Level != traffic.Normal && m != nil {
			c := *rs
			c.Move = m
			st.Routes[name] = &c
		}
	}
}

// ReadLocal reads the local state file at path; a missing file means
// nothing was kept.
func ReadLocal(path string) (Local, error) {
	f := Local{Overrides: map[string]evaluator.Override{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("state file: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("state file %s: %w", path, err)
	}
	if f.Overrides == nil {
		f.Overrides = map[string]evaluator.Override{}
	}
	return f, nil
}

// SaveLocal writes l to the local state file at path atomically (temp
// file, fsync, rename), so a crash never leaves half a file.
func SaveLocal(path string, l Local) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	return nil
}

// LocalChanged reports whether next keeps on disk something other than
// prev: an override, a drill's recorded times, the active alerts or a
// move record.
func LocalChanged(prev, next evaluator.State) bool {
	return !maps.EqualFunc(prev.Overrides, next.Overrides, evaluator.Override.Equal) ||
		!maps.EqualFunc(prev.Drills, next.Drills, sameDrill) || !SameActive(prev.Alerts, next.Alerts) ||
		!sameMoves(prev, next)
}

// sameDrill reports whether two versions of a route's drill are the same
// for the local state file. The core never changes a Drill in place: what
// changes over its life are the recorded times.
func sameDrill(a, b evaluator.Drill) bool {
	return a.Since.Equal(b.Since) && a.Detected.Equal(b.Detected) && a.Moved.Equal(b.Moved) && a.FailedOver.Equal(b.FailedOver)
}
