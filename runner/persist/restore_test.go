package persist

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/traffic"
)

func defaultPolicy(t testing.TB) *evaluator.Policy { return testenv.DefaultPolicy(t) }

func snap(p *evaluator.Policy, t time.Time, _ map[string]any) evaluator.Input {
	return evaluator.Input{Snapshot: testenv.Healthy(p, t)}
}

// splits turns service → route → percent into the actuators' splits.
func splits(w map[string]map[string]int) map[string]traffic.Split {
	out := map[string]traffic.Split{}
	for svc, ws := range w {
		out[svc] = traffic.Split{Weights: ws}
	}
	return out
}

// fakeQuery answers restore queries from a map keyed by query; a query it
// does not know gets an empty vector. It records what it was asked.
type fakeQuery struct {
	answers map[string]model.Vector
	asked   []string
	at      []time.Time
	err     error
	// scraped is when the series set by set were last scraped, which
	// Restore asks to tell current series from ended ones.
	scraped time.Time
}

func (f *fakeQuery) query(_ context.Context, q string, t time.Time) (model.Vector, error) {
	f.asked = append(f.asked, q)
	f.at = append(f.at, t)
	if f.err != nil {
		return nil, f.err
	}
	return f.answers[q], nil
}

// set adds the answer `labels → v` (label name, value, ...) to the restore
// query of name grouped by the service and route labels it has.
// The series counts as last scraped at f.scraped.
func (f *fakeQuery) set(opt RestoreOptions, name string, v float64, labels ...string) {
	f.setScraped(opt, f.scraped, name, v, labels...)
}

// setTraffic answers the restore query of chat's split (the ratio, or the
// legacy percent series) with route's share v.
func (f *fakeQuery) setTraffic(opt RestoreOptions, v float64, route string) {
	if f.answers == nil {
		f.answers = map[string]model.Vector{}
	}
	q := opt.ratioQuery("last_over_time(%s["+model.Duration(opt.tolerance()).String()+"])", MetricRouteTrafficRatio, LegacyRouteTrafficPercent, ServiceLabel, RouteLabel)
	f.answers[q] = append(f.answers[q], &model.Sample{Metric: model.Metric{ServiceLabel: "chat", RouteLabel: model.LabelValue(route)}, Value: model.SampleValue(v)})
}

// setScraped is set for a series last scraped at scraped, as Restore's
// lastSeenQuery of the shipped 15 s evaluation interval answers it (and,
// for the level series, the last export of any route).
func (f *fakeQuery) setScraped(opt RestoreOptions, scraped time.Time, name string, v float64, labels ...string) {
	var by []string // the grouping labels, in the order Restore uses
	for _, l := range []string{ServiceLabel, RouteLabel} {
		if slices.Contains(labels, l) {
			by = append(by, l)
		}
	}
	m := model.Metric{}
	for i := 0; i+1 < len(labels); i += 2 {
		m[model.LabelName(labels[i])] = model.LabelValue(labels[i+1])
	}
	if f.answers == nil {
		f.answers = map[string]model.Vector{}
	}
	add := func(q string, m model.Metric, v float64) {
		f.answers[q] = append(f.answers[q], &model.Sample{Metric: m, Value: model.SampleValue(v)})
	}
	add(opt.query(name, by...), m, v)
	at := float64(scraped.Unix())
	add(opt.lastSeenQuery(15*time.Second, name, by...), m, at)
	if name == MetricRouteLevel {
		add(opt.lastSeenQuery(15*time.Second, name), model.Metric{}, at)
	}
}

func unix(t time.Time) float64 { return float64(t.Unix()) }

