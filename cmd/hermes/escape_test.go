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

// TestCtlStatusCannotForgeARow: a newline or tab in a name or reason the
// server sends is printed escaped, so it cannot start a table line of its
// own (issue 31, item 12; config refuses such names, ctl does not count on
// it).
func TestCtlStatusCannotForgeARow(t *testing.T) {
	b := &backend{}
	st := b.Status()
	st.Services[0].Name = "chat\nfree  normal  -  100.0  100%  forged"
	st.Services[0].Routes[0].Name = "free\tforged"
	st.Services[0].Routes[0].Reasons = []string{"bad\nROUTE  LEVEL"}
	st.Services[0].Override = &evaluator.Override{Kind: "pin", Route: "paid-standard", Reason: "launch\nday", By: "alice", Expires: time.Unix(1000, 0).Add(30 * time.Minute)}
	b.st = &st
	srv := httptest.NewServer(web.Handler(web.Options{Loop: b, Gatherer: prometheus.NewRegistry(), Now: func() time.Time { return time.Unix(1000, 0) }}))
	t.Cleanup(srv.Close)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"ctl", "--url", srv.URL, "status"}, &out, &errb); code != 0 {
		t.Fatalf("ctl status: %d %s", code, errb.String())
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "free  ") || strings.HasPrefix(line, "ROUTE  LEVEL") && strings.Count(out.String(), "ROUTE ") > 1 || strings.HasPrefix(line, "day") {
			t.Errorf("a forged line: %q", line)
		}
	}
	for _, want := range []string{`service chat\nfree  normal`, `free\tforged`, `bad\nROUTE  LEVEL`, `(launch\nday), expires 1970-01-01T00:46:40Z (in 30m0s)`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("ctl status lacks %q:\n%s", want, out.String())
		}
	}
}
