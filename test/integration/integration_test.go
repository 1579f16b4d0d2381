package integration

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// env is one deployment: the gateway, a query engine scraping it and
// Hermes, and Hermes querying the engine (directly or through a proxy).
type env struct {
	gw     *Gateway
	db     *testenv.TSDB
	proxy  *QueryProxy
	hermes *Hermes
	split  *SplitRecorder
	opts   ConfigOptions
}

// startEnv starts everything and waits until Hermes is ready. setup runs
// before Hermes starts.
func startEnv(t *testing.T, b testenv.Engine, opts ConfigOptions, withProxy bool, setup func(*env)) *env {
	t.Helper()
	testenv.Binary(t, b.Binary)
	dir := t.TempDir()
	h := NewHermes(t, dir)
	e := &env{hermes: h}
	e.gw = StartGateway(t, h.SplitPath)
	e.db = StartTSDB(t, b, map[string]string{"gateway": e.gw.Target, "hermes": h.Addr})
	opts.PrometheusURL = e.db.URL
	if withProxy {
		e.proxy = StartQueryProxy(t, e.db.URL)
		opts.PrometheusURL = e.proxy.URL
	}
	opts.SplitPath = h.SplitPath
	if opts.AlertmanagerURL != "" {
		opts.ExternalURL = h.URL
	}
	e.opts = opts
	h.WriteConfig(t, HermesConfig(opts))
	e.split = RecordSplit(t, h.SplitPath)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- split changes:\n%s", joinChanges(e.split.Changes()))
			t.Logf("--- last lines of the audit log:\n%s", testenv.Tail(h.AuditPath, 40))
		}
	})
	if setup != nil {
		setup(e)
	}
	h.Start(t)
	return e
}

func split(free, standard, premium int) map[string]int {
	return map[string]int{"free": free, "paid-standard": standard, "paid-premium": premium}
}

func joinChanges(cs []SplitChange) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintln(&b, c)
	}
	return b.String()
}

// TestFailoverRoundTrip drives route "free" through healthy → silent
// degradation → recovery against each query engine, with a SIGKILL of
// Hermes in the middle of the failover, and checks the levels and the file
// actuator's splits in order. With Prometheus, Hermes also sends its alerts
// to a real Alertmanager, and the failover's page fires and resolves there.
func TestFailoverRoundTrip(t *testing.T) {
	for _, b := range []testenv.Engine{testenv.Prometheus, testenv.VictoriaMetrics} {
		t.Run(b.Name, func(t *testing.T) { testFailoverRoundTrip(t, b) })
	}
}

