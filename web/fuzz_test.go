package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/evaluator"
)

// FuzzAdminBodies posts arbitrary JSON bodies to the admin endpoints
// (seeds in testdata/fuzz/FuzzAdminBodies). Nothing may panic, and every
// answer is a JSON object with a status: set or released (200), or an
// error (400), never a server error.
func FuzzAdminBodies(f *testing.F) {
	f.Add(pinBody, true)
	f.Add(`{"route":"free","reason":"fixed","by":"alice"}`, false)
	f.Fuzz(func(t *testing.T, body string, override bool) {
		b := &fakeBackend{overrides: map[string]evaluator.Override{}}
		h := Handler(Options{Backend: b, EnableAdminAPI: true})
		path := "/api/v1/admin/release"
		if override {
			path = "/api/v1/admin/overrides"
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && rec.Code != http.StatusBadRequest {
			t.Fatalf("POST %s %q: %d %s", path, body, rec.Code, rec.Body)
		}
		var answer struct{ Status string }
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || answer.Status == "" {
			t.Fatalf("POST %s %q: answer %q is not a JSON status (%v)", path, body, rec.Body, err)
		}
	})
}
