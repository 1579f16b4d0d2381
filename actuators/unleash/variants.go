package unleash

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/hermes-failover/hermes/traffic"
)

// How Hermes' strategy on a routes flag looks. Unleash 7 deprecates
// variants on the flag environment (PUT …/environments/{env}/variants
// answers 403 for a flag that has none), so the routes are the variants of
// one flexibleRollout strategy at 100 %, as SDKs and the frontend API read
// them.
const (
	strategyName  = "flexibleRollout"
	strategyTitle = "hermes"
	stickiness    = "default"

	weightFix      = "fix"
	weightVariable = "variable"

	// perMille is what Unleash's variant weights sum to.
	perMille = 1000
)

// variantsFor turns a split (integer percentages summing to 100) into
// strategy variants, sorted by name. Unleash wants at least one variant
// of weight type "variable" and the "fix" ones to sum to at most 1000, so
// the heaviest route (the first by name on a tie) is "variable" and holds
// the remainder, which is exactly its own share ×10; the others are "fix"
// at their share ×10. A route at 0 % keeps its variant at weight 0, which
// Unleash accepts and SDKs never pick.
func variantsFor(weights map[string]int) ([]variant, error) {
	if len(weights) == 0 {
		return nil, errors.New("no routes to split traffic between")
	}
	var (
		errs  []error
		sum   int
		heavy string
	)
	names := slices.Sorted(maps.Keys(weights))
	for _, r := range names {
		w := weights[r]
		if err := checkName(r); err != nil {
			errs = append(errs, fmt.Errorf("route %w", err))
		}
		if w < 0 || w > 100 {
			errs = append(errs, fmt.Errorf("route %q: weight %d is not a percentage", r, w))
		}
		sum += w
		if heavy == "" || w > weights[heavy] {
			heavy = r
		}
	}
	if sum != 100 {
		errs = append(errs, fmt.Errorf("weights sum to %d, want 100", sum))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([]variant, 0, len(names))
	for _, r := range names {
		v := variant{Name: r, Weight: weights[r] * perMille / 100, WeightType: weightFix, Stickiness: stickiness}
		if r == heavy {
			v.WeightType = weightVariable
		}
		out = append(out, v)
	}
	return out, nil
}

// weightsOf turns variants back into percentages (per mille / 10, rounded).
func weightsOf(vs []variant) map[string]int {
	out := make(map[string]int, len(vs))
	for _, v := range vs {
		out[v.Name] = int(math.Round(float64(v.Weight) * 100 / perMille))
	}
	return out
}

// strategyFor is Hermes' strategy on the routes flag, with the writer's
// stamp among its parameters (see lease.go).
func strategyFor(flag string, vs []variant, writer traffic.Stamp) strategy {
	ps := map[string]any{"rollout": "100", "stickiness": stickiness, "groupId": flag}
	stampParams(ps, writer)
	return strategy{
		Name:        strategyName,
		Title:       strategyTitle,
		Constraints: []json.RawMessage{},
		Parameters:  ps,
		Segments:    []int{},
		Variants:    vs,
	}
}

// matches reports whether s already routes as want describes: same kind,
// title, rollout, no constraints or segments, and the same variants (in
// any order: Unleash sorts them its own way). The writer's stamp is not
// compared (sameStamp does).
func (s strategy) matches(want strategy) bool {
	if s.Name != want.Name || s.Title != want.Title || s.Disabled || len(s.Constraints) > 0 || len(s.Segments) > 0 {
		return false
	}
	for k, v := range want.Parameters {
		if k == paramWriter || k == paramWriterTick {
			continue
		}
		if param(s.Parameters, k) != fmt.Sprint(v) {
			return false
		}
	}
	if len(s.Variants) != len(want.Variants) {
		return false
	}
	have := map[string]variant{}
	for _, v := range s.Variants {
		have[v.Name] = v
	}
	for _, v := range want.Variants {
		if have[v.Name] != v {
			return false
		}
	}
	return true
}

// param reads a strategy parameter as a string (Unleash stores strings;
// older data may hold numbers).
func param(ps map[string]any, k string) string {
	switch v := ps[k].(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

// pick finds Hermes' strategy among an environment's: the first titled
// "hermes", else the first flexibleRollout (such as the default strategy
// Unleash adds when a flag without strategies is switched on). The others
// are returned apart.
func pick(ss []strategy) (ours *strategy, others []strategy) {
	idx := slices.IndexFunc(ss, func(s strategy) bool { return s.Title == strategyTitle })
	if idx < 0 {
		idx = slices.IndexFunc(ss, func(s strategy) bool { return s.Name == strategyName })
	}
	for i := range ss {
		if i == idx {
			ours = &ss[i]
		} else {
			others = append(others, ss[i])
		}
	}
	return ours, others
}
