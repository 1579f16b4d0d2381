package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/web/api"
)

// The status page's bounds. Up to pageRows routes it shows every route
// (and its score chart); past them it summarises as Prometheus's /targets
// page does for healthy targets: the routes that are not normal are
// listed, the normal ones counted per service, with a link to the
// service's own pages (?service=), pageRows routes a page (?page=). At
// 10,000 routes the full page took 46 MB (issue 31: 30.7 MB); the
// summary stays under 2 MB (TestStatusPageSizeAt10000Routes).
const (
	// pageRows is the most route rows (and services summarised as one
	// line, and alerts) one page lists.
	pageRows = 200
	// summaryScoreCharts is the most score charts a summarised page draws,
	// summarySplitCharts the most split charts.
	summaryScoreCharts = 40
	summarySplitCharts = 20
)

// serviceView is a service as the page draws it: its rows and what they
// leave out.
type serviceView struct {
	api.Service
	// Rows are the routes listed with a row each.
	Rows []api.Route
	// Left is how many routes of the service have no row on this page,
	// LeftNormal how many of those are normal; Link is the page that lists
	// them ("?service=chat").
	Left, LeftNormal int
	Link             string
	// Low and High are the lowest and highest score of the normal routes
	// left out.
	Low, High float64
}

// pageLink is one of a service's pages.
type pageLink struct {
	N       int
	Href    string
	Current bool
}

// pageError is a page request refused, with its HTTP code.
type pageError struct {
	msg  string
	code int
}

func (e *pageError) Error() string { return e.msg }

// notable reports whether rt is worth a row of its own on a summarised
// page: a level other than normal, a score not judged at the last tick,
// or a state to tell (a dwell running, idle).
func notable(rt api.Route) bool {
	return rt.Level != "normal" || rt.ScoreState != api.ScoreJudged || len(rt.State) > 0
}

// pageView fills the services d draws from d.Status and the query q
// (?service=, ?page=): every route when there are at most pageRows and no
// filter; one service's routes a page at a time under ?service=; and
// otherwise the routes that are not normal, the others summarised.
func pageView(d *pageData, q url.Values) *pageError {
	page := 1
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return &pageError{fmt.Sprintf("page: want a page number from 1, got %q", p), http.StatusBadRequest}
		}
		page = n
	}
	total := 0
	for _, svc := range d.Status.Services {
		total += len(svc.Routes)
	}
	if name := q.Get("service"); name != "" {
		i := slices.IndexFunc(d.Status.Services, func(s api.Service) bool { return s.Name == name })
		if i < 0 {
			return &pageError{fmt.Sprintf("service %q: no such service", name), http.StatusNotFound}
		}
		svc := d.Status.Services[i]
		d.Service, d.Summarised = name, total > pageRows
		pages := max(1, (len(svc.Routes)+pageRows-1)/pageRows)
		if page > pages {
			return &pageError{fmt.Sprintf("page %d: service %q has %d pages", page, name, pages), http.StatusNotFound}
		}
		lo, hi := (page-1)*pageRows, min(page*pageRows, len(svc.Routes))
		d.Services = []serviceView{{Service: svc, Rows: svc.Routes[lo:hi], Left: len(svc.Routes) - (hi - lo)}}
		if pages > 1 {
			for n := 1; n <= pages; n++ {
				d.Pages = append(d.Pages, pageLink{N: n, Href: "?service=" + url.QueryEscape(name) + "&page=" + strconv.Itoa(n), Current: n == page})
			}
		}
		d.Status.Alerts = alertsOf(d.Status.Alerts, name)
		d.HiddenAlerts = trimAlerts(&d.Status)
		return nil
	}
	if total <= pageRows && page == 1 {
		for _, svc := range d.Status.Services {
			d.Services = append(d.Services, serviceView{Service: svc, Rows: svc.Routes})
		}
		return nil
	}
	d.Summarised = true
	rows := 0
	var normal []serviceView
	for _, svc := range d.Status.Services {
		v := serviceView{Service: svc, Link: "?service=" + url.QueryEscape(svc.Name)}
		for _, rt := range svc.Routes {
			if notable(rt) && rows < pageRows {
				v.Rows = append(v.Rows, rt)
				rows++
				continue
			}
			v.Left++
			if rt.Level == "normal" {
				if v.LeftNormal == 0 || rt.Score < v.Low {
					v.Low = rt.Score
				}
				if v.LeftNormal == 0 || rt.Score > v.High {
					v.High = rt.Score
				}
				v.LeftNormal++
			}
		}
		if len(v.Rows) == 0 && svc.Override == nil && !svc.Degraded && v.Left == v.LeftNormal {
			normal = append(normal, v)
			continue
		}
		d.Services = append(d.Services, v)
	}
	// The services all normal, one line each, pageRows a page.
	pages := max(1, (len(normal)+pageRows-1)/pageRows)
	if page > pages {
		return &pageError{fmt.Sprintf("page %d: the services at normal fill %d pages", page, pages), http.StatusNotFound}
	}
	d.Normal = normal[(page-1)*pageRows : min(page*pageRows, len(normal))]
	if pages > 1 {
		for n := 1; n <= pages; n++ {
			d.Pages = append(d.Pages, pageLink{N: n, Href: "?page=" + strconv.Itoa(n), Current: n == page})
		}
	}
	d.HiddenAlerts = trimAlerts(&d.Status)
	return nil
}

// alertsOf are the alerts of service name.
func alertsOf(alerts []api.Alert, name string) []api.Alert {
	var out []api.Alert
	for _, a := range alerts {
		if a.Service == name {
			out = append(out, a)
		}
	}
	return out
}

// trimAlerts leaves the first pageRows alerts of st, and returns how many
// it left off.
func trimAlerts(st *api.Status) int {
	if n := len(st.Alerts) - pageRows; n > 0 {
		st.Alerts = st.Alerts[:pageRows]
		return n
	}
	return 0
}

// chartedStatus is the part of d's status the page draws charts of: every
// service and route on a full page; on a summarised one, the services
// with a section (at most summarySplitCharts), each with its listed routes
// and the routes that carried traffic in ticks.
func chartedStatus(d pageData, ticks []evaluator.Tick) api.Status {
	st := d.Status
	st.Services = nil
	for _, v := range d.Services {
		svc := v.Service
		if d.Summarised {
			if len(st.Services) == summarySplitCharts {
				break
			}
			svc.Routes = slices.Clone(v.Rows)
			for _, rt := range v.Service.Routes {
				if !slices.ContainsFunc(svc.Routes, func(r api.Route) bool { return r.Name == rt.Name }) && carried(v.Name, rt.Name, v.Weights, ticks) {
					svc.Routes = append(svc.Routes, rt)
				}
			}
		}
		st.Services = append(st.Services, svc)
	}
	return st
}

// carried reports whether route had a share of service's traffic now
// (weights) or at one of ticks.
func carried(service, route string, weights map[string]int, ticks []evaluator.Tick) bool {
	if weights[route] > 0 {
		return true
	}
	for _, tk := range ticks {
		if tk.Splits[service][route] > 0 {
			return true
		}
	}
	return false
}
