package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// The probe layers as `hermes probe` runs them: a readiness probe every
// 15 s (its default is 10 s; one result per scrape keeps the files'
// counters in promtool's compact a+bxN notation) and an end-to-end
// inference every 2 min, its default. Each result is counted once in
// llm_probe_results_total{route,layer,probe,verdict}, which is what the
// shipped policy reads: the evidence is the results, however often
// Prometheus scrapes them.
const (
	readinessEvery = 15 * time.Second
	e2eEvery       = 2 * time.Minute
)

// probeCounters are a route's probe result counters, one series per layer
// and verdict.
type probeCounters struct {
	readyOK, readyFail, e2eOK, e2eFail     series
	cReadyOK, cReadyFail, cE2EOK, cE2EFail float64
}

func newProbeCounters(route, failReason string) *probeCounters {
	name := func(layer, verdict, reason string) series {
		r := ""
		if reason != "" {
			r = fmt.Sprintf(",reason=%q", reason)
		}
		return series{name: fmt.Sprintf(`llm_probe_results_total{route=%q,layer=%q,probe="chat",verdict=%q%s}`, route, layer, verdict, r)}
	}
	return &probeCounters{
		readyOK: name("readiness", "ok", ""), readyFail: name("readiness", "hard_fail", "conn_error"),
		e2eOK: name("e2e", "ok", ""), e2eFail: name("e2e", "soft_fail", failReason),
	}
}

// draw counts the results of the probes that ran in the scrape interval
// ending at t (none at t = 0): each readiness result fails with md's
// probeFail, each end-to-end result as a user's reply would (e2eFailure).
// The draws come from rng, the probes' own stream, so that adding them
// left every other series of a scenario as it was drawn.
func (pc *probeCounters) draw(rng *rand.Rand, md model, t time.Duration) {
	if t == 0 {
		return
	}
	for range runsIn(t, readinessEvery) {
		if rng.Float64() < md.probeFail(t) {
			pc.cReadyFail++
		} else {
			pc.cReadyOK++
		}
	}
	if md.noE2E {
		return
	}
	for range runsIn(t, e2eEvery) {
		if rng.Float64() < e2eFailure(md, t) {
			pc.cE2EFail++
		} else {
			pc.cE2EOK++
		}
	}
}

// runsIn is how many probes run every `every` (from 0 on) in the scrape
// interval (t-step, t].
func runsIn(t, every time.Duration) int {
	return int(t/every - (t-step)/every)
}

// e2eFailure is the chance that an end-to-end probe of md fails at t: it
// is a real inference judged as users' replies are, so it fails as often
// as they do (hard, soft with the noise's mean, and the further faults),
// and also whenever the readiness probe would; md.e2e, when set, replaces
// this.
func e2eFailure(md model, t time.Duration) float64 {
	if md.e2e != nil {
		return md.e2e(t)
	}
	user := md.hard(t) + md.soft(t)
	if md.noise {
		user += 0.02
	}
	for _, f := range md.faults {
		user += f.share(t)
	}
	return 1 - (1-clamp(md.probeFail(t)))*(1-clamp(user))
}

// add appends the counters' values at one scrape (NaN while absent).
func (pc *probeCounters) add(absent bool, noE2E bool) {
	v := func(s *series, c float64) {
		if absent {
			c = math.NaN()
		}
		s.values = append(s.values, c)
	}
	v(&pc.readyOK, pc.cReadyOK)
	v(&pc.readyFail, pc.cReadyFail)
	if !noE2E {
		v(&pc.e2eOK, pc.cE2EOK)
		v(&pc.e2eFail, pc.cE2EFail)
	}
}

// series lists the counters' series (the end-to-end ones unless noE2E).
func (pc *probeCounters) series(noE2E bool) []series {
	if noE2E {
		return []series{pc.readyOK, pc.readyFail}
	}
	return []series{pc.readyOK, pc.readyFail, pc.e2eOK, pc.e2eFail}
}
