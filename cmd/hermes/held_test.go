package main

import (
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/traffic"
)

// blindRestart is the status of a Hermes restarted while no backend could
// say what it holds, with chat paused: the core's split of chat is the
// placeholder (free at 100 %), which Hermes holds rather than writes. It
// is built by web.StatusOf from a runner view, as `hermes run` serves it.
func blindRestart(t *testing.T) *backend {
	t.Helper()
	p := testenv.DefaultPolicy(t)
	t0 := time.Unix(1000, 0).UTC()
	s, _ := evaluator.Step(p, evaluator.State{}, evaluator.Input{Snapshot: testenv.Healthy(p, t0)}, t0)
	s.Overrides = map[string]evaluator.Override{"chat": {Kind: traffic.Pause, Reason: "incident", Since: t0}}
	return served(p, s, t0, func(v *runner.View) {
		v.Held, v.UnknownSplits = map[string]string{"chat": runner.HeldUnknownSplit}, map[string]bool{"chat": true}
	})
}

// TestCtlPauseSaysTheSplitIsUnknown: `hermes ctl pause` of a service
// whose split Hermes does not know says that it writes nothing for it;
// it used to print only "done at the tick".
func TestCtlPauseSaysTheSplitIsUnknown(t *testing.T) {
	_, url := serve(t, blindRestart(t), "")
	for _, args := range [][]string{
		{"pause", "chat", "--reason", "incident"},
		{"clear", "chat", "--reason", "over"},
	} {
		code, out, errb := hermes(t, append([]string{"ctl", "--url", url}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb)
		}
		want := args[0] + ": " + map[string]string{"pause": "paused", "clear": "cleared"}[args[0]] +
			", but the split of chat is unknown (the restart could not learn what the backends hold, and no tick has decided it on data since): Hermes writes nothing for chat until it knows one"
		if !strings.Contains(out, want) {
			t.Errorf("%v printed:\n%s\nwant a line with %q", args, out, want)
		}
	}
}

// TestCtlStatusSaysTheSplitIsUnknown: `hermes ctl status` shows "split
// unknown (held: …)" for such a service and no route's traffic as a
// number; it used to print the placeholder, free at 100 %.
func TestCtlStatusSaysTheSplitIsUnknown(t *testing.T) {
	_, url := serve(t, blindRestart(t), "")
	code, got, errb := hermes(t, "ctl", "--url", url, "status")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if !strings.Contains(got, "\nsplit unknown (held: the split of chat is unknown (the restart could not learn what the backends hold") {
		t.Errorf("ctl status does not say chat's split is unknown:\n%s", got)
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "free ") && (strings.Contains(line, "100%") || !strings.Contains(line, "unknown")) {
			t.Errorf("free's row shows a traffic share: %q", line)
		}
	}
}
