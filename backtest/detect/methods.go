package detect

import (
	"context"
	"fmt"
	"maps"
	"math"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/labelname"
	"github.com/hermes-failover/hermes/traffic"
)

// Method names, in table order.
const (
	MethodHermes  = "hermes (shipped policy)"
	MethodClassic = "classic alert: 5xx > 10 % for 5m"
	MethodEnvoy   = "envoy-like consecutive_5xx: 5"
	MethodLiteLLM = "litellm-like cooldown: > 50 % of ≥ 5 calls in 1m"
)

// Hermes replays the scenario through pol, as `hermes backtest` does
// (backtest.RunStore), and reads the service's weights, each route's
// level and the A/B alerts per route.
func Hermes(ctx context.Context, pol *evaluator.Policy, bt *backtest.Store, service string) ([]Tick, error) {
	var ticks []Tick
	opts := backtest.Options{OnTick: func(t time.Time, _ evaluator.Snapshot, s evaluator.State) {
		tk := Tick{At: t.Sub(bt.Start()), Weights: map[string]int{}, Alerting: map[string]bool{}, Levels: map[string]traffic.Level{}}
		for route, rs := range s.Routes {
			tk.Levels[route] = rs.Level
		}
		if st := s.Services[service]; st != nil {
			tk.Weights = maps.Clone(st.Weights)
		}
		for _, a := range s.Alerts {
			if a.Route != "" && a.State == evaluator.StateFiring && (a.Tier == "A" || a.Tier == "B") {
				tk.Alerting[a.Route] = true
			}
		}
		ticks = append(ticks, tk)
	}}
	if _, err := backtest.RunStore(ctx, pol, bt, nil, opts); err != nil {
		return nil, fmt.Errorf("hermes: %w", err)
	}
	return ticks, nil
}

// chainWeights splits a service's traffic along its priority chain: each
// route keeps what reaches it unless ejected, the last route takes the rest.
func chainWeights(routes []string, ejected map[string]bool) map[string]int {
	w := map[string]int{}
	left := 100
	for i, r := range routes {
		if !ejected[r] || i == len(routes)-1 {
			w[r] = left
			left = 0
			continue
		}
		w[r] = 0
	}
	return w
}

// perRoute runs q at t and returns its value per route (NaN when absent).
func perRoute(ctx context.Context, bt *backtest.Store, q string, t time.Time, routes []string) (map[string]float64, error) {
	vec, err := bt.Query(ctx, q, t)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	out := map[string]float64{}
	for _, r := range routes {
		out[r] = math.NaN()
	}
	for _, s := range vec {
		out[string(s.Metric[labelname.Route])] = float64(s.Value)
	}
	return out, nil
}

// Queries of the baselines. Deltas of counters over exactly one scrape or
// one minute (x - x offset d) see the calls of that span, as a proxy that
// counts calls would.
//
// Each baseline counts the failures it counts in real life, not every hard
// failure of the contract (which includes 4xx such as a 422 for a refused
// parameter): the classic alert and Envoy's consecutive_5xx count 5xx and
// locally originated errors (timeouts, connection errors); LiteLLM cools a
// deployment down for those and for 429, 401, 404 and 408, never for other
// 4xx.
const (
	qHardShare5m = `sum by (route) (rate(` + q5xx + `[5m])) / sum by (route) (rate(llm_gateway_requests_total[5m]))`
	qCalls       = `llm_gateway_requests_total`
	q5xx         = `llm_gateway_requests_total{verdict="hard_fail",code=~"5..|timeout|conn_error"}`
	qLiteLLM     = `llm_gateway_requests_total{verdict="hard_fail",code=~"5..|timeout|conn_error|429|401|404|408"}`
)

// delta is the per-route increase of the counters sel over the last d.
func delta(sel string, d time.Duration) string {
	return fmt.Sprintf("sum by (route) (%s) - sum by (route) (%s offset %s)", sel, sel, fmtDur(d))
}

