package detect

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/synth"
)

// SPRT error rates of the failing fleet nights' bound: a healthy route is
// taken for a failing one at most once in a thousand tests (the shipped
// scoring.confidence), a failing one missed at most once in twenty.
const (
	SPRTAlpha = 0.001
	SPRTBeta  = 0.05
)

// SPRTExpectedCalls is the expected number of calls Wald's sequential
// probability ratio test needs to decide between H0, a failure share p0,
// and H1, a share p1 > p0, when H1 holds, with error rates alpha (H1
// accepted under H0) and beta (H0 accepted under H1): with Wald's bounds
// A = ln((1−β)/α) and B = ln(β/(1−α)),
//
//	E₁[N] = ((1−β)·A + β·B) / KL(p1‖p0),
//	KL(p1‖p0) = p1·ln(p1/p0) + (1−p1)·ln((1−p1)/(1−p0)),
//
// the mean log-likelihood ratio one call adds under H1 (Wald 1945,
// neglecting the overshoot of the bounds). It is the statistical floor a
// detector of a failing share p1 against the policy's threshold p0 is
// measured against. NaN unless 0 < p0 < p1 < 1 and 0 < α, β < 1.
func SPRTExpectedCalls(alpha, beta, p0, p1 float64) float64 {
	if !(p0 > 0 && p1 > p0 && p1 < 1 && alpha > 0 && alpha < 1 && beta > 0 && beta < 1) {
		return math.NaN()
	}
	a := math.Log((1 - beta) / alpha)
	b := math.Log(beta / (1 - alpha))
	kl := p1*math.Log(p1/p0) + (1-p1)*math.Log((1-p1)/(1-p0))
	return ((1-beta)*a + beta*b) / kl
}

// Threshold is the shipped policy's penalty threshold of the signal that
// sees a failing night's kind first: soft_fail_ratio's 5 % for fallback
// phrases and truncation, error_body_ratio's 3 % for error templates,
// hard_fail_ratio's 1 % for 503s (rules/hermes.yaml, scoring.penalties).
func Threshold(kind string) (signal string, p0 float64, err error) {
	switch kind {
	case synth.FailFallback, synth.FailTruncated:
		return "soft_fail_ratio", 0.05, nil
	case synth.FailErrorBody:
		return "error_body_ratio", 0.03, nil
	case synth.Fail503:
		return "hard_fail_ratio", 0.01, nil
	}
	return "", 0, fmt.Errorf("unknown failure kind %q", kind)
}

// SPRTBound is how soon a failing fleet night of kind at rate req/s must
// be acted on: twice the SPRT's expected calls (SPRTAlpha, SPRTBeta, the
// kind's Threshold against its synth.FailureShare) at that rate, plus a
// minute. It returns the expected calls too.
func SPRTBound(kind string, rate float64) (bound time.Duration, calls float64, err error) {
	p1, err := synth.FailureShare(kind)
	if err != nil {
		return 0, 0, err
	}
	return SPRTBoundShare(kind, p1, rate)
}

// SPRTBoundShare is SPRTBound with the failing share p1 given: twice the
// SPRT's expected calls of the kind's Threshold against p1 at rate req/s,
// plus a minute.
func SPRTBoundShare(kind string, p1, rate float64) (bound time.Duration, calls float64, err error) {
	if !(rate > 0) || math.IsInf(rate, 1) {
		return 0, 0, fmt.Errorf("rate %v req/s: want a positive, finite rate", rate)
	}
	_, p0, err := Threshold(kind)
	if err != nil {
		return 0, 0, err
	}
	if !(p1 > p0 && p1 < 1) {
		return 0, 0, fmt.Errorf("failing share %v: want above the threshold %v and below 1", p1, p0)
	}
	calls = SPRTExpectedCalls(SPRTAlpha, SPRTBeta, p0, p1)
	secs := 2 * calls / rate
	return time.Duration(secs*float64(time.Second)) + time.Minute, calls, nil
}

// FleetRun is what the shipped policy did on one fleet scenario
// (synth.HealthyWeek, synth.FleetNight): its level changes and alerts,
// and on a failing one when the free route first left normal.
type FleetRun struct {
	Scenario string
	Onset    time.Duration // -1 on a healthy scenario
	// LevelChanges counts every level change; Early those before the onset
	// (all of them on a healthy scenario), Backup those of paid-standard
	// and paid-premium.
	LevelChanges, Early, Backup int
	// AlertsAB and AlertsC count alerts that started firing, by tier.
	AlertsAB, AlertsC int
	// FirstMove is when, after the onset, free first left normal (-1:
	// never); FirstReasons are that change's reasons.
	FirstMove    time.Duration
	FirstReasons []string
	// Unwanted describes the first level change or A/B alert a healthy
	// route should not have had, with its reasons ("" if none).
	Unwanted string
}

