package main

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/web"
	"github.com/hermes-failover/hermes/web/api"
)

// hostile is a backend whose strings carry terminal control sequences, as
// a reason or a by typed by someone, or a hostile --url server, may.
type hostile struct{ backend }

const clearScreen = "\x1b[2J\x1b]0;owned\a\r"

func (h *hostile) Status() api.Status {
	st := h.backend.Status()
	st.Services[0].Routes[0].Reasons = []string{"bad" + clearScreen}
	st.Services[0].Routes[0].Placement = []string{"placed" + clearScreen}
	st.Drills[0].By = "mallory" + clearScreen
	st.Drills[0].Reason = "why" + clearScreen
	return st
}

func (h *hostile) Submit(context.Context, evaluator.Command) (runner.CommandResult, error) {
	return runner.CommandResult{}, errors.New("refused" + clearScreen)
}

// TestControlCharactersAreEscaped: ctl and explain print what the server
// says; a control character in it (ESC, BEL, CR) is shown escaped, never
// sent to the terminal.
func TestControlCharactersAreEscaped(t *testing.T) {
	srv := httptest.NewServer(web.Handler(web.Options{Loop: &hostile{}, Gatherer: prometheus.NewRegistry(), EnableAdminAPI: true,
		Now: func() time.Time { return time.Unix(1000, 0) }}))
	t.Cleanup(srv.Close)
	url := srv.URL
	for _, args := range [][]string{
		{"ctl", "--url", url, "status"},
		{"explain", "--url", url, "--route", "free"},
		{"ctl", "--url", url, "clear", "chat", "--reason", "x"},
	} {
		var out, errb bytes.Buffer
		run(context.Background(), args, &out, &errb)
		all := out.String() + errb.String()
		if strings.ContainsAny(all, "\x1b\a\r") {
			t.Errorf("%s printed a raw control character: %q", strings.Join(args[:2], " "), all)
		}
		if !strings.Contains(all, `\x1b[2J`) {
			t.Errorf("%s: output lacks the escaped sequence:\n%s", strings.Join(args[:2], " "), all)
		}
	}
}
