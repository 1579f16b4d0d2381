package evaluator

import "sync"

// tickScratch are the slices a tick works in, by route and by service
// index, that nothing holds once Step returns. Step takes them from a pool
// and clears them: at 10,000 routes they were 500 KB of a calm tick's 1.6
// MB of allocations, and each allocated byte brings the garbage
// collector's next cycle closer, whose marking of a large fleet's states
// misses the CPU's cache. The pool holds memory only, never state: what
// one tick leaves there, the next clears.
type tickScratch struct {
	briefs    []routeBrief
	reuses    []alertReuse
	share     []int
	made      []owned
	replanned []bool
}

var scratchPool = sync.Pool{New: func() any { return new(tickScratch) }}

// getScratch returns cleared slices for a tick of routes routes and
// services services; release gives them back.
func getScratch(routes, services int) *tickScratch {
	t := scratchPool.Get().(*tickScratch)
	t.briefs = cleared(t.briefs, routes)
	t.reuses = cleared(t.reuses, routes)
	t.share = cleared(t.share, routes)
	t.made = cleared(t.made, routes)
	t.replanned = cleared(t.replanned, services)
	return t
}

// release returns t to the pool; nothing may use it after.
func (t *tickScratch) release() { scratchPool.Put(t) }

// cleared is s with length n, every element zero, reallocated only when
// too small.
func cleared[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}
