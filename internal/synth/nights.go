package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Random low-traffic nights: the traffic on which a rule that decides on
// one short window is judged on noise or not at all. Each night is drawn
// from its seed: the routes' rates, the probes' background failures and,
// on a failing night, when the failure starts. They are not files: the
// tests and `make bench-detect` draw as many as they need, and a property
// measured over 40 of them (a share of nights) says more than one
// hand-picked series.

// NightLength is how long a drawn night lasts.
const NightLength = 6 * time.Hour

// FailingShare is the share of the primary route's replies that carry a
// fallback phrase on a failing night: 15 %, the content failure of the
// issue that asked for these nights.
const FailingShare = 0.15

// Night kinds.
const (
	// HealthyNight: every route healthy, thin traffic all night.
	HealthyNight = "healthy_night"
	// FailingNight: as a healthy night, but the primary ("free") answers
	// FailingShare of its calls with a fallback phrase, and its probes fail
	// as often, for two hours from an onset between 1h and 2h.
	FailingNight = "failing_night"
)

// Night is night number seed of kind (HealthyNight or FailingNight). The
// primary carries 0.2–0.4 req/s, paid-standard 0.02–0.1 and paid-premium
// 0.01–0.05 (a backup only gets traffic when the routes before it lose
// theirs, so these are the rates its own users or a canary give it);
// soft failures are 2 ± 1.5 % per scrape on every route, probes fail 0–1 %
// of the time in the background, P99 spikes for one scrape every 23
// minutes on the primary.
func Night(kind string, seed uint64) (Scenario, error) {
	r := rand.New(rand.NewPCG(2, seed))
	uniform := func(lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }
	thin := func(rps, probe float64) model {
		md := healthyPaid()
		md.noise, md.softReason = true, "invalid_json"
		md.rate = func(time.Duration) float64 { return rps }
		md.probeFail = func(time.Duration) float64 { return probe }
		return md
	}
	free := thin(uniform(0.2, 0.4), uniform(0, 0.01))
	free.latency = spikes(23*time.Minute, 6)
	routes := map[string]model{
		"free":          free,
		"paid-standard": thin(uniform(0.02, 0.1), uniform(0, 0.01)),
		"paid-premium":  thin(uniform(0.01, 0.05), uniform(0, 0.01)),
	}
	name := fmt.Sprintf("%s_%d", kind, seed)
	sc := Scenario{seed: seed + 1} // 0 would mean "the name's length"
	switch kind {
	case HealthyNight:
		sc.sc = scenario{name: name, doc: fmt.Sprintf("Random low-traffic night %d: every route healthy.", seed), length: NightLength, routes: routes}
	case FailingNight:
		onset := (time.Hour + time.Duration(r.Float64()*float64(time.Hour))).Truncate(step)
		end := onset + 2*time.Hour
		background := free.probeFail
		free.faults = []fault{softFault("fallback_phrase", between(onset, end, FailingShare))}
		free.probeFail = func(t time.Duration) float64 {
			return math.Max(background(t), between(onset, end, FailingShare)(t))
		}
		routes["free"] = free
		sc.sc = scenario{name: name, length: NightLength, routes: routes,
			doc: fmt.Sprintf("Random low-traffic night %d: %.0f %% of the free route's replies carry a fallback phrase from %s to %s.", seed, 100*FailingShare, onset, end)}
		sc.truth = []window{{"free", onset, end}}
	default:
		return Scenario{}, fmt.Errorf("unknown night kind %q (want %q or %q)", kind, HealthyNight, FailingNight)
	}
	return sc, nil
}
