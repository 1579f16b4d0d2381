package web

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/traffic"
	"github.com/hermes-failover/hermes/web/api"
)

// unknownSplitView is the view of a runner restarted while no backend
// could say what it holds, after ticks without data: the core's split of
// chat is the placeholder, free at 100 %, and the tick held chat. With
// pause, chat is paused (a pause that froze nothing).
func unknownSplitView(t *testing.T, pause bool) runner.View {
	t.Helper()
	p := testenv.DefaultPolicy(t)
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	s, _ := evaluator.Step(p, evaluator.State{}, evaluator.Input{Snapshot: testenv.Healthy(p, t0)}, t0)
	if w := s.Services["chat"].Weights; w["free"] != 100 {
		t.Fatalf("setup: the placeholder split is %v, want free=100", w)
	}
	if pause {
		s.Overrides = map[string]evaluator.Override{"chat": {Kind: traffic.Pause, Reason: "incident", Since: t0}}
	}
	return runner.View{Ticked: true, LastTick: t0, Config: &config.Config{Policy: *p.Config}, Policy: p, State: s,
		Held: map[string]string{"chat": runner.HeldUnknownSplit}, UnknownSplits: map[string]bool{"chat": true}}
}

// TestStatusSaysTheSplitIsUnknown: the status API of a service whose
// split Hermes does not know says so (split_unknown, held) and shows no
// weights; it used to show the placeholder, free at 100 %, as the split.
func TestStatusSaysTheSplitIsUnknown(t *testing.T) {
	for _, pause := range []bool{false, true} {
		srv := serve(t, &statusBackend{st: StatusOf(unknownSplitView(t, pause))}, "")
		_, body := do(t, "GET", srv.URL+"/api/v1/status?service=chat", "", "")
		var st api.Status
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatal(err)
		}
		svc := st.Services[0]
		if !svc.SplitUnknown || svc.Held == nil || svc.Held.Reason != runner.HeldUnknownSplit || !strings.Contains(svc.Held.Why, "Hermes writes nothing for chat") {
			t.Errorf("paused %v: split_unknown %v, held %+v; want the split unknown and held", pause, svc.SplitUnknown, svc.Held)
		}
		if len(svc.Weights) != 0 || svc.Routes[0].Traffic != 0 {
			t.Errorf("paused %v: an unknown split shows weights %v, free's traffic %d%%", pause, svc.Weights, svc.Routes[0].Traffic)
		}
	}
}

// TestStatusPageSaysTheSplitIsUnknown: the page shows "Split unknown
// (held)" where the split bar was, and no route's traffic as a number;
// it used to draw the placeholder bar, free 100 %.
func TestStatusPageSaysTheSplitIsUnknown(t *testing.T) {
	srv := serve(t, &statusBackend{st: StatusOf(unknownSplitView(t, true))}, "")
	_, body := do(t, "GET", srv.URL+"/", "", "")
	if !strings.Contains(body, `id="held-chat"><b>Split unknown</b> (held): the split of chat is unknown`) {
		t.Errorf("the page does not say chat's split is unknown:\n%s", body)
	}
	if strings.Contains(body, `title="free 100%"`) {
		t.Error("the page draws the placeholder split, free 100 %")
	}
	i := strings.Index(body, `id="route-free"`)
	if i < 0 || !strings.Contains(body[i:i+2000], ">unknown</span></td>") {
		t.Errorf("free's traffic cell does not say unknown:\n%s", body[max(i, 0):])
	}
}

// heldBackend is a loop whose status is st, and that applies every
// command.
type heldBackend struct {
	statusBackend
	commands []evaluator.Command
}

func (b *heldBackend) Submit(_ context.Context, cmd evaluator.Command) (runner.CommandResult, error) {
	b.commands = append(b.commands, cmd)
	return runner.CommandResult{Applied: true, Tick: time.Unix(1005, 0)}, nil
}

