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
	reqs       int                         // requests per scrape interval
	soft       func(time.Duration) float64 // soft-fail share before noise
	softReason string
	noise      bool                        // soft-fail share ± 1.5 % per scrape
	hard       func(time.Duration) float64 // hard-fail (HTTP 500) share
	latency    func(time.Duration) float64 // latency scale, 1 = baseline
	probeFail  func(time.Duration) float64 // probe failure probability
	quota      func(time.Duration) float64 // remaining quota; nil = no quota
	absent     func(time.Duration) bool    // no series at all (scrape gap)
}

type scenario struct {
	name, doc string
	length    time.Duration
	routes    map[string]model
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
	falseRec.soft = sum(between(60*m, 90*m, 0.4), between(110*m, 130*m, 0.4))
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

	return []scenario{
		{"healthy", "6 h of healthy traffic: soft-fail 2 ± 1.5 % per scrape, a single-scrape P99 spike every 23 min.", 6 * h, withPaid(healthyFree())},
		{"content_failure", "Soft-fail ratio of the free route climbs from 2 % to 40 % between 1h and 1h20 with HTTP 200 throughout.", 3 * h, withPaid(content)},
		{"hard_outage", "The free route answers 100 % HTTP 500 from 1h to 1h20.", 3 * h, withPaid(outage)},
		{"latency_only", "P99 of the free route is 3× its baseline from 1h30 to 2h; content is fine.", 3 * h, withPaid(latency)},
		{"quota_drain", "The free route's quota drains linearly from 50 % to 0 over 4 h.", 4 * h, withPaid(quota)},
		{"false_recovery", "The free route fails (40 % soft-fail) 1h–1h30, looks healthy for 20 min, fails again 1h50–2h10, then recovers.", 5 * h, withPaid(falseRec)},
		{"metrics_vanish", "Every series disappears for 10 min at 1h30.", 3 * h, map[string]model{"free": vanish, "paid-standard": vanishPaid, "paid-premium": vanishPaid}},
		{"manual", "The free route fails (60 % soft-fail) from 1h to 1h50, then is healthy.", 4 * h, withPaid(manual)},
		{"three_degradations", "Three 20-minute degradations of the free route at 1h, 4h and 7h.", 10 * h, withPaid(three)},
		{"cascade", "The free route fails from 1h; paid-standard fails too (50 % HTTP 500) from 1h30.", 3 * h, map[string]model{"free": cascadeFree, "paid-standard": cascadeStd, "paid-premium": healthyPaid()}},
	}
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
		hardS := series{name: "llm_gateway_requests_total{" + lbl(`,code="500",verdict="hard_fail"`) + "}"}
		buckets := make([]series, len(bounds)+1)
		for i, b := range bounds {
			buckets[i].name = fmt.Sprintf("llm_gateway_request_duration_seconds_bucket{%s,le=%q}", lbl(""), strconv.FormatFloat(b, 'g', -1, 64))
		}
		buckets[len(bounds)].name = fmt.Sprintf("llm_gateway_request_duration_seconds_bucket{%s,le=\"+Inf\"}", lbl(""))
		probe := series{name: fmt.Sprintf("llm_probe_success{%s,probe=\"chat\"}", lbl(""))}
		quota := series{name: fmt.Sprintf("llm_gateway_quota_remaining_ratio{%s}", lbl(""))}
		var cOK, cSoft, cHard float64
		cB := make([]float64, len(buckets))
		for i := 0; i < n; i++ {
			t := time.Duration(i) * step
			absent := md.absent != nil && md.absent(t)
			if i > 0 {
				reqs := float64(md.reqs)
				hard := math.Round(reqs * clamp(md.hard(t)))
				softShare := md.soft(t)
				if md.noise {
					softShare += 0.02 + (rng.Float64()*2-1)*0.015
				}
				soft := math.Round((reqs - hard) * clamp(softShare))
				cHard += hard
				cSoft += soft
				cOK += reqs - hard - soft
				scale := md.latency(t)
				for j := range bounds {
					cB[j] += math.Round(reqs * fracBelow(bounds[j]/scale))
				}
				cB[len(bounds)] += reqs
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
			for j := range buckets {
				add(&buckets[j], cB[j])
			}
			add(&probe, pv)
			if md.quota != nil {
				add(&quota, math.Round(md.quota(t)*1e6)/1e6)
			}
		}
		out = append(out, okS, softS, hardS)
		out = append(out, buckets...)
		out = append(out, probe)
		if md.quota != nil {
			out = append(out, quota)
		}
	}
	return out
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
	for _, sc := range scenarios() {
		var b strings.Builder
		fmt.Fprintf(&b, "# Scenario %s: %s\n# Generated by `go run ./testdata/scenarios/gen`; edit gen/main.go, not this file.\n", sc.name, sc.doc)
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