func testFailoverRoundTrip(t *testing.T, b testenv.Engine) {
	var am *Alertmanager // started first, stopped after Hermes
	var opts ConfigOptions
	if b.Name == testenv.Prometheus.Name {
		am = StartAlertmanager(t)
		opts.AlertmanagerURL = am.URL
	}
	e := startEnv(t, b, opts, false, nil)
	h, db := e.hermes, e.db

	// Healthy: 2 % soft failures are noise; the whole service is on free.
	testenv.EventuallyDetail(t, time.Minute, "free normal with every signal answering", func() (bool, string) {
		r := h.Status(t).Route("free")
		return r.Level == "normal" && r.AllOK() && r.Score == 100 && maps.Equal(e.split.Current(), split(100, 0, 0)),
			fmt.Sprintf("%s; split %v", r, e.split.Current())
	})

	// Silent degradation: HTTP 200, 60 % of the content broken, probes failing.
	e.gw.SetMode("free", Degraded)
	degradedAt := time.Now()
	testenv.EventuallyDetail(t, time.Minute, "free failed over", func() (bool, string) {
		r := h.Status(t).Route("free")
		return r.Level == "failover" && e.split.Current()["free"] == 0, fmt.Sprintf("%s; split %v", r, e.split.Current())
	})
	failoverAt := time.Now()
	t.Logf("failover %s after the degradation began", failoverAt.Sub(degradedAt).Round(100*time.Millisecond))
	before := h.Status(t).Route("free")

	// The engine has scraped Hermes's state: level 3 and a split without free.
	waitFailoverScraped(t, db, b.Name)
	if v, err := db.QueryValue(`hermes_route_level_since_timestamp_seconds{job="hermes",route="free"}`); err != nil {
		t.Errorf("since series: %v", err)
	} else if got, want := v, float64(before.Since.Unix()); got < want-1 || got > want+1 {
		t.Errorf("hermes_route_level_since_timestamp_seconds{route=\"free\"} = %v, want the Unix time in seconds of the level's since (%v, %s)",
			got, want, before.Since.UTC().Format(time.RFC3339))
	}

	var firing testenv.AMAlert
	if am != nil {
		firing = checkFailedOverFiring(t, am, h)
	}

	// SIGKILL mid-failover, then start again with the same flags once the
	// engine has seen Hermes down (a failed scrape after a good one: Hermes's
	// series go stale), however long a loaded machine takes for it.
	up := func(want float64) func() (bool, string) {
		return func() (bool, string) {
			v, err := db.QueryValue(`up{job="hermes"}`)
			return err == nil && v == want, fmt.Sprintf("up %v (%v)", v, err)
		}
	}
	testenv.EventuallyDetail(t, 30*time.Second, b.Name+" scraping hermes", up(1))
	killedAt := time.Now()
	h.Process().Kill()
	t.Logf("hermes killed with SIGKILL while free is failed over (since %s)", before.Since.UTC().Format(time.RFC3339))
	testenv.EventuallyDetail(t, 30*time.Second, b.Name+" seeing hermes down", up(0))
	h.Start(t)
	restartedAt := time.Now()
	// Watch at least 5 of Hermes's ticks, and until free's last degraded
	// traffic has left the engine's 15s rate windows, so that the failback
	// judges recovered traffic only. Both are conditions on Hermes and the
	// engine, not on the wall clock: under load the engine scrapes late, and
	// VictoriaMetrics' rate also reads the sample before its window, so a
	// fixed 16 s after the failover can leave degraded traffic in the window.
	firstTick := h.Status(t).LastTick
	ticks := 0
	testenv.EventuallyDetail(t, 2*time.Minute, "5 ticks after the restart and free's degraded traffic out of the rate windows", func() (bool, string) {
		ticks++
		st := h.Status(t)
		r := st.Route("free")
		if r.Level != "failover" || !r.Since.Truncate(time.Second).Equal(before.Since.Truncate(time.Second)) || r.Traffic != 0 {
			t.Fatalf("poll %d after restart: %s; want failover since %s with no traffic", ticks, r, before.Since.UTC().Format(time.RFC3339))
		}
		if !maps.Equal(st.Weights(), split(0, 100, 0)) {
			t.Fatalf("poll %d after restart: weights %v, want %v", ticks, st.Weights(), split(0, 100, 0))
		}
		failing, err := db.Query(`sum(rate(llm_gateway_requests_total{route="free",verdict=~"soft_fail|hard_fail"}[15s]))`)
		quiet := err == nil && len(failing) == 1 && failing[0].Value == 0
		return st.LastTick.Sub(firstTick) >= 5*time.Second && quiet,
			fmt.Sprintf("Hermes ticked %s since the restart; free's failing rate in %s: %v (%v)", st.LastTick.Sub(firstTick), b.Name, failing, err)
	})
	if cs := e.split.Between(killedAt, time.Now()); len(cs) > 0 || e.split.Current()["free"] != 0 {
		t.Errorf("split file changed between the kill and %d polls after the restart:\n%s", ticks, joinChanges(cs))
	}
	audit := h.Audit(t)
	var restores []AuditRecord
	for _, r := range audit {
		if r.Type == "restore" {
			restores = append(restores, r)
		}
	}
	if len(restores) != 2 {
		t.Fatalf("audit log has %d restore records, want 2 (start and restart)", len(restores))
	}
	if r := restores[1]; r.Result != "prometheus" || !strings.Contains(r.Reason, "free: restored failover") {
		t.Errorf("restart restored from %q: %s; want from prometheus with free restored at failover", r.Result, r.Reason)
	}
	if log, err := os.ReadFile(h.LogPath()); err != nil {
		t.Error(err)
	} else if !strings.Contains(string(log), "source=prometheus") {
		t.Errorf("restart log does not say it restored from prometheus:\n%s", testenv.Tail(h.LogPath(), 20))
	}
	for _, r := range audit {
		if r.Time.After(killedAt) && (r.Type == "level" || r.Type == "traffic" || r.Type == "failback") {
			t.Errorf("audit after the restart: %+v; want no decision before the route recovers", r)
		}
	}
	t.Logf("restart held free at failover for %d polls (restarted %s after the kill)", ticks, restartedAt.Sub(killedAt).Round(100*time.Millisecond))
	if am != nil {
		// The restarted Hermes restored the alert: Alertmanager holds the
		// same one, started when it first fired.
		testenv.EventuallyDetail(t, 10*time.Second, failedOver+" restored in Alertmanager (active, first startsAt kept)", func() (bool, string) {
			as := am.Alerts(t, failedOver)
			return len(as) == 1 && as[0].Status.State == "active" && as[0].StartsAt.Equal(firing.StartsAt),
				fmt.Sprintf("Alertmanager holds %v; before the kill %s", as, firing)
		})
		t.Logf("the webhook got %s for free until now: %v", failedOver, am.Notified(failedOver, "free"))
	}

	// Recovery: probes pass, then the staged failback with real traffic.
	e.gw.SetMode("free", Recovered)
	recoveredAt := time.Now()
	testenv.EventuallyDetail(t, 90*time.Second, "free back to normal with all the traffic", func() (bool, string) {
		r := h.Status(t).Route("free")
		return r.Level == "normal" && maps.Equal(e.split.Current(), split(100, 0, 0)), fmt.Sprintf("%s; split %v", r, e.split.Current())
	})
	t.Logf("failback complete %s after the recovery", time.Since(recoveredAt).Round(100*time.Millisecond))
	if am != nil {
		checkFailedOverResolved(t, am, recoveredAt)
	}

	// The order of everything.
	wantShares := []int{100, 95, 50, 0, 10, 30, 50, 100}
	if got := e.split.Sequence("free"); !slices.Equal(got, wantShares) {
		t.Errorf("free's share in the split file went %v, want %v", got, wantShares)
	}
	if bad := e.split.Bad(); len(bad) > 0 {
		t.Errorf("split file unreadable at some polls: %v", bad)
	}
	// The status page shows a tick's state only once the audit log has
	// its records: free's failover→normal is on record already.
	audit = h.Audit(t)
	var levels, stages, traffic, applied []string
	for _, r := range audit {
		switch {
		case r.Type == "level" && r.Route == "free":
			levels = append(levels, r.From+"→"+r.To)
		case r.Type == "failback" && r.Route == "free" && r.Stage != nil && r.Percent != nil:
			stages = append(stages, fmt.Sprintf("%d:%d%%", *r.Stage, *r.Percent))
		case r.Type == "traffic" && r.Service == Service:
			traffic = appendChanged(traffic, fmt.Sprint(r.Weights["free"]))
		case r.Type == "actuation" && r.Service == Service && r.Result == "ok":
			applied = appendChanged(applied, fmt.Sprint(r.Weights["free"]))
		}
	}
	t.Logf("free's share in the split file: %v; audit: levels %v, failback stages %v, traffic %v, file actuations %v",
		e.split.Sequence("free"), levels, stages, traffic, applied)
	check := func(what string, got, want []string) {
		if !slices.Equal(got, want) {
			t.Errorf("audit %s of free: %v, want %v", what, got, want)
		}
	}
	check("level changes", levels, []string{"normal→warm", "warm→shed", "shed→failover", "failover→normal"})
	check("failback stages", stages, []string{"1:10%", "2:30%", "3:50%", "4:100%"})
	check("traffic splits", traffic, []string{"100", "95", "50", "0", "10", "30", "50", "100"})
	check("file actuations", applied, []string{"100", "95", "50", "0", "10", "30", "50", "100"})
}