// Fleet replays sc through pol (backtest.RunStore) and reads its
// timeline.
func Fleet(ctx context.Context, pol *evaluator.Policy, sc synth.Scenario) (FleetRun, error) {
	f, err := backtest.Parse(sc.File())
	if err != nil {
		return FleetRun{}, fmt.Errorf("%s: %w", sc.Name(), err)
	}
	bt, err := backtest.Open(f)
	if err != nil {
		return FleetRun{}, fmt.Errorf("%s: %w", sc.Name(), err)
	}
	defer bt.Close()
	tl, err := backtest.RunStore(ctx, pol, bt, nil, backtest.Options{})
	if err != nil {
		return FleetRun{}, fmt.Errorf("%s: %w", sc.Name(), err)
	}
	onset, failing := sc.Onset()
	r := FleetRun{Scenario: sc.Name(), Onset: -1, FirstMove: -1}
	if failing {
		r.Onset = onset
	}
	unwanted := func(s string) {
		if r.Unwanted == "" {
			r.Unwanted = s
		}
	}
	for _, e := range tl.Events {
		at := e.Time.Sub(bt.Start())
		early := !failing || at < onset
		switch {
		case e.Type == evaluator.EventLevel:
			r.LevelChanges++
			backup := e.Route != "free"
			if early {
				r.Early++
			}
			if backup {
				r.Backup++
			}
			if early || backup {
				unwanted(fmt.Sprintf("%s %s→%s at +%s: %s", e.Route, e.From, e.To, at, strings.Join(e.Reasons, "; ")))
			} else if r.FirstMove < 0 && e.From == "normal" {
				r.FirstMove, r.FirstReasons = at-onset, e.Reasons
			}
		case e.Type == evaluator.EventAlert && e.State == "firing":
			if e.Tier == "A" || e.Tier == "B" {
				r.AlertsAB++
				if early || e.Route != "free" {
					unwanted(fmt.Sprintf("alert %s [%s] on %s at +%s: %s", e.Name, e.Tier, e.Route, at, e.Annotations["summary"]))
				}
			} else {
				r.AlertsC++
			}
		}
	}
	return r, nil
}

// FleetSummary sums the runs of one kind of fleet night at one rate.
type FleetSummary struct {
	Rate  float64
	Kind  string  // "" for healthy nights
	Share float64 // failing: the share of free's calls that fail
	Runs  []FleetRun
	Bound time.Duration // failing: SPRTBound
	Calls float64       // failing: the SPRT's expected calls
}

// Summarize runs FleetNight(rate, kind, seed) for seeds first..first+n-1.
func Summarize(ctx context.Context, pol *evaluator.Policy, rate float64, kind string, first, n uint64) (FleetSummary, error) {
	share := 0.0
	if kind != "" {
		var err error
		if share, err = synth.FailureShare(kind); err != nil {
			return FleetSummary{Rate: rate, Kind: kind}, err
		}
	}
	return SummarizeShare(ctx, pol, rate, kind, share, first, n)
}

// SummarizeShare is Summarize with share of free's calls failing
// (synth.FleetNightShare), its bound SPRTBoundShare's. A share the
// shipped policy scores at or above a threshold has no SPRT bound: Bound
// is then 0, and InTime counts nothing.
func SummarizeShare(ctx context.Context, pol *evaluator.Policy, rate float64, kind string, share float64, first, n uint64) (FleetSummary, error) {
	s := FleetSummary{Rate: rate, Kind: kind, Share: share}
	if kind != "" {
		if _, p0, err := Threshold(kind); err != nil {
			return s, err
		} else if share > p0 {
			if s.Bound, s.Calls, err = SPRTBoundShare(kind, share, rate); err != nil {
				return s, err
			}
		}
	}
	for seed := first; seed < first+n; seed++ {
		sc, err := synth.FleetNightShare(rate, kind, share, seed)
		if err != nil {
			return s, err
		}
		r, err := Fleet(ctx, pol, sc)
		if err != nil {
			return s, err
		}
		s.Runs = append(s.Runs, r)
	}
	return s, nil
}

// InTime is how many runs moved free within the bound.
func (s FleetSummary) InTime() int {
	if s.Bound <= 0 {
		return 0
	}
	k := 0
	for _, r := range s.Runs {
		if r.FirstMove >= 0 && r.FirstMove <= s.Bound {
			k++
		}
	}
	return k
}

// Disturbed is how many runs had an unwanted level change or A/B alert.
func (s FleetSummary) Disturbed() int {
	k := 0
	for _, r := range s.Runs {
		if r.Unwanted != "" {
			k++
		}
	}
	return k
}

// Quantile is the q-quantile (nearest rank) of the runs' first moves,
// a run never acted on counted as later than any; -1 if that rank never
// moved.
func (s FleetSummary) Quantile(q float64) time.Duration {
	moves := make([]time.Duration, len(s.Runs))
	for i, r := range s.Runs {
		moves[i] = r.FirstMove
	}
	return quantile(moves, q)
}
