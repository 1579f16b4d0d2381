package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// drillRun is one drill as the audit log tells it: its start event and the
// time of each later phase (evaluator.DrillDetected, …).
type drillRun struct {
	route  string
	info   evaluator.DrillInfo
	by     string
	phases map[string]time.Time
	end    string // why it ended; empty while no end is recorded
}

// delay is how long after injection phase came, and whether it did.
func (d drillRun) delay(phase string) (time.Duration, bool) {
	t, ok := d.phases[phase]
	return t.Sub(d.info.Injected), ok
}

// readDrills reads the drill events of an audit log (JSON lines as
// `hermes run --audit.file` writes them), in order of injection. Lines that
// are not drill events are skipped; a line that is not JSON is an error
// naming its line number.
func readDrills(r io.Reader) ([]drillRun, error) {
	type key struct {
		route string
		at    time.Time
	}
	runs := map[key]*drillRun{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || !strings.Contains(line, `"drill"`) {
			continue
		}
		var e evaluator.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if e.Type != evaluator.EventDrill || e.Drill == nil {
			continue
		}
		k := key{e.Route, e.Drill.Injected.UTC()}
		d := runs[k]
		if d == nil {
			d = &drillRun{route: e.Route, info: *e.Drill, phases: map[string]time.Time{}}
			runs[k] = d
		}
		switch e.State {
		case evaluator.DrillStarted:
			d.by = e.By
		case evaluator.DrillEnded:
			d.end = strings.Join(e.Reasons, "; ")
		}
		if _, seen := d.phases[e.State]; !seen {
			d.phases[e.State] = e.Time
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := make([]drillRun, 0, len(runs))
	for _, d := range runs {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b drillRun) int {
		if c := a.info.Injected.Compare(b.info.Injected); c != 0 {
			return c
		}
		return strings.Compare(a.route, b.route)
	})
	return out, nil
}

// drillPhases are the recorded phases a report shows, in order.
var drillPhases = []struct{ phase, title string }{
	{evaluator.DrillDetected, "DETECTION"}, {evaluator.DrillMoved, "FIRST MOVE"}, {evaluator.DrillFailedOver, "FAILOVER"},
}

// writeDrills prints every drill and, per kind, the median delay from
// injection to each phase over the drills that reached it.
func writeDrills(w io.Writer, runs []drillRun) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "no drills in the audit log")
		return
	}
	tw := newTable(w)
	fmt.Fprint(tw, "ROUTE\tKIND\tSTART")
	for _, p := range drillPhases {
		fmt.Fprint(tw, "\t"+p.title)
	}
	fmt.Fprintln(tw, "\tDRY RUN\tBY\tEND")
	for _, d := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s", d.route, d.info.Kind, d.info.Injected.UTC().Format(time.RFC3339))
		for _, p := range drillPhases {
			fmt.Fprint(tw, "\t"+delayText(d.delay(p.phase)))
		}
		dry := "no"
		if d.info.DryRun {
			dry = "yes"
		}
		end := d.end
		if end == "" {
			end = "not recorded (running, or Hermes stopped before it ended)"
		}
		fmt.Fprintf(tw, "\t%s\t%s\t%s\n", dry, dash(d.by), end)
	}
	tw.Flush()

	byKind := map[string][]drillRun{}
	for _, d := range runs {
		byKind[d.info.Kind] = append(byKind[d.info.Kind], d)
	}
	fmt.Fprintln(w, "\nmedian delay from injection, per kind")
	tw = newTable(w)
	fmt.Fprint(tw, "KIND\tDRILLS")
	for _, p := range drillPhases {
		fmt.Fprint(tw, "\t"+p.title)
	}
	fmt.Fprintln(tw)
	for _, kind := range slices.Sorted(maps.Keys(byKind)) {
		fmt.Fprintf(tw, "%s\t%d", kind, len(byKind[kind]))
		for _, p := range drillPhases {
			var ds []time.Duration
			for _, d := range byKind[kind] {
				if v, ok := d.delay(p.phase); ok {
					ds = append(ds, v)
				}
			}
			fmt.Fprint(tw, "\t"+medianText(ds, len(byKind[kind])))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func delayText(d time.Duration, ok bool) string {
	if !ok {
		return "-"
	}
	return d.String()
}

// medianText is the median of ds and, when not every one of n drills
// reached the phase, how many did. Hand-written: sorting a handful of
// durations needs no statistics library.
func medianText(ds []time.Duration, n int) string {
	if len(ds) == 0 {
		return "-"
	}
	slices.Sort(ds)
	m := ds[len(ds)/2]
	if len(ds)%2 == 0 {
		m = (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
	}
	if len(ds) < n {
		return fmt.Sprintf("%s (%d of %d)", m, len(ds), n)
	}
	return m.String()
}

// drillsReport is `hermes ctl drills`: it reads the audit log at path ("-"
// for standard input) and prints its drills.
func drillsReport(path string, stdin io.Reader, stdout io.Writer) error {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	runs, err := readDrills(r)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	writeDrills(stdout, runs)
	return nil
}
