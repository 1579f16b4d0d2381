package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// The noise of a healthy fleet, as a test fixture: what a route that is not
// failing shows all week, drawn from a seed. A policy that moves a route or
// pages on any of it is wrong about health, so the tests and
// `make bench-detect` replay it through the shipped policy (HealthyWeek,
// FleetNight). Each feature is one function below:
//
//   - diurnal traffic: a day peak at 16:00, a trough at 04:00 of a tenth of
//     it, weekends at 60 % (diurnal);
//   - a backup idle at night: 0 calls for hours, its counters present and
//     flat (backupRate);
//   - content-failure drift: a soft-fail share moving slowly between 0.5
//     and 3.5 % (drift);
//   - single-scrape 5xx blips (10 % of one scrape's calls answer 502,
//     about 4 a day per route) and single-scrape latency spikes (6 × for
//     one scrape, about one an hour per route) (fleetEvents);
//   - latency that follows load: 0.9 × the baseline at no load to 1.2 × at
//     the day peak (fleetRoute);
//   - readiness probes failing 0.5 % and end-to-end probes 2 % of the
//     time, each result drawn on its own (fleetRoute);
//   - scrape gaps of 1 to 3 samples, every series of a route absent, about
//     one every 2 hours per route (fleetEvents);
//   - a gateway restart a day: every route's request counters and latency
//     histograms start again from 0 (restarts);
//   - a free quota that falls with the day's calls to 30 % by midnight and
//     resets to 100 % (quota).

// WeekLength is how long HealthyWeek lasts.
const WeekLength = 7 * 24 * time.Hour

// Fleet noise rates.
const (
	readinessFail = 0.005 // a readiness result fails
	e2eFail       = 0.02  // an end-to-end result fails
	gapEvery      = 2 * time.Hour
	blipEvery     = 6 * time.Hour
	spikeEvery    = time.Hour
	blipShare     = 0.10 // of the blip scrape's calls answer 502
	spikeFactor   = 6
	quotaAtNight  = 0.30 // the free quota left at midnight
)

// Failure kinds of a failing FleetNight: what the free route's failing
// calls carry.
const (
	FailFallback  = "fallback_phrase" // a canned phrase inside HTTP 200
	FailTruncated = "truncated"       // a reply cut short inside HTTP 200
	FailErrorBody = "error_body"      // an error template inside HTTP 200
	Fail503       = "503"             // HTTP 503, a hard failure
)

// FailureKinds lists the failing nights' kinds.
var FailureKinds = []string{FailFallback, FailTruncated, FailErrorBody, Fail503}

// FailureShare is the share of the free route's calls that fail on a
// failing FleetNight of kind: 15 % for the content failures (the issue 21
// night: soft_fail_ratio 15 % + drift costs about 36 points, error_body 15 %
// costs its own 36 more), 5 % for 503s (hard_fail_ratio 5 % costs 16
// points: a score of 84, the issue 33 example).
func FailureShare(kind string) (float64, error) {
	switch kind {
	case FailFallback, FailTruncated, FailErrorBody:
		return 0.15, nil
	case Fail503:
		return 0.05, nil
	}
	return 0, fmt.Errorf("unknown failure kind %q (want one of %v)", kind, FailureKinds)
}

// diurnal is the share of its day peak a route's traffic has at clock c
// (since a Monday 00:00): 0.1 at 04:00, 1 at 16:00, times 0.6 on Saturday
// and Sunday.
func diurnal(c time.Duration) float64 {
	hour := math.Mod(c.Hours(), 24)
	d := 0.1 + 0.9*(1-math.Cos(2*math.Pi*(hour-4)/24))/2
	if day := int(c.Hours()/24) % 7; day >= 5 {
		d *= 0.6
	}
	return d
}

// backupRate is a backup's traffic: diurnal at peak req/s, but 0 calls
// between idleFrom and idleTo o'clock (a backup only gets its own users'
// or a canary's calls, and they sleep).
func backupRate(peak float64, idleFrom, idleTo int) func(time.Duration) float64 {
	return func(c time.Duration) float64 {
		hour := int(math.Mod(c.Hours(), 24))
		idle := hour >= idleFrom || hour < idleTo
		if idleFrom < idleTo {
			idle = hour >= idleFrom && hour < idleTo
		}
		if idle {
			return 0
		}
		return peak * diurnal(c)
	}
}

// drift is a soft-fail share moving slowly inside [0.5 %, 3.5 %]: two
// sines of periods drawn between 4 and 10 h and between 20 and 40 h.
func drift(r *rand.Rand) func(time.Duration) float64 {
	p1 := 4*time.Hour + time.Duration(r.Float64()*float64(6*time.Hour))
	p2 := 20*time.Hour + time.Duration(r.Float64()*float64(20*time.Hour))
	f1, f2 := 2*math.Pi*r.Float64(), 2*math.Pi*r.Float64()
	return func(t time.Duration) float64 {
		return 0.02 + 0.015*(0.6*math.Sin(2*math.Pi*float64(t)/float64(p1)+f1)+0.4*math.Sin(2*math.Pi*float64(t)/float64(p2)+f2))
	}
}

