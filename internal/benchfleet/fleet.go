// Package benchfleet stretches a scenario of the shipped service to a fleet
// of routes over a long range, for the benchmarks of make bench and the
// side-by-side run against promtool (scripts/bench-promtool.sh).
package benchfleet

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// Templates are the routes of the shipped service, in chain order; the
// scenarios in testdata/scenarios have series for each.
var Templates = []string{"free", "paid-standard", "paid-premium"}

// Route is the name of the fleet's route i: a copy of template i mod 3,
// named as the template in the first copy and "<template>-K" in copy K, so
// a fleet of 3 routes is the shipped service itself.
func Route(i int) string {
	t, k := Templates[i%len(Templates)], i/len(Templates)
	if k == 0 {
		return t
	}
	return fmt.Sprintf("%s-%d", t, k)
}

// Series stretches f (series of the Templates routes) to routes routes,
// repeated reps times end to end. Counter series (_total, _bucket, _count,
// _sum) continue from their last value at each repetition, so rates stay
// those of the scenario.
func Series(f *backtest.File, routes, reps int) *backtest.File {
	byRoute := map[string][]backtest.Series{}
	var span int64
	for _, s := range f.Series {
		r := s.Labels.Get("route")
		byRoute[r] = append(byRoute[r], s)
		if n := len(s.Samples); n > 0 {
			span = max(span, s.Samples[n-1].T-s.Samples[0].T+f.Interval.Milliseconds())
		}
	}
	out := &backtest.File{Interval: f.Interval}
	for i := range routes {
		for _, s := range byRoute[Templates[i%len(Templates)]] {
			lb := labels.NewBuilder(s.Labels)
			lb.Set("route", Route(i))
			counter := isCounter(s.Labels.Get(labels.MetricName))
			samples := make([]backtest.Sample, 0, reps*len(s.Samples))
			offset := 0.0
			for rep := range reps {
				for _, smp := range s.Samples {
					samples = append(samples, backtest.Sample{T: smp.T + int64(rep)*span, F: smp.F + offset})
				}
				if counter && len(s.Samples) > 0 {
					offset += s.Samples[len(s.Samples)-1].F
				}
			}
			out.Series = append(out.Series, backtest.Series{Labels: lb.Labels(), Samples: samples})
		}
	}
	return out
}

func isCounter(name string) bool {
	for _, suffix := range []string{"_total", "_bucket", "_count", "_sum"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// Services is a configuration edit: the services of a fleet of routes
// routes, "chat" then "chat-K", each a chain of up to 3 routes as the
// shipped service.
func Services(routes int) func(*config.Config) {
	return func(cfg *config.Config) {
		cfg.Services = nil
		for i := range routes {
			if i%len(Templates) == 0 {
				name := "chat"
				if k := i / len(Templates); k > 0 {
					name = fmt.Sprintf("chat-%d", k)
				}
				cfg.Services = append(cfg.Services, rules.ServiceConfig{Name: name})
			}
			svc := &cfg.Services[len(cfg.Services)-1]
			svc.Routes = append(svc.Routes, Route(i))
		}
	}
}

// WriteSeries writes f in Hermes's series notation (interval and
// input_series, every value explicit), which `hermes backtest --series`
// reads. With indent "  " and a tests entry around it, the same lines are
// a promtool test group's input_series.
func WriteSeries(w io.Writer, f *backtest.File, indent string) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%sinterval: %s\n%sinput_series:\n", indent, model(f.Interval), indent)
	for _, s := range f.Series {
		fmt.Fprintf(bw, "%s  - series: '%s'\n%s    values: '", indent, s.Labels.String(), indent)
		for i, smp := range s.Samples {
			if i > 0 {
				bw.WriteByte(' ')
			}
			bw.WriteString(strconv.FormatFloat(smp.F, 'g', -1, 64))
		}
		bw.WriteString("'\n")
	}
	return bw.Flush()
}

// model formats d as Prometheus durations are written (15s, 1m).
func model(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}

// ConfigYAML is the shipped configuration (rules.DefaultYAML) with the
// services of a fleet of routes routes (see Services), as a file that
// hermes run and hermes backtest read.
func ConfigYAML(routes int) ([]byte, error) {
	return ConfigYAMLFrom(rules.DefaultYAML, routes)
}

// ConfigYAMLFrom is ConfigYAML for another configuration src (such as
// rules/hermes-at-scale.yaml), whose services section comes before its
// alerts as in the shipped one.
func ConfigYAMLFrom(src []byte, routes int) ([]byte, error) {
	var b strings.Builder
	b.WriteString("services:\n")
	cfg := &config.Config{}
	Services(routes)(cfg)
	for _, svc := range cfg.Services {
		fmt.Fprintf(&b, "  - name: %s\n    routes: [%s]\n", svc.Name, strings.Join(svc.Routes, ", "))
	}
	text := string(src)
	i := strings.Index(text, "\nservices:\n")
	j := strings.Index(text, "\nalerts:\n")
	if i < 0 || j < i {
		return nil, fmt.Errorf("configuration has no services section before its alerts")
	}
	return []byte(text[:i+1] + b.String() + text[j:]), nil
}
