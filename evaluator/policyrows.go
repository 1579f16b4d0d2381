package evaluator

import "slices"

// policyRows reads a snapshot's table in a policy's order: the cells of
// route p.Routes()[i] in the order of p's columns (its signals, then their
// windows). For a table made with the
// policy's routes and signals (the live loop's, a backtest's) that is row
// i itself, read in place; any other is gathered by name.
type policyRows struct {
	t    *table
	rows []int // route i's row, -1 for none; nil when row i is route i
	cols []int // policy column j's column, -1 for none; nil when they are one
}

// readRows returns the policyRows of t (nil: a snapshot without samples)
// for p.
func readRows(p *Policy, t *table) policyRows {
	if t == nil {
		t = emptyTable
	}
	r := policyRows{t: t}
	if !sameNames(t.routes, p.Routes()) {
		r.rows = make([]int, len(p.Routes()))
		for i, name := range p.Routes() {
			if row, ok := t.rowOf[name]; ok {
				r.rows[i] = row
			} else {
				r.rows[i] = -1
			}
		}
	}
	cols := p.columns
	if !sameNames(t.signals, cols) {
		r.cols = make([]int, len(cols))
		for j := range cols {
			if col, ok := t.colOf[cols[j]]; ok {
				r.cols[j] = col
			} else {
				r.cols[j] = -1
			}
		}
	}
	return r
}

// sameNames reports whether a and b hold the same names in the same order,
// without comparing them when they are the same slice.
func sameNames(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0] || slices.Equal(a, b))
}

// cells returns the cells of the policy's route i, in its column order (n
// of them): the table's row itself when it is laid out so, else gathered
// into buf. A route or signal without a cell reads noSample.
func (r policyRows) cells(i, n int, buf []cell) []cell {
	row := i
	if r.rows != nil {
		row = r.rows[i]
	}
	if row < 0 {
		buf = buf[:0]
		for range n {
			buf = append(buf, noSampleCell)
		}
		return buf
	}
	cells := r.t.row(row)
	if r.cols == nil {
		return cells
	}
	buf = buf[:0]
	for _, col := range r.cols {
		if col < 0 {
			buf = append(buf, noSampleCell)
		} else {
			buf = append(buf, cells[col])
		}
	}
	return buf
}

// samples writes the samples cells hold over smps, which it returns
// resized to them. A route's samples are read into the last route's: a
// reason is written only where it differs (mostly both are ""), as
// writing a string into the heap costs a write barrier while the
// collector runs, and this runs for every cell of every route.
func (r policyRows) samples(cells []cell, smps []Sample) []Sample {
	if cap(smps) < len(cells) {
		smps = make([]Sample, len(cells))
	}
	smps = smps[:len(cells)]
	for j, c := range cells {
		s := &smps[j]
		s.Value, s.Volume, s.Status, s.Counted = c.value, c.volume, c.status, c.counted
		if reason := r.t.reasons[c.reason]; s.Reason != reason {
			s.Reason = reason
		}
	}
	return smps
}

// routeSamples scores a snapshot's routes by index in the policy's order,
// reading each route's samples from the table in place where it can.
type routeSamples struct {
	p     *Policy
	rows  policyRows
	cells []cell
	smps  []Sample
	work  scoreScratch
}

func newRouteSamples(p *Policy, snap Snapshot) *routeSamples {
	n := len(p.columns)
	return &routeSamples{p: p, rows: readRows(p, snap.t), cells: make([]cell, 0, n), smps: make([]Sample, 0, n)}
}

// score is ComputeScore of the policy's route i.
func (r *routeSamples) score(i int, idle bool, scope recoveryScope) Score {
	n := len(r.p.columns)
	r.smps = r.rows.samples(r.rows.cells(i, n, r.cells), r.smps)
	return r.work.score(r.p, cleanSamples(r.p, r.smps, scope.quiet), idle, scope)
}
