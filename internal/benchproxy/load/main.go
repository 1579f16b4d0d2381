// Command load is benchproxy's load generator, for scripts/bench-proxy.sh.
// It prints one line of key=value figures and exits 1 when any request
// failed (a status other than 200, a short body, a stream without all its
// events and [DONE]), so that a figure is never taken from a broken run.
//
//	load -mode plain  -url U -rate 500 -duration 20s   open-loop plain replies: latency p50/p99 from the scheduled send
//	load -mode stream -url U -rate 50 -duration 20s    open-loop streams: TTFB p50/p99, gap differences p50/p99
//	                                                   (-url U1,U2,U3: each in turn for -slice, -duration each)
//	load -mode max-plain  -url U -c 64 -duration 10s   closed-loop plain replies: req/s
//	load -mode max-stream -url U -c 200 -duration 10s  closed-loop streams (-gap 0 by default here): streams/s
//	load -mode hold -url U -c 1000 -hold 30s           open -c slow streams, print "ready" once each has its
//	                                                   first event, keep them open for -hold
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hermes-failover/hermes/internal/benchproxy"
)

func main() {
	mode := flag.String("mode", "plain", "plain, stream, max-plain, max-stream or hold")
	url := flag.String("url", "", "the chat completions URL (required)")
	rate := flag.Float64("rate", 500, "requests per second (plain, stream)")
	dur := flag.Duration("duration", 20*time.Second, "how long to send")
	conc := flag.Int("c", 64, "concurrent requests (max-plain, max-stream, hold)")
	events := flag.Int("events", 20, "events per stream")
	gap := flag.Duration("gap", -1, "gap between events (default 50ms; 0 for max-stream; 1s for hold)")
	slice := flag.Duration("slice", time.Second, "plain, stream: with several comma-separated -url, each takes a turn of this long")
	hold := flag.Duration("hold", 30*time.Second, "how long hold keeps its streams open once all are open")
	flag.Parse()
	if *url == "" {
		fmt.Fprintln(os.Stderr, "load: -url is required")
		os.Exit(2)
	}
	if *gap < 0 {
		*gap = map[string]time.Duration{"max-stream": 0, "hold": time.Second}[*mode]
		if *mode == "stream" {
			*gap = 50 * time.Millisecond
		}
	}
	s := benchproxy.Stream{Events: *events, Gap: *gap}
	c := benchproxy.NewClient()
	ctx := context.Background()
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	var sum benchproxy.Summary
	switch *mode {
	case "plain", "stream":
		// Several URLs take turns, a -slice of the load each, so that
		// the machine's bursts of noise fall on each alike.
		urls := strings.Split(*url, ",")
		sums := make([]benchproxy.Summary, len(urls))
		slices := 1 // one URL: the load is one run, without pauses
		if len(urls) > 1 {
			// Each slice waits for its last reply: a stream's slice
			// pauses the load for one stream's length.
			slices = max(int(*dur / *slice), 1)
		}
		for i := range slices {
			for j := range urls {
				k := (i + j) % len(urls)
				u := urls[k]
				var part benchproxy.Summary
				if *mode == "plain" {
					part = benchproxy.OpenLoop(ctx, *rate, *dur/time.Duration(slices), func(ctx context.Context, sched time.Time) (benchproxy.Result, error) {
						err := benchproxy.Plain(ctx, c, u)
						return benchproxy.Result{Latency: time.Since(sched)}, err
					})
				} else {
					part = benchproxy.OpenLoop(ctx, *rate, *dur/time.Duration(slices), func(ctx context.Context, sched time.Time) (benchproxy.Result, error) {
						return benchproxy.StreamOnce(ctx, c, u, s, sched)
					})
				}
				sums[k] = sums[k].Add(part)
			}
		}
		for k, sum := range sums {
			if *mode == "plain" {
				fmt.Printf("url=%s requests=%d errors=%d rate=%.1f p50_ms=%.3f p99_ms=%.3f\n", urls[k], sum.Requests, sum.Errors,
					float64(sum.Requests)/sum.Elapsed.Seconds(), ms(benchproxy.Quantile(sum.Latencies, .5)), ms(benchproxy.Quantile(sum.Latencies, .99)))
			} else {
				fmt.Printf("url=%s streams=%d errors=%d ttfb_p50_ms=%.3f ttfb_p99_ms=%.3f gap_p50_ms=%.3f gap_p99_ms=%.3f gaps=%d\n", urls[k], sum.Requests, sum.Errors,
					ms(benchproxy.Quantile(sum.Latencies, .5)), ms(benchproxy.Quantile(sum.Latencies, .99)),
					ms(benchproxy.Quantile(sum.Gaps, .5)), ms(benchproxy.Quantile(sum.Gaps, .99)), len(sum.Gaps))
			}
		}
		for _, s := range sums {
			failed(s)
		}
		return
	case "max-plain":
		sum = benchproxy.ClosedLoop(ctx, *conc, *dur, func(ctx context.Context) error { return benchproxy.Plain(ctx, c, *url) })
		fmt.Printf("requests=%d errors=%d rps=%.1f\n", sum.Requests, sum.Errors, float64(sum.Requests-sum.Errors)/sum.Elapsed.Seconds())
	case "max-stream":
		sum = benchproxy.ClosedLoop(ctx, *conc, *dur, func(ctx context.Context) error {
			_, err := benchproxy.StreamOnce(ctx, c, *url, s, time.Now())
			return err
		})
		fmt.Printf("streams=%d errors=%d streams_per_s=%.1f events_per_s=%.0f\n", sum.Requests, sum.Errors,
			float64(sum.Requests-sum.Errors)/sum.Elapsed.Seconds(), float64((sum.Requests-sum.Errors)*s.Events)/sum.Elapsed.Seconds())
	case "hold":
		sum = holdStreams(ctx, c, *url, *conc, s, *hold)
		fmt.Printf("streams=%d errors=%d\n", sum.Requests, sum.Errors)
	default:
		fmt.Fprintln(os.Stderr, "load: unknown -mode", *mode)
		os.Exit(2)
	}
	failed(sum)
}

