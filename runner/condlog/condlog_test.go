package condlog

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// dropTime leaves the time out of log lines.
func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// TestConditionLogOncePerCondition: a condition that holds for many
// ticks is one line when it starts, one when it changes, a reminder
// every RemindEvery and one line when it ends; a condition of another
// key is a line of its own.
func TestConditionLogOncePerCondition(t *testing.T) {
	var logs testenv.Buffer
	c := New(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: dropTime})))
	now := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	step := func(holding map[string]Line) {
		c.Observe(now, "g", holding)
		now = now.Add(15 * time.Second)
	}
	failing := func(same string) map[string]Line {
		return map[string]Line{"a": {Level: slog.LevelWarn, Msg: "a fails", Attrs: []any{"why", same}, Same: same}}
	}
	for range 39 { // 9m45s: no reminder yet
		step(failing("refused"))
	}
	step(failing("refused")) // 10m: the reminder
	step(failing("refused"))
	step(failing("timeout")) // a change
	both := failing("timeout")
	both["b"] = Line{Level: slog.LevelError, Msg: "b fails", End: "b works again"}
	step(both)
	step(both)
	step(failing("timeout")) // b ends
	step(nil)                // a ends
	step(nil)
	want := []string{
		`level=WARN msg="a fails" why=refused`,
		`level=WARN msg="still: a fails" why=refused since=2026-12-06T08:00:00.000Z ticks=41`,
		`level=WARN msg="changed: a fails" why=timeout since=2026-12-06T08:00:00.000Z`,
		`level=ERROR msg="b fails"`,
		`level=INFO msg="b works again" lasted=30s ticks=2`,
		`level=INFO msg="ended: a fails" why=timeout lasted=11m15s ticks=45`,
	}
	if got := strings.TrimSpace(logs.String()); got != strings.Join(want, "\n") {
		t.Errorf("logged\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}
