package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/web/api"
)

// bigBackend serves the status of services×perService routes, with a
// history of ticks over the page's window, as a live loop would hold.
type bigBackend struct {
	fakeBackend
	st    api.Status
	ticks []evaluator.Tick
}

func (b *bigBackend) Status() api.Status { return b.st }
func (b *bigBackend) History(context.Context, time.Time) ([]evaluator.Tick, []evaluator.Event, string) {
	return b.ticks, nil, "memory"
}

// bigStatus is a status of services×perService routes, all normal but
// those failed is true for (failed over, no traffic), with nTicks ticks of
// history.
func bigStatus(services, perService, nTicks int, failed func(svc, rt int) bool) *bigBackend {
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	b := &bigBackend{st: api.Status{Ready: true, Interval: "15s", LastTick: t0,
		Levels: []api.Level{{Name: "warm", Below: 85}, {Name: "shed", Below: 75}, {Name: "failover", Below: 60}}}}
	for i := range nTicks {
		b.ticks = append(b.ticks, evaluator.Tick{Time: t0.Add(time.Duration(i-nTicks) * 15 * time.Second), Routes: map[string]evaluator.TickRoute{}, Splits: map[string]map[string]int{}})
	}
	for s := range services {
		svc := api.Service{Name: fmt.Sprintf("svc%d", s), Weights: map[string]int{}}
		for r := range perService {
			name := fmt.Sprintf("s%dr%d", s, r)
			rt := api.Route{Name: name, Score: 97.5, Level: "normal", ScoreState: api.ScoreJudged, State: []string{},
				Reasons: []string{"all signals within thresholds"}, Contributions: api.ContributionsOf([]evaluator.Contribution{{Signal: "hard_fail_ratio", Value: 0.001, CapsAt: -1}})}
			if failed(s, r) {
				rt.Score, rt.Level, rt.State = 20, "failover", []string{"failed over since 2026-12-01T02:50:00Z: hysteresis"}
			} else if r < 3 {
				rt.Traffic = 33
				svc.Weights[name] = 33
			}
			svc.Routes = append(svc.Routes, rt)
			for i := range b.ticks {
				b.ticks[i].Routes[name] = evaluator.TickRoute{Score: rt.Score - float64(i%7), Level: rt.Level}
				if b.ticks[i].Splits[svc.Name] == nil {
					b.ticks[i].Splits[svc.Name] = map[string]int{}
				}
				b.ticks[i].Splits[svc.Name][name] = rt.Traffic
			}
		}
		b.st.Services = append(b.st.Services, svc)
	}
	return b
}

func get(t testing.TB, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(body)
}

// pageBound is the most bytes the status page may take at 10,000 routes
// (issue 31, item 15: it took 30.7 MB).
const pageBound = 2 << 20

// TestStatusPageSizeAt10000Routes: at 10,000 routes the page stays under
// 2 MB, in both shapes (100 services of 100 routes, one of 10,000): the
// routes that are not normal are listed with their rows, the normal ones
// summarised per service with a link to the service's own pages.
func TestStatusPageSizeAt10000Routes(t *testing.T) {
	for _, shape := range []struct{ services, per int }{{100, 100}, {1, 10000}} {
		t.Run(fmt.Sprintf("%dx%d", shape.services, shape.per), func(t *testing.T) {
			b := bigStatus(shape.services, shape.per, 60, func(s, r int) bool { return s%10 == 0 && r == 5 })
			srv := serve(t, b, "")
			code, body := get(t, srv.URL+"/")
			if code != 200 {
				t.Fatalf("page: %d", code)
			}
			if len(body) > pageBound {
				t.Fatalf("the page of %d routes is %d bytes, over %d", shape.services*shape.per, len(body), pageBound)
			}
			t.Logf("%d routes: %d bytes", shape.services*shape.per, len(body))
			// The failed-over routes are listed with their rows.
			if !strings.Contains(body, `id="route-s0r5"`) || !strings.Contains(body, `<span class="level level-failover">failover</span>`) {
				t.Error("the failed-over route s0r5 has no row")
			}
			// The normal ones are summarised, with a link to their service.
			if strings.Contains(body, `id="route-s0r7"`) {
				t.Error("normal route s0r7 has a row of its own")
			}
			if !strings.Contains(body, `href="?service=svc0"`) {
				t.Error("no link to svc0's own page")
			}
		})
	}
}

// TestStatusPageOfOneService: ?service= shows that service's routes in
// full, a page at a time (?page=), and the API filters the same way.
func TestStatusPageOfOneService(t *testing.T) {
	b := bigStatus(1, 10000, 10, func(s, r int) bool { return r == 5 })
	srv := serve(t, b, "")
	_, body := get(t, srv.URL+"/?service=svc0")
	if len(body) > pageBound {
		t.Fatalf("one page of svc0 is %d bytes", len(body))
	}
	for _, want := range []string{`id="route-s0r5"`, `id="route-s0r7"`, `href="?service=svc0&amp;page=2"`} {
		if !strings.Contains(body, want) {
			t.Errorf("?service=svc0 lacks %q", want)
		}
	}
	_, body = get(t, srv.URL+"/?service=svc0&page=2")
	if strings.Contains(body, `id="route-s0r7"`) || !strings.Contains(body, fmt.Sprintf(`id="route-s0r%d"`, pageRows+7)) {
		t.Errorf("page 2 of svc0 does not hold the second %d routes", pageRows)
	}
	if code, _ := get(t, srv.URL+"/?service=nosuch"); code != http.StatusNotFound {
		t.Errorf("?service=nosuch: %d, want 404", code)
	}
	if code, _ := get(t, srv.URL+"/?page=zero"); code != http.StatusBadRequest {
		t.Errorf("?page=zero: %d, want 400", code)
	}
}

// BenchmarkStatusPage10000Routes renders the page of 100 services of 100
// routes, as issue 31 measured it (30.7 MB, 2 s before the summary).
func BenchmarkStatusPage10000Routes(b *testing.B) {
	bb := bigStatus(100, 100, 60, func(s, r int) bool { return s%10 == 0 && r == 5 })
	srv := serve(b, bb, "")
	b.ResetTimer()
	for b.Loop() {
		_, body := get(b, srv.URL+"/")
		b.SetBytes(int64(len(body)))
	}
}

// TestStatusAPIOfOneService: /api/v1/status?service= answers one service
// and its alerts, and 404 for a service that does not exist.
func TestStatusAPIOfOneService(t *testing.T) {
	b := bigStatus(100, 100, 1, func(s, r int) bool { return false })
	b.st.Alerts = []api.Alert{{Name: "HermesRouteFailedOver", Service: "svc3", Route: "s3r1"}, {Name: "HermesRouteFailedOver", Service: "svc4", Route: "s4r1"}}
	srv := serve(t, b, "")
	code, body := get(t, srv.URL+"/api/v1/status?service=svc3")
	if code != 200 {
		t.Fatalf("?service=svc3: %d %s", code, body)
	}
	var st api.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Services) != 1 || st.Services[0].Name != "svc3" || len(st.Services[0].Routes) != 100 || len(st.Alerts) != 1 || st.Alerts[0].Service != "svc3" {
		t.Errorf("?service=svc3: %d services, %d alerts", len(st.Services), len(st.Alerts))
	}
	if code, body := get(t, srv.URL+"/api/v1/status?service=nosuch"); code != http.StatusNotFound || !strings.Contains(body, `"errorType": "not_found"`) {
		t.Errorf("?service=nosuch: %d %s", code, body)
	}
}
