package runner

import (
	"reflect"
	"testing"

	"github.com/hermes-failover/hermes/runner/audit"
)

// TestRunnerKeepsLittle: the Runner keeps the tick timing, the command
// queue, the reloads and the last tick's result, at most 12 fields; the
// rest of the loop's state belongs to the stages.
func TestRunnerKeepsLittle(t *testing.T) {
	rt := reflect.TypeFor[Runner]()
	if n := rt.NumField(); n > 12 {
		var names []string
		for i := range n {
			names = append(names, rt.Field(i).Name)
		}
		t.Errorf("Runner has %d fields, want at most 12: %v", n, names)
	}
}

// TestStagesRunInOrder: a tick hands its result to the persist stage
// first (a command's caller finds its override saved when answered),
// then telemetry and audit, then the loop's own publishing of the state
// and the answers (what the status API and a caller see is on record),
// then actuation and alerting.
func TestStagesRunInOrder(t *testing.T) {
	r, _, _, _ := newTestRunner(t, &fakeProm{soft: 0.02})
	got := r.stages.order
	if len(got) != 7 || got[0] != stage(ownPackage{r.stages.persist}) || got[1] != stage(ownPackage{r.stages.telemetry}) ||
		got[5] != stage(ownPackage{r.stages.actuation}) || got[6] != stage(ownPackage{r.stages.alerting}) {
		t.Errorf("stages %T", got)
	}
	if own, ok := got[2].(ownPackage); !ok {
		t.Errorf("the third stage is %T, want the audit stage", got[2])
	} else if _, ok := own.Stage.(*audit.Stage); !ok {
		t.Errorf("the third stage is %T, want the audit stage", got[2])
	}
	for i, what := range map[int]string{3: "the state's publishing", 4: "the loop's answers"} {
		if _, ok := got[i].(stageFunc); !ok {
			t.Errorf("stage %d is %T, want %s", i+1, got[i], what)
		}
	}
}
