package synth

import (
	"math"
	"time"
)

func scenarios() []scenario {
	content := healthyFree()
	content.soft = ramp(0, 60*m, 20*m, 3*h, 0, 0.38) // 2 % noise + 0..38 % = 2..40 %
	content.probeFail = ramp(0, 60*m, 20*m, 3*h, 0, 0.4)

	outage := healthyFree()
	outage.hard = between(60*m, 80*m, 1)
	outage.probeFail = between(60*m, 80*m, 1)

	latency := healthyFree()
	latency.latency = func(t time.Duration) float64 {
		if t >= 90*m && t < 120*m {
			return 3
		}
		return spikes(23*m, 6)(t)
	}

	quota := healthyFree()
	quota.quota = func(t time.Duration) float64 { return math.Max(0, 0.5-0.5*float64(t)/float64(4*h)) }

	falseRec := healthyFree()
	falseRec.soft = sum(between(60*m, 85*m, 0.4), between(110*m, 130*m, 0.4))
	falseRec.probeFail = falseRec.soft

	vanish := healthyFree()
	vanish.absent = func(t time.Duration) bool { return t >= 90*m && t < 100*m }
	vanishPaid := healthyPaid()
	vanishPaid.absent = vanish.absent

	manual := healthyFree()
	manual.soft = between(60*m, 110*m, 0.6)
	manual.probeFail = manual.soft

	three := healthyFree()
	three.soft = sum(between(60*m, 80*m, 0.4), between(4*h, 4*h+20*m, 0.4), between(7*h, 7*h+20*m, 0.4))
	three.probeFail = three.soft

	cascadeFree := healthyFree()
	cascadeFree.soft = between(60*m, 4*h, 0.5)
	cascadeFree.probeFail = cascadeFree.soft
	cascadeStd := healthyPaid()
	cascadeStd.hard = between(90*m, 4*h, 0.5)
	cascadeStd.probeFail = cascadeStd.hard

	// 20 req/s: error templates inside HTTP 200 on 40 % of calls from 1h to 1h20.
	templates := healthyFree()
	templates.soft = between(60*m, 80*m, 0.4)
	templates.softReason = "error_body"
	templates.probeFail = between(60*m, 80*m, 0.4)

	// 20 req/s: every call answers HTTP 503 from 1h to 1h20.
	unavailable := healthyFree()
	unavailable.hard = between(60*m, 80*m, 1)
	unavailable.hardCode = "503"
	unavailable.probeFail = unavailable.hard

	// 15 % content failures (2 % noise + 13 %) from 1h, at 20 and at 0.3 req/s.
	content15 := healthyFree()
	content15.soft = between(60*m, 2*h, 0.13)
	content15.probeFail = between(60*m, 2*h, 0.15)
	content15Thin := content15
	content15Thin.rate = func(time.Duration) float64 { return 0.3 }
	thinPaid := func(rps float64) model {
		md := healthyPaid()
		md.noise, md.softReason = true, "invalid_json"
		md.rate = func(time.Duration) float64 { return rps }
		return md
	}

	// A day, a 3 h night from 1h30 (free 0.3 req/s, backups ≤ 0.1), a day.
	nightRate := func(day, night float64) func(time.Duration) float64 {
		return func(t time.Duration) float64 {
			if t >= 90*m && t < 4*h+30*m {
				return night
			}
			return day
		}
	}
	nightFree := healthyFree()
	nightFree.rate = nightRate(20, 0.3)
	nightStd, nightPrem := thinPaid(0), thinPaid(0)
	nightStd.rate, nightPrem.rate = nightRate(4, 0.09), nightRate(4, 0.03)

	// A failback stage at 10 % of a 20 req/s service: the free route fails
	// (100 % HTTP 500) from 1h to 1h20 at 20 req/s, then is healthy and
	// gets the 2 req/s a first stage sends it (open loop: from 1h20 on,
	// whatever its stage).
	thinStage := healthyFree()
	thinStage.hard = between(60*m, 80*m, 1)
	thinStage.probeFail = thinStage.hard
	thinStage.rate = func(t time.Duration) float64 {
		if t < 80*m {
			return 20
		}
		return 2
	}

	// A service of 3 req/s whose free route answers 30 % of its calls
	// with an error template inside HTTP 200 ("系统繁忙") from 1h to 1h25,
	// then recovers (within failback.manual_after of its failover: longer
	// and a person is rightly called). Its readiness probe passes throughout (the model is
	// listed); its end-to-end probes fail as users' replies do. From the
	// failover on, the free route gets what a first failback stage at
	// 10 % sends it, 0.3 req/s (open loop: the series do not follow the
	// later stages, which only makes them thinner than they would be).
	busy3 := healthyFree()
	busy3.faults = []fault{softFault("error_body", between(60*m, 85*m, 0.3))}
	busy3.rate = func(t time.Duration) float64 {
		if t < 60*m {
			return 3
		}
		return 0.3
	}
	busy3Paid := func(rps float64) model {
		md := healthyPaid()
		md.rate = func(t time.Duration) float64 {
			if t < 60*m {
				return rps
			}
			return rps + 2.7
		}
		return md
	}

	idle := func() model {
		md := healthyPaid()
		md.rate = func(time.Duration) float64 { return 0 }
		return md
	}
	idleFree := idle()
	idleFree.probeFail = between(60*m, 2*h, 1)

	list := []scenario{
		{"healthy", "6 h of healthy traffic: soft-fail 2 ± 1.5 % per scrape, a single-scrape P99 spike every 23 min.", 6 * h, withPaid(healthyFree())},
		{"content_failure", "Soft-fail ratio of the free route climbs from 2 % to 40 % between 1h and 1h20 with HTTP 200 throughout.", 3 * h, withPaid(content)},
		{"hard_outage", "The free route answers 100 % HTTP 500 from 1h to 1h20.", 3 * h, withPaid(outage)},
		{"latency_only", "P99 of the free route is 3× its baseline from 1h30 to 2h; content is fine.", 3 * h, withPaid(latency)},
		{"quota_drain", "The free route's quota drains linearly from 50 % to 0 over 4 h.", 4 * h, withPaid(quota)},
		{"false_recovery", "The free route fails (40 % soft-fail) 1h–1h25, looks healthy for 25 min, fails again 1h50–2h10, then recovers.", 5 * h, withPaid(falseRec)},
		{"metrics_vanish", "Every series disappears for 10 min at 1h30.", 3 * h, map[string]model{"free": vanish, "paid-standard": vanishPaid, "paid-premium": vanishPaid}},
		{"manual", "The free route fails (60 % soft-fail) from 1h to 1h50, then is healthy.", 4 * h, withPaid(manual)},
		{"three_degradations", "Three 20-minute degradations of the free route at 1h, 4h and 7h.", 10 * h, withPaid(three)},
		{"cascade", "The free route fails from 1h; paid-standard fails too (50 % HTTP 500) from 1h30.", 3 * h, map[string]model{"free": cascadeFree, "paid-standard": cascadeStd, "paid-premium": healthyPaid()}},
		{"error_templates", "At 20 req/s the free route returns error templates inside HTTP 200 on 40 % of calls from 1h to 1h20.", 3 * h, withPaid(templates)},
		{"unavailable_503", "At 20 req/s the free route answers every call with HTTP 503 from 1h to 1h20.", 3 * h, withPaid(unavailable)},
		{"content_15", "At 20 req/s 15 % of the free route's replies fail validation from 1h to 2h.", 3 * h, withPaid(content15)},
		{"content_15_thin", "At 0.3 req/s (backups 0.1) 15 % of the free route's replies fail validation from 1h to 2h.", 3 * h,
			map[string]model{"free": content15Thin, "paid-standard": thinPaid(0.1), "paid-premium": thinPaid(0.1)}},
		{"low_traffic_night", "Healthy traffic with a 3 h night from 1h30: free 0.3 req/s, paid-standard 0.09, paid-premium 0.03; then daytime again.", 6 * h,
			map[string]model{"free": nightFree, "paid-standard": nightStd, "paid-premium": nightPrem}},
		{"failback_stage_2rps", "At 20 req/s the free route fails (100 % HTTP 500) from 1h to 1h20, then is healthy at the 2 req/s a first failback stage at 10 % sends it.", 3 * h, withPaid(thinStage)},
		{"failback_3rps", "A 3 req/s service: 30 % of the free route's replies are error templates inside HTTP 200 from 1h to 1h25, its readiness probe passing; then it recovers and gets a first stage's 0.3 req/s.", 4 * h,
			map[string]model{"free": busy3, "paid-standard": busy3Paid(0.3), "paid-premium": busy3Paid(0.1)}},
		{"idle_readiness", "No user calls reach any route (counters there and flat, a quiet night); from 1h to 2h the free route's readiness probe fails.", 3 * h,
			map[string]model{"free": idleFree, "paid-standard": idle(), "paid-premium": idle()}},
		{"healthy_24h", "24 h of healthy traffic: soft-fail 2 ± 1.5 % per scrape, a single-scrape P99 spike every 23 min.", 24 * h, withPaid(healthyFree())},
	}
	return append(list, incidents()...)
}

// Baseline latency CDF at the histogram's bucket bounds (scale 1).
