package charts

import (
	"hash/fnv"
	"slices"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
)

// palette holds colours that stay apart from each other and from the level
// colours below (Okabe–Ito, for colour-blind readers, then a few more).
var palette = []string{"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#7f7f7f", "#8c564b", "#17becf", "#bcbd22"}

// RouteColors gives each route a colour that follows its name, not its
// position, so a route keeps its colour on every page and chart drawn from
// the same configuration; two routes never share one while the palette
// lasts (a route whose colour is taken gets the next free one, in name
// order).
func RouteColors(routes []string) map[string]string {
	out := make(map[string]string, len(routes))
	taken := map[int]bool{}
	sorted := slices.Sorted(slices.Values(routes))
	for _, r := range slices.Compact(sorted) {
		h := fnv.New32a()
		h.Write([]byte(r))
		i := int(h.Sum32() % uint32(len(palette)))
		for n := 0; taken[i] && n < len(palette); n++ {
			i = (i + 1) % len(palette)
		}
		taken[i] = true
		out[r] = palette[i]
	}
	return out
}

// LevelColors are the colours of levels and alert states.
var LevelColors = map[string]string{
	traffic.Normal.String():   "#2e7d32",
	traffic.Warm.String():     "#f9a825",
	traffic.Shed.String():     "#ef6c00",
	traffic.Failover.String(): "#c62828",
	traffic.Manual.String():   "#6a1b9a", // not a shade of failover: a person must act
	"pending":                 "#fbc02d",
	"firing":                  "#b71c1c",
}

// ActuationColors are the colours of actuation markers, apart from the
// level and alert colours (and drawn solid, with a glyph, where those are
// dashed).
var ActuationColors = map[string]string{
	evaluator.ActuationApplied: "#263238", // blue-black ◆
	evaluator.ActuationFailed:  "#000000", // black ✕
}
