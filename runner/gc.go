package runner

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target (GOGC) hermes run runs
// with unless the environment sets GOGC. The live loop's heap is large
// and long-lived (at 10,000 routes 76-107 MB live: the state, the policy,
// the kept answers, the exported series), and each tick adds about 40 MB
// that dies with it (the tick's snapshot, Step's scores), so at Go's
// default of 100 the collector marked the whole live heap every second
// or third tick: 43 ms of CPU a cycle on a quiet machine by its own trace
// (GODEBUG=gctrace=1, runs of scripts/bench-rss.sh 10000), 149-238 ms at
// load averages of 5-9. At 200 it runs about half as often, for a higher
// peak of resident memory: about 290-320 MB instead of 210-240 MB at
// 10,000 routes (docs/scale.md, "What changed", gives the runs).
const GCPercent = 200

// SetGCPercent applies GCPercent when the environment does not set GOGC,
// and says whether it did.
func SetGCPercent() bool {
	if _, set := os.LookupEnv("GOGC"); set {
		return false
	}
	debug.SetGCPercent(GCPercent)
	return true
}
