package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
)

// TestShippedDefaultsMoveNothing: closed by default, like Prometheus. A
// real `hermes run` with the shipped configuration (rules/hermes.yaml,
// only its Prometheus URL pointed at the test's) and no flag beyond
// --config, the listen address and the audit file, while route free fails
// and the core decides to move its traffic away: every endpoint that
// moves traffic or reloads answers 403 naming the flag that opens it and
// changes nothing, no actuator is called (no hermes_actuations_total, no
// actuation in the audit log), and Hermes writes no file but its audit
// log and its state file.
func TestShippedDefaultsMoveNothing(t *testing.T) {
	testenv.Binary(t, testenv.Prometheus.Binary)
	dir := t.TempDir()
	h := NewHermes(t, dir)
	h.srv.Args = []string{"run", "--config", h.ConfigPath, "--web.listen-address", h.Addr, "--audit.file", h.AuditPath}
	gw := StartGateway(t, h.SplitPath)
	db := StartTSDB(t, testenv.Prometheus, map[string]string{"gateway": gw.Target, "hermes": h.Addr})
	shipped := string(rules.DefaultYAML)
	if !strings.Contains(shipped, "\nactuators: []\n") || !strings.Contains(shipped, "url: http://127.0.0.1:9090\n") {
		t.Fatal("rules/hermes.yaml no longer ships `actuators: []` and Prometheus at 127.0.0.1:9090: update this test")
	}
	h.WriteConfig(t, strings.Replace(shipped, "url: http://127.0.0.1:9090\n", "url: "+db.URL+"\n", 1))
	h.Start(t)
	gw.SetMode("free", Degraded)
	testenv.EventuallyDetail(t, 10*time.Minute, "the shipped policy moving traffic away from free", func() (bool, string) {
		st := h.Status(t)
		return st.Weights()["free"] < 100 && st.Route("free").Level != "normal", fmt.Sprintf("%s; split %v", st.Route("free"), st.Weights())
	})

	// Longer than a tick (15s): an open admin API answers at the command's tick.
	c := http.Client{Timeout: 30 * time.Second}
	for _, w := range []struct{ method, path, body, flag string }{
		{"POST", "/-/reload", "", "--web.enable-lifecycle"},
		{"PUT", "/-/reload", "", "--web.enable-lifecycle"},
		{"POST", "/api/v1/admin/overrides", `{"service":"chat","kind":"pin","route":"free","reason":"x"}`, "--web.enable-admin-api"},
		{"POST", "/api/v1/admin/overrides", `{"service":"chat","kind":"pause","reason":"x"}`, "--web.enable-admin-api"},
		{"DELETE", "/api/v1/admin/overrides/chat?reason=x", "", "--web.enable-admin-api"},
		{"POST", "/api/v1/admin/release", `{"route":"free","reason":"x"}`, "--web.enable-admin-api"},
		{"POST", "/api/v1/admin/drills", `{"route":"paid-standard","signals":{"quota_remaining":0.01},"for":"10m","reason":"x"}`, "--web.enable-admin-api"},
		{"DELETE", "/api/v1/admin/drills/free?reason=x", "", "--web.enable-admin-api"},
		{"GET", "/debug/pprof/", "", ""},
	} {
		req, err := http.NewRequest(w.method, h.URL+w.path, strings.NewReader(w.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", w.method, w.path, err)
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		resp.Body.Close()
		switch {
		case w.flag == "" && resp.StatusCode != http.StatusNotFound:
			t.Errorf("%s %s by default: %s, want 404 (--web.enable-pprof)", w.method, w.path, resp.Status)
		case w.flag != "" && (resp.StatusCode != http.StatusForbidden || !strings.Contains(body.String(), w.flag)):
			t.Errorf("%s %s by default: %s %s, want 403 naming %s", w.method, w.path, resp.Status, body.String(), w.flag)
		}
	}

	// A few more ticks, then nothing may have been actuated.
	first := h.Status(t).LastTick
	testenv.EventuallyDetail(t, time.Minute, "two more ticks", func() (bool, string) {
		st := h.Status(t)
		return st.LastTick.Sub(first) >= 30*time.Second, fmt.Sprint(st.LastTick)
	})
	st := h.Status(t)
	if o := st.Route("free"); o.Level == "manual" {
		t.Errorf("free is manual although no command was taken: %s", o)
	}
	if metrics := string(h.get(t, "/metrics")); strings.Contains(metrics, "\nhermes_actuations_total{") {
		t.Errorf("hermes_actuations_total is exported with no actuator configured:\n%s", grepLines(metrics, "hermes_actuations_total"))
	}
	audit, err := os.ReadFile(h.AuditPath)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(audit))
	sc.Buffer(nil, 1<<20)
	var types []string
	for sc.Scan() {
		var rec struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if rec.Type == "actuation" || rec.Type == "override" || rec.Type == "command" || rec.Type == "drill" || rec.Type == "reload" {
			t.Errorf("audit record of a %s with the shipped defaults: %s", rec.Type, sc.Text())
		}
		if !slices.Contains(types, rec.Type) {
			types = append(types, rec.Type)
		}
	}
	t.Logf("audit record types: %v", types)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if name == "hermes.yaml" || name == "audit.jsonl" || name == "hermes-state.json" || strings.HasPrefix(name, "hermes-") && strings.HasSuffix(name, ".log") {
			continue
		}
		t.Errorf("hermes run with the shipped defaults wrote %s", name)
	}
}

// grepLines is the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
