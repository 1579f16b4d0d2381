package evaluator

import (
	"maps"
	"slices"
)

// table is a Snapshot's samples: cells[row*len(signals)+col]. A cell holds
// no pointer (its reason is an index into reasons), so the garbage
// collector never scans the cells, and takes 24 bytes where a Sample takes
// 40: a tick reads two tables of 140,000 cells at 10,000 routes.
type table struct {
	// routes and signals are the slices NewSnapshot was given, shared
	// (so a policy's own Routes() is recognised by its backing array)
	// until owned says set copied them to append.
	routes  []string
	signals []string
	owned   bool
	rowOf   map[string]int
	colOf   map[string]int
	cells   []cell
	// reasons are the cells' distinct reasons, reasonOf their indexes:
	// index 0 is "" and 1 is noSample's in every table.
	reasons  []string
	reasonOf map[string]uint32
}

// cell is a Sample in a table.
type cell struct {
	value, volume float64
	reason        uint32
	status        SampleStatus
	counted       bool
}

// noSampleCell is noSample in any table.
var noSampleCell = cell{status: StatusMissing, reason: 1}

// emptyTable stands for a snapshot without one: every cell reads noSample.
var emptyTable = newTable(nil, nil)

// newTable returns a table of every route and signal, every cell noSample.
func newTable(routes, signals []string) *table {
	t := &table{routes: routes, signals: signals, rowOf: make(map[string]int, len(routes)),
		colOf: make(map[string]int, len(signals)), cells: make([]cell, len(routes)*len(signals)),
		reasons: []string{"", noSample.Reason}, reasonOf: map[string]uint32{"": 0, noSample.Reason: 1}}
	for i, r := range routes {
		t.rowOf[r] = i
	}
	for j, s := range signals {
		t.colOf[s] = j
	}
	for i := range t.cells {
		t.cells[i] = noSampleCell
	}
	return t
}

// row returns row i's cells.
func (t *table) row(i int) []cell {
	n := len(t.signals)
	return t.cells[i*n : (i+1)*n : (i+1)*n]
}

// sample is the Sample c holds.
func (t *table) sample(c cell) Sample {
	return Sample{Value: c.value, Volume: c.volume, Reason: t.reasons[c.reason], Status: c.status, Counted: c.counted}
}

// cellOf is v as a cell of t, its reason added to t's.
func (t *table) cellOf(v Sample) cell {
	r, ok := uint32(0), v.Reason == ""
	if !ok {
		r, ok = t.reasonOf[v.Reason]
	}
	if !ok {
		r = uint32(len(t.reasons))
		t.reasons = append(t.reasons, v.Reason)
		t.reasonOf[v.Reason] = r
	}
	return cell{value: v.Value, volume: v.Volume, reason: r, status: v.Status, counted: v.Counted}
}

// set stores v for route and signal, adding a row or a column as needed.
func (t *table) set(route, signal string, v Sample) {
	if !t.owned {
		t.routes, t.signals, t.owned = slices.Clone(t.routes), slices.Clone(t.signals), true
	}
	j, ok := t.colOf[signal]
	if !ok {
		t.addColumn(signal)
		j = len(t.signals) - 1
	}
	i, ok := t.rowOf[route]
	if !ok {
		i = len(t.routes)
		t.rowOf[route] = i
		t.routes = append(t.routes, route)
		for range t.signals {
			t.cells = append(t.cells, noSampleCell)
		}
	}
	t.row(i)[j] = t.cellOf(v)
}

// addColumn adds a column of noSample cells for signal.
func (t *table) addColumn(signal string) {
	n := len(t.signals)
	cells := make([]cell, 0, len(t.routes)*(n+1))
	for i := range t.routes {
		cells = append(cells, t.cells[i*n:(i+1)*n]...)
		cells = append(cells, noSampleCell)
	}
	t.colOf[signal] = n
	t.signals = append(t.signals, signal)
	t.cells = cells
}

// clone returns a copy of t that may be written.
func (t *table) clone() *table {
	return &table{routes: t.routes, signals: t.signals, rowOf: maps.Clone(t.rowOf), colOf: maps.Clone(t.colOf),
		cells: slices.Clone(t.cells), reasons: slices.Clone(t.reasons), reasonOf: maps.Clone(t.reasonOf)}
}
