package charts

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

func TestRouteColors(t *testing.T) {
	routes := []string{"free", "paid-standard", "paid-premium", "a", "b", "c", "d", "e"}
	got := RouteColors(routes)
	seen := map[string]string{}
	for _, r := range routes {
		if other, dup := seen[got[r]]; dup {
			t.Errorf("%s and %s share %s", r, other, got[r])
		}
		seen[got[r]] = r
	}
	// Order does not matter; only the set of routes does.
	rev := RouteColors([]string{"e", "d", "c", "b", "a", "paid-premium", "paid-standard", "free"})
	for _, r := range routes {
		if rev[r] != got[r] {
			t.Errorf("%s: %s, then %s in another order", r, got[r], rev[r])
		}
	}
	if LevelColors["manual"] == LevelColors["failover"] || LevelColors["pending"] == LevelColors["firing"] {
		t.Error("manual and failover, or pending and firing, share a colour")
	}
}

func TestSVG(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	times := []time.Time{t0, t0.Add(15 * time.Second), t0.Add(30 * time.Second)}
	line := Chart{Title: "route <free>", Times: times, YMax: 100,
		Series:  []Series{{Name: "free", Color: "#000", Values: []float64{100, math.NaN(), 40}}},
		Bands:   []Band{{From: 85, To: 100, Label: "normal ≥ 85", Color: "#0f0"}},
		Markers: []Marker{{At: times[2], Label: "normal → warm", Color: "#f00"}},
	}.SVG()
	for _, want := range []string{`aria-label="route &lt;free&gt;"`, `class="band" data-label="normal ≥ 85"`, `data-name="free" d="M44.0,24.0 M780.0,`, `<title>2026-12-01 03:00:30 normal → warm</title>`} {
		if !strings.Contains(string(line), want) {
			t.Errorf("line chart lacks %q:\n%s", want, line)
		}
	}
	area := Chart{Title: "split", Times: times, YMax: 100, Stacked: true, Series: []Series{
		{Name: "free", Color: "#000", Values: []float64{100, 50, 0}},
		{Name: "paid", Color: "#111", Values: []float64{0, 50, 100}},
	}}.SVG()
	// The second area's top edge is the stack's top: 100 % throughout.
	if !strings.Contains(string(area), `data-name="paid" points="44.0,24.0 412.0,24.0 780.0,24.0 `) {
		t.Errorf("stacked areas:\n%s", area)
	}
	if empty := (Chart{Title: "x"}).SVG(); !strings.Contains(string(empty), "no data") {
		t.Errorf("empty chart: %s", empty)
	}
}

// TestActuationMarkers: applies and failures are marked on the charts of
// their service only (a failure of an actuator that held nothing on
// every chart), drawn apart from level and alert markers, with the
// actuator, split and result in the tooltip.
func TestActuationMarkers(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	acts := []evaluator.Actuation{
		{Time: t0.Add(15 * time.Second), Actuator: "nginx", Service: "chat", Weights: map[string]int{"free": 0, "paid": 100}, Result: evaluator.ActuationApplied},
		{Time: t0.Add(30 * time.Second), Actuator: "dns", Service: "embed", Weights: map[string]int{"free": 50, "paid": 50}, Result: evaluator.ActuationApplied},
		{Time: t0.Add(45 * time.Second), Actuator: "webhook", Result: evaluator.ActuationFailed, Error: "503 <busy>"},
	}
	ms := ActuationMarkers(acts, "chat")
	if len(ms) != 2 || ms[0].Label != "actuator nginx applied chat: free 0%, paid 100% (ok)" || ms[1].Label != "actuator webhook failed: 503 <busy> (error)" {
		t.Fatalf("markers of chat: %+v", ms)
	}
	times := []time.Time{t0, t0.Add(time.Minute)}
	svg := string(Chart{Title: "split", Times: times, YMax: 100, Series: []Series{{Name: "free", Color: "#000", Values: []float64{100, 0}}},
		Markers: append(ms, Marker{At: t0.Add(15 * time.Second), Label: "normal → failover", Color: LevelColors["failover"]})}.SVG())
	for _, want := range []string{
		`<g class="marker marker-actuation" data-label="actuator nginx applied chat: free 0%, paid 100% (ok)"><title>2026-12-01 03:00:15 actuator nginx applied chat: free 0%, paid 100% (ok)</title>`,
		`stroke="` + ActuationColors[evaluator.ActuationApplied] + `" stroke-width="1" stroke-opacity="0.6"/><text`, `>◆</text>`,
		`<title>2026-12-01 03:00:45 actuator webhook failed: 503 &lt;busy&gt; (error)</title>`, `>✕</text>`,
		`<g class="marker marker-level" data-label="normal → failover">`, `stroke-dasharray="3,2"/></g></svg>`, // drawn last, on top
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q:\n%s", want, svg)
		}
	}
	for kind, c := range ActuationColors {
		for name, lc := range LevelColors {
			if c == lc {
				t.Errorf("actuation %s and %s share %s", kind, name, c)
			}
		}
	}
}

