package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

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

// series is one drawn series: its name with labels, and a value per
// scrape.
type series struct {
	name   string
	values []float64 // NaN = omitted
}

// generate draws the series of sc, route by route, one value per scrape:
// counters per verdict, the latency histogram, the probe, and the quota,
// retries and reply sizes where the route's model has them. seed draws the
// noise; 0 takes the length of the scenario's name, as the
// files of testdata/scenarios were first drawn.
func generate(sc scenario, seed uint64) []series {
	if seed == 0 {
		seed = uint64(len(sc.name))
	}
	rng := rand.New(rand.NewPCG(1, seed))
	probeRng := rand.New(rand.NewPCG(3, seed))
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
		probes := newProbeCounters(route, orDefault(md.softReason, "invalid_json"))
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
			if i > 0 && md.restart != nil && md.restart(t) {
				cOK, cSoft, cHard, cRetry, cSize, cReplies = 0, 0, 0, 0, 0, 0
				clear(cFault)
				clear(cB)
			}
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
			// The draw of the scrape-sampled probe gauge the files held
			// before the probes were counted by result: kept so that the
			// series drawn after it stay as they were.
			_ = rng.Float64()
			probes.draw(probeRng, md, t)
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
			probes.add(absent, md.noE2E)
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
		out = append(out, probes.series(md.noE2E)...)
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
