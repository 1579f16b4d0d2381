package evaluator

import (
	"github.com/hermes-failover/hermes/traffic"

	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/hermes-failover/hermes/rules/config"
)

// TestInteraction runs the scripts in testdata/interaction: a data-driven
// walk of the core through time, one command per block, its events printed
// below. Regenerate with -rewrite and review the diff.
//
//	set free.soft_fail_ratio=0.2 free.probe_success=missing   (sticky signal values)
//	set free.hard_fail_ratio=0.25@4 free.p99_ratio=error      (value@count: counted calls or samples; a failed query)
//	tick for=5m                                               (tick every 15s; print events)
//	release route=free reason=…
//	pin service=chat route=paid-premium [for=1h] / pause service=chat / clear service=chat
//	actuator name=split fail=disk-full / actuator name=split ok (its health from the next tick on)
//	drill route=free quota_remaining=0.02 for=10m [dry-run] / end-drill route=free
//	                                                          (a fault drill: other keys are signals)
//	restart                                                   (keep only what Hermes exports and restores)
//	reload max_shift_per_tick=30                              (a new policy whose actuator limits the shift; state kept)
//	state                                                     (print every route and service)
//	score route=free                                          (print a route's score, its bounds and reasons)
//	move route=free                                           (print the route's move record)
//	alerts route=free                                         (print the route's active alerts and their annotations)
func TestInteraction(t *testing.T) {
	datadriven.Walk(t, "testdata/interaction", func(t *testing.T, path string) {
		h := newHarness(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return h.run(t, d)
		})
	})
}

type harness struct {
	p     *Policy
	s     State
	now   time.Time
	start time.Time
	over  map[string]any
	// health is what the live loop would report of each actuator.
	health map[string]ActuatorHealth
}

func newHarness(t *testing.T) *harness {
	p := policyWithActuator(t)
	start := time.Unix(0, 0).UTC()
	return &harness{p: p, now: start, start: start, over: map[string]any{}, health: map[string]ActuatorHealth{}}
}

