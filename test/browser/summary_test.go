package browser_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/web"
	"github.com/hermes-failover/hermes/web/api"
)

// fleet is a loop of 100 services of 100 routes, every tenth service with
// a route failed over: the status the page summarises.
type fleet struct{ st api.Status }

func newFleet() *fleet {
	f := &fleet{st: api.Status{Ready: true, Ticked: true, Interval: "15s", LastTick: time.Now(),
		Levels: []api.Level{{Name: "warm", Below: 85}, {Name: "shed", Below: 75}, {Name: "failover", Below: 60}}}}
	for s := range 100 {
		svc := api.Service{Name: fmt.Sprintf("svc%d", s), Weights: map[string]int{}}
		for r := range 100 {
			rt := api.Route{Name: fmt.Sprintf("s%dr%d", s, r), Score: 98, Level: "normal", ScoreState: api.ScoreJudged, State: []string{}}
			if s%10 == 0 && r == 5 {
				rt.Score, rt.Level = 30, "failover"
			}
			if r == 0 {
				rt.Traffic, svc.Weights[rt.Name] = 100, 100
			}
			svc.Routes = append(svc.Routes, rt)
		}
		f.st.Services = append(f.st.Services, svc)
	}
	return f
}

func (f *fleet) Ready() bool                  { return true }
func (f *fleet) Status() api.Status           { return f.st }
func (f *fleet) Reload(context.Context) error { return nil }
func (f *fleet) Submit(context.Context, evaluator.Command) (runner.CommandResult, error) {
	return runner.CommandResult{}, fmt.Errorf("read-only")
}
func (f *fleet) History(context.Context, time.Time) ([]evaluator.Tick, []evaluator.Event, string) {
	return nil, nil, "memory"
}
func (f *fleet) Actuations(context.Context, time.Time) ([]evaluator.Actuation, string) {
	return nil, "memory"
}

// TestSummarisedPageInChromium (issue 31, item 15): at 10,000 routes the
// page Chromium loads is under 2 MB, lists the failed-over routes, counts
// the normal ones per service, and its link to a service lists all of its
// routes.
func TestSummarisedPageInChromium(t *testing.T) {
	chromium := testenv.Binary(t, "chromium")
	srv := httptest.NewServer(web.Handler(web.Options{Loop: newFleet(), Gatherer: prometheus.NewRegistry()}))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(body) > 2<<20 {
		t.Fatalf("the page of 10,000 routes is %d bytes", len(body))
	}
	dom := browse(t, chromium, "--dump-dom", srv.URL+"/")
	for _, want := range []string{`id="route-s0r5"`, `id="route-s90r5"`, `<p class="meta left" id="left-svc0">99 more routes normal (scores 98.0–98.0): <a href="?service=svc0">`,
		`<h2 id="normal-services">Services with every route normal</h2>`, `<a href="?service=svc1">svc1</a>`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the summarised page lacks %q", want)
		}
	}
	if strings.Contains(dom, `id="route-s1r7"`) {
		t.Error("a normal route of an all-normal service has a row")
	}
	one := browse(t, chromium, "--dump-dom", srv.URL+"/?service=svc1")
	if n := strings.Count(one, `<tr id="route-s1r`); n != 100 {
		t.Errorf("?service=svc1 shows %d of its 100 routes", n)
	}
	if strings.Contains(one, `id="route-s0r5"`) {
		t.Error("?service=svc1 shows another service's route")
	}
}
