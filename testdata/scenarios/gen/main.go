// Command gen writes the backtest scenarios of testdata/scenarios as promtool
// input_series files. The series are synthetic but shaped like the incidents
// summarised in ../../../docs/design.md: counters per verdict, a latency
// histogram, quota and probe gauges, with seeded noise so every run writes
// the same bytes.
//
//	go run ./testdata/scenarios/gen [-dir testdata/scenarios]
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	probeFail  func(time.Duration) float64 // probe failure probability
	quota      func(time.Duration) float64 // remaining quota; nil = no quota
	absent     func(time.Duration) bool    // no series at all (scrape gap)
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
		{"healthy_24h", "24 h of healthy traffic: soft-fail 2 ± 1.5 % per scrape, a single-scrape P99 spike every 23 min.", 24 * h, withPaid(healthyFree())},
	}
	return append(list, incidents()...)
}

// Baseline latency CDF at the histogram's bucket bounds (scale 1).
var (
	bounds = []float64{0.25, 0.5, 1, 2, 4, 8, 16}
	cdf    = []float64{0.05, 0.25, 0.7, 0.95, 0.995, 0.999, 1}
)

// fracBelow is the share of requests faster than x seconds at scale 1.
func fracBelow(x float64) float64 {
	if x <= 0 {
		return 0
	}
	prevB, prevC := 0.0, 0.0
	for i, b := range bounds {
		if x <= b {
			return prevC + (cdf[i]-prevC)*(x-prevB)/(b-prevB)
		}
		prevB, prevC = b, cdf[i]
	}
	return 1
}

type series struct {
	name   string
	values []float64 // NaN = omitted
}

func generate(sc scenario) []series {
	rng := rand.New(rand.NewPCG(1, uint64(len(sc.name))))
	n := int(sc.length/step) + 1
	var out []series
	for _, route := range []string{"free", "paid-standard", "paid-premium"} {
		md, ok := sc.routes[route]
		if !ok {
			continue
		}
		lbl := func(extra string) string { return fmt.Sprintf(`route=%q%s`, route, extra) }
		okS := series{name: "llm_gateway_requests_total{" + lbl(`,code="200",verdict="ok"`) + "}"}
		softS := series{name: "llm_gateway_requests_total{" + lbl(fmt.Sprintf(`,code="200",verdict="soft_fail",reason=%q`, orDefault(md.softReason, "invalid_json"))) + "}"}
		hardS := series{name: "llm_gateway_requests_total{" + lbl(fmt.Sprintf(`,code=%q,verdict="hard_fail"`, orDefault(md.hardCode, "500"))) + "}"}
		buckets := make([]series, len(bounds)+1)
		for i, b := range bounds {
			buckets[i].name = fmt.Sprintf("llm_gateway_request_duration_seconds_bucket{%s,le=%q}", lbl(""), strconv.FormatFloat(b, 'g', -1, 64))
		}
		buckets[len(bounds)].name = fmt.Sprintf("llm_gateway_request_duration_seconds_bucket{%s,le=\"+Inf\"}", lbl(""))
		probe := series{name: fmt.Sprintf("llm_probe_success{%s,probe=\"chat\"}", lbl(""))}
		quota := series{name: fmt.Sprintf("llm_gateway_quota_remaining_ratio{%s}", lbl(""))}
		faultS := make([]series, len(md.faults))
		for j, f := range md.faults {
			faultS[j].name = "llm_gateway_requests_total{" + lbl(f.labels()) + "}"
		}
		retryS := series{name: fmt.Sprintf("llm_gateway_retries_total{%s}", lbl(""))}
		sizeSum := series{name: fmt.Sprintf("llm_gateway_response_size_bytes_sum{%s}", lbl(""))}
		sizeCount := series{name: fmt.Sprintf("llm_gateway_response_size_bytes_count{%s}", lbl(""))}
		var cOK, cSoft, cHard, cRetry, cSize, cReplies float64
		cFault := make([]float64, len(md.faults))
		cB := make([]float64, len(buckets))
		for i := 0; i < n; i++ {
			t := time.Duration(i) * step
			absent := md.absent != nil && md.absent(t)
			if i > 0 {
				reqs := float64(md.reqs)
				if md.volume != nil {
					reqs = math.Round(reqs * md.volume(t))
				}
				softShare := md.soft(t)
				if md.noise {
					softShare += 0.02 + (rng.Float64()*2-1)*0.015
				}
				hard := math.Round(reqs * clamp(md.hard(t)))
				soft := math.Round((reqs - hard) * clamp(softShare))
				if md.rate != nil {
					vol := 1.0
					if md.volume != nil {
						vol = md.volume(t)
					}
					reqs = poisson(rng, md.rate(t)*vol*step.Seconds())
					hard = binomial(rng, reqs, clamp(md.hard(t)))
					soft = binomial(rng, reqs-hard, clamp(softShare))
				}
				cHard += hard
				cSoft += soft
				left := reqs - hard - soft
				for j, f := range md.faults {
					k := math.Min(left, rare(rng, reqs, clamp(f.share(t))))
					cFault[j] += k
					left -= k
				}
				cOK += left
				scale := md.latency(t)
				q, k := 0.0, 1.0
				if md.tail != nil {
					q, k = md.tail(t)
				}
				for j := range bounds {
					cB[j] += math.Round(reqs * ((1-q)*fracBelow(bounds[j]/scale) + q*fracBelow(bounds[j]/(scale*k))))
				}
				cB[len(bounds)] += reqs
				if md.retries != nil {
					cRetry += math.Round(reqs * clamp(md.retries(t)))
				}
				if md.replyBytes != nil {
					cSize += math.Round(reqs * md.replyBytes(t))
					cReplies += reqs
				}
			}
			pv := 1.0
			if rng.Float64() < md.probeFail(t) {
				pv = 0
			}
			add := func(s *series, v float64) {
				if absent {
					v = math.NaN()
				}
				s.values = append(s.values, v)
			}
			add(&okS, cOK)
			add(&softS, cSoft)
			add(&hardS, cHard)
			for j := range faultS {
				add(&faultS[j], cFault[j])
			}
			for j := range buckets {
				add(&buckets[j], cB[j])
			}
			add(&probe, pv)
			if md.quota != nil {
				add(&quota, math.Round(md.quota(t)*1e6)/1e6)
			}
			if md.retries != nil {
				add(&retryS, cRetry)
			}
			if md.replyBytes != nil {
				add(&sizeSum, cSize)
				add(&sizeCount, cReplies)
			}
		}
		out = append(out, okS, softS, hardS)
		out = append(out, faultS...)
		out = append(out, buckets...)
		out = append(out, probe)
		if md.quota != nil {
			out = append(out, quota)
		}
		if md.retries != nil {
			out = append(out, retryS)
		}
		if md.replyBytes != nil {
			out = append(out, sizeSum, sizeCount)
		}
	}
	return out
}

