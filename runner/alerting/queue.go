package alerting

import (
	"sync"

	"github.com/prometheus/alertmanager/api/v2/models"
)

// item is one alert waiting to be sent, with its fingerprint.
type item struct {
	key   string
	alert *models.PostableAlert
}

// queue holds the alerts waiting for one Alertmanager, oldest first. It is
// bounded: pushing beyond its capacity drops the oldest. Taking from it
// keeps only the latest version of each alert, so a queue that filled up
// while its Alertmanager was away sends the current state once.
type queue struct {
	mu       sync.Mutex
	items    []item
	capacity int
	// wake has a token while the queue holds something new.
	wake chan struct{}
}

func newQueue(capacity int) *queue {
	return &queue{capacity: max(capacity, 1), wake: make(chan struct{}, 1)}
}

// push appends items, signals the worker and returns how many of the oldest
// items it dropped to stay within capacity.
func (q *queue) push(items []item) int {
	q.mu.Lock()
	q.items = append(q.items, items...)
	dropped := q.trim()
	q.mu.Unlock()
	q.signal()
	return dropped
}

// requeue puts back items that were taken but not delivered, before
// everything queued since (which is newer), and signals the worker. It
// returns how many items it dropped to stay within capacity.
func (q *queue) requeue(items []item) int {
	q.mu.Lock()
	q.items = append(append(make([]item, 0, len(items)+len(q.items)), items...), q.items...)
	dropped := q.trim()
	q.mu.Unlock()
	q.signal()
	return dropped
}

func (q *queue) trim() int {
	n := len(q.items) - q.capacity
	if n <= 0 {
		return 0
	}
	q.items = append(q.items[:0:0], q.items[n:]...)
	return n
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take empties the queue and returns the latest version of each alert,
// in the order of those versions.
func (q *queue) take() []item {
	q.mu.Lock()
	items := q.items
	q.items = nil
	q.mu.Unlock()
	last := make(map[string]int, len(items))
	for i, it := range items {
		last[it.key] = i
	}
	out := make([]item, 0, len(last))
	for i, it := range items {
		if last[it.key] == i {
			out = append(out, it)
		}
	}
	return out
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}