// failed exits 1 when a request of sum failed, or none was sent.
func failed(sum benchproxy.Summary) {
	if sum.Errors > 0 || sum.Requests == 0 {
		fmt.Fprintf(os.Stderr, "load: %d of %d requests failed; the first: %v\n", sum.Errors, sum.Requests, sum.FirstErr)
		os.Exit(1)
	}
}

// holdStreams opens n streams (s.Events events s.Gap apart, longer than
// hold), prints "ready" once each has received its first event, keeps
// them open for hold, then closes them. A stream that fails before is an
// error.
func holdStreams(ctx context.Context, c *http.Client, url string, n int, s benchproxy.Stream, hold time.Duration) benchproxy.Summary {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var sum benchproxy.Summary
	var mu sync.Mutex
	var open atomic.Int64
	var wg sync.WaitGroup
	var closing atomic.Bool
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		sum.Errors++
		if sum.FirstErr == nil {
			sum.FirstErr = err
		}
	}
	allOpen := make(chan struct{})
	for i := range n {
		sum.Requests++
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := benchproxy.OpenStream(ctx, c, url, s)
			if err != nil {
				fail(err)
				return
			}
			defer resp.Body.Close()
			first := true
			err = benchproxy.ReadEvents(resp.Body, s.Events, func(time.Time, int64) {
				if first {
					first = false
					if open.Add(1) == int64(n) {
						close(allOpen)
					}
				}
			})
			if !closing.Load() {
				if err == nil {
					err = fmt.Errorf("a stream ended before the hold did (-events too few for -hold)")
				}
				fail(err)
			}
		}()
		if i%100 == 99 {
			time.Sleep(50 * time.Millisecond) // do not dial a thousand connections in one burst
		}
	}
	failed := make(chan struct{})
	go func() { wg.Wait(); close(failed) }()
	select {
	case <-allOpen:
		fmt.Println("ready")
		select {
		case <-time.After(hold):
		case <-failed:
		}
	case <-failed:
	case <-time.After(hold + time.Minute):
		fail(fmt.Errorf("only %d of %d streams got their first event", open.Load(), n))
	}
	closing.Store(true)
	cancel()
	wg.Wait()
	return sum
}
