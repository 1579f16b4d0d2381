package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/web/api"
)

// FuzzAdminBodies posts arbitrary JSON bodies to the admin endpoints
// (seeds in testdata/fuzz/FuzzAdminBodies). Nothing may panic, and every
// answer is a reply in the envelope: a success (200), or an error (400)
// with its class, never a server error.
func FuzzAdminBodies(f *testing.F) {
	f.Add(pinBody, true)
	f.Add(`{"route":"free","reason":"fixed","by":"alice"}`, false)
	f.Fuzz(func(t *testing.T, body string, override bool) {
		b := &fakeBackend{overrides: map[string]evaluator.Override{}}
		h := Handler(Options{Loop: b, EnableAdminAPI: true})
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
		var answer api.Response[json.RawMessage]
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || !wellFormed(rec.Code, answer) {
			t.Fatalf("POST %s %q: answer %q is not a JSON status (%v)", path, body, rec.Body, err)
		}
	})
}

// wellFormed says whether a reply is the envelope its HTTP code calls for:
// a success with data for a 2xx, an error with its class and words, under
// the class's code, otherwise.
func wellFormed(code int, r api.Response[json.RawMessage]) bool {
	if code/100 == 2 {
		return r.Status == api.StatusSuccess && len(r.Data) > 0 && r.ErrorType == "" && r.Error == ""
	}
	return r.Status == api.StatusError && r.ErrorType.HTTPCode() == code && r.Error != "" && r.Data == nil
}
