package dashboards

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

const dashboardFile = "hermes.json"

// dsVar is how panels and targets name the data source: the template variable.
const dsVar = "${datasource}"

// exported lists the series a Hermes dashboard may read: Hermes's own
// metrics, plus Prometheus's up and ALERTS.
var exported = []string{
	"hermes_route_score", "hermes_route_level", "hermes_route_level_since_timestamp_seconds",
	"hermes_route_traffic_ratio", "hermes_signal_value", "hermes_signal_penalty",
	"hermes_failback_stage", "hermes_failbacks_total",
	"hermes_tick_duration_seconds_bucket", "hermes_tick_duration_seconds_count", "hermes_tick_duration_seconds_sum",
	"hermes_ticks_total", "hermes_ticks_skipped_total", "hermes_query_errors_total",
	"hermes_last_tick_timestamp_seconds", "hermes_config_last_reload_successful", "hermes_actuations_total",
	"hermes_alert_active_since_timestamp_seconds", "hermes_alert_eval_errors_total",
	"up", "ALERTS",
}

// variables stands in for Grafana's variables so that queries parse.
var variables = strings.NewReplacer(
	"$__rate_interval", "1m",
	"${__rate_interval}", "1m",
	"$__interval", "15s",
	"${__interval}", "15s",
	"$__range", "6h",
	"${__range}", "6h",
	"${route}", "free",
	"$route", "free",
	"${service}", "chat",
	"$service", "chat",
	"${job}", "hermes",
	"$job", "hermes",
	"${instance}", "hermes-0:9797",
	"$instance", "hermes-0:9797",
)

type dashboard struct {
	Title         string `json:"title"`
	UID           string `json:"uid"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name       string      `json:"name"`
			Datasource *datasource `json:"datasource"`
			Expr       string      `json:"expr"`
		} `json:"list"`
	} `json:"annotations"`
	Panels []panel `json:"panels"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Datasource *datasource     `json:"datasource"`
}

// queryText is the variable's query, a string or {"query": "…"}.
func (v variable) queryText() string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var q struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(v.Query, &q)
	return q.Query
}

type panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *datasource `json:"datasource"`
	GridPos    struct {
		X int `json:"x"`
		Y int `json:"y"`
		W int `json:"w"`
		H int `json:"h"`
	} `json:"gridPos"`
	Targets []struct {
		RefID      string      `json:"refId"`
		Expr       string      `json:"expr"`
		Datasource *datasource `json:"datasource"`
	} `json:"targets"`
	FieldConfig struct {
		Defaults struct {
			Thresholds struct {
				Steps []struct {
					Color string   `json:"color"`
					Value *float64 `json:"value"`
				} `json:"steps"`
			} `json:"thresholds"`
			Mappings []struct {
				Type    string `json:"type"`
				Options map[string]struct {
					Text string `json:"text"`
				} `json:"options"`
			} `json:"mappings"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Panels []panel `json:"panels"` // of a collapsed row
}

func load(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// layout returns the panels in reading order (top to bottom, left to right),
// the panels of collapsed rows right after their row.
func layout(d dashboard) []panel {
	top := slices.Clone(d.Panels)
	sort.SliceStable(top, func(i, j int) bool {
		a, b := top[i].GridPos, top[j].GridPos
		return a.Y < b.Y || a.Y == b.Y && a.X < b.X
	})
	var all []panel
	for _, p := range top {
		all = append(all, p)
		all = append(all, p.Panels...)
	}
	return all
}

// metrics returns the metric names an expression reads.
func metrics(expr parser.Expr) []string {
	var names []string
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			names = append(names, vs.Name)
		}
		return nil
	})
	return names
}

// parse substitutes the Grafana variables in q and parses it as PromQL.
func parse(t *testing.T, where, q string) parser.Expr {
	t.Helper()
	s := variables.Replace(q)
	if strings.Contains(s, "$") {
		t.Errorf("%s: unknown variable left in %q", where, s)
		return nil
	}
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(s)
	if err != nil {
		t.Errorf("%s: %q does not parse: %v", where, s, err)
		return nil
	}
	return expr
}

func TestDashboardMeta(t *testing.T) {
	d := load(t)
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion = %d, want 36 or more", d.SchemaVersion)
	}
	if d.Title == "" || d.UID == "" {
		t.Errorf("title %q and uid %q must be set", d.Title, d.UID)
	}
	vars := map[string]variable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if v, ok := vars["datasource"]; !ok || v.Type != "datasource" || v.queryText() != "prometheus" {
		t.Errorf("want a datasource variable of type datasource querying prometheus, got %+v", v)
	}
	for _, name := range []string{"job", "instance", "route", "service"} {
		v, ok := vars[name]
		q := v.queryText()
		inner, found := strings.CutPrefix(q, "label_values(")
		if !ok || v.Type != "query" || !found || !strings.HasSuffix(q, ", "+name+")") {
			t.Errorf("want a query variable %s from label_values(…, %s), got %+v (query %q)", name, name, v, q)
			continue
		}
		if v.Datasource == nil || v.Datasource.UID != dsVar {
			t.Errorf("variable %s: datasource %+v, want uid %s", name, v.Datasource, dsVar)
		}
		parse(t, "variable "+name, strings.TrimSuffix(inner, ", "+name+")"))
	}
}

func TestPanels(t *testing.T) {
	d := load(t)
	ids := map[int]string{}
	for _, p := range layout(d) {
		if prev, dup := ids[p.ID]; dup || p.ID == 0 {
			t.Errorf("panel %q: id %d is missing or also used by %q", p.Title, p.ID, prev)
		}
		ids[p.ID] = p.Title
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != dsVar {
			t.Errorf("panel %d %q: datasource %+v, want uid %s", p.ID, p.Title, p.Datasource, dsVar)
		}
		exprs := 0
		for _, tg := range p.Targets {
			if tg.Datasource != nil && tg.Datasource.UID != dsVar {
				t.Errorf("panel %d %q target %s: datasource %+v, want uid %s", p.ID, p.Title, tg.RefID, tg.Datasource, dsVar)
			}
			if strings.TrimSpace(tg.Expr) != "" {
				exprs++
			}
		}
		if exprs == 0 {
			t.Errorf("panel %d %q has no target with an expr", p.ID, p.Title)
		}
	}
}

func TestExpressionsParse(t *testing.T) {
	d := load(t)
	for _, p := range layout(d) {
		for _, tg := range p.Targets {
			where := "panel " + p.Title + " target " + tg.RefID
			expr := parse(t, where, tg.Expr)
			if expr == nil {
				continue
			}
			for _, m := range metrics(expr) {
				if !slices.Contains(exported, m) {
					t.Errorf("%s: reads %q, which Hermes does not export", where, m)
				}
			}
		}
	}
	for _, a := range d.Annotations.List {
		if a.Expr == "" {
			continue
		}
		if a.Datasource == nil || a.Datasource.UID != dsVar {
			t.Errorf("annotation %q: datasource %+v, want uid %s", a.Name, a.Datasource, dsVar)
		}
		parse(t, "annotation "+a.Name, a.Expr)
	}
}

// TestFirstRow wants the dashboard to open on the health overview: the
// score per route with the level thresholds, and the level per route named.
func TestFirstRow(t *testing.T) {
	d := load(t)
	all := layout(d)
	if len(all) == 0 || all[0].Type != "row" {
		t.Fatal("the dashboard must start with a row")
	}
	read := map[string]panel{}
	for _, p := range all[1:] {
		if p.Type == "row" {
			break
		}
		for _, tg := range p.Targets {
			if expr := parse(t, p.Title, tg.Expr); expr != nil {
				for _, m := range metrics(expr) {
					read[m] = p
				}
			}
		}
	}
	score, ok := read["hermes_route_score"]
	if !ok {
		t.Errorf("the first row %q does not show hermes_route_score", all[0].Title)
	} else {
		var steps []float64
		for _, s := range score.FieldConfig.Defaults.Thresholds.Steps {
			if s.Value != nil {
				steps = append(steps, *s.Value)
			}
		}
		if !slices.Equal(steps, []float64{60, 75, 85}) {
			t.Errorf("panel %q: thresholds %v, want 60, 75, 85", score.Title, steps)
		}
	}
	level, ok := read["hermes_route_level"]
	if !ok {
		t.Fatalf("the first row %q does not show hermes_route_level", all[0].Title)
	}
	names := map[string]string{}
	for _, m := range level.FieldConfig.Defaults.Mappings {
		for v, o := range m.Options {
			names[v] = o.Text
		}
	}
	for v, want := range map[string]string{"0": "normal", "1": "warm", "2": "shed", "3": "failover", "4": "manual"} {
		if names[v] != want {
			t.Errorf("panel %q maps level %s to %q, want %q", level.Title, v, names[v], want)
		}
	}
}
