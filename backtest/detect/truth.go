// Package detect scores detection methods on the backtest scenarios: the
// shipped Hermes policy and the rules people use today, on the same series
// through the same embedded PromQL engine. `make bench-detect` prints the
// table; see docs/detection.md ("Detection benchmark").
package detect

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/backtest"
)

// Window is a time, relative to a scenario's start, during which a route
// is degraded: the ground truth the methods are scored against.
type Window struct {
	Route    string
	From, To time.Duration
}

// ParseTruth reads the "# degraded: ROUTE FROM TO" lines that
// testdata/scenarios/gen writes at the top of each scenario file.
func ParseTruth(data []byte) ([]Window, error) {
	var out []Window
	sc := bufio.NewScanner(bytes.NewReader(data))
	// A week's values line is megabytes long: a line may be the whole file.
	sc.Buffer(make([]byte, 64*1024), len(data)+1)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "# degraded: ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 3 {
			return nil, fmt.Errorf("degraded line %q: want ROUTE FROM TO", sc.Text())
		}
		from, err1 := time.ParseDuration(f[1])
		to, err2 := time.ParseDuration(f[2])
		if err1 != nil || err2 != nil || to <= from {
			return nil, fmt.Errorf("degraded line %q: bad window", sc.Text())
		}
		out = append(out, Window{Route: f[0], From: from, To: to})
	}
	return out, sc.Err()
}

// degradedAt reports whether route is degraded at offset d, extended by
// grace after each window's end (signals lag the truth by their windows).
func degradedAt(truth []Window, route string, d, grace time.Duration) bool {
	for _, w := range truth {
		if w.Route == route && d >= w.From && d < w.To+grace {
			return true
		}
	}
	return false
}

// everDegraded reports whether route has any degraded window in truth.
func everDegraded(truth []Window, route string) bool {
	for _, w := range truth {
		if w.Route == route {
			return true
		}
	}
	return false
}

// onset is the start of the first window; ok is false without any.
func onset(truth []Window) (time.Duration, bool) {
	if len(truth) == 0 {
		return 0, false
	}
	first := truth[0].From
	for _, w := range truth[1:] {
		first = min(first, w.From)
	}
	return first, true
}

// Degraded is truth as the report's ground truth: whether route is
// degraded at t, for a scenario that starts at start.
func Degraded(truth []Window, start time.Time) backtest.Degraded {
	return func(route string, t time.Time) bool { return degradedAt(truth, route, t.Sub(start), 0) }
}
