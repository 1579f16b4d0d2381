package evaluator

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Difference is a decision one policy made at a tick that another policy,
// reading the same snapshot, did not make at that tick: a level change, a
// failback stage, a split or an alert. It is the one shape of "where two
// policies differ", read live (a shadow policy beside the running one,
// package runner) and over history (`hermes backtest --compare`, package
// backtest).
type Difference struct {
	// By names the policy that made the decision, Other the one that did
	// not ("candidate" and "live", or two file names).
	By    string `json:"by"`
	Other string `json:"other"`
	// Event is the decision, with its scores and reasons.
	Event Event `json:"event"`
	// Instead is what Other did with the same route, service or alert at
	// that tick, in words: "stayed normal", "went failover",
	// "kept free=100 paid=0", "did not page".
	Instead string `json:"instead"`
}

// Decisions are one policy's decisions over the ticks being compared.
type Decisions struct {
	// Name names the policy.
	Name string
	// Events are its events, in time order; only decisions are compared
	// (level, failback, traffic and alert events).
	Events []Event
	// Level returns the route's level under this policy after its tick at
	// t (a level name such as "normal"). Nil: the level is read from
	// Events, "normal" before the route's first level change.
	Level func(route string, t time.Time) string
	// Split returns the service's split under this policy after its tick
	// at t, nil when unknown. Nil: read from Events.
	Split func(service string, t time.Time) map[string]int
}

// Differences returns the decisions of a that b did not make at the same
// tick and those of b that a did not, in time order (a's first at a
// tick), each with what the other did instead. Two decisions are the same
// when their tick, kind, target and outcome are: scores, reasons and
// annotations are left out, so that the same move for slightly different
// numbers is the same move. Repeats count: two identical decisions of a
// at one tick against one of b leave one difference.
func Differences(a, b Decisions) []Difference {
	out := append(only(a, b), only(b, a)...)
	slices.SortStableFunc(out, func(x, y Difference) int {
		if c := x.Event.Time.Compare(y.Event.Time); c != 0 {
			return c
		}
		return cmp.Compare(rank(x.By == b.Name), rank(y.By == b.Name))
	})
	return out
}

func rank(second bool) int {
	if second {
		return 1
	}
	return 0
}

// only returns the decisions of a that b lacks, each as a Difference.
func only(a, b Decisions) []Difference {
	have := map[string]int{}
	for _, e := range b.Events {
		if k, ok := DecisionKey(e); ok {
			have[k]++
		}
	}
	var out []Difference
	for _, e := range a.Events {
		k, ok := DecisionKey(e)
		if !ok {
			continue
		}
		if have[k] > 0 {
			have[k]--
			continue
		}
		out = append(out, Difference{By: a.Name, Other: b.Name, Event: e, Instead: b.instead(e)})
	}
	return out
}

// DecisionKey is what identifies an event as a decision: its tick, kind,
// target and outcome. ok is false for events that are not decisions
// (overrides, commands, drills, alert errors).
func DecisionKey(e Event) (key string, ok bool) {
	var what string
	switch e.Type {
	case EventLevel:
		what = e.From + "→" + e.To
	case EventFailback:
		what = "stage " + strconv.Itoa(derefInt(e.Stage))
	case EventTraffic:
		what = splitText(e.Weights)
	case EventAlert:
		what = e.Name + " " + e.State
	default:
		return "", false
	}
	return strconv.FormatInt(e.Time.UnixMilli(), 10) + " " + e.Type + " " + e.Service + "/" + e.Route + " " + what, true
}

// instead says what d did with e's target at e's tick.
func (d Decisions) instead(e Event) string {
	same := func(x Event) bool {
		return x.Time.Equal(e.Time) && x.Type == e.Type && x.Service == e.Service && x.Route == e.Route &&
			(e.Type != EventAlert || x.Name == e.Name)
	}
	for _, x := range d.Events {
		if x.Time.After(e.Time) {
			break
		}
		if !same(x) {
			continue
		}
		switch x.Type {
		case EventLevel:
			return "went " + x.To
		case EventFailback:
			return "went to failback stage " + strconv.Itoa(derefInt(x.Stage))
		case EventTraffic:
			return "set " + splitText(x.Weights)
		case EventAlert:
			return x.State
		}
	}
	switch e.Type {
	case EventLevel, EventFailback:
		return "stayed " + d.levelAt(e.Route, e.Time)
	case EventTraffic:
		if w := d.splitAt(e.Service, e.Time); len(w) > 0 {
			return "kept " + splitText(w)
		}
		return "kept its split"
	case EventAlert:
		if e.State == "firing" {
			return "did not page"
		}
		return "did not change the alert"
	}
	return ""
}

func (d Decisions) levelAt(route string, t time.Time) string {
	if d.Level != nil {
		return d.Level(route, t)
	}
	level := "normal"
	for _, x := range d.Events {
		if x.Time.After(t) {
			break
		}
		if x.Type == EventLevel && x.Route == route {
			level = x.To
		}
	}
	return level
}

func (d Decisions) splitAt(service string, t time.Time) map[string]int {
	if d.Split != nil {
		return d.Split(service, t)
	}
	var w map[string]int
	for _, x := range d.Events {
		if x.Time.After(t) {
			break
		}
		if x.Type == EventTraffic && x.Service == service {
			w = x.Weights
		}
	}
	return w
}

// String tells the difference in one line, as the status page, the API
// and `hermes explain` show it:
//
//	candidate: chat/free warm at 12:03:00 (live stayed normal): score 81.0 < 85 for 1m0s; soft_fail_ratio 0.31 (-19.0)
func (d Difference) String() string {
	e := d.Event
	at := e.Time.UTC().Format(time.TimeOnly)
	var what string
	switch e.Type {
	case EventLevel:
		what = e.Service + "/" + e.Route + " " + e.To + " at " + at
	case EventFailback:
		what = e.Service + "/" + e.Route + " failback stage " + strconv.Itoa(derefInt(e.Stage)) + " at " + at
	case EventTraffic:
		what = e.Service + " split " + splitText(e.Weights) + " at " + at
	case EventAlert:
		target := e.Service
		if e.Route != "" {
			target += "/" + e.Route
		}
		what = target + " " + e.Name + " " + e.State + " at " + at
	}
	s := d.By + ": " + what + " (" + d.Other + " " + d.Instead + ")"
	// The score, unless a reason already tells it ("score 81.0 < 85 for 1m").
	if e.Score != nil && !slices.ContainsFunc(e.Reasons, func(r string) bool { return strings.HasPrefix(r, "score ") }) {
		s += ": score " + fixed(*e.Score, 1)
	}
	if len(e.Reasons) > 0 {
		s += ": " + strings.Join(e.Reasons, "; ")
	}
	return s
}

// splitText is a split as "free=0 paid=100", routes sorted.
func splitText(w map[string]int) string {
	parts := make([]string, 0, len(w))
	for _, r := range slices.Sorted(maps.Keys(w)) {
		parts = append(parts, r+"="+strconv.Itoa(w[r]))
	}
	return strings.Join(parts, " ")
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