func (h *harness) stamp(t time.Time) string {
	d := t.Sub(h.start)
	return fmt.Sprintf("%02d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
}

func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	var b strings.Builder
	arg := func(key string) string {
		for _, a := range d.CmdArgs {
			if a.Key == key && len(a.Vals) > 0 {
				return a.Vals[0]
			}
		}
		return ""
	}
	switch d.Cmd {
	case "set":
		for _, a := range d.CmdArgs {
			if len(a.Vals) == 0 {
				d.Fatalf(t, "set %s: want key=value", a.Key)
			}
			switch a.Vals[0] {
			case "missing":
				h.over[a.Key] = "no data"
				continue
			case "error":
				h.over[a.Key] = Sample{Value: math.NaN(), Status: StatusError, Reason: "timeout"}
				continue
			case "nocalls":
				// Counters there and flat: no calls in the window.
				h.over[a.Key] = Sample{Value: math.NaN(), Status: StatusMissing, Reason: "no calls", Counted: true}
				continue
			}
			val, count, counted := strings.Cut(a.Vals[0], "@")
			v, err := strconv.ParseFloat(val, 64)
			if err != nil {
				d.Fatalf(t, "set %s: %v", a.Key, err)
			}
			if !counted {
				h.over[a.Key] = v
				continue
			}
			n, err := strconv.ParseFloat(count, 64)
			if err != nil {
				d.Fatalf(t, "set %s: %v", a.Key, err)
			}
			h.over[a.Key] = Sample{Value: v, Volume: n, Counted: true}
		}
		return "ok"
	case "tick":
		dur, err := time.ParseDuration(arg("for"))
		if err != nil {
			dur = 15 * time.Second
		}
		end := h.now.Add(dur)
		for h.now.Before(end) {
			h.now = h.now.Add(15 * time.Second)
			var evs []Event
			in := Input{Snapshot: snap(h.p, h.now, h.over)}
			in.Snapshot.Actuators = h.health
			h.s, evs = Step(h.p, h.s, in, h.now)
			for _, e := range evs {
				if e.Type == EventAlert && e.Tier == "C" {
					continue
				}
				b.WriteString(h.format(e))
				b.WriteByte('\n')
			}
		}
		if b.Len() == 0 {
			return "(no events)"
		}
		return b.String()
	case "release", "pin", "pause", "clear":
		cmd := Command{Kind: CommandKind(d.Cmd), Service: arg("service"), Route: arg("route"), Reason: arg("reason")}
		if cmd.Reason == "" {
			cmd.Reason = "test"
		}
		if f := arg("for"); f != "" {
			dur, _ := time.ParseDuration(f)
			cmd.Expires = h.now.Add(dur)
		}
		next, evs, err := Apply(h.p, h.s, cmd, h.now)
		if err != nil {
			return "error: " + err.Error()
		}
		h.s = next
		for _, e := range evs {
			b.WriteString(h.format(e) + "\n")
		}
		return strings.TrimSuffix(b.String(), "\n")
	case "drill", "end-drill":
		return h.drill(d)
	case "actuator":
		name, old := arg("name"), h.health[arg("name")]
		if e := arg("fail"); e != "" {
			if old.OK || old.FailingSince.IsZero() {
				old.FailingSince = h.now
			}
			h.health[name] = ActuatorHealth{FailingSince: old.FailingSince, Error: e}
			return fmt.Sprintf("%s failing since %s: %s", name, h.stamp(old.FailingSince), e)
		}
		h.health[name] = ActuatorHealth{OK: true}
		return name + " ok"
	case "score":
		rs := h.s.Routes[arg("route")]
		if rs == nil {
			d.Fatalf(t, "score: no route %q", arg("route"))
		}
		sc := rs.Score
		fmt.Fprintf(&b, "%s: score %.1f, at least %.1f", arg("route"), sc.Value, sc.Low)
		if sc.DecisiveLevel > traffic.Normal {
			fmt.Fprintf(&b, ", decisive %s", sc.DecisiveLevel)
		}
		for _, r := range sc.Reasons() {
			b.WriteString("\n  " + r)
		}
		var idle []string
		for _, c := range sc.Contributions {
			if c.Idle {
				idle = append(idle, c.Signal)
			}
		}
		if len(idle) > 0 {
			b.WriteString("\n  idle: " + strings.Join(idle, ", "))
		}
		return b.String()
	case "waiting":
		rs := h.s.Routes[arg("route")]
		if rs == nil {
			d.Fatalf(t, "waiting: no route %q", arg("route"))
		}
		ws := Waiting(h.p, *rs, h.now)
		checkWaitKinds(t, h.p, ws)
		return strings.Join(WaitTexts(ws), "\n")
	case "reload":
		// As the live loop's reload: a new policy, the state kept.
		n, err := strconv.Atoi(arg("max_shift_per_tick"))
		if err != nil {
			d.Fatalf(t, "reload: want max_shift_per_tick=N: %v", err)
		}
		h.p = policyOf(t, []config.ActuatorConfig{{Name: "split", Type: "file", MaxShiftPerTick: n}})
		return fmt.Sprintf("reloaded: actuator split with max_shift_per_tick %d", n)
	case "alerts":
		// The route's alerts that are not inactive, with their annotations
		// as Alertmanager gets them.
		keys := make([]string, 0, len(h.s.Alerts))
		for k, a := range h.s.Alerts {
			if a.Route == arg("route") && a.State != StateInactive {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			a := h.s.Alerts[k]
			ann := a.Text()
			fmt.Fprintf(&b, "%s [%s] %s since %s\n  summary: %s\n  description: %s\n", a.Rule, a.Tier, a.State, h.stamp(a.ActiveAt), ann["summary"], ann["description"])
		}
		if b.Len() == 0 {
			return "(no alerts)"
		}
		return b.String()
	case "move":
		rs := h.s.Routes[arg("route")]
		if rs == nil {
			d.Fatalf(t, "move: no route %q", arg("route"))
		}
		if rs.Move == nil {
			return "(no move)"
		}
		fmt.Fprintf(&b, "incident since %s; %s at %s (%s)", h.stamp(rs.Move.Incident), rs.Move.To, h.stamp(rs.Move.At), rs.Move.Why)
		for _, l := range rs.Move.Lines() {
			b.WriteString("\n  " + l)
		}
		if rs.Move.Abort != nil {
			fmt.Fprintf(&b, "\n  aborted at stage %d (%d %%) at %s: %s", rs.Move.Abort.Stage, rs.Move.Abort.Percent, h.stamp(rs.Move.Abort.At), rs.Move.Abort.Why)
		}
		return b.String()
	case "restart":
		h.s = exportedOnly(h.s)
		return "restarted: dwell and recovery timers and alerts forgotten"
	case "state":
		names := make([]string, 0, len(h.s.Routes))
		for n := range h.s.Routes {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			rs := h.s.Routes[n]
			fmt.Fprintf(&b, "%s: %s since %s score %.1f", n, rs.Level, h.stamp(rs.Since), rs.Score.Value)
			if rs.Stage > 0 {
				fmt.Fprintf(&b, " stage %d since %s", rs.Stage, h.stamp(rs.StageSince))
			}
			if len(rs.Failbacks) > 0 {
				fmt.Fprintf(&b, " failbacks %d", len(rs.Failbacks))
			}
			b.WriteByte('\n')
		}
		for _, svc := range h.p.Config.Services {
			if st := h.s.Services[svc.Name]; st != nil {
				fmt.Fprintf(&b, "%s: %s\n", svc.Name, weightsText(svc.Routes, st.Weights))
			}
			if held, ok := h.s.DryRunHold(svc.Name); ok {
				fmt.Fprintf(&b, "%s: actuators keep %s (dry-run drill)\n", svc.Name, weightsText(svc.Routes, held.Weights))
			}
		}
		return b.String()
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

// exportedOnly keeps what Hermes exports as metrics and restores after a
// restart (see restore.go): levels, since times, stages, failing-since,
// failbacks, releases and splits, and the overrides and drills the
// runner keeps in its overrides file; timers and alerts are lost.
func exportedOnly(s State) State {
	out := State{Routes: map[string]*RouteState{}, Services: map[string]*traffic.Split{}, Overrides: s.Overrides, Drills: s.Drills}
	for n, rs := range s.Routes {
		// The move record is kept in the local state file
		// (runner/persist).
		out.Routes[n] = &RouteState{SavedRoute: rs.SavedRoute, Move: rs.Move}
	}
	for n, st := range s.Services {
		c := st.Clone()
		out.Services[n] = &c
	}
	return out
}

func weightsText(order []string, w map[string]int) string {
	parts := make([]string, len(order))
	for i, r := range order {
		parts[i] = fmt.Sprintf("%s=%d", r, w[r])
	}
	return strings.Join(parts, " ")
}

func (h *harness) format(e Event) string {
	at := h.stamp(e.Time)
	score := ""
	if e.Score != nil && !math.IsNaN(*e.Score) {
		score = fmt.Sprintf(" score=%.1f", *e.Score)
	}
	switch e.Type {
	case EventLevel:
		return fmt.Sprintf("%s level %s %s→%s%s (%s)", at, e.Route, e.From, e.To, score, e.Reasons[0])
	case EventFailback:
		return fmt.Sprintf("%s failback %s stage=%d percent=%d%s (%s)", at, e.Route, *e.Stage, *e.Percent, score, e.Reasons[0])
	case EventTraffic:
		svc := h.p.services[e.Service]
		extra := ""
		if e.Degraded != nil && *e.Degraded {
			extra = " DEGRADED"
		}
		if len(e.Reasons) > 0 {
			extra += " (" + strings.Join(e.Reasons, "; ") + ")" // a rate limit's step
		}
		return fmt.Sprintf("%s traffic %s %s%s", at, e.Service, weightsText(svc.Routes, e.Weights), extra)
	case EventAlert:
		target := e.Route
		if a := e.Labels["actuator"]; a != "" {
			target = "actuator=" + a
		}
		drill := ""
		if e.Labels["drill"] == "true" {
			drill = " drill=true"
		}
		return fmt.Sprintf("%s alert %s %s [%s] %s%s", at, target, e.Name, e.Tier, e.State, drill)
	case EventOverride:
		return fmt.Sprintf("%s override %s %s %s %s", at, e.Service, e.Name, e.Route, e.State)
	case EventDrill:
		return fmt.Sprintf("%s drill %s %s %s +%s (%s)", at, e.Route, e.Drill.Kind, e.State, e.Time.Sub(e.Drill.Injected), e.Reasons[0])
	case EventCommand:
		return fmt.Sprintf("%s command %s %s %s %s (%s)", at, e.Name, e.Service, e.Route, e.State, e.Reasons[0])
	}
	return at + " " + e.Type
}
