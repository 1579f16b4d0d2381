package synth

import "time"

// The incident corpus: failure shapes from the incident write-ups (docs/design.md,
// I1–I4) that the ratio-only rules of today miss or mishandle, each at the
// rates the write-ups give, on the gateway metric contract.

// flapPeriod and flapBad shape the flapping upstream: bad for 4 minutes of
// every 8, in I2's 5–10 minute swings of the free route's quality.
const (
	flapFrom, flapTo = 60 * time.Minute, 3 * time.Hour
	flapPeriod       = 8 * time.Minute
	flapBad          = 4 * time.Minute
)

// flapping is v during the bad half of each period between flapFrom and flapTo.
func flapping(v float64) func(time.Duration) float64 {
	return func(t time.Duration) float64 {
		if t >= flapFrom && t < flapTo && (t-flapFrom)%flapPeriod < flapBad {
			return v
		}
		return 0
	}
}

// incidentTruth holds the degraded windows of the incident corpus.
func incidentTruth() map[string][]window {
	var flaps []window
	for from := flapFrom; from < flapTo; from += flapPeriod {
		flaps = append(flaps, window{"free", from, from + flapBad})
	}
	return map[string][]window{
		"truncation":        {{"free", 60 * m, 2 * h}},
		"fallback_phrases":  {{"free", 60 * m, 100 * m}},
		"status_422_surge":  {{"free", 60 * m, 2 * h}},
		"latency_long_tail": {{"free", 90 * m, 2 * h}},
		"retry_storm":       {{"free", 60 * m, 100 * m}},
		"retry_surge":       {{"free", 60 * m, 85 * m}},
		"flapping":          flaps,
		"all_routes_bad":    {{"free", 60 * m, 90 * m}, {"paid-standard", 60 * m, 90 * m}, {"paid-premium", 60 * m, 90 * m}},
		"content_rise_slow": {{"free", 60 * m, 5 * h}},
		"content_rise_fast": {{"free", 60 * m, 90 * m}},
	}
}

