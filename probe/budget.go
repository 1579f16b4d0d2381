package probe

import (
	"sync"
	"time"
)

// budget counts the tokens a route's probes spend in the current window.
// The e2e and boundary goroutines of a route share it.
type budget struct {
	mu     sync.Mutex
	limit  int // 0: none
	per    time.Duration
	window time.Time
	used   int
}

func newBudget(b Budget) *budget { return &budget{limit: b.Tokens, per: b.Per} }

// roll starts a new window when now has left the current one.
func (b *budget) roll(now time.Time) {
	if w := now.Truncate(b.per); !w.Equal(b.window) {
		b.window, b.used = w, 0
	}
}

// allow says whether a probe may run now and, if not, when the next
// window begins.
func (b *budget) allow(now time.Time) (bool, time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(now)
	return b.limit == 0 || b.used < b.limit, b.window.Add(b.per)
}

// spend counts tokens and returns what is left (-1: no limit).
func (b *budget) spend(now time.Time, tokens int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(now)
	b.used += tokens
	if b.limit == 0 {
		return -1
	}
	return max(b.limit-b.used, 0)
}