// TestLevelMarkersFromTicks: a level change that the ticks show (read back
// from Prometheus, past a restart) but no event in memory covers is marked
// at the first tick at the new level; one an event covers is marked once,
// at the event.
func TestLevelMarkersFromTicks(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	levels := []string{"normal", "normal", "failover", "failover", "warm", "normal", "normal"}
	var ticks []evaluator.Tick
	for i, l := range levels {
		ticks = append(ticks, evaluator.Tick{Time: t0.Add(time.Duration(i) * time.Minute), Routes: map[string]evaluator.TickRoute{
			"free":  {Score: 50, Level: l},
			"other": {Score: 90, Level: "normal"},
		}})
	}
	// This process started at t0+4m30s: it remembers warm → normal only
	// (10 s before the tick that shows it), and an event of another route.
	events := []evaluator.Event{
		{Type: evaluator.EventLevel, Time: t0.Add(4*time.Minute + 50*time.Second), Route: "free", From: "warm", To: "normal"},
		{Type: evaluator.EventLevel, Time: t0.Add(2 * time.Minute), Route: "other", From: "normal", To: "warm"},
	}
	var got []string
	for _, m := range ScoreChart("free", ticks, nil, events, "#000").Markers {
		if m.Kind == MarkerLevel {
			got = append(got, m.At.Format("15:04:05")+" "+m.Label)
		}
	}
	slices.Sort(got)
	want := []string{"03:02:00 normal → failover", "03:04:00 failover → warm", "03:04:50 warm → normal"}
	if !slices.Equal(got, want) {
		t.Errorf("level markers %q\nwant %q", got, want)
	}
}

// TestEventLineNamesOverridesAndSplits: an operator's pause or pin, and a
// split change, read as what they are, not as an empty level change.
func TestEventLineNamesOverridesAndSplits(t *testing.T) {
	at := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	until := at.Add(time.Hour)
	cases := map[string]evaluator.Event{
		"2026-12-01 03:00:00  override pause chat set by alice until 2026-12-01 04:00:00  [test pause over pin]": {Time: at, Type: evaluator.EventOverride,
			Service: "chat", Name: "pause", State: "set", By: "alice", Expires: &until, Reasons: []string{"test pause over pin"}},
		"2026-12-01 03:00:00  override pin chat/paid expired  [launch]": {Time: at, Type: evaluator.EventOverride, Service: "chat", Route: "paid", Name: "pin", State: "expired", Reasons: []string{"launch"}},
		"2026-12-01 03:00:00  traffic chat free=95% paid=5%":            {Time: at, Type: evaluator.EventTraffic, Service: "chat", Weights: map[string]int{"paid": 5, "free": 95}},
	}
	for want, e := range cases {
		if got := EventLine(e); got != want {
			t.Errorf("EventLine = %q, want %q", got, want)
		}
	}
}
