package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"sync"
	"testing"
	"time"
)

// SplitChange is a split the file actuator's state file started to hold.
type SplitChange struct {
	At      time.Time
	Weights map[string]int
}

func (c SplitChange) String() string {
	return fmt.Sprintf("%s %v", c.At.Format("15:04:05.000"), c.Weights)
}

// SplitRecorder polls the state file every 100ms and records every change
// of the test service's weights, as a gateway watching the file would see
// them.
type SplitRecorder struct {
	path string

	mu      sync.Mutex
	changes []SplitChange
	bad     []string // unreadable or torn contents
	polls   int
	stop    chan struct{}
	done    chan struct{}
}

// RecordSplit starts recording; it stops at the end of the test.
func RecordSplit(t testing.TB, path string) *SplitRecorder {
	r := &SplitRecorder{path: path, stop: make(chan struct{}), done: make(chan struct{})}
	go r.loop()
	t.Cleanup(r.Stop)
	return r
}

// Stop stops polling; it is idempotent.
func (r *SplitRecorder) Stop() {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
}

func (r *SplitRecorder) loop() {
	defer close(r.done)
	tk := time.NewTicker(100 * time.Millisecond)
	defer tk.Stop()
	for {
		r.poll()
		select {
		case <-r.stop:
			return
		case <-tk.C:
		}
	}
}

func (r *SplitRecorder) poll() {
	now := time.Now()
	b, err := os.ReadFile(r.path)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.polls++
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var doc struct {
		Services map[string]struct {
			Weights map[string]int `json:"weights"`
		} `json:"services"`
	}
	if err == nil {
		err = json.Unmarshal(b, &doc)
	}
	if err != nil {
		r.bad = append(r.bad, fmt.Sprintf("%s: %v", now.Format("15:04:05.000"), err))
		return
	}
	w := doc.Services[Service].Weights
	if n := len(r.changes); n > 0 && maps.Equal(r.changes[n-1].Weights, w) {
		return
	}
	r.changes = append(r.changes, SplitChange{At: now, Weights: w})
}

// Changes returns every change recorded so far.
func (r *SplitRecorder) Changes() []SplitChange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]SplitChange(nil), r.changes...)
}

// Bad returns the polls that found an unreadable file.
func (r *SplitRecorder) Bad() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bad...)
}

// Current is the last split seen (nil before the file exists).
func (r *SplitRecorder) Current() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.changes) == 0 {
		return nil
	}
	return r.changes[len(r.changes)-1].Weights
}

// Between returns the changes recorded after from and up to to.
func (r *SplitRecorder) Between(from, to time.Time) []SplitChange {
	var out []SplitChange
	for _, c := range r.Changes() {
		if c.At.After(from) && !c.At.After(to) {
			out = append(out, c)
		}
	}
	return out
}

// Sequence is the successive shares of route, each once per change.
func (r *SplitRecorder) Sequence(route string) []int {
	var out []int
	for _, c := range r.Changes() {
		v := c.Weights[route]
		if n := len(out); n > 0 && out[n-1] == v {
			continue
		}
		out = append(out, v)
	}
	return out
}
