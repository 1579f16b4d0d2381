package evaluator

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// StateText is every field of s (JSON leaves some out: dwell clocks,
// alert values).
func StateText(s State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%+v", s.Overrides)
	for _, k := range slices.Sorted(maps.Keys(s.Services)) {
		fmt.Fprintf(&b, "\n%s %+v", k, *s.Services[k])
	}
	for _, r := range slices.Sorted(maps.Keys(s.Routes)) {
		fmt.Fprintf(&b, "\n%s %+v", r, *s.Routes[r])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Alerts)) {
		// An alert's values and text rather than the pointers it keeps.
		a := *s.Alerts[k]
		text, env := a.Text(), a.Env
		a.Env, a.rule = nil, nil
		fmt.Fprintf(&b, "\n%s %+v text %v", k, a, text)
		if env != nil {
			fmt.Fprintf(&b, " env %+v", *env)
		}
	}
	return b.String()
}
