package benchproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Request bodies the load generator sends.
var (
	PlainRequest  = []byte(`{"model":"bench-model","messages":[{"role":"user","content":"Tell me about foxes."}]}`)
	StreamRequest = []byte(`{"model":"bench-model","messages":[{"role":"user","content":"Tell me about foxes."}],"stream":true}`)
)

// NewClient is the load generator's HTTP client: keep-alive connections,
// as many idle ones kept as there are requests open, no compression.
func NewClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns: 100000, MaxIdleConnsPerHost: 100000, IdleConnTimeout: time.Minute,
		DisableCompression: true,
	}}
}

// Stream shapes a streamed request: its events and the gap between them
// (sent as HeaderEvents and HeaderGap).
type Stream struct {
	Events int
	Gap    time.Duration
}

// Result is one request's measurement.
type Result struct {
	Latency time.Duration   // plain: to the end of the body; stream: to the first event (TTFB)
	Gaps    []time.Duration // stream: each gap between two events at the client minus the upstream's
}

// Plain sends one plain completion to url and reads the whole reply.
func Plain(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(PlainRequest))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return fmt.Errorf("reading the reply: %w", err)
	}
	if resp.StatusCode != http.StatusOK || n != int64(len(PlainReply)) {
		return fmt.Errorf("status %d, %d bytes (want 200, %d)", resp.StatusCode, n, len(PlainReply))
	}
	return nil
}

// OpenStream sends a streamed completion to url and returns its reply,
// whose status it has checked.
func OpenStream(ctx context.Context, c *http.Client, url string, s Stream) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(StreamRequest))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderEvents, strconv.Itoa(s.Events))
	req.Header.Set(HeaderGap, s.Gap.String())
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	return resp, nil
}

// ReadEvents reads a stream's events, calling each with the event's
// arrival and the upstream's send time, and wants events of them and then
// [DONE].
func ReadEvents(body io.Reader, events int, each func(arrived time.Time, sent int64)) error {
	br := bufio.NewReaderSize(body, 4096)
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("after %d of %d events: %w", n, events, err)
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		now := time.Now()
		if bytes.HasPrefix(data, []byte("[DONE]")) {
			if n != events {
				return fmt.Errorf("[DONE] after %d of %d events", n, events)
			}
			return nil
		}
		_, rest, ok := bytes.Cut(data, []byte(`"sent_ns":`))
		if !ok {
			return fmt.Errorf("event %d has no sent_ns", n)
		}
		end := bytes.IndexByte(rest, ',')
		sent, err := strconv.ParseInt(string(rest[:max(end, 0)]), 10, 64)
		if err != nil {
			return fmt.Errorf("event %d: sent_ns: %w", n, err)
		}
		n++
		each(now, sent)
	}
}

// StreamOnce opens one stream, scheduled at sched, and measures its time
// to the first event from sched and its gaps against the upstream's.
func StreamOnce(ctx context.Context, c *http.Client, url string, s Stream, sched time.Time) (Result, error) {
	resp, err := OpenStream(ctx, c, url, s)
	if err != nil {
		return Result{}, err
	}
	defer resp.Body.Close()
	var res Result
	var lastAt time.Time
	var lastSent int64
	err = ReadEvents(resp.Body, s.Events, func(at time.Time, sent int64) {
		if lastAt.IsZero() {
			res.Latency = at.Sub(sched)
		} else {
			res.Gaps = append(res.Gaps, at.Sub(lastAt)-time.Duration(sent-lastSent))
		}
		lastAt, lastSent = at, sent
	})
	return res, err
}

// Summary is what a load measured.
type Summary struct {
	Requests  int
	Errors    int
	FirstErr  error
	Elapsed   time.Duration
	Latencies []time.Duration // sorted
	Gaps      []time.Duration // sorted
}

// Quantile is the q-quantile of sorted d (nearest rank), 0 for none.
func Quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(q*float64(len(d))+0.5) - 1
	return d[min(max(i, 0), len(d)-1)]
}

type collector struct {
	mu sync.Mutex
	s  Summary
}

func (c *collector) add(r Result, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.s.Requests++
	if err != nil {
		c.s.Errors++
		if c.s.FirstErr == nil {
			c.s.FirstErr = err
		}
		return
	}
	c.s.Latencies = append(c.s.Latencies, r.Latency)
	c.s.Gaps = append(c.s.Gaps, r.Gaps...)
}

func (c *collector) done(start time.Time) Summary {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.s.Elapsed = time.Since(start)
	slices.Sort(c.s.Latencies)
	slices.Sort(c.s.Gaps)
	return c.s
}

// OpenLoop calls do at a fixed rate per second for d, each call in its
// own goroutine at its scheduled time whatever the calls before it are
// doing, and waits for the last. do gets its scheduled time: latencies
// measured from it include any wait for the load generator itself.
func OpenLoop(ctx context.Context, rate float64, d time.Duration, do func(ctx context.Context, sched time.Time) (Result, error)) Summary {
	var c collector
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / rate)
	n := int(d / interval)
	start := time.Now()
	for i := range n {
		sched := start.Add(time.Duration(i) * interval)
		if w := time.Until(sched); w > 0 {
			time.Sleep(w)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.add(do(ctx, sched))
		}()
	}
	wg.Wait()
	return c.done(start)
}

// ClosedLoop runs workers calling do back to back for d and counts the
// calls that ended within d.
func ClosedLoop(ctx context.Context, workers int, d time.Duration, do func(ctx context.Context) error) Summary {
	var c collector
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	var stop atomic.Bool
	ctx, cancel := context.WithDeadline(ctx, end.Add(10*time.Second))
	defer cancel()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				t := time.Now()
				err := do(ctx)
				if time.Now().After(end) {
					stop.Store(true)
					if err == nil {
						return // ended past d: not counted
					}
				}
				c.add(Result{Latency: time.Since(t)}, err)
			}
		}()
	}
	wg.Wait()
	s := c.done(start)
	s.Elapsed = d
	return s
}

// Add is s and t together, their samples sorted.
func (s Summary) Add(t Summary) Summary {
	s.Requests += t.Requests
	s.Errors += t.Errors
	if s.FirstErr == nil {
		s.FirstErr = t.FirstErr
	}
	s.Elapsed += t.Elapsed
	s.Latencies = append(s.Latencies, t.Latencies...)
	s.Gaps = append(s.Gaps, t.Gaps...)
	slices.Sort(s.Latencies)
	slices.Sort(s.Gaps)
	return s
}
