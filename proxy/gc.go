package proxy

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target (GOGC) hermes proxy runs
// with unless the environment sets GOGC. A proxy's live heap is small (a
// few MiB idle, what its open streams hold under load), while each
// request allocates about 11 kB that dies with it (the request and reply
// headers, the copies of the request net/http and httputil make, the
// judged reply's text). At Go's default of 100 the collector then ran
// every few hundred requests: marking and its assists were 12–15 % of the
// proxy's CPU profile under make bench-proxy's plain load, and another
// tenth went to allocating. At 300 the CPU per plain request fell from a
// median 115 to 96 µs (five rounds each, side by side, load average
// 15–21), and the RSS held per open stream stayed 46–47 KiB with 1,000
// streams open (it is stacks and the buffers the streams hold, which no
// collector frees); the idle heap target grows by a few MiB.
const GCPercent = 300

// SetGCPercent applies GCPercent when the environment does not set GOGC,
// and says whether it did.
func SetGCPercent() bool {
	if _, set := os.LookupEnv("GOGC"); set {
		return false
	}
	debug.SetGCPercent(GCPercent)
	return true
}