// poisson draws a Poisson count of mean mu (Knuth's method below 30, a
// rounded normal above: the scenarios need the shape of thin traffic, not
// an exact tail).
func poisson(rng *rand.Rand, mu float64) float64 {
	if mu > 30 {
		return math.Max(0, math.Round(mu+math.Sqrt(mu)*rng.NormFloat64()))
	}
	l, k, p := math.Exp(-mu), 0.0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// rare draws how many of n calls of probability p fail: Poisson of mean
// n·p while that is small (a 0.2 % background of 422s is then not rounded
// to one call per scrape), binomial above.
func rare(rng *rand.Rand, n, p float64) float64 {
	if n*p < 30 {
		return math.Min(n, poisson(rng, n*p))
	}
	return binomial(rng, n, p)
}

// binomial draws how many of n trials of probability p succeed.
func binomial(rng *rand.Rand, n, p float64) float64 {
	if n > 200 {
		mu := n * p
		return math.Min(n, math.Max(0, math.Round(mu+math.Sqrt(mu*(1-p))*rng.NormFloat64())))
	}
	k := 0.0
	for range int(n) {
		if rng.Float64() < p {
			k++
		}
	}
	return k
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func clamp(v float64) float64 { return math.Max(0, math.Min(1, v)) }

// expand writes values in promtool's expanding notation, folding runs with
// a constant step ("a+bxN") and runs of omitted samples ("_xN").
func expand(vals []float64) string {
	var parts []string
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	micro := func(v float64) int64 { return int64(math.Round(v * 1e6)) }
	for i := 0; i < len(vals); {
		if math.IsNaN(vals[i]) {
			j := i
			for j+1 < len(vals) && math.IsNaN(vals[j+1]) {
				j++
			}
			if j == i {
				parts = append(parts, "_")
			} else {
				parts = append(parts, fmt.Sprintf("_x%d", j-i+1))
			}
			i = j + 1
			continue
		}
		if i+1 >= len(vals) || math.IsNaN(vals[i+1]) {
			parts = append(parts, f(vals[i]))
			i++
			continue
		}
		d := micro(vals[i+1]) - micro(vals[i])
		j := i + 1
		for j+1 < len(vals) && !math.IsNaN(vals[j+1]) && micro(vals[j+1])-micro(vals[j]) == d {
			j++
		}
		if j-i < 2 {
			parts = append(parts, f(vals[i]))
			i++
			continue
		}
		op := "+"
		if d < 0 {
			op, d = "-", -d
		}
		parts = append(parts, fmt.Sprintf("%s%s%sx%d", f(vals[i]), op, f(float64(d)/1e6), j-i))
		i = j + 1
	}
	return strings.Join(parts, " ")
}

func main() {
	dir := flag.String("dir", "testdata/scenarios", "where to write the scenario files")
	flag.Parse()
	truth := incidentTruth()
	for _, sc := range scenarios() {
		var b strings.Builder
		fmt.Fprintf(&b, "# Scenario %s: %s\n# Generated by `go run ./testdata/scenarios/gen`; edit gen/main.go, not this file.\n", sc.name, sc.doc)
		for _, w := range append(degraded[sc.name], truth[sc.name]...) {
			fmt.Fprintf(&b, "# degraded: %s %s %s\n", w.route, w.from, w.to)
		}
		fmt.Fprintf(&b, "interval: %s\ninput_series:\n", "15s")
		for _, s := range generate(sc) {
			fmt.Fprintf(&b, "  - series: '%s'\n    values: '%s'\n", s.name, expand(s.values))
		}
		path := filepath.Join(*dir, sc.name+".yaml")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Println("wrote", path)
		if sc.name == "content_failure" {
			// hermes demo embeds this scenario.
			demo := filepath.Join(*dir, "..", "..", "cmd", "hermes", "demo_content_failure.yaml")
			if err := os.WriteFile(demo, []byte(b.String()), 0o644); err != nil {
				log.Fatal(err)
			}
		}
	}
}
