package charts

import (
	"cmp"
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Series is one named line or area; Values are aligned with the chart's
// times, NaN for no value.
type Series struct {
	Name   string
	Color  string
	Values []float64
	// Dashed draws a line dashed and leaves it out of the legend: the
	// second of two series compared on one chart (Chart.DashedNote).
	Dashed bool
}

// Band is a horizontal range of the y axis, such as the scores of a level.
type Band struct {
	From, To float64
	Label    string
	Color    string
}

// Marker is a vertical line at a time: a level change, an alert, an
// actuation.
type Marker struct {
	At    time.Time
	Label string
	Color string
	// Kind is MarkerLevel (the default), MarkerAlert or MarkerActuation;
	// each is drawn its own way.
	Kind string
	// Glyph, when set, is drawn at the top of the line (an actuation's ◆
	// or ✕) and carries the tooltip too.
	Glyph string
}

// Marker kinds: the SVG class of a marker is "marker marker-KIND".
const (
	MarkerLevel     = "level"
	MarkerAlert     = "alert"
	MarkerActuation = "actuation"
)

// Chart is one chart: times on the x axis, YMax at the top of the y axis.
type Chart struct {
	Title   string
	Times   []time.Time
	Series  []Series
	Bands   []Band
	Markers []Marker
	YMax    float64
	YUnit   string
	// Stacked draws the series as stacked areas (a traffic split) instead
	// of lines.
	Stacked bool
	// DashedNote, when set, ends the legend and says what the dashed
	// series are ("dashed: candidate").
	DashedNote string
}

const (
	width, height          = 900, 220
	left, right, top, foot = 44, 120, 24, 28
)

// SVG renders c as an <svg> element.
func (c Chart) SVG() template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`,
		width, height, width, height, esc(c.Title))
	fmt.Fprintf(&b, `<text x="%d" y="16" class="title" font-size="13" font-weight="bold">%s</text>`, left, esc(c.Title))
	if len(c.Times) == 0 || c.YMax <= 0 {
		b.WriteString(`<text x="50%" y="50%" text-anchor="middle" class="empty">no data</text></svg>`)
		return template.HTML(b.String())
	}
	t0, t1 := c.Times[0], c.Times[len(c.Times)-1]
	span := t1.Sub(t0).Seconds()
	if span <= 0 {
		span = 1
	}
	pw, ph := float64(width-left-right), float64(height-top-foot)
	x := func(t time.Time) float64 { return float64(left) + pw*t.Sub(t0).Seconds()/span }
	y := func(v float64) float64 { return float64(top) + ph*(1-math.Min(math.Max(v, 0), c.YMax)/c.YMax) }

	for _, bd := range c.Bands {
		fmt.Fprintf(&b, `<rect class="band" data-label="%s" x="%d" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.12"/>`,
			esc(bd.Label), left, y(bd.To), pw, y(bd.From)-y(bd.To), bd.Color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10" fill="%s">%s</text>`, float64(width-right)+4, y(bd.To)+10, bd.Color, esc(bd.Label))
	}
	// Axes: y ticks at quarters, x ticks at the ends and the middle.
	for i := 0; i <= 4; i++ {
		v := c.YMax * float64(i) / 4
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" font-size="10" text-anchor="end">%g%s</text>`,
			left, width-right, y(v), y(v), left-4, y(v)+3, v, esc(c.YUnit))
	}
	layout := "01-02 15:04"
	if t1.Sub(t0) < 10*time.Minute {
		layout = "15:04:05" // minutes alone would repeat
	}
	for _, t := range []time.Time{t0, t0.Add(t1.Sub(t0) / 2), t1} {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>`, x(t), height-8, t.UTC().Format(layout))
	}

	base := make([]float64, len(c.Times))
	// The legend starts after the title (13 px bold: about 7.5 px a letter).
	legend, lx := 0, left+max(300, int(7.5*float64(utf8.RuneCountInString(c.Title)))+16)
	for _, s := range c.Series {
		var pts []string
		if c.Stacked {
			var lower []string
			for j, t := range c.Times {
				v := 0.0
				if j < len(s.Values) && !math.IsNaN(s.Values[j]) {
					v = s.Values[j]
				}
				lower = append(lower, fmt.Sprintf("%.1f,%.1f", x(t), y(base[j])))
				base[j] += v
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(t), y(base[j])))
			}
			for j := len(lower) - 1; j >= 0; j-- {
				pts = append(pts, lower[j])
			}
			fmt.Fprintf(&b, `<polygon class="series" data-name="%s" points="%s" fill="%s" fill-opacity="0.8" stroke="none"/>`,
				esc(s.Name), strings.Join(pts, " "), s.Color)
		} else {
			var segs []string
			for j, t := range c.Times {
				if j >= len(s.Values) || math.IsNaN(s.Values[j]) {
					if len(pts) > 0 {
						segs = append(segs, "M"+strings.Join(pts, " L"))
						pts = nil
					}
					continue
				}
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(t), y(s.Values[j])))
			}
			if len(pts) > 0 {
				segs = append(segs, "M"+strings.Join(pts, " L"))
			}
			dash := ""
			if s.Dashed {
				dash = ` stroke-dasharray="6,4"`
			}
			fmt.Fprintf(&b, `<path class="series" data-name="%s" d="%s" fill="none" stroke="%s" stroke-width="2"%s/>`,
				esc(s.Name), strings.Join(segs, " "), s.Color, dash)
		}
		if s.Dashed {
			continue
		}
		fmt.Fprintf(&b, `<rect x="%d" y="7" width="10" height="10" fill="%s"/><text x="%d" y="16" font-size="11">%s</text>`,
			lx+legend*130, s.Color, lx+14+legend*130, esc(s.Name))
		legend++
	}
	if c.DashedNote != "" {
		fmt.Fprintf(&b, `<text x="%d" y="16" font-size="11" class="dashed-note">%s</text>`, lx+legend*130, esc(c.DashedNote))
	}
	// Actuations first, thin and solid, so that a level change in the same
	// tick stays visible on top of them, dashed.
	markers := slices.Clone(c.Markers)
	last := func(m Marker) int {
		if m.Kind == MarkerActuation {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(markers, func(a, b Marker) int { return cmp.Compare(last(a), last(b)) })
	for _, m := range markers {
		kind, dash := m.Kind, `stroke-width="1.5" stroke-dasharray="3,2"`
		if kind == "" {
			kind = MarkerLevel
		}
		if kind == MarkerActuation {
			dash = `stroke-width="1" stroke-opacity="0.6"`
		}
		title := esc(m.At.UTC().Format("2006-01-02 15:04:05") + " " + m.Label)
		fmt.Fprintf(&b, `<g class="marker marker-%s" data-label="%s"><title>%s</title><line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="%s" %s/>`,
			esc(kind), esc(m.Label), title, x(m.At), x(m.At), top, height-foot, m.Color, dash)
		if m.Glyph != "" {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" text-anchor="middle" fill="%s">%s</text>`, x(m.At), top+9, m.Color, esc(m.Glyph))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func esc(s string) string { return html.EscapeString(s) }