// TestCommandReplySaysTheSplitIsUnknown: a pause, pin or clear of a
// service whose split Hermes does not know is answered with what it
// leaves undone; the reply used to say only that the tick applied it.
func TestCommandReplySaysTheSplitIsUnknown(t *testing.T) {
	paused := StatusOf(unknownSplitView(t, true))
	pinned := unknownSplitView(t, false)
	pinned.State.Overrides = map[string]evaluator.Override{"chat": {Kind: traffic.Pin, Route: "paid-standard", Reason: "r"}}
	for _, c := range []struct {
		name, method, path, body string
		st                       api.Status
		want                     string
		unknown, after           bool
	}{
		{"pause", "POST", "/api/v1/admin/overrides", `{"service":"chat","kind":"pause","reason":"incident"}`, paused,
			"paused, but the split of chat is unknown", true, false},
		{"clear", "DELETE", "/api/v1/admin/overrides/chat?reason=over", "", StatusOf(unknownSplitView(t, false)),
			"cleared, but the split of chat is unknown", true, false},
		{"pin", "POST", "/api/v1/admin/overrides", `{"service":"chat","kind":"pin","route":"paid-standard","reason":"incident"}`, StatusOf(pinned),
			"once the pin ends: Hermes writes nothing for chat until it knows one", false, true},
	} {
		b := &heldBackend{statusBackend: statusBackend{st: c.st}}
		srv := serve(t, b, "")
		code, body := do(t, c.method, srv.URL+c.path, c.body, "")
		var rp api.Response[api.CommandReply]
		if err := json.Unmarshal([]byte(body), &rp); err != nil || code != 200 {
			t.Fatalf("%s: %d %s (%v)", c.name, code, body, err)
		}
		if !strings.Contains(rp.Data.Note, c.want) || rp.Data.SplitUnknown != c.unknown || rp.Data.SplitUnknownAfterOverride != c.after {
			t.Errorf("%s: reply %+v; want a note with %q, split_unknown %v, after override %v", c.name, rp.Data, c.want, c.unknown, c.after)
		}
	}
	// A known split: no note.
	b := &heldBackend{statusBackend: statusBackend{st: api.Status{Services: []api.Service{{Name: "chat", Weights: map[string]int{"free": 100}}}}}}
	srv := httptest.NewServer(Handler(Options{Loop: b, EnableAdminAPI: true}))
	defer srv.Close()
	if _, body := do(t, "POST", srv.URL+"/api/v1/admin/overrides", `{"service":"chat","kind":"pause","reason":"x"}`, ""); strings.Contains(body, "note") {
		t.Errorf("the pause of a known split has a note: %s", body)
	}
}

// TestSummarisedPageSaysTheSplitIsUnknown: past pageRows routes, a
// service whose routes are all normal is a line of the summary table;
// its split cell says unknown rather than the placeholder, and a service
// held for want of data says so above its split.
func TestSummarisedPageSaysTheSplitIsUnknown(t *testing.T) {
	st := StatusOf(unknownSplitView(t, false))
	for i := range st.Services[0].Routes {
		st.Services[0].Routes[i].State = nil
	}
	big := api.Service{Name: "big", Weights: map[string]int{"b0": 100}}
	for r := range pageRows + 10 {
		big.Routes = append(big.Routes, api.Route{Name: "b" + strconv.Itoa(r), Score: 99, Level: "normal", ScoreState: api.ScoreJudged})
	}
	st.Services = append(st.Services, big)
	srv := serve(t, &statusBackend{st: st}, "")
	_, body := do(t, "GET", srv.URL+"/", "", "")
	i := strings.Index(body, `<tr id="service-chat">`)
	if i < 0 {
		t.Fatalf("chat is not a line of the summary:\n%s", body)
	}
	row := body[i : i+strings.Index(body[i:], "</tr>")]
	if !strings.Contains(row, "<b>unknown</b> (held)") || strings.Contains(row, "free 100%") {
		t.Errorf("chat's summary line: %s", row)
	}

	v := unknownSplitView(t, false)
	v.Held, v.UnknownSplits = map[string]string{"chat": runner.HeldNoData}, nil
	srv = serve(t, &statusBackend{st: StatusOf(v)}, "")
	_, body = do(t, "GET", srv.URL+"/", "", "")
	if !strings.Contains(body, `<div class="warn service-held" id="held-chat"><b>Held</b>: the last tick had no data from Prometheus: Hermes writes nothing for chat`) ||
		!strings.Contains(body, `title="free 100%"`) {
		t.Errorf("a service held for want of data lacks its line, or its split:\n%s", body)
	}
}
