package evaluator

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestOutOfReachCountsOnlyWindowsOfTheStage: a failback stage's evidence
// is out of reach only on a window that began after the stage did; a
// window that still holds the time before it, with no traffic, would
// understate the rate. It replays failback_rate.txt up to its stalled
// stage (1.35 req/s: hard_fail_ratio's 15m and status_422_ratio's and
// retry_ratio's 5m windows cannot hold the calls they need), then asks
// as if the stage were younger.
func TestOutOfReachCountsOnlyWindowsOfTheStage(t *testing.T) {
	b, err := os.ReadFile("testdata/interaction/failback_rate.txt")
	if err != nil {
		t.Fatal(err)
	}
	script, _, ok := strings.Cut(string(b), "\nwaiting route=free")
	if !ok {
		t.Fatal("failback_rate.txt no longer asks what the stalled stage waits for")
	}
	h := newHarness(t)
	datadriven.RunTestFromString(t, script, func(t *testing.T, d *datadriven.TestData) string { return h.run(t, d) })
	rs := *h.s.Routes["free"]
	if rs.Stage != 1 {
		t.Fatalf("free at stage %d, want 1", rs.Stage)
	}
	if !OutOfReach(h.p, rs, h.now) {
		t.Fatalf("stage of %s: evidence not out of reach at 1.35 req/s:\n%s", h.now.Sub(rs.StageSince), strings.Join(WaitTexts(Waiting(h.p, rs, h.now)), "\n"))
	}
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{{4 * time.Minute, false}, {5 * time.Minute, true}, {15 * time.Minute, true}} {
		young := rs
		young.StageSince = h.now.Add(-c.at)
		if got := OutOfReach(h.p, young, h.now); got != c.want {
			t.Errorf("a stage of %s: out of reach %v, want %v", c.at, got, c.want)
		}
	}
	normal := rs
	normal.Stage = 0
	if OutOfReach(h.p, normal, h.now) {
		t.Error("a route at no failback stage is out of reach")
	}
}
