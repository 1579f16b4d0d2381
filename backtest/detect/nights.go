package detect

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/synth"
)

// ActWithin is how soon after its onset a failing night's failure must be
// acted on (a first traffic move) to count as caught.
const ActWithin = 15 * time.Minute

// NightsReport is how one method did over drawn nights (synth.Night):
// failing nights, on which the primary fails synth.FailingShare of its
// replies for two hours, and healthy ones.
type NightsReport struct {
	Method           string
	Failing, Healthy int // nights drawn of each kind
	// Caught is how many failing nights were acted on within ActWithin;
	// FirstMoves holds each failing night's first move after the onset
	// (-1: never).
	Caught     int
	FirstMoves []time.Duration
	// BystanderNights is how many failing nights changed the level of a
	// route that never failed (a backup).
	BystanderNights int
	// Disturbed is how many healthy nights had any level change, traffic
	// move or A/B alert; FalseMoves and FalseAlerts count them over all
	// healthy nights, RouteDays is how many route-days those nights hold.
	Disturbed               int
	FalseMoves, FalseAlerts int
	RouteDays               float64
}

// Nights draws n failing and n healthy nights from seed first on, runs
// every method on each and sums their outcomes per method, in table order.
func Nights(ctx context.Context, pol *evaluator.Policy, first, n uint64) ([]NightsReport, error) {
	var reports []NightsReport
	at := map[string]int{}
	for _, kind := range []string{synth.FailingNight, synth.HealthyNight} {
		for seed := first; seed < first+n; seed++ {
			sc, err := synth.Night(kind, seed)
			if err != nil {
				return nil, err
			}
			outs, err := Data(ctx, pol, sc.Name(), sc.File())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sc.Name(), err)
			}
			for _, o := range outs {
				i, ok := at[o.Method]
				if !ok {
					i = len(reports)
					at[o.Method] = i
					reports = append(reports, NightsReport{Method: o.Method})
				}
				reports[i].add(kind, o, sc.Length(), len(pol.Config.Services[0].Routes))
			}
		}
	}
	return reports, nil
}

// add counts outcome o of a night of kind, of length d with routes routes.
func (r *NightsReport) add(kind string, o Outcome, d time.Duration, routes int) {
	switch kind {
	case synth.FailingNight:
		r.Failing++
		r.FirstMoves = append(r.FirstMoves, o.FirstMove)
		if o.FirstMove >= 0 && o.FirstMove <= ActWithin {
			r.Caught++
		}
		if o.BystanderChanges > 0 {
			r.BystanderNights++
		}
	case synth.HealthyNight:
		r.Healthy++
		if o.BystanderChanges > 0 || o.FalseMoves > 0 || o.FalseAlerts > 0 {
			r.Disturbed++
		}
		r.FalseMoves += o.FalseMoves
		r.FalseAlerts += o.FalseAlerts
		r.RouteDays += float64(routes) * d.Hours() / 24
	}
}

// MedianFirstMove is the median of the failing nights' first moves, the
// nights never acted on counted as later than any; -1 when more than half
// were never acted on.
func (r *NightsReport) MedianFirstMove() time.Duration {
	if len(r.FirstMoves) == 0 {
		return -1
	}
	s := slices.Clone(r.FirstMoves)
	slices.SortFunc(s, func(a, b time.Duration) int {
		switch {
		case a < 0 && b < 0:
			return 0
		case a < 0:
			return 1
		case b < 0:
			return -1
		}
		return int(a - b)
	})
	return s[len(s)/2]
}

// WriteNightsTable prints reports as a Markdown table.
func WriteNightsTable(w io.Writer, reports []NightsReport) error {
	if _, err := fmt.Fprintf(w, "| method | failing nights caught within %s | median first move | failing nights with a backup's level changed | healthy nights disturbed | false moves per route-day | false A/B alerts per route-day |\n|---|---|---|---|---|---|---|\n", fmtDur(ActWithin)); err != nil {
		return err
	}
	for _, r := range reports {
		perDay := func(k int) float64 {
			if r.RouteDays == 0 {
				return 0
			}
			return float64(k) / r.RouteDays
		}
		if _, err := fmt.Fprintf(w, "| %s | %d of %d | %s | %d of %d | %d of %d | %.3f | %.3f |\n", r.Method, r.Caught, r.Failing,
			after(r.MedianFirstMove()), r.BystanderNights, r.Failing, r.Disturbed, r.Healthy, perDay(r.FalseMoves), perDay(r.FalseAlerts)); err != nil {
			return err
		}
	}
	return nil
}
