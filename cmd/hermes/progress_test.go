package main

import (
	"strings"
	"testing"
	"time"
)

func TestProgressOnlyForLongRuns(t *testing.T) {
	var b strings.Builder
	clock := time.Unix(0, 0)
	progress := progressTo(&b, func() time.Time { return clock })
	progress(0, 24*time.Hour)
	clock = clock.Add(2 * time.Second)
	progress(time.Hour, 24*time.Hour)
	if b.Len() != 0 {
		t.Fatalf("a run shorter than %s printed %q", progressEvery, b.String())
	}
	clock = clock.Add(progressEvery)
	progress(6*time.Hour, 24*time.Hour)
	progress(7*time.Hour, 24*time.Hour) // same instant: not again
	if want := "backtest: 6h0m0s of 24h0m0s replayed (25%)\n"; b.String() != want {
		t.Fatalf("printed %q, want %q", b.String(), want)
	}
}
