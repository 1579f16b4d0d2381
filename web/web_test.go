package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/traffic"
	"github.com/hermes-failover/hermes/web/api"
)

type fakeBackend struct {
	ready     bool
	ticked    bool
	reloadErr error
	released  []string
	overrides map[string]evaluator.Override
	drills    []evaluator.Command
}

func (f *fakeBackend) Ready() bool { return f.ready }
func (f *fakeBackend) Status() api.Status {
	return api.Status{Ready: f.ready, Ticked: f.ticked, Interval: "15s", Services: []api.Service{{
		Name: "chat", Weights: map[string]int{"free": 0, "paid-standard": 100},
		Routes: []api.Route{
			{Name: "free", Score: 12.5, Level: "failover", Traffic: 0, ScoreState: api.ScoreJudged, Reasons: []string{"soft_fail_ratio 0.4 (-100.0)"},
				Contributions: api.ContributionsOf([]evaluator.Contribution{{Signal: "soft_fail_ratio", Value: 0.4, Penalty: 100, CapsAt: -1}, {Signal: "p99_ratio", Value: math.NaN(), Status: evaluator.StatusMissing, CapsAt: -1}})},
			{Name: "paid-standard", Score: 100, Level: "normal", Traffic: 100, Reasons: []string{}, ScoreState: api.ScoreJudged},
		}}},
		Alerts: []api.Alert{{Name: "HermesRouteFailedOver", Tier: "A", State: "firing", Service: "chat", Route: "free", Summary: "Traffic of chat was failed over <away>"}},
	}
}
func (f *fakeBackend) Reload(context.Context) error { return f.reloadErr }

// History and Actuations: a fake loop has no past.
func (f *fakeBackend) History(context.Context, time.Time) ([]evaluator.Tick, []evaluator.Event, string) {
	return nil, nil, "memory"
}
func (f *fakeBackend) Actuations(context.Context, time.Time) ([]evaluator.Actuation, string) {
	return nil, "memory"
}
func (f *fakeBackend) Submit(_ context.Context, cmd evaluator.Command) (runner.CommandResult, error) {
	res := runner.CommandResult{Applied: true, Tick: time.Unix(1005, 0)}
	switch cmd.Kind {
	case evaluator.CommandRelease:
		if cmd.Route != "free" {
			return res, errors.New("release: route \"" + cmd.Route + "\" is normal, not manual")
		}
		f.released = append(f.released, cmd.Route+":"+cmd.Reason+":"+cmd.By)
	case evaluator.CommandPin, evaluator.CommandPause:
		f.overrides[cmd.Service] = evaluator.Override{Kind: traffic.OverrideKind(cmd.Kind), Route: cmd.Route, Reason: cmd.Reason, By: cmd.By, Expires: cmd.Expires}
	case evaluator.CommandClear:
		if _, ok := f.overrides[cmd.Service]; !ok {
			return res, errors.New("no override")
		}
		delete(f.overrides, cmd.Service)
	case evaluator.CommandDrill, evaluator.CommandEndDrill:
		f.drills = append(f.drills, cmd)
	}
	return res, nil
}

// serve starts the handler with the admin and lifecycle APIs enabled.
func serve(t testing.TB, b Loop, token string) *httptest.Server {
	t.Helper()
	return serveOptions(t, Options{Loop: b, AdminToken: token, EnableAdminAPI: true, EnableLifecycle: true})
}

func serveOptions(t testing.TB, o Options) *httptest.Server {
	t.Helper()
	o.Gatherer = prometheus.NewRegistry()
	o.Now = func() time.Time { return time.Unix(1000, 0) }
	srv := httptest.NewServer(Handler(o))
	t.Cleanup(srv.Close)
	return srv
}

// do sends a request as `hermes ctl` does: a body is sent as JSON.
func do(t *testing.T, method, url, body, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return send(t, req, token)
}