// failedOver is the test policy's tier-A alert: free failed over, no
// failback under way.
const failedOver = "HermesRouteFailedOver"

// checkFailedOverFiring waits until Alertmanager holds free's failedOver
// alert, active, and has notified the webhook of it, checks its labels and
// its link to Hermes, and returns it.
func checkFailedOverFiring(t *testing.T, am *Alertmanager, h *Hermes) testenv.AMAlert {
	t.Helper()
	var active []testenv.AMAlert
	testenv.EventuallyDetail(t, 30*time.Second, failedOver+" active in Alertmanager and notified", func() (bool, string) {
		active = am.Alerts(t, failedOver)
		notified := am.Notified(failedOver, "free")
		return len(active) == 1 && active[0].Status.State == "active" &&
				len(notified) > 0 && notified[len(notified)-1].Status == "firing",
			fmt.Sprintf("Alertmanager holds %v; the webhook got %v", active, notified)
	})
	want := map[string]string{"alertname": failedOver, "severity": "critical", "tier": "A", "service": Service, "route": "free"}
	check := func(where string, labels map[string]string, generatorURL string) {
		t.Helper()
		for k, v := range want {
			if labels[k] != v {
				t.Errorf("%s: %s label %s = %q, want %q (labels %v)", where, failedOver, k, labels[k], v, labels)
			}
		}
		if !strings.HasPrefix(generatorURL, h.URL+"/") {
			t.Errorf("%s: %s generatorURL %q, want a link into Hermes at %s", where, failedOver, generatorURL, h.URL)
		}
	}
	check("GET /api/v2/alerts", active[0].Labels, active[0].GeneratorURL)
	notified := am.Notified(failedOver, "free")
	check("webhook", notified[len(notified)-1].Labels, notified[len(notified)-1].GeneratorURL)
	t.Logf("Alertmanager holds %s", active[0])
	return active[0]
}