func incidents() []scenario {
	// I3: 18 % of replies truncated and 2 % empty (a sample of 100 replies
	// taken during the incident), reached over 10 minutes from 1h; a
	// truncated reply keeps about a third of its bytes, so the mean reply
	// size (1.8 kB) falls by about 14 %. End-to-end probes judge replies
	// like users', so as many fail.
	trunc := healthyFree()
	trunc.faults = []fault{
		softFault("truncated", ramp(0, 60*m, 10*m, 2*h, 0, 0.18)),
		softFault("empty", ramp(0, 60*m, 10*m, 2*h, 0, 0.02)),
	}
	trunc.probeFail = ramp(0, 60*m, 10*m, 2*h, 0, 0.2)
	trunc.replyBytes = func(t time.Duration) float64 {
		return 1800 * (1 - trunc.faults[0].share(t)*2/3 - trunc.faults[1].share(t))
	}

	// I1, I2: under load the provider answers a quarter of calls with a
	// canned phrase inside a well-formed completion ("系统繁忙，请稍后重试",
	// "I'm sorry, I can't help with that right now"), which the gateway's
	// validator labels fallback_phrase; 1h to 1h40.
	fallback := healthyFree()
	fallback.faults = []fault{softFault("fallback_phrase", between(60*m, 100*m, 0.25))}
	fallback.probeFail = between(60*m, 100*m, 0.25)

	// I2: 422 is 0.2 % of the free route's calls until the provider silently
	// caps max_tokens at 1024; from 1h every call asking for more (30 %, the
	// long answers) is refused with HTTP 422 until the caller's template is
	// fixed at 2h. The paid routes accept the parameter.
	s422 := healthyFree()
	s422.faults = []fault{hardFault("422", sum(func(time.Duration) float64 { return 0.002 }, between(60*m, 2*h, 0.3)))}
	s422.probeFail = between(60*m, 2*h, 0.3)

	// I1: P99 jumps far above its baseline while P50 stays flat: from 1h30
	// to 2h, 3 % of calls queue behind a slow shard and take ten times
	// longer (the mean rises by about a quarter, far less than P99).
	tail := healthyFree()
	tail.tail = func(t time.Duration) (float64, float64) {
		if t >= 90*m && t < 2*h {
			return 0.03, 10
		}
		return 0, 1
	}

	// I2: a retry storm. A healthy surge first (traffic ×3 from 30m to 45m,
	// replies fine: volume alone is no evidence). From 1h the free route
	// times out on a share of calls climbing to 30 % over 15 min, held to
	// 1h40; gateway and callers retry what failed, so upstream calls grow
	// with the failures (×3.1 at 30 %) and retries are most of them.
	storm := healthyFree()
	timeouts := ramp(0, 60*m, 15*m, 100*m, 0, 0.3)
	storm.faults = []fault{hardFault("timeout", timeouts)}
	storm.volume = func(t time.Duration) float64 {
		if t >= 30*m && t < 45*m {
			return 3
		}
		return 1 + 7*timeouts(t)
	}
	storm.retries = func(t time.Duration) float64 {
		if t >= 30*m && t < 45*m {
			return 0.01
		}
		return 0.01 + 7*timeouts(t)/(1+7*timeouts(t))
	}
	storm.probeFail = timeouts

	// The incident write-ups' sign that the upstream is changing its rules
	// or overloaded: from 1h retries per call climb from 1 % to 25 %,
	// latency to 1.7 × its baseline and HTTP 422 from 0.2 % to 1 %, all
	// within 5 minutes, with no reply failing otherwise; until 1h25.
	surge := healthyFree()
	surge.retries = sum(func(time.Duration) float64 { return 0.01 }, ramp(0, 60*m, 5*m, 85*m, 0, 0.24))
	surge.latency = sum(func(time.Duration) float64 { return 1 }, ramp(0, 60*m, 5*m, 85*m, 0, 0.7))
	surge.faults = []fault{hardFault("422", sum(func(time.Duration) float64 { return 0.002 }, ramp(0, 60*m, 5*m, 85*m, 0, 0.008)))}

	// I2: the free route's quality swings: 40 % of replies fail for 4
	// minutes of every 8 from 1h to 3h, then it is healthy.
	flap := healthyFree()
	flap.soft = flapping(0.38)
	flap.probeFail = flapping(0.4)

	// I3: the provider itself is overloaded from 1h to 1h30 and every route
	// fails at once: free answers 60 % HTTP 503, paid-standard 40 %, and
	// paid-premium returns error templates inside HTTP 200 on 20 % of calls.
	allFree := healthyFree()
	allFree.hard, allFree.hardCode = between(60*m, 90*m, 0.6), "503"
	allFree.probeFail = allFree.hard
	allStd := healthyPaid()
	allStd.hard, allStd.hardCode = between(60*m, 90*m, 0.4), "503"
	allStd.probeFail = allStd.hard
	allPrem := healthyPaid()
	allPrem.soft, allPrem.softReason = between(60*m, 90*m, 0.2), "error_body"
	allPrem.probeFail = allPrem.soft

	// I3: content failures drift up slowly, 2 % to 40 % over 3 h from 1h
	// (I3's free route drifted for four hours before anyone switched).
	slow := healthyFree()
	slow.soft = ramp(0, 60*m, 3*h, 5*h, 0, 0.38)
	slow.probeFail = ramp(0, 60*m, 3*h, 5*h, 0, 0.4)

	// I1: the same failure, fast: 2 % to 40 % within 2 minutes from 1h,
	// held to 1h30.
	fast := healthyFree()
	fast.soft = ramp(0, 60*m, 2*m, 90*m, 0, 0.38)
	fast.probeFail = ramp(0, 60*m, 2*m, 90*m, 0, 0.4)

	return []scenario{
		{"truncation", "From 1h the free route's replies are cut short inside HTTP 200: truncated climbs to 18 % and empty to 2 % over 10 min, until 2h; the mean reply size falls 14 %.", 3 * h, withPaid(trunc)},
		{"fallback_phrases", "From 1h to 1h40 a quarter of the free route's completions are canned phrases (\"系统繁忙\", \"I can't help with that\") inside HTTP 200.", 3 * h, withPaid(fallback)},
		{"status_422_surge", "The free route answers 0.2 % HTTP 422 until a silent parameter change refuses 30 % of calls with 422 from 1h to 2h.", 3 * h, withPaid(s422)},
		{"latency_long_tail", "From 1h30 to 2h 3 % of the free route's calls take ten times longer: P99 far above its baseline, P50 flat.", 3 * h, withPaid(tail)},
		{"retry_storm", "A healthy surge (×3 calls) at 30m–45m; from 1h timeouts climb to 30 % of the free route's calls and retries triple its calls, until 1h40.", 3 * h, withPaid(storm)},
		{"retry_surge", "From 1h to 1h25 the free route's retries per call climb from 1 % to 25 %, its latency to 1.7 × and its HTTP 422 from 0.2 % to 1 %, within 5 minutes; no reply fails otherwise.", 3 * h, withPaid(surge)},
		{"flapping", "From 1h to 3h the free route is bad (40 % soft-fail) for 4 minutes of every 8, then healthy.", 6 * h, withPaid(flap)},
		{"all_routes_bad", "From 1h to 1h30 every route fails: free 60 % and paid-standard 40 % HTTP 503, paid-premium 20 % error templates in HTTP 200.", 3 * h,
			map[string]model{"free": allFree, "paid-standard": allStd, "paid-premium": allPrem}},
		{"content_rise_slow", "The free route's soft-fail ratio drifts from 2 % to 40 % over 3 h from 1h, with HTTP 200 throughout.", 5 * h, withPaid(slow)},
		{"content_rise_fast", "The free route's soft-fail ratio jumps from 2 % to 40 % within 2 min at 1h and stays there until 1h30.", 3 * h, withPaid(fast)},
	}
}