func send(t *testing.T, req *http.Request, token string) (int, string) {
	t.Helper()
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestReadiness(t *testing.T) {
	b := &fakeBackend{}
	srv := serve(t, b, "")
	if code, _ := do(t, "GET", srv.URL+"/-/ready", "", ""); code != 503 {
		t.Errorf("ready before the first tick: %d", code)
	}
	b.ticked = true // a tick ran, but every query failed
	if code, body := do(t, "GET", srv.URL+"/-/ready", "", ""); code != 503 || !strings.Contains(body, "restored, but the last tick had no data from Prometheus") {
		t.Errorf("ready after a tick without data: %d %q", code, body)
	}
	b.ready = true
	if code, _ := do(t, "GET", srv.URL+"/-/ready", "", ""); code != 200 {
		t.Errorf("ready after: %d", code)
	}
	if code, _ := do(t, "GET", srv.URL+"/-/healthy", "", ""); code != 200 {
		t.Errorf("healthy: %d", code)
	}
}

func TestStatusJSONHasNoNaN(t *testing.T) {
	srv := serve(t, &fakeBackend{ready: true}, "")
	code, body := do(t, "GET", srv.URL+"/api/v1/status", "", "")
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var st api.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	c := st.Services[0].Routes[0].Contributions
	if c[0].Value == nil || *c[0].Value != 0.4 || c[1].Value != nil || c[1].Status != evaluator.StatusMissing.String() {
		t.Errorf("contributions round trip: %+v", c)
	}
}

func TestReloadFailureIsReported(t *testing.T) {
	srv := serve(t, &fakeBackend{reloadErr: errors.New("levels[0].below: bad")}, "")
	code, body := do(t, "POST", srv.URL+"/-/reload", "", "")
	if code != 500 || !strings.Contains(body, "levels[0].below") {
		t.Errorf("reload: %d %s", code, body)
	}
	if code, _ := do(t, "GET", srv.URL+"/-/reload", "", ""); code != 405 {
		t.Errorf("GET /-/reload: %d, want 405", code)
	}
}

func TestAdminAPI(t *testing.T) {
	b := &fakeBackend{overrides: map[string]evaluator.Override{}}
	srv := serve(t, b, "s3cret")
	if code, _ := do(t, "POST", srv.URL+"/api/v1/admin/release", `{"route":"free","reason":"fixed"}`, ""); code != 401 {
		t.Errorf("release without token: %d", code)
	}
	if code, _ := do(t, "POST", srv.URL+"/api/v1/admin/release", `{"route":"free","reason":"fixed"}`, "wrong"); code != 401 {
		t.Errorf("release with a wrong token: %d", code)
	}
	if code, body := do(t, "POST", srv.URL+"/api/v1/admin/release", `{"route":"free","reason":"fixed","by":"alice"}`, "s3cret"); code != 200 || len(b.released) != 1 {
		t.Errorf("release: %d %s", code, body)
	}
	if code, body := do(t, "POST", srv.URL+"/api/v1/admin/release", `{"route":"paid-standard","reason":"x"}`, "s3cret"); code != 400 || !strings.Contains(body, "not manual") {
		t.Errorf("release of a normal route: %d %s", code, body)
	}
	if code, body := do(t, "POST", srv.URL+"/api/v1/admin/release", `{"route":"free","reason":"x","extra":1}`, "s3cret"); code != 400 || !strings.Contains(body, "unknown field") {
		t.Errorf("unknown field: %d %s", code, body)
	}
	code, body := do(t, "POST", srv.URL+"/api/v1/admin/overrides", `{"service":"chat","kind":"pin","route":"paid-premium","reason":"launch","expires_in":"2h"}`, "s3cret")
	if code != 200 {
		t.Fatalf("pin: %d %s", code, body)
	}
	if o := b.overrides["chat"]; o.Route != "paid-premium" || !o.Expires.Equal(time.Unix(1000, 0).Add(2*time.Hour)) {
		t.Errorf("pin stored as %+v", o)
	}
	if code, _ := do(t, "POST", srv.URL+"/api/v1/admin/overrides", `{"service":"chat","kind":"pause","reason":"x","expires_in":"soon"}`, "s3cret"); code != 400 {
		t.Errorf("bad expires_in: %d", code)
	}
	if code, _ := do(t, "DELETE", srv.URL+"/api/v1/admin/overrides/chat", "", "s3cret"); code != 400 {
		t.Errorf("clear without a reason: %d", code)
	}
	if code, body := do(t, "DELETE", srv.URL+"/api/v1/admin/overrides/chat?reason=done", "", "s3cret"); code != 200 || len(b.overrides) != 0 {
		t.Errorf("clear: %d %s", code, body)
	}
}

func TestStatusPage(t *testing.T) {
	srv := serve(t, &fakeBackend{ready: true}, "")
	code, body := do(t, "GET", srv.URL+"/", "", "")
	if code != 200 {
		t.Fatalf("page: %d", code)
	}
	for _, want := range []string{`id="route-free"`, "level-failover", "12.5", "soft_fail_ratio 0.4 (-100.0)", "HermesRouteFailedOver", "&lt;away&gt;", "paid-standard 100%"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if code, _ := do(t, "GET", srv.URL+"/nothing-here", "", ""); code != 404 {
		t.Errorf("unknown path: %d", code)
	}
}
