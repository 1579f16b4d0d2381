package promfleet

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	neturl "net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// RuleGroup is how one rule group of a Prometheus keeps up, from the
// Prometheus's own /metrics (its rule manager's prometheus_rule_group_*
// series): the load-independent evidence that its records are fresh is
// that each round takes well under the group's interval.
type RuleGroup struct {
	Name string // the file and the group, as Prometheus labels it: "FILE;GROUP"
	// Interval is the group's evaluation interval.
	Interval time.Duration
	// LastDuration is how long its last round of evaluations took.
	LastDuration time.Duration
	// Missed counts the rounds skipped because the one before ran past its
	// interval.
	Missed float64
}

// String is the group's name without its file, its last round and its
// interval, and the rounds missed.
func (g RuleGroup) String() string {
	name := g.Name[strings.LastIndex(g.Name, ";")+1:]
	return fmt.Sprintf("%s %s of %s (%g missed)", name, g.LastDuration.Round(time.Millisecond), g.Interval, g.Missed)
}

// RuleGroups reads the rule groups of the Prometheus at url, by name.
func RuleGroups(ctx context.Context, client *http.Client, url string) ([]RuleGroup, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading rule groups: %w", err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading rule groups from %s/metrics: %w", url, err)
	}
	byName := map[string]*RuleGroup{}
	set := func(family string, f func(*RuleGroup, float64)) {
		mf := families[family]
		if mf == nil {
			return
		}
		for _, m := range mf.GetMetric() {
			name := label(m, "rule_group")
			g := byName[name]
			if g == nil {
				g = &RuleGroup{Name: name}
				byName[name] = g
			}
			f(g, m.GetGauge().GetValue()+m.GetCounter().GetValue())
		}
	}
	seconds := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	set("prometheus_rule_group_interval_seconds", func(g *RuleGroup, v float64) { g.Interval = seconds(v) })
	set("prometheus_rule_group_last_duration_seconds", func(g *RuleGroup, v float64) { g.LastDuration = seconds(v) })
	set("prometheus_rule_group_iterations_missed_total", func(g *RuleGroup, v float64) { g.Missed = v })
	out := make([]RuleGroup, 0, len(byName))
	for _, g := range byName {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b RuleGroup) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// label is the value of m's label name, "" without one.
func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// QuerySamples runs expr as an instant query at time at on the Prometheus
// at url and returns how many samples its evaluation read (the query
// statistics' totalQueryableSamples): the work of a rule, whatever the
// machine's load.
func QuerySamples(ctx context.Context, client *http.Client, url, expr string, at time.Time) (int64, error) {
	form := neturl.Values{"query": {expr}, "stats": {"all"}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/v1/query", strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("querying %q: %w", expr, err)
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Stats struct {
				Samples struct {
					TotalQueryableSamples int64 `json:"totalQueryableSamples"`
				} `json:"samples"`
			} `json:"stats"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, fmt.Errorf("querying %q: %w", expr, err)
	}
	if out.Status != "success" {
		return 0, fmt.Errorf("querying %q: %s", expr, out.Error)
	}
	return out.Data.Stats.Samples.TotalQueryableSamples, nil
}
