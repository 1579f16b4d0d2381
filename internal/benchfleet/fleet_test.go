package benchfleet

import (
	"slices"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/rules/config"
)

func TestSeriesStretchesCountersAndCopiesRoutes(t *testing.T) {
	src := &backtest.File{Interval: 15 * time.Second}
	for _, r := range Templates {
		src.Series = append(src.Series,
			backtest.Series{Labels: labels.FromStrings("__name__", "llm_gateway_requests_total", "route", r),
				Samples: []backtest.Sample{{T: 0, F: 0}, {T: 15000, F: 10}, {T: 30000, F: 20}}},
			backtest.Series{Labels: labels.FromStrings("__name__", "llm_probe_success", "route", r),
				Samples: []backtest.Sample{{T: 0, F: 1}, {T: 15000, F: 0}, {T: 30000, F: 1}}})
	}
	f := Series(src, 5, 2)
	if len(f.Series) != 10 {
		t.Fatalf("%d series, want 2 per route × 5 routes", len(f.Series))
	}
	var routes []string
	for _, s := range f.Series {
		routes = append(routes, s.Labels.Get("route"))
		var got []float64
		var times []int64
		for _, smp := range s.Samples {
			got, times = append(got, smp.F), append(times, smp.T)
		}
		if want := []int64{0, 15000, 30000, 45000, 60000, 75000}; !slices.Equal(times, want) {
			t.Errorf("%s: times %v, want %v", s.Labels, times, want)
		}
		want := []float64{1, 0, 1, 1, 0, 1}
		if s.Labels.Get(labels.MetricName) == "llm_gateway_requests_total" {
			want = []float64{0, 10, 20, 20, 30, 40} // the counter continues
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: values %v, want %v", s.Labels, got, want)
		}
	}
	routes = slices.Compact(routes)
	if want := []string{"free", "paid-standard", "paid-premium", "free-1", "paid-standard-1"}; !slices.Equal(routes, want) {
		t.Errorf("routes %v, want %v", routes, want)
	}
}

func TestConfigYAMLIsAValidFleet(t *testing.T) {
	src, err := ConfigYAML(10)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(src, "fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, svc := range cfg.Services {
		got = append(got, svc.Name)
		if svc.Name == "chat" && !slices.Equal(svc.Routes, Templates) {
			t.Errorf("service chat has routes %v, want the shipped %v", svc.Routes, Templates)
		}
	}
	if want := []string{"chat", "chat-1", "chat-2", "chat-3"}; !slices.Equal(got, want) {
		t.Errorf("services %v, want %v", got, want)
	}
	if n := len(cfg.Services[3].Routes); n != 1 {
		t.Errorf("last service has %d routes, want the remaining 1", n)
	}
}