// fleetEvents are a route's single-scrape events, by scrape index: the
// scrapes absent (gaps of 1–3), those with a 5xx blip and those with a
// latency spike, each a Bernoulli draw per scrape at its mean rate.
type fleetEvents struct {
	gap, blip, spike map[int]bool
}

func drawEvents(r *rand.Rand, n int) fleetEvents {
	ev := fleetEvents{gap: map[int]bool{}, blip: map[int]bool{}, spike: map[int]bool{}}
	per := func(every time.Duration) float64 { return float64(step) / float64(every) }
	for i := 1; i < n; i++ {
		if r.Float64() < per(gapEvery) {
			for k := range 1 + r.IntN(3) {
				ev.gap[i+k] = true
			}
		}
		if r.Float64() < per(blipEvery) {
			ev.blip[i] = true
		}
		if r.Float64() < per(spikeEvery) {
			ev.spike[i] = true
		}
	}
	return ev
}

func index(t time.Duration) int { return int(t / step) }

// restarts draws one gateway restart a day (a scrape index), in each
// calendar day that clock0+[0, length) touches, at a uniform time of it.
func restarts(r *rand.Rand, clock0, length time.Duration) map[int]bool {
	out := map[int]bool{}
	day := 24 * time.Hour
	for d := clock0.Truncate(day); d < clock0+length; d += day {
		at := d + time.Duration(r.Float64()*float64(day)) - clock0
		if at > 0 && at < length {
			out[index(at.Truncate(step))] = true
		}
	}
	return out
}

// fleetRoute is a healthy route at rate req/s (clock c = clock0 + t) of
// day peak peak (0: latency does not follow load), with ev's events and a
// restart at the indexes of rs.
func fleetRoute(r *rand.Rand, clock0 time.Duration, rate func(time.Duration) float64, peak float64, ev fleetEvents, rs map[int]bool) model {
	load := func(t time.Duration) float64 {
		if peak == 0 {
			return 0
		}
		return rate(clock0+t) / peak
	}
	return model{
		rate:       func(t time.Duration) float64 { return rate(clock0 + t) },
		soft:       drift(r),
		softReason: "invalid_json",
		hard:       zero,
		latency: func(t time.Duration) float64 {
			l := 0.9 + 0.3*load(t)
			if ev.spike[index(t)] {
				l *= spikeFactor
			}
			return l
		},
		probeFail: func(time.Duration) float64 { return readinessFail },
		e2e:       func(time.Duration) float64 { return e2eFail },
		faults: []fault{hardFault("502", func(t time.Duration) float64 {
			if ev.blip[index(t)] {
				return blipShare
			}
			return 0
		})},
		absent:  func(t time.Duration) bool { return ev.gap[index(t)] },
		restart: func(t time.Duration) bool { return rs[index(t)] },
	}
}

// quota is the free route's remaining quota at each scrape: 1 at
// midnight, falling with the day's calls (rate, integrated per scrape) to
// quotaAtNight at the next midnight. A day only partly in the scenario is
// integrated whole.
func quota(clock0 time.Duration, n int, rate func(time.Duration) float64) func(time.Duration) float64 {
	day := 24 * time.Hour
	total := map[time.Duration]float64{} // a day's calls, by its midnight
	vals := make([]float64, n)
	var done float64
	for i := range n {
		c := clock0 + time.Duration(i)*step
		d0 := c.Truncate(day)
		all, ok := total[d0]
		if !ok {
			for s := d0; s < d0+day; s += step {
				all += rate(s)
			}
			total[d0] = all
			// The calls of the day before the scenario started.
			done = 0
			for s := d0; s < c; s += step {
				done += rate(s)
			}
		}
		vals[i] = 1 - (1-quotaAtNight)*done/all
		done += rate(c)
	}
	return func(t time.Duration) float64 {
		if i := index(t); i < n {
			return vals[i]
		}
		return vals[n-1]
	}
}

// Peak rates of HealthyWeek's routes (req/s at 16:00 on a weekday).
const (
	weekFreePeak     = 20
	weekStandardPeak = 2
	weekPremiumPeak  = 0.5
)

// HealthyWeek is seven healthy days (Monday 00:00 to the next), free at up
// to 20 req/s, paid-standard (its own users, up to 2 req/s, idle from
// 00:00 to 06:00) and paid-premium (up to 0.5 req/s, idle from 22:00 to
// 07:00), with every feature of the fleet noise, drawn from seed.
func HealthyWeek(seed uint64) Scenario {
	r := rand.New(rand.NewPCG(4, seed))
	n := int(WeekLength/step) + 1
	rs := restarts(r, 0, WeekLength)
	freeRate := func(c time.Duration) float64 { return weekFreePeak * diurnal(c) }
	free := fleetRoute(r, 0, freeRate, weekFreePeak, drawEvents(r, n), rs)
	free.quota = quota(0, n, freeRate)
	routes := map[string]model{
		"free":          free,
		"paid-standard": fleetRoute(r, 0, backupRate(weekStandardPeak, 0, 6), weekStandardPeak, drawEvents(r, n), rs),
		"paid-premium":  fleetRoute(r, 0, backupRate(weekPremiumPeak, 22, 7), weekPremiumPeak, drawEvents(r, n), rs),
	}
	return Scenario{seed: seed + 1, sc: scenario{
		name:   fmt.Sprintf("healthy_week_%d", seed),
		doc:    fmt.Sprintf("Healthy week %d with a fleet's noise: diurnal traffic (free up to 20 req/s), idle backups at night, soft-fail drift 0.5-3.5 %%, 502 blips, latency spikes, probe failures, scrape gaps, a restart a day, a free quota.", seed),
		length: WeekLength, routes: routes,
	}}
}