// checkFailedOverResolved waits until free's failedOver alert has left
// Alertmanager's active alerts and the webhook got its resolve, after
// the route recovered at recoveredAt.
func checkFailedOverResolved(t *testing.T, am *Alertmanager, recoveredAt time.Time) {
	t.Helper()
	testenv.EventuallyDetail(t, 30*time.Second, failedOver+" resolved in Alertmanager and notified", func() (bool, string) {
		active := am.Alerts(t, failedOver)
		notified := am.Notified(failedOver, "free")
		if len(notified) == 0 {
			return false, fmt.Sprintf("Alertmanager holds %v; the webhook got nothing", active)
		}
		last := notified[len(notified)-1]
		return len(active) == 0 && last.Status == "resolved" && last.Received.After(recoveredAt),
			fmt.Sprintf("Alertmanager holds %v; the webhook got %v", active, notified)
	})
	t.Logf("the webhook got %s for free: %v", failedOver, am.Notified(failedOver, "free"))
}

func appendChanged(s []string, v string) []string {
	if len(s) > 0 && s[len(s)-1] == v {
		return s
	}
	return append(s, v)
}

// TestFaultsLeaveSplitUnchanged holds route "free" at warm (score about 82,
// split 95/5/0) and injects faults one after the other: a query that times
// out, a signal with two series for one route, an invalid configuration on
// reload, and Prometheus stopped for a minute. None may move traffic.
func TestFaultsLeaveSplitUnchanged(t *testing.T) {
	e := startEnv(t, testenv.Prometheus, ConfigOptions{Quality: true}, true, func(e *env) {
		e.gw.SetMode("free", Sluggish)
	})
	h := e.hermes
	want := split(95, 5, 0)
	testenv.EventuallyDetail(t, time.Minute, "free warm with every signal answering", func() (bool, string) {
		r := h.Status(t).Route("free")
		return r.Level == "warm" && r.AllOK() && maps.Equal(e.split.Current(), want), fmt.Sprintf("%s; split %v", r, e.split.Current())
	})
	warmSince := h.Status(t).Route("free").Since
	steady := func(t *testing.T, from time.Time) {
		t.Helper()
		if cs := e.split.Between(from, time.Now()); len(cs) > 0 {
			t.Errorf("split file changed during the fault:\n%s", joinChanges(cs))
		}
		st := h.Status(t)
		if !maps.Equal(st.Weights(), want) {
			t.Errorf("weights %v, want %v", st.Weights(), want)
		}
		if r := st.Route("free"); r.Level != "warm" || !r.Since.Equal(warmSince) {
			t.Errorf("free is %s since %s, want warm since %s", r.Level, r.Since.UTC().Format(time.RFC3339), warmSince.UTC().Format(time.RFC3339))
		}
	}
	recovered := func(t *testing.T) {
		t.Helper()
		testenv.EventuallyDetail(t, 30*time.Second, "every signal of every route answering again", func() (bool, string) {
			st := h.Status(t)
			for _, name := range Routes {
				if r := st.Route(name); !r.Answering() {
					return false, r.String()
				}
			}
			return true, ""
		})
	}

	t.Run("query times out", func(t *testing.T) {
		from := time.Now()
		labels := map[string]string{"signal": "quality_score", "reason": "timeout"}
		errs := h.Metric(t, "hermes_query_errors_total", labels)
		e.proxy.SlowQueries("llm_gateway_quality_score", 3*time.Second)
		testenv.EventuallyDetail(t, 15*time.Second, "quality_score timing out on every route", func() (bool, string) {
			st := h.Status(t)
			for _, name := range Routes {
				c := st.Route(name).Signal("quality_score")
				if c.Status != "error" || c.Reason != "timeout" {
					return false, st.Route(name).String()
				}
			}
			return true, ""
		})
		time.Sleep(4 * time.Second)
		r := h.Status(t).Route("free")
		for _, c := range r.Contributions {
			if c.Signal != "quality_score" && c.Status != "ok" {
				t.Errorf("a slow quality_score spoilt %s: %s", c.Signal, r)
			}
		}
		if got := h.Metric(t, "hermes_query_errors_total", labels); got < errs+4 {
			t.Errorf("hermes_query_errors_total%v went from %v to %v, want at least 4 more", labels, errs, got)
		}
		e.proxy.SlowQueries("", 0)
		recovered(t)
		steady(t, from)
		t.Logf("the proxy held back %d queries", e.proxy.Delayed())
	})

	t.Run("two series for one route", func(t *testing.T) {
		from := time.Now()
		e.gw.SetDuplicateQuality(true)
		testenv.EventuallyDetail(t, 15*time.Second, "quality_score ambiguous for free only", func() (bool, string) {
			st := h.Status(t)
			c := st.Route("free").Signal("quality_score")
			other := st.Route("paid-standard").Signal("quality_score")
			return c.Status == "error" && strings.Contains(c.Reason, "2 series") && other.Status == "ok",
				st.Route("free").String() + "; " + st.Route("paid-standard").String()
		})
		time.Sleep(4 * time.Second)
		if c := h.Status(t).Route("free").Signal("quality_score"); c.Status != "error" {
			t.Errorf("quality_score of free: %+v, want still error", c)
		}
		e.gw.SetDuplicateQuality(false)
		recovered(t)
		steady(t, from)
	})

	t.Run("invalid config on reload", func(t *testing.T) {
		from := time.Now()
		loadedAt := h.Status(t).LoadedAt
		failure := map[string]string{"result": "failure"}
		failures := h.Metric(t, "hermes_config_reloads_total", failure)
		ticks := h.Metric(t, "hermes_ticks_total", nil)
		bad := e.opts
		bad.QueryTimeout = "2s" // not below evaluation_interval (1s)
		h.WriteConfig(t, HermesConfig(bad))
		time.Sleep(1500 * time.Millisecond) // the file watcher's own reload (500ms settle) comes and goes
		code, body := h.Reload(t)
		if code != 500 || !strings.Contains(body, "query_timeout") {
			t.Errorf("POST /-/reload of an invalid config: %d %q, want 500 naming query_timeout", code, body)
		}
		if v := h.Metric(t, "hermes_config_last_reload_successful", nil); v != 0 {
			t.Errorf("hermes_config_last_reload_successful = %v after a rejected reload, want 0", v)
		}
		afterPost := h.Metric(t, "hermes_config_reloads_total", failure)
		if err := h.Process().Signal(syscall.SIGHUP); err != nil {
			t.Fatalf("signalling hermes: %v", err)
		}
		testenv.EventuallyDetail(t, 10*time.Second, "SIGHUP reload rejected", func() (bool, string) {
			v := h.Metric(t, "hermes_config_reloads_total", failure)
			log, _ := os.ReadFile(h.LogPath())
			return v > afterPost && strings.Contains(string(log), "SIGHUP: reloading configuration"),
				fmt.Sprintf("failures %v (before the SIGHUP %v, before the fault %v)", v, afterPost, failures)
		})
		time.Sleep(3 * time.Second)
		st := h.Status(t)
		if st.Interval != "1s" || !st.LoadedAt.Equal(loadedAt) {
			t.Errorf("after rejected reloads: interval %s loaded at %s, want the old config (1s, loaded at %s)", st.Interval, st.LoadedAt, loadedAt)
		}
		if got := h.Metric(t, "hermes_ticks_total", nil); got < ticks+3 {
			t.Errorf("hermes_ticks_total went from %v to %v during rejected reloads, want ticks to go on", ticks, got)
		}
		rejected := 0
		for _, r := range h.Audit(t) {
			if r.Type == "reload" && r.Result == "rejected" && r.Time.After(from.Add(-time.Second)) {
				rejected++
			}
		}
		if rejected < 3 {
			t.Errorf("audit log has %d rejected reloads, want at least 3 (file watcher, POST and SIGHUP)", rejected)
		}
		steady(t, from)

		good := e.opts
		good.Help = " (reloaded)"
		h.WriteConfig(t, HermesConfig(good))
		if code, body := h.Reload(t); code != 200 {
			t.Errorf("POST /-/reload of a valid config: %d %q", code, body)
		}
		if v := h.Metric(t, "hermes_config_last_reload_successful", nil); v != 1 {
			t.Errorf("hermes_config_last_reload_successful = %v after a good reload, want 1", v)
		}
		if st := h.Status(t); !st.LoadedAt.After(loadedAt) {
			t.Errorf("config_loaded_at %s did not move after a good reload", st.LoadedAt)
		}
		time.Sleep(2 * time.Second)
		steady(t, from)
	})

	t.Run("prometheus stopped for a minute", func(t *testing.T) {
		from := time.Now()
		errs := h.Metric(t, "hermes_query_errors_total", nil)
		ticks := h.Metric(t, "hermes_ticks_total", nil)
		e.db.Stop(t)
		stoppedAt := time.Now()
		testenv.EventuallyDetail(t, 10*time.Second, "every signal erring", func() (bool, string) {
			r := h.Status(t).Route("free")
			for _, c := range r.Contributions {
				if c.Status != "error" {
					return false, r.String()
				}
			}
			return true, r.String()
		})
		t.Logf("while Prometheus is down: %s", h.Status(t).Route("free"))
		for time.Since(stoppedAt) < time.Minute {
			st := h.Status(t)
			if !maps.Equal(st.Weights(), want) || st.Route("free").Level != "warm" {
				t.Fatalf("%s into the outage: weights %v, %s", time.Since(stoppedAt).Round(time.Second), st.Weights(), st.Route("free"))
			}
			time.Sleep(time.Second)
		}
		gotErrs := h.Metric(t, "hermes_query_errors_total", nil)
		gotTicks := h.Metric(t, "hermes_ticks_total", nil)
		if gotErrs < errs+50 {
			t.Errorf("hermes_query_errors_total went from %v to %v over a minute without Prometheus, want at least 50 more", errs, gotErrs)
		}
		if gotTicks < ticks+55 {
			t.Errorf("hermes_ticks_total went from %v to %v over a minute without Prometheus, want a tick a second", ticks, gotTicks)
		}
		e.db.Start(t)
		recovered(t)
		after := h.Metric(t, "hermes_query_errors_total", nil)
		time.Sleep(3 * time.Second)
		if again := h.Metric(t, "hermes_query_errors_total", nil); again != after {
			t.Errorf("query errors still growing after Prometheus came back: %v → %v", after, again)
		}
		steady(t, from)
	})

	t.Run("restart while prometheus hangs", func(t *testing.T) {
		from := time.Now()
		prom := e.db.Process()
		if err := prom.Signal(syscall.SIGSTOP); err != nil { // accepts connections, never answers
			t.Fatalf("signalling prometheus: %v", err)
		}
		t.Cleanup(func() { _ = prom.Signal(syscall.SIGCONT) })
		h.Process().Kill()
		h.Start(t) // ready: restored (from the split file, Prometheus being mute) and ticking
		for range 5 {
			st := h.Status(t)
			if r := st.Route("free"); r.Level != "warm" || !maps.Equal(st.Weights(), want) {
				t.Errorf("restarted while Prometheus hangs: %s, weights %v; want warm with %v", r, st.Weights(), want)
			}
			time.Sleep(time.Second)
		}
		if err := prom.Signal(syscall.SIGCONT); err != nil {
			t.Fatalf("signalling prometheus: %v", err)
		}
		recovered(t)
		if cs := e.split.Between(from, time.Now()); len(cs) > 0 {
			t.Errorf("split file changed:\n%s", joinChanges(cs))
		}
	})
}
