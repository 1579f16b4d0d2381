package main

import (
	"fmt"
	"io"
	"time"
)

// progressEvery is how often a long backtest reports its progress; a run
// shorter than this prints nothing.
const progressEvery = 5 * time.Second

// progressTo returns a backtest progress callback that writes a line such
// as "backtest: 6h0m0s of 24h0m0s replayed (25%)" to w at most once per
// progressEvery of wall time, read with now.
func progressTo(w io.Writer, now func() time.Time) func(done, total time.Duration) {
	last := now()
	return func(done, total time.Duration) {
		if t := now(); t.Sub(last) >= progressEvery && total > 0 {
			last = t
			fmt.Fprintf(w, "backtest: %s of %s replayed (%.0f%%)\n", done, total, 100*float64(done)/float64(total))
		}
	}
}