// fleetNightStart is the clock at which a FleetNight starts: 22:00, so the
// free quota resets at midnight, two hours in.
const fleetNightStart = 22 * time.Hour

// FleetNight is a 6 h night (22:00 to 04:00) drawn from seed with the
// fleet's noise: the free route at rate req/s (Poisson), the backups idle
// (0 calls, counters there and flat, judged by their probes). kind ""
// keeps it healthy; a failure kind (FailureKinds) makes FailureShare(kind)
// of the free route's calls fail that way from an onset between 1h and 2h
// to the end, and its end-to-end probes fail as often (on top of their
// 2 %); readiness, which lists the models, fails with the 503s only. One
// gateway restart happens during the night (four times the daily rate,
// so every night has one).
func FleetNight(rate float64, kind string, seed uint64) (Scenario, error) {
	share := 0.0
	if kind != "" {
		var err error
		if share, err = FailureShare(kind); err != nil {
			return Scenario{}, err
		}
	}
	return FleetNightShare(rate, kind, share, seed)
}

// FleetNightShare is FleetNight with share of the free route's calls
// failing from the onset instead of FailureShare(kind): the same night
// (the same draws from seed) at another failing share, so a rule can be
// measured at shares the shipped policy scores on either side of a
// level's line. share is ignored when kind is "".
func FleetNightShare(rate float64, kind string, share float64, seed uint64) (Scenario, error) {
	if kind != "" && !(share > 0 && share <= 1) {
		return Scenario{}, fmt.Errorf("failing share %v: want in (0, 1]", share)
	}
	if _, err := FailureShare(kind); kind != "" && err != nil {
		return Scenario{}, err
	}
	if rate < 0 || math.IsNaN(rate) {
		return Scenario{}, fmt.Errorf("rate %v req/s: want ≥ 0", rate)
	}
	r := rand.New(rand.NewPCG(5, seed))
	n := int(NightLength/step) + 1
	rs := map[int]bool{1 + r.IntN(n-1): true}
	constant := func(time.Duration) float64 { return rate }
	free := fleetRoute(r, fleetNightStart, constant, rate, drawEvents(r, n), rs)
	// The quota of a day whose calls come at this night's rate all day.
	free.quota = quota(fleetNightStart, n, constant)
	idle := func(time.Duration) float64 { return 0 }
	routes := map[string]model{
		"free":          free,
		"paid-standard": fleetRoute(r, fleetNightStart, idle, 0, drawEvents(r, n), rs),
		"paid-premium":  fleetRoute(r, fleetNightStart, idle, 0, drawEvents(r, n), rs),
	}
	onset := (time.Hour + time.Duration(r.Float64()*float64(time.Hour))).Truncate(step)
	sc := Scenario{seed: seed + 1}
	if kind == "" {
		sc.sc = scenario{name: fmt.Sprintf("fleet_night_%g_%d", rate, seed), length: NightLength, routes: routes,
			doc: fmt.Sprintf("Healthy night %d with a fleet's noise: free at %g req/s, idle backups.", seed, rate)}
		return sc, nil
	}
	failing := between(onset, NightLength+step, share)
	switch kind {
	case Fail503:
		free.faults = append(free.faults, hardFault("503", failing))
		free.probeFail = func(t time.Duration) float64 { return math.Max(readinessFail, failing(t)) }
	default:
		free.faults = append(free.faults, softFault(kind, failing))
	}
	free.e2e = func(t time.Duration) float64 { return 1 - (1-e2eFail)*(1-failing(t)) }
	routes["free"] = free
	sc.sc = scenario{name: fmt.Sprintf("fleet_night_%g_%s_%d", rate, kind, seed), length: NightLength, routes: routes,
		doc: fmt.Sprintf("Night %d with a fleet's noise, free at %g req/s, idle backups: from %s %.0f %% of the free route's calls fail (%s).", seed, rate, onset, 100*share, kind)}
	sc.truth = []window{{"free", onset, NightLength}}
	return sc, nil
}

// Onset is when the scenario's first degradation starts; false for a
// healthy one.
func (s Scenario) Onset() (time.Duration, bool) {
	if len(s.truth) == 0 {
		return 0, false
	}
	on := s.truth[0].from
	for _, w := range s.truth[1:] {
		on = min(on, w.from)
	}
	return on, true
}
