package runner

import (
	"maps"
	"slices"
)

// fewNames is how many example names a fleet-wide log line carries.
const fewNames = 3

// firstFew returns up to fewNames of names, in their order: the examples
// of a log line that says a condition once for the fleet, with the count,
// rather than once per route or service.
func firstFew(names []string) []string {
	return names[:min(len(names), fewNames)]
}

// byReason groups the keys of m by their value, each group sorted.
func byReason(m map[string]string) map[string][]string {
	out := map[string][]string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out[m[k]] = append(out[m[k]], k)
	}
	return out
}
