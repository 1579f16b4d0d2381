package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/web/api"
)

// TestDrillEndpoints: a drill request becomes a drill command ending
// `for` after the request; a drill without a positive `for`, a stop
// without a reason and unknown fields are refused before the backend.
func TestDrillEndpoints(t *testing.T) {
	b := &fakeBackend{overrides: map[string]evaluator.Override{}}
	srv := serve(t, b, "")
	code, body := do(t, "POST", srv.URL+"/api/v1/admin/drills",
		`{"route":"free","signals":{"quota_remaining":0.02},"for":"10m","reason":"game day","by":"alice","dry_run":true}`, "")
	if code != http.StatusOK || !strings.Contains(body, `"kind": "quota_remaining=0.02"`) {
		t.Errorf("start: %d %s", code, body)
	}
	code, body = do(t, "DELETE", srv.URL+"/api/v1/admin/drills/free?reason=enough&by=bob", "", "")
	if code != http.StatusOK || !strings.Contains(body, `"outcome": "stopped"`) {
		t.Errorf("stop: %d %s", code, body)
	}
	if len(b.drills) != 2 {
		t.Fatalf("backend got %+v", b.drills)
	}
	start, stop := b.drills[0], b.drills[1]
	if start.Kind != evaluator.CommandDrill || start.Route != "free" || start.Signals["quota_remaining"] != 0.02 || !start.DryRun ||
		start.By != "alice" || !start.Expires.Equal(time.Unix(1000, 0).Add(10*time.Minute)) {
		t.Errorf("drill command %+v", start)
	}
	if stop.Kind != evaluator.CommandEndDrill || stop.Route != "free" || stop.Reason != "enough" || stop.By != "bob" {
		t.Errorf("end-drill command %+v", stop)
	}
	for _, c := range []struct{ method, path, body, want string }{
		{"POST", "/api/v1/admin/drills", `{"route":"free","signals":{"quota_remaining":0.02},"reason":"x"}`, "a drill must end by itself"},
		{"POST", "/api/v1/admin/drills", `{"route":"free","signals":{"quota_remaining":0.02},"for":"-5m","reason":"x"}`, "positive duration"},
		{"POST", "/api/v1/admin/drills", `{"route":"free","signal":{"quota_remaining":0.02},"for":"5m","reason":"x"}`, "unknown field"},
		{"DELETE", "/api/v1/admin/drills/free", "", "a reason is required"},
	} {
		if code, body := do(t, c.method, srv.URL+c.path, c.body, ""); code != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s %s %s: %d %s, want 400 with %q", c.method, c.path, c.body, code, body, c.want)
		}
	}
	if len(b.drills) != 2 {
		t.Errorf("refused requests reached the backend: %+v", b.drills[2:])
	}
}

// FuzzDrillBody posts arbitrary JSON bodies to POST /api/v1/admin/drills:
// nothing may panic, and every answer is a reply in the envelope, 200 or
// 400.
func FuzzDrillBody(f *testing.F) {
	f.Add(`{"route":"free","signals":{"quota_remaining":0.02},"for":"10m","reason":"game day","dry_run":true}`)
	f.Add(`{"route":"free","signals":{"quota_remaining":1e999},"for":"10m","reason":"x"}`)
	f.Add(`{"route":"free","signals":null,"for":"9999999999h","reason":"x"}`)
	f.Fuzz(func(t *testing.T, body string) {
		b := &fakeBackend{overrides: map[string]evaluator.Override{}}
		req := httptest.NewRequest(http.MethodPost, "/api/v1/admin/drills", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		Handler(Options{Loop: b, EnableAdminAPI: true}).ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && rec.Code != http.StatusBadRequest {
			t.Fatalf("POST %q: %d %s", body, rec.Code, rec.Body)
		}
		var answer api.Response[json.RawMessage]
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || !wellFormed(rec.Code, answer) {
			t.Fatalf("POST %q: answer %q is not a JSON status (%v)", body, rec.Body, err)
		}
	})
}
