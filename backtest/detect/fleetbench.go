package detect

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/synth"
)

// FleetRates are the free route's rates of the fleet nights, req/s.
var FleetRates = []float64{0.1, 0.3, 1}

// FleetRow is how one method did over the runs of one kind of fleet
// scenario: healthy weeks, healthy nights at a rate, or failing nights at
// a rate and of a failure kind.
type FleetRow struct {
	Row, Method string
	Runs        int
	// Failing rows: the SPRT bound and its expected calls (SPRTBound), how
	// many runs moved free's traffic within it, and each run's first move
	// after the onset (-1: never).
	Bound      time.Duration
	Calls      float64
	InTime     int
	FirstMoves []time.Duration
	// Disturbed counts runs in which something moved that should not
	// have: on a healthy run any traffic move, level change or A/B alert;
	// on a failing one a move before the onset or a backup's level change.
	Disturbed int
	// FalseMoves, FalseAlerts and Bystanders sum Outcome's over the runs.
	FalseMoves, FalseAlerts, Bystanders int
}

// FleetRows runs every method on weeks healthy weeks (synth.HealthyWeek)
// and, per rate of FleetRates, on nights healthy and nights failing
// fleet nights of each kind (synth.FleetNight), seeds from first on.
func FleetRows(ctx context.Context, pol *evaluator.Policy, first, weeks, nights uint64) ([]FleetRow, error) {
	var rows []FleetRow
	add := func(row string, bound time.Duration, calls float64, failing bool, sc synth.Scenario) error {
		outs, err := Data(ctx, pol, sc.Name(), sc.File())
		if err != nil {
			return err
		}
		for _, o := range outs {
			i := slices.IndexFunc(rows, func(r FleetRow) bool { return r.Row == row && r.Method == o.Method })
			if i < 0 {
				rows = append(rows, FleetRow{Row: row, Method: o.Method, Bound: bound, Calls: calls})
				i = len(rows) - 1
			}
			r := &rows[i]
			r.Runs++
			r.FalseMoves += o.FalseMoves
			r.FalseAlerts += o.FalseAlerts
			r.Bystanders += o.BystanderChanges
			if failing {
				r.FirstMoves = append(r.FirstMoves, o.FirstMove)
				if o.FirstMove >= 0 && o.FirstMove <= bound {
					r.InTime++
				}
				if o.FalseMoves > 0 || o.BystanderChanges > 0 {
					r.Disturbed++
				}
			} else if o.FalseMoves > 0 || o.FalseAlerts > 0 || o.BystanderChanges > 0 {
				r.Disturbed++
			}
		}
		return nil
	}
	for seed := first; seed < first+weeks; seed++ {
		if err := add("healthy week, 3 routes", 0, 0, false, synth.HealthyWeek(seed)); err != nil {
			return nil, err
		}
	}
	for _, rate := range FleetRates {
		for _, kind := range append([]string{""}, synth.FailureKinds...) {
			row := fmt.Sprintf("healthy night, free %g req/s, idle backups", rate)
			var bound time.Duration
			var calls float64
			if kind != "" {
				share, err := synth.FailureShare(kind)
				if err != nil {
					return nil, err
				}
				if bound, calls, err = SPRTBound(kind, rate); err != nil {
					return nil, err
				}
				row = fmt.Sprintf("failing night, free %g req/s, %.0f %% %s", rate, 100*share, kind)
			}
			for seed := first; seed < first+nights; seed++ {
				sc, err := synth.FleetNight(rate, kind, seed)
				if err != nil {
					return nil, err
				}
				if err := add(row, bound, calls, kind != "", sc); err != nil {
					return nil, err
				}
			}
		}
	}
	return rows, nil
}

// Quantile is the q-quantile (nearest rank) of the row's first moves, a
// run never acted on counted as later than any; -1 if that rank never
// moved.
func (r FleetRow) Quantile(q float64) time.Duration {
	return quantile(r.FirstMoves, q)
}

func quantile(moves []time.Duration, q float64) time.Duration {
	if len(moves) == 0 {
		return -1
	}
	d := slices.Clone(moves)
	for i := range d {
		if d[i] < 0 {
			d[i] = math.MaxInt64
		}
	}
	slices.Sort(d)
	v := d[max(int(math.Ceil(q*float64(len(d))))-1, 0)]
	if v == math.MaxInt64 {
		return -1
	}
	return v
}

// WriteFleetTable prints rows as a Markdown table.
func WriteFleetTable(w io.Writer, rows []FleetRow) error {
	if _, err := fmt.Fprintln(w, "| scenario | method | runs | SPRT calls → bound | acted on within bound | median first move | p95 first move | runs disturbed | false moves | false A/B alerts | backup level changes |\n|---|---|---|---|---|---|---|---|---|---|---|"); err != nil {
		return err
	}
	for _, r := range rows {
		bound, in, med, p95 := "–", "–", "–", "–"
		if r.FirstMoves != nil {
			bound = fmt.Sprintf("%.1f → %s", r.Calls, fmtDur(r.Bound.Round(time.Second)))
			in = fmt.Sprintf("%d of %d", r.InTime, r.Runs)
			med, p95 = after(r.Quantile(0.5)), after(r.Quantile(0.95))
		}
		if _, err := fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %d of %d | %d | %d | %d |\n", r.Row, r.Method, r.Runs, bound, in, med, p95,
			r.Disturbed, r.Runs, r.FalseMoves, r.FalseAlerts, r.Bystanders); err != nil {
			return err
		}
	}
	return nil
}