func TestRestoreQueries(t *testing.T) {
	cases := []struct {
		opt  RestoreOptions
		by   []string
		want string
	}{
		{RestoreOptions{}, []string{"route"}, "max by (route) (last_over_time(hermes_route_level[1h]))"},
		{RestoreOptions{Tolerance: 90 * time.Minute, Selector: `job="hermes"`}, []string{"route"},
			`max by (route) (last_over_time(hermes_route_level{job="hermes"}[1h30m]))`},
		{RestoreOptions{Selector: ` {job="hermes", env="prod"} `}, []string{"service", "route"},
			`max by (service, route) (last_over_time(hermes_route_level{job="hermes", env="prod"}[1h]))`},
	}
	for _, c := range cases {
		if got := c.opt.query(MetricRouteLevel, c.by...); got != c.want {
			t.Errorf("restoreQuery(%+v) = %s, want %s", c.opt, got, c.want)
		}
	}
}

func TestRestoreMidFailback(t *testing.T) {
	p := defaultPolicy(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	opt := RestoreOptions{Selector: `job="hermes"`}
	f := fakeQuery{scraped: now.Add(-15 * time.Second)}
	// free: failed over 40 min ago, failback stage 2 (30 %) for 10 min,
	// one failback completed 2 h ago, two more older than the window.
	f.set(opt, MetricRouteLevel, 3, "route", "free", "replica", "ignored")
	f.set(opt, MetricRouteLevelSince, unix(now.Add(-40*time.Minute)), "route", "free")
	f.set(opt, MetricFailbackStage, 2, "route", "free")
	f.set(opt, MetricFailbackStageSince, unix(now.Add(-10*time.Minute)), "route", "free")
	f.set(opt, MetricRouteFailingSince, 0, "route", "free")
	f.set(opt, MetricRouteFailbacksInWindow, 1, "route", "free")
	f.set(opt, MetricRouteLastFailback, unix(now.Add(-2*time.Hour)), "route", "free")
	f.set(opt, MetricRouteReleased, 0, "route", "free")
	// paid-standard: manual for 5 min, failing for 50, released flag stale.
	f.set(opt, MetricRouteLevel, 4, "route", "paid-standard")
	f.set(opt, MetricRouteLevelSince, unix(now.Add(-5*time.Minute)), "route", "paid-standard")
	f.set(opt, MetricFailbackStage, 0, "route", "paid-standard")
	f.set(opt, MetricRouteFailingSince, unix(now.Add(-50*time.Minute)), "route", "paid-standard")
	f.set(opt, MetricRouteFailbacksInWindow, 2, "route", "paid-standard")
	f.set(opt, MetricRouteLastFailback, unix(now.Add(-25*time.Hour)), "route", "paid-standard")
	// Its release ended 20 min ago: the series' last value before it
	// ended does not count.
	f.setScraped(opt, now.Add(-20*time.Minute), MetricRouteReleased, 1, "route", "paid-standard")
	// paid-premium: nothing within the tolerance. gone: no longer configured.
	f.set(opt, MetricRouteLevel, 3, "route", "gone")
	f.setTraffic(opt, 0.3, "free")
	f.setTraffic(opt, 0, "paid-standard")
	f.setTraffic(opt, 0.7, "paid-premium")
	f.set(opt, MetricServiceRetriesEnabled, 0, "service", "chat")

	s, report, err := Restore(context.Background(), f.query, p, now, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range f.at {
		if !at.Equal(now) {
			t.Fatalf("queried at %s, want %s", at, now)
		}
	}
	for _, q := range f.asked {
		if !strings.Contains(q, `{job="hermes"}[1h]`) && !strings.Contains(q, `{job="hermes"})[1h:`) {
			t.Errorf("query %s lacks the selector and tolerance", q)
		}
	}
	if len(s.Routes) != 2 || s.Routes["paid-premium"] != nil {
		t.Fatalf("restored routes %v, want free and paid-standard", slices.Sorted(maps.Keys(s.Routes)))
	}
	free := s.Routes["free"]
	if free.Level != traffic.Failover || !free.Since.Equal(now.Add(-40*time.Minute)) || free.Stage != 2 ||
		!free.StageSince.Equal(now.Add(-10*time.Minute)) || !free.FailingSince.IsZero() || free.Released {
		t.Errorf("free = %+v", *free)
	}
	if len(free.Failbacks) != 1 || !free.Failbacks[0].Equal(now.Add(-2*time.Hour)) {
		t.Errorf("free failbacks = %v, want one 2h ago", free.Failbacks)
	}
	std := s.Routes["paid-standard"]
	if std.Level != traffic.Manual || !std.Since.Equal(now.Add(-5*time.Minute)) || std.Stage != 0 ||
		!std.FailingSince.Equal(now.Add(-50*time.Minute)) || len(std.Failbacks) != 0 || std.Released {
		t.Errorf("paid-standard = %+v", *std)
	}
	chat := s.Services["chat"]
	if chat == nil || !maps.Equal(chat.Weights, map[string]int{"free": 30, "paid-standard": 0, "paid-premium": 70}) ||
		chat.RetriesEnabled || chat.Degraded {
		t.Errorf("chat = %+v", chat)
	}
	wantReport := []string{
		"free: restored failover at failback stage 2 (30%) since 2026-03-01T11:50:00Z, level since 2026-03-01T11:20:00Z, 1 failback(s) in the window, the last at 2026-03-01T10:00:00Z",
		"paid-standard: restored manual, level since 2026-03-01T11:55:00Z, failing since 2026-03-01T11:10:00Z",
		"paid-premium: no state in Prometheus within 1h; not restored",
		"gone: has state in Prometheus but is not configured; ignored",
		"service chat: restored split free=30% paid-standard=0% paid-premium=70%",
	}
	if !slices.Equal(report, wantReport) {
		t.Errorf("report:\n%s\nwant:\n%s", strings.Join(report, "\n"), strings.Join(wantReport, "\n"))
	}

	// The first tick after the restart carries on the failback: stage 2
	// began 10 min ago, so it holds now and moves on once its 15 min pass.
	healthy := snap(p, now, nil)
	s1, _ := evaluator.Step(p, s, healthy, now)
	if r := s1.Routes["free"]; r.Level != traffic.Failover || r.Stage != 2 {
		t.Fatalf("after the first tick free = %s stage %d, want failover stage 2", r.Level, r.Stage)
	}
	if r := s1.Routes["paid-premium"]; r.Level != traffic.Normal {
		t.Errorf("after the first tick paid-premium = %s, want normal", r.Level)
	}
	if r := s1.Routes["paid-standard"]; r.Level != traffic.Manual {
		t.Errorf("after the first tick paid-standard = %s, want manual", r.Level)
	}
	t5 := now.Add(5 * time.Minute)
	s2, _ := evaluator.Step(p, s1, snap(p, t5, nil), t5)
	if r := s2.Routes["free"]; r.Stage != 3 || !r.StageSince.Equal(t5) {
		t.Errorf("5 min later free = stage %d since %s, want stage 3 since %s", r.Stage, r.StageSince, t5)
	}
}

func TestRestoreBadValues(t *testing.T) {
	p := defaultPolicy(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var opt RestoreOptions
	f := fakeQuery{scraped: now.Add(-15 * time.Second)}
	f.set(opt, MetricRouteLevel, 7, "route", "free")
	f.set(opt, MetricRouteLevel, 2.5, "route", "paid-standard")
	f.set(opt, MetricRouteLevel, 3, "route", "paid-premium")
	f.set(opt, MetricRouteLevelSince, unix(now.Add(time.Hour)), "route", "paid-premium")
	f.set(opt, MetricFailbackStage, 9, "route", "paid-premium")
	f.set(opt, MetricRouteFailingSince, unix(now.Add(-time.Minute)), "route", "paid-premium")
	f.setTraffic(opt, 2.5, "free")

	s, report, err := Restore(context.Background(), f.query, p, now, opt)
	if err != nil {
		t.Fatal(err)
	}
	if s.Routes["free"] != nil || s.Routes["paid-standard"] != nil {
		t.Errorf("routes with a bad level were restored: %v", slices.Sorted(maps.Keys(s.Routes)))
	}
	prem := s.Routes["paid-premium"]
	if prem == nil || prem.Level != traffic.Failover || !prem.Since.Equal(now) || prem.Stage != 0 ||
		!prem.FailingSince.Equal(now.Add(-time.Minute)) {
		t.Errorf("paid-premium = %+v, want failover since now at stage 0", prem)
	}
	wantReport := []string{
		"free: bad level 7 (want 0..4); not restored",
		"paid-standard: bad level 2.5 (want 0..4); not restored",
		"paid-premium: restored failover, level since 2026-03-01T12:00:00Z, failing since 2026-03-01T11:59:00Z " +
			"(since 2026-03-01T13:00:00Z is in the future, taken as now; bad failback stage 9 (want 0..4), taken as 0)",
		"service chat: restored split free=0% paid-standard=0% paid-premium=0% (bad traffic ratio 2.5 for free taken as 0)",
	}
	if !slices.Equal(report, wantReport) {
		t.Errorf("report:\n%s\nwant:\n%s", strings.Join(report, "\n"), strings.Join(wantReport, "\n"))
	}
}

func TestRestoreNothingStored(t *testing.T) {
	p := defaultPolicy(t)
	var f fakeQuery
	s, report, err := Restore(context.Background(), f.query, p, time.Unix(1e9, 0), RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Routes) != 0 || len(s.Services) != 0 {
		t.Errorf("restored %+v from nothing", s)
	}
	if len(report) != len(p.Routes()) {
		t.Errorf("report has %d lines, want one per route: %q", len(report), report)
	}
}

func TestRestoreQueryError(t *testing.T) {
	p := defaultPolicy(t)
	boom := errors.New("connection refused")
	f := fakeQuery{err: boom}
	_, _, err := Restore(context.Background(), f.query, p, time.Unix(1e9, 0), RestoreOptions{})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), MetricRouteLevel) {
		t.Errorf("err = %v, want it to wrap the query error and name the query", err)
	}
}

func TestRestoreFromActuators(t *testing.T) {
	p := defaultPolicy(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	type want struct {
		level traffic.Level
		stage int
	}
	cases := []struct {
		name  string
		split map[string]int
		want  map[string]want
		// planned is the first tick's split when it differs from split.
		planned map[string]int
	}{
		{"all on primary", map[string]int{"free": 100},
			map[string]want{"free": {traffic.Normal, 0}, "paid-standard": {traffic.Normal, 0}, "paid-premium": {traffic.Normal, 0}}, nil},
		{"warm", map[string]int{"free": 95, "paid-standard": 5},
			map[string]want{"free": {traffic.Warm, 0}, "paid-standard": {traffic.Normal, 0}, "paid-premium": {traffic.Normal, 0}}, nil},
		{"shed wins over stage 3 at 50%", map[string]int{"free": 50, "paid-standard": 50},
			map[string]want{"free": {traffic.Shed, 0}, "paid-standard": {traffic.Normal, 0}, "paid-premium": {traffic.Normal, 0}}, nil},
		{"failed over", map[string]int{"free": 0, "paid-standard": 100},
			map[string]want{"free": {traffic.Failover, 0}, "paid-standard": {traffic.Normal, 0}, "paid-premium": {traffic.Normal, 0}}, nil},
		{"failback stage 2", map[string]int{"free": 30, "paid-standard": 70},
			map[string]want{"free": {traffic.Failover, 2}, "paid-standard": {traffic.Normal, 0}, "paid-premium": {traffic.Normal, 0}}, nil},
		{"cascade skips the second route", map[string]int{"free": 0, "paid-standard": 0, "paid-premium": 100},
			map[string]want{"free": {traffic.Failover, 0}, "paid-standard": {traffic.Failover, 0}, "paid-premium": {traffic.Normal, 0}}, nil},
		{"unknown share takes the next level down", map[string]int{"free": 70, "paid-standard": 30},
			map[string]want{"free": {traffic.Shed, 0}, "paid-standard": {traffic.Normal, 0}, "paid-premium": {traffic.Normal, 0}},
			map[string]int{"free": 50, "paid-standard": 50, "paid-premium": 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, report := FromActuators(p, splits(map[string]map[string]int{"chat": c.split}), nil, now)
			if len(report) != len(p.Routes()) {
				t.Errorf("report = %q, want a line per route", report)
			}
			for r, w := range c.want {
				rs := s.Routes[r]
				if rs == nil {
					t.Fatalf("%s not inferred", r)
				}
				if rs.Level != w.level || rs.Stage != w.stage || !rs.Since.Equal(now) {
					t.Errorf("%s = %s stage %d since %s, want %s stage %d since now", r, rs.Level, rs.Stage, rs.Since, w.level, w.stage)
				}
				if w.stage > 0 && !rs.StageSince.Equal(now) {
					t.Errorf("%s stage since %s, want now", r, rs.StageSince)
				}
				if failed := rs.Level == traffic.Manual || (rs.Level == traffic.Failover && rs.Stage == 0); failed != !rs.FailingSince.IsZero() {
					t.Errorf("%s failing since %s at %s stage %d", r, rs.FailingSince, rs.Level, rs.Stage)
				}
			}
			chat := s.Services["chat"]
			wantW := map[string]int{"free": 0, "paid-standard": 0, "paid-premium": 0}
			maps.Copy(wantW, c.split)
			if chat == nil || !maps.Equal(chat.Weights, wantW) {
				t.Errorf("chat = %+v, want weights %v", chat, wantW)
			}
			if wantRetries := c.want["free"].level < traffic.Failover; chat.RetriesEnabled != wantRetries {
				t.Errorf("chat retries = %v, want %v", chat.RetriesEnabled, wantRetries)
			}
			// The first tick plans the split the actuators already hold.
			if c.planned != nil {
				wantW = c.planned
			}
			s1, _ := evaluator.Step(p, s, snap(p, now, nil), now)
			if !maps.Equal(s1.Services["chat"].Weights, wantW) {
				t.Errorf("first tick plans %v, want %v", s1.Services["chat"].Weights, wantW)
			}
		})
	}
}

func TestRestoreFromActuatorsSeveralServices(t *testing.T) {
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Services = append(cfg.Services, rules.ServiceConfig{Name: "batch", Routes: []string{"paid-standard", "paid-premium"}})
	p, err := evaluator.NewPolicy(cfg.Rules())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1e9, 0)
	s, report := FromActuators(p, splits(map[string]map[string]int{
		"chat":  {"free": 100},
		"batch": {"paid-standard": 0, "paid-premium": 100},
	}), nil, now)
	if rs := s.Routes["paid-standard"]; rs == nil || rs.Level != traffic.Failover {
		t.Errorf("paid-standard = %+v, want failover (its most severe reading)", rs)
	}
	if rs := s.Routes["free"]; rs == nil || rs.Level != traffic.Normal {
		t.Errorf("free = %+v, want normal", rs)
	}
	want := "paid-standard: inferred failover from the actuators (primary holds 0% in batch), since now"
	if !slices.Contains(report, want) {
		t.Errorf("report = %q, want %q", report, want)
	}

	s, report = FromActuators(p, splits(map[string]map[string]int{"batch": {"paid-standard": 100}}), nil, now)
	if s.Routes["free"] != nil || s.Services["chat"] != nil {
		t.Errorf("free or chat inferred without a split: %+v", s)
	}
	if !slices.Contains(report, "free: no split known from the actuators; not restored") {
		t.Errorf("report = %q", report)
	}
}