// callsAndFailures are each route's calls and failures (the counters
// qFail selects) in the d up to t.
func callsAndFailures(ctx context.Context, bt *backtest.Store, t time.Time, d time.Duration, qFail string, routes []string) (calls, hard map[string]float64, err error) {
	if calls, err = perRoute(ctx, bt, delta(qCalls, d), t, routes); err != nil {
		return nil, nil, err
	}
	if hard, err = perRoute(ctx, bt, delta(qFail, d), t, routes); err != nil {
		return nil, nil, err
	}
	return calls, hard, nil
}

// Classic is the alert most teams start with,
// (5xx + timeouts) / all > 10 % for 5m: it pages, it moves nothing.
func Classic(ctx context.Context, bt *backtest.Store, routes []string) ([]Tick, error) {
	pending := map[string]time.Time{}
	var ticks []Tick
	for t := bt.Start(); !t.After(bt.End()); t = t.Add(bt.Step()) {
		share, err := perRoute(ctx, bt, qHardShare5m, t, routes)
		if err != nil {
			return nil, err
		}
		tk := Tick{At: t.Sub(bt.Start()), Weights: chainWeights(routes, nil), Alerting: map[string]bool{}}
		for _, r := range routes {
			if !(share[r] > 0.1) {
				delete(pending, r)
				continue
			}
			if _, ok := pending[r]; !ok {
				pending[r] = t
			}
			tk.Alerting[r] = t.Sub(pending[r]) >= 5*time.Minute
		}
		ticks = append(ticks, tk)
	}
	return ticks, nil
}

// Envoy is an outlier-detection breaker like Envoy's consecutive_5xx: 5
// with base_ejection_time 30s (multiplied by the times ejected). The series
// count calls per scrape, not their order, so a scrape ejects the route
// when, with its 5xx in random order, at least half a run of five
// consecutive 5xx is expected: p⁵·(1 + (n−5)(1−p)) ≥ 0.5 with p = k/n.
// Envoy counts no content failures and sends no alerts.
func Envoy(ctx context.Context, bt *backtest.Store, routes []string) ([]Tick, error) {
	times := map[string]int{}
	return breaker(ctx, bt, routes, bt.Step(), q5xx, func(r string, n, k float64) time.Duration {
		if !(n >= 5 && k >= 5) {
			return 0
		}
		if p := k / n; math.Pow(p, 5)*(1+(n-5)*(1-p)) < 0.5 {
			return 0
		}
		times[r]++
		return time.Duration(times[r]) * 30 * time.Second
	})
}

// LiteLLM is a per-minute cooldown like LiteLLM's router: a deployment with
// more than 50 % failed calls among at least 5 in the last minute is
// cooled down for 60s. Failures are exceptions (5xx, timeouts), not
// replies whose content is wrong; it sends no alerts.
func LiteLLM(ctx context.Context, bt *backtest.Store, routes []string) ([]Tick, error) {
	return breaker(ctx, bt, routes, time.Minute, qLiteLLM, func(_ string, n, k float64) time.Duration {
		if n >= 5 && k/n > 0.5 {
			return time.Minute
		}
		return 0
	})
}

// breaker runs a client-side breaker each tick: a route not ejected is
// ejected for trip(route, calls, failures qFail counts in the last window), when
// that is above 0; ejected routes pass their share down the chain.
func breaker(ctx context.Context, bt *backtest.Store, routes []string, window time.Duration, qFail string, trip func(r string, n, k float64) time.Duration) ([]Tick, error) {
	until := map[string]time.Time{}
	var ticks []Tick
	for t := bt.Start().Add(window); !t.After(bt.End()); t = t.Add(bt.Step()) {
		calls, hard, err := callsAndFailures(ctx, bt, t, window, qFail, routes)
		if err != nil {
			return nil, err
		}
		ejected := map[string]bool{}
		for _, r := range routes {
			if t.Before(until[r]) {
				ejected[r] = true
			} else if d := trip(r, calls[r], hard[r]); d > 0 {
				until[r] = t.Add(d)
				ejected[r] = true
			}
		}
		ticks = append(ticks, Tick{At: t.Sub(bt.Start()), Weights: chainWeights(routes, ejected), Alerting: map[string]bool{}})
	}
	return ticks, nil
}
