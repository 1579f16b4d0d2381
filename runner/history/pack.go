package history

import (
	"maps"
	"math"
	"slices"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// packedTick is an evaluator.Tick as a Store holds it: the route and service names
// live once in a tickLayout shared by every tick with the same routes and
// services, and each route costs 5 bytes plus 1 per share of a split,
// instead of a map entry of about 100 bytes. At 10,000 routes a tick is
// about 60 kB rather than 1.5 MB.
type packedTick struct {
	time   time.Time
	layout *tickLayout
	scores []uint16 // hundredths of a point; scoreNaN for NaN
	levels []uint8  // index into History.levels
	stages []uint16
	shares []uint8 // percent, by layout.splits order
}

// tickLayout names the columns of packed ticks.
type tickLayout struct {
	routes   []string   // sorted
	services []string   // sorted
	splits   [][]string // each service's routes, sorted
}

// scoreNaN stands for a NaN score; scores are clamped to 0..100.
const scoreNaN = math.MaxUint16

// layoutOf returns prev when tk has the same routes and services, else a
// new layout.
func layoutOf(tk evaluator.Tick, prev *tickLayout) *tickLayout {
	if prev != nil && len(prev.routes) == len(tk.Routes) && len(prev.services) == len(tk.Splits) {
		same := true
		for _, r := range prev.routes {
			if _, ok := tk.Routes[r]; !ok {
				same = false
				break
			}
		}
		for i, svc := range prev.services {
			w, ok := tk.Splits[svc]
			if !same || !ok || len(w) != len(prev.splits[i]) {
				same = false
				break
			}
			for _, r := range prev.splits[i] {
				if _, ok := w[r]; !ok {
					same = false
					break
				}
			}
		}
		if same {
			return prev
		}
	}
	l := &tickLayout{routes: slices.Sorted(maps.Keys(tk.Routes)), services: slices.Sorted(maps.Keys(tk.Splits))}
	for _, svc := range l.services {
		l.splits = append(l.splits, slices.Sorted(maps.Keys(tk.Splits[svc])))
	}
	return l
}

// fitsState reports whether l (nil: no layout) names the routes of s and
// each of its services' routes in weights(service), as layoutOf decides
// for the tick of s.
func (l *tickLayout) fitsState(s evaluator.State, weights func(string) map[string]int) bool {
	if l == nil || len(l.routes) != len(s.Routes) || len(l.services) != len(s.Services) {
		return false
	}
	for _, r := range l.routes {
		if _, ok := s.Routes[r]; !ok {
			return false
		}
	}
	for i, svc := range l.services {
		if _, ok := s.Services[svc]; !ok {
			return false
		}
		w := weights(svc)
		if len(w) != len(l.splits[i]) {
			return false
		}
		for _, r := range l.splits[i] {
			if _, ok := w[r]; !ok {
				return false
			}
		}
	}
	return true
}

// layoutOfState is the layout of the tick of s, each service's routes
// those of weights(service).
func layoutOfState(s evaluator.State, weights func(string) map[string]int) *tickLayout {
	l := &tickLayout{routes: slices.Sorted(maps.Keys(s.Routes)), services: slices.Sorted(maps.Keys(s.Services))}
	for _, svc := range l.services {
		l.splits = append(l.splits, slices.Sorted(maps.Keys(weights(svc))))
	}
	return l
}

// packState stores the tick at ts of s in layout l, as pack stores
// evaluator.TickOf's, each service's split read from weights.
func (h *Store) packState(ts time.Time, s evaluator.State, weights func(string) map[string]int, l *tickLayout) packedTick {
	p := packedTick{time: ts, layout: l, scores: make([]uint16, len(l.routes)),
		levels: make([]uint8, len(l.routes)), stages: make([]uint16, len(l.routes))}
	for i, r := range l.routes {
		rs := s.Routes[r]
		p.scores[i] = packScore(rs.Score.Value)
		p.levels[i] = h.levelIndex(rs.Level.String())
		p.stages[i] = uint16(min(max(rs.Stage, 0), math.MaxUint16))
	}
	n := 0
	for i := range l.services {
		n += len(l.splits[i])
	}
	p.shares = make([]uint8, 0, n)
	for i, svc := range l.services {
		w := weights(svc)
		for _, r := range l.splits[i] {
			p.shares = append(p.shares, uint8(min(max(w[r], 0), 100)))
		}
	}
	return p
}

// pack stores tk in layout l, interning level names in h.levels.
func (h *Store) pack(tk evaluator.Tick, l *tickLayout) packedTick {
	p := packedTick{time: tk.Time, layout: l, scores: make([]uint16, len(l.routes)),
		levels: make([]uint8, len(l.routes)), stages: make([]uint16, len(l.routes))}
	for i, r := range l.routes {
		rt := tk.Routes[r]
		p.scores[i] = packScore(rt.Score)
		p.levels[i] = h.levelIndex(rt.Level)
		p.stages[i] = uint16(min(max(rt.Stage, 0), math.MaxUint16))
	}
	for i, svc := range l.services {
		for _, r := range l.splits[i] {
			p.shares = append(p.shares, uint8(min(max(tk.Splits[svc][r], 0), 100)))
		}
	}
	return p
}

// unpack rebuilds the evaluator.Tick.
func (h *Store) unpack(p packedTick) evaluator.Tick {
	l := p.layout
	tk := evaluator.Tick{Time: p.time, Routes: make(map[string]evaluator.TickRoute, len(l.routes)), Splits: make(map[string]map[string]int, len(l.services))}
	for i, r := range l.routes {
		tk.Routes[r] = evaluator.TickRoute{Score: unpackScore(p.scores[i]), Level: h.levels[p.levels[i]], Stage: int(p.stages[i])}
	}
	k := 0
	for i, svc := range l.services {
		w := make(map[string]int, len(l.splits[i]))
		for _, r := range l.splits[i] {
			w[r] = int(p.shares[k])
			k++
		}
		tk.Splits[svc] = w
	}
	return tk
}

// levelIndex interns a level name (there are five).
func (h *Store) levelIndex(name string) uint8 {
	if i := slices.Index(h.levels, name); i >= 0 {
		return uint8(i)
	}
	if len(h.levels) == math.MaxUint8+1 {
		return 0 // cannot happen with the five levels; keep the first
	}
	h.levels = append(h.levels, name)
	return uint8(len(h.levels) - 1)
}

func packScore(v float64) uint16 {
	if math.IsNaN(v) {
		return scoreNaN
	}
	return uint16(math.Round(min(max(v, 0), 100) * 100))
}

func unpackScore(u uint16) float64 {
	if u == scoreNaN {
		return math.NaN()
	}
	return float64(u) / 100
}
