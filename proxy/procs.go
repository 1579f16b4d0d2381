package proxy

import (
	"os"
	"runtime"
	"sync/atomic"
)

// loopCount is how many event loops a Front runs (0: GOMAXPROCS).
var loopCount atomic.Int32

// SetProcs runs the event loops on the Ps there are and gives the runtime
// one P more, unless the environment sets GOMAXPROCS, once in a process;
// it says whether it did. A loop's thread blocks in system calls (epoll_wait, and a write to
// a loopback socket whose woken reader takes the core); while it does,
// sysmon hands its P to another thread whenever no P is idle, and then
// polls every 20 µs (retake in runtime/proc.go). With a P to spare it
// leaves the loops' Ps alone: under make bench-proxy's plain load, two
// loops cost 30.7 µs of CPU a reply on three Ps against 34.0 on two, and
// 0.87 context switches a reply against 1.07 (docs/scale.md). Elsewhere
// than Linux there are no loops and it does nothing.
func SetProcs() bool {
	if _, set := os.LookupEnv("GOMAXPROCS"); set || runtime.GOOS != "linux" {
		return false
	}
	n := runtime.GOMAXPROCS(0)
	if !loopCount.CompareAndSwap(0, int32(n)) {
		return false // done before in this process
	}
	runtime.GOMAXPROCS(n + 1)
	return true
}
