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
// then the answers, telemetry, audit, actuation and alerting.
func TestStagesRunInOrder(t *testing.T) {
	r, _, _, _ := newTestRunner(t, &fakeProm{soft: 0.02})
	got := r.stages.order
	if len(got) != 6 || got[0] != stage(ownPackage{r.stages.persist}) || got[2] != stage(ownPackage{r.stages.telemetry}) ||
		got[4] != stage(ownPackage{r.stages.actuation}) || got[5] != stage(ownPackage{r.stages.alerting}) {
		t.Errorf("stages %T", got)
	}
	if _, ok := got[1].(stageFunc); !ok {
		t.Errorf("the second stage is %T, want the loop's answers", got[1])
	}
	if own, ok := got[3].(ownPackage); !ok {
		t.Errorf("the fourth stage is %T, want the audit stage", got[3])
	} else if _, ok := own.Stage.(*audit.Stage); !ok {
		t.Errorf("the fourth stage is %T, want the audit stage", got[3])
	}
}
