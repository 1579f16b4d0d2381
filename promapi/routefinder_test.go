package promapi

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestRouteFinderAsMap: find gives the map's answer for every route an
// answer names, whatever the order of its parts: the same order part after
// part (where its guesses hit), orders shuffled between parts, routes
// named twice and routes not configured.
func TestRouteFinderAsMap(t *testing.T) {
	routes := make([]string, 200)
	for i := range routes {
		routes[i] = fmt.Sprintf("provider-%d/model-%d", i/4, i%4)
	}
	positions := newRoutePositions(routes)
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		f := newRouteFinder(positions)
		order := rng.Perm(len(routes))
		for part := range 6 {
			if trial%2 == 1 && part%2 == 1 {
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			}
			for _, k := range order {
				names := []string{routes[k]}
				switch rng.IntN(20) {
				case 0:
					names = append(names, "not-configured")
				case 1:
					names = append(names, routes[rng.IntN(len(routes))])
				}
				for _, name := range names {
					want, wantOK := positions.index[name]
					got, gotOK := find(&f, []byte(name))
					if got != want || gotOK != wantOK {
						t.Fatalf("trial %d, part %d: find(%q) = %d, %v; the map: %d, %v", trial, part, name, got, gotOK, want, wantOK)
					}
				}
			}
		}
	}
}
