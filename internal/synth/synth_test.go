package synth

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScenariosAreTheFiles: every named scenario draws the bytes of its
// file in testdata/scenarios, so a change to the generator that is not
// followed by `go run ./testdata/scenarios/gen` fails here.
func TestScenariosAreTheFiles(t *testing.T) {
	all := Scenarios()
	if len(all) == 0 {
		t.Fatal("no scenarios")
	}
	for _, sc := range all {
		want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "scenarios", sc.Name()+".yaml"))
		if err != nil {
			t.Errorf("%s: %v (run go run ./testdata/scenarios/gen)", sc.Name(), err)
			continue
		}
		if !bytes.Equal(sc.File(), want) {
			t.Errorf("%s: the generator draws other bytes than the file (run go run ./testdata/scenarios/gen and review the diff)", sc.Name())
		}
	}
}

// TestNightsAreDrawnPerSeed: a night is the same for the same seed, other
// for another, and a failing night's truth is its two hours of failure.
func TestNightsAreDrawnPerSeed(t *testing.T) {
	a, err := Night(FailingNight, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Night(FailingNight, 7)
	c, _ := Night(FailingNight, 8)
	if !bytes.Equal(a.File(), b.File()) || bytes.Equal(a.File(), c.File()) {
		t.Error("a night is not determined by its seed alone")
	}
	if len(a.truth) != 1 || a.truth[0].route != "free" || a.truth[0].to-a.truth[0].from != 2*time.Hour {
		t.Errorf("truth %+v, want two hours of free", a.truth)
	}
	if !strings.Contains(string(a.File()), `reason="fallback_phrase"`) {
		t.Error("a failing night has no fallback_phrase series")
	}
	h, _ := Night(HealthyNight, 7)
	if len(h.truth) != 0 || h.Length() != NightLength {
		t.Errorf("healthy night: truth %+v, length %s", h.truth, h.Length())
	}
	if _, err := Night("other", 1); err == nil {
		t.Error("an unknown kind of night was drawn")
	}
}
