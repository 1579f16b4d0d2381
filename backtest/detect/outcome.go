package detect

import (
	"fmt"
	"io"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/traffic"
)

// Tick is what a method did at one evaluation: the share of the service's
// traffic each route gets (0..100) and which routes it alerts on.
type Tick struct {
	At       time.Duration // since the scenario's start
	Weights  map[string]int
	Alerting map[string]bool
	// Levels is each route's level, for a method that has levels (Hermes);
	// nil for the others.
	Levels map[string]traffic.Level
}

// Outcome is how one method did on one scenario. Durations are since the
// onset of the first degradation; negative means never (or no onset).
type Outcome struct {
	Scenario, Method string
	Onset            time.Duration // -1 without a degradation
	FirstAlert       time.Duration
	FirstMove        time.Duration
	FullFailover     time.Duration
	// FalseAlerts and FalseMoves count alerts raised and traffic taken from
	// a route that was not degraded (nor within Grace of a degradation).
	FalseAlerts, FalseMoves int
	// BystanderChanges counts level changes of routes that are never
	// degraded in the scenario (a backup on a night when only the primary
	// fails, any route on a healthy night).
	BystanderChanges int
	// DegradedMinutes is user-minutes on a degraded route
	// (backtest.UserMinutes against the ground truth).
	DegradedMinutes float64
}

// Grace is how long after a degradation ends a reaction still counts as a
// reaction to it: the longest signal window of the methods.
const Grace = 10 * time.Minute

// Score turns a method's ticks into its Outcome against truth. routes is
// the service's priority chain: a move away from a route is a tick at which
// it loses share and the routes after it gain, not traffic coming back to
// a route before it.
func Score(scenario, method string, ticks []Tick, step time.Duration, truth []Window, routes []string) Outcome {
	o := Outcome{Scenario: scenario, Method: method, Onset: -1, FirstAlert: -1, FirstMove: -1, FullFailover: -1}
	on, hasOnset := onset(truth)
	if hasOnset {
		o.Onset = on
	}
	prevW := map[string]int{}
	prevA := map[string]bool{}
	var prevL map[string]traffic.Level
	for i, tk := range ticks {
		for route, l := range tk.Levels {
			if p, ok := prevL[route]; ok && p != l && !everDegraded(truth, route) {
				o.BystanderChanges++
			}
		}
		prevL = tk.Levels
		for ri, route := range routes {
			w := tk.Weights[route]
			reacting := degradedAt(truth, route, tk.At, Grace)
			if i > 0 && w < prevW[route] && downstream(tk.Weights, routes[ri+1:]) > downstream(prevW, routes[ri+1:]) {
				if !reacting {
					o.FalseMoves++
				} else if hasOnset && tk.At >= on && o.FirstMove < 0 {
					o.FirstMove = tk.At - on
				}
			}
		}
		o.DegradedMinutes += backtest.UserMinutes(step, tk.Weights, func(route string) bool { return degradedAt(truth, route, tk.At, 0) })
		// Full failover: after a move away, no degraded route keeps traffic.
		if o.FirstMove >= 0 && o.FullFailover < 0 && degradedShare(truth, tk) == 0 {
			o.FullFailover = tk.At - on
		}
		for route, a := range tk.Alerting {
			if !a || prevA[route] {
				continue
			}
			if !degradedAt(truth, route, tk.At, Grace) {
				o.FalseAlerts++
			} else if hasOnset && tk.At >= on && o.FirstAlert < 0 {
				o.FirstAlert = tk.At - on
			}
		}
		prevW, prevA = tk.Weights, tk.Alerting
	}
	return o
}

// degradedShare is the share of traffic on routes degraded at tk; -1 when
// none is degraded.
func degradedShare(truth []Window, tk Tick) int {
	share, any := 0, false
	for route, w := range tk.Weights {
		if degradedAt(truth, route, tk.At, 0) {
			share, any = share+w, true
		}
	}
	if !any {
		return -1
	}
	return share
}

func downstream(w map[string]int, routes []string) int {
	n := 0
	for _, r := range routes {
		n += w[r]
	}
	return n
}

// WriteTable prints outcomes as a Markdown table.
func WriteTable(w io.Writer, outs []Outcome) error {
	if _, err := fmt.Fprintln(w, "| scenario | method | onset | first alert | first move | full failover | false alerts | false moves | min on degraded route |\n|---|---|---|---|---|---|---|---|---|"); err != nil {
		return err
	}
	for _, o := range outs {
		onset := "–"
		if o.Onset >= 0 {
			onset = fmtDur(o.Onset)
		}
		if _, err := fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %d | %d | %.1f |\n", o.Scenario, o.Method, onset,
			after(o.FirstAlert), after(o.FirstMove), after(o.FullFailover), o.FalseAlerts, o.FalseMoves, o.DegradedMinutes); err != nil {
			return err
		}
	}
	return nil
}

func after(d time.Duration) string {
	if d < 0 {
		return "–"
	}
	return "+" + fmtDur(d)
}

// fmtDur writes 1h0m0s as 1h, 45s as 45s, 1m30s as 1m30s.
func fmtDur(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	s := d.String()
	for _, suf := range []string{"m0s", "h0m"} {
		if len(s) > len(suf) && s[len(s)-len(suf):] == suf {
			s = s[:len(s)-len(suf)+1]
		}
	}
	return s
}
