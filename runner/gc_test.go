package runner

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestSetGCPercent: the live loop's collector target applies unless GOGC
// is set.
func TestSetGCPercent(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "150") // restored after the test, with what was there
	if SetGCPercent() {
		t.Error("GOGC set: SetGCPercent applied its own")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: the target is %d, want it left at 100", got)
	}
	os.Unsetenv("GOGC")
	if !SetGCPercent() {
		t.Error("GOGC unset: SetGCPercent did nothing")
	}
	if got := debug.SetGCPercent(100); got != GCPercent {
		t.Errorf("GOGC unset: the target is %d, want %d", got, GCPercent)
	}
}
