package synth

import (
	"fmt"
	"time"
)

const step = 15 * time.Second

// model describes one route's traffic as functions of time since the start.
type model struct {
	reqs int // requests per scrape interval
	// rate, when set, replaces reqs: requests per second, drawn per scrape
	// (Poisson) with failures drawn per request, as thin traffic really
	// looks; reqs keeps the older scenarios' exact counts.
	rate       func(time.Duration) float64
	hardCode   string                      // status of hard failures, "500" when empty
	soft       func(time.Duration) float64 // soft-fail share before noise
	softReason string
	noise      bool                        // soft-fail share ± 1.5 % per scrape
	hard       func(time.Duration) float64 // hard-fail (HTTP 500) share
	latency    func(time.Duration) float64 // latency scale, 1 = baseline
	probeFail  func(time.Duration) float64 // readiness probe failure probability
	// noE2E: the route runs no end-to-end probes (their series are absent);
	// otherwise they fail as its users' replies do (e2eFailure).
	noE2E  bool
	quota  func(time.Duration) float64 // remaining quota; nil = no quota
	absent func(time.Duration) bool    // no series at all (scrape gap)
	// faults are further verdicts, each its own series (code, verdict and
	// reason labels as the gateway writes them), drawn after hard and soft.
	faults []fault
	// volume multiplies the calls of each scrape (a retry storm); nil = 1.
	volume func(time.Duration) float64
	// retries is the share of calls that are retries the gateway issued
	// (llm_gateway_retries_total); nil = no retries series.
	retries func(time.Duration) float64
	// tail puts a share of calls on a latency scale k times the rest's: a
	// long tail that moves P99 but hardly P50; nil = none.
	tail func(time.Duration) (share, k float64)
	// replyBytes is the mean reply size in bytes (the optional
	// llm_gateway_response_size_bytes histogram's _sum and _count, which is
	// what the shipped policy reads); nil = no size series.
	replyBytes func(time.Duration) float64
	// restart is true at the scrapes at which the gateway restarted: its
	// request counters and histograms start again from 0 (the probe
	// counters, another process's, go on); nil = never.
	restart func(time.Duration) bool
	// e2e, when set, is the chance that an end-to-end probe fails at t,
	// replacing e2eFailure's "as users' replies fail".
	e2e func(time.Duration) float64
}

// fault is a share of a route's calls answered with one verdict: a hard
// failure of a given code ("422", "timeout") or a soft failure of a given
// reason ("truncated", "fallback_phrase").
type fault struct {
	code, verdict, reason string
	share                 func(time.Duration) float64
}

// softFault is a share of 2xx replies whose content fails for reason.
func softFault(reason string, share func(time.Duration) float64) fault {
	return fault{code: "200", verdict: "soft_fail", reason: reason, share: share}
}

// hardFault is a share of calls answered with code, counted as hard failures.
func hardFault(code string, share func(time.Duration) float64) fault {
	return fault{code: code, verdict: "hard_fail", share: share}
}

func (f fault) labels() string {
	if f.reason == "" {
		return fmt.Sprintf(`,code=%q,verdict=%q`, f.code, f.verdict)
	}
	return fmt.Sprintf(`,code=%q,verdict=%q,reason=%q`, f.code, f.verdict, f.reason)
}

type scenario struct {
	name, doc string
	length    time.Duration
	routes    map[string]model
}

// window is a time during which a route is degraded: the ground truth that
// `make bench-detect` scores detection methods against.
type window struct {
	route    string
	from, to time.Duration
}

// degraded holds each scenario's degraded windows; a scenario not listed
// (healthy traffic, a low-traffic night, vanished metrics) has none.
var degraded = map[string][]window{
	"content_failure":     {{"free", 60 * m, 3 * h}},
	"hard_outage":         {{"free", 60 * m, 80 * m}},
	"latency_only":        {{"free", 90 * m, 2 * h}},
	"quota_drain":         {{"free", 2*h + 50*m + 24*time.Second, 4 * h}}, // runs out within the hour
	"false_recovery":      {{"free", 60 * m, 85 * m}, {"free", 110 * m, 130 * m}},
	"manual":              {{"free", 60 * m, 110 * m}},
	"three_degradations":  {{"free", 60 * m, 80 * m}, {"free", 4 * h, 4*h + 20*m}, {"free", 7 * h, 7*h + 20*m}},
	"cascade":             {{"free", 60 * m, 4 * h}, {"paid-standard", 90 * m, 4 * h}},
	"error_templates":     {{"free", 60 * m, 80 * m}},
	"unavailable_503":     {{"free", 60 * m, 80 * m}},
	"content_15":          {{"free", 60 * m, 2 * h}},
	"content_15_thin":     {{"free", 60 * m, 2 * h}},
	"failback_stage_2rps": {{"free", 60 * m, 80 * m}},
	"failback_3rps":       {{"free", 60 * m, 85 * m}},
	"idle_readiness":      {{"free", 60 * m, 2 * h}},
}

func zero(time.Duration) float64 { return 0 }
func one(time.Duration) float64  { return 1 }

// between returns v inside [from, to) and 0 elsewhere.
func between(from, to time.Duration, v float64) func(time.Duration) float64 {
	return func(t time.Duration) float64 {
		if t >= from && t < to {
			return v
		}
		return 0
	}
}

// ramp climbs linearly from a to b over [from, from+over), holds b until to.
func ramp(base, from, over, to time.Duration, a, b float64) func(time.Duration) float64 {
	_ = base
	return func(t time.Duration) float64 {
		switch {
		case t < from || t >= to:
			return 0
		case t < from+over:
			return a + (b-a)*float64(t-from)/float64(over)
		}
		return b
	}
}

func sum(fs ...func(time.Duration) float64) func(time.Duration) float64 {
	return func(t time.Duration) float64 {
		s := 0.0
		for _, f := range fs {
			s += f(t)
		}
		return s
	}
}

// spikes is a latency scale of 1 with single-scrape spikes of factor k every period.
func spikes(period time.Duration, k float64) func(time.Duration) float64 {
	return func(t time.Duration) float64 {
		if t > 0 && t%period == 7*step {
			return k
		}
		return 1
	}
}

func healthyPaid() model {
	return model{reqs: 60, soft: zero, hard: zero, latency: one, probeFail: zero}
}

func healthyFree() model {
	return model{reqs: 300, soft: zero, softReason: "invalid_json", noise: true, hard: zero, latency: spikes(23*time.Minute, 6), probeFail: zero}
}

func withPaid(free model) map[string]model {
	return map[string]model{"free": free, "paid-standard": healthyPaid(), "paid-premium": healthyPaid()}
}

var m = time.Minute
var h = time.Hour
