package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/web"
	"github.com/hermes-failover/hermes/web/api"
)

// recorder keeps the last reply the handler wrote.
type recorder struct {
	next http.Handler
	code int
	body []byte
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rr := httptest.NewRecorder()
	rec.next.ServeHTTP(rr, r)
	rec.code, rec.body = rr.Code, rr.Body.Bytes()
	for k, v := range rr.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rr.Code)
	_, _ = w.Write(rr.Body.Bytes())
}

// TestWireRoundTrip: every reply the admin API writes, success or error,
// is decoded by ctl's client into the value web encoded. For each handler
// and outcome, a real HTTP server runs web's handler over a fake loop and
// the real ctl client sends the request: the reply is pinned as JSON (the
// wire format and its HTTP code), decoded strictly into the shared type
// (no field web writes is unknown to ctl), re-encoded byte for byte (no
// field is lost), and equal to what the client returned.
func TestWireRoundTrip(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wrongToken := filepath.Join(t.TempDir(), "wrong")
	if err := os.WriteFile(wrongToken, []byte("wrong\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	type call func(ctx context.Context, c *apiClient) (api.CommandReply, error)
	post := func(path string, body any) call {
		return func(ctx context.Context, c *apiClient) (api.CommandReply, error) {
			return c.command(ctx, http.MethodPost, path, body)
		}
	}
	del := func(path string) call {
		return func(ctx context.Context, c *apiClient) (api.CommandReply, error) {
			return c.command(ctx, http.MethodDelete, path, nil)
		}
	}
	for _, tc := range []struct {
		name      string
		b         backend
		closed    bool   // the admin API is not enabled
		tokenFile string // ctl's --token-file
		call      call
		code      int
		want      string // the reply, compacted
	}{
		{name: "release", call: post("/api/v1/admin/release", api.ReleaseRequest{Route: "free", Reason: "fixed", By: "alice"}), code: 200,
			want: `{"status":"success","data":{"command":"release","outcome":"released","tick":"1970-01-01T00:16:45Z","route":"free"}}`},
		{name: "pin", call: post("/api/v1/admin/overrides", api.OverrideRequest{Service: "chat", Kind: "pin", Route: "paid-premium", Reason: "launch", By: "bob", ExpiresIn: "2h"}), code: 200,
			want: `{"status":"success","data":{"command":"pin","outcome":"set","tick":"1970-01-01T00:16:45Z","service":"chat","route":"paid-premium",` +
				`"override":{"kind":"pin","route":"paid-premium","reason":"launch","by":"bob","since":"1970-01-01T00:16:45Z","expires":"1970-01-01T02:16:40Z"}}}`},
		{name: "pause", call: post("/api/v1/admin/overrides", api.OverrideRequest{Service: "chat", Kind: "pause", Reason: "freeze", Replace: true}), code: 200,
			want: `{"status":"success","data":{"command":"pause","outcome":"set","tick":"1970-01-01T00:16:45Z","service":"chat",` +
				`"override":{"kind":"pause","reason":"freeze","since":"1970-01-01T00:16:45Z"}}}`},
		{name: "clear", call: del("/api/v1/admin/overrides/chat?reason=done&by=bob"), code: 200,
			want: `{"status":"success","data":{"command":"clear","outcome":"cleared","tick":"1970-01-01T00:16:45Z","service":"chat"}}`},
		{name: "drill", call: post("/api/v1/admin/drills", api.DrillRequest{Route: "free", Signals: map[string]float64{"quota_remaining": 0.02}, For: "10m", Reason: "game day", DryRun: true}), code: 200,
			want: `{"status":"success","data":{"command":"drill","outcome":"started","tick":"1970-01-01T00:16:45Z","route":"free",` +
				`"kind":"quota_remaining=0.02","dry_run":true,"until":"1970-01-01T00:26:40Z"}}`},
		{name: "end drill", call: del("/api/v1/admin/drills/free?reason=enough"), code: 200,
			want: `{"status":"success","data":{"command":"end-drill","outcome":"stopped","tick":"1970-01-01T00:16:45Z","route":"free"}}`},
		{name: "queued", b: backend{queued: true}, call: post("/api/v1/admin/overrides", api.OverrideRequest{Service: "chat", Kind: "pin", Route: "paid-premium", Reason: "launch"}), code: 202,
			want: `{"status":"success","data":{"command":"pin","outcome":"queued","tick":"1970-01-01T00:17:00Z","service":"chat","route":"paid-premium"}}`},
		{name: "refused", call: post("/api/v1/admin/release", api.ReleaseRequest{Route: "paid-standard", Reason: "x"}), code: 400,
			want: `{"status":"error","errorType":"refused","error":"route \"paid-standard\" is normal, not manual"}`},
		{name: "bad data", call: post("/api/v1/admin/overrides", api.OverrideRequest{Service: "chat", Kind: "pause", Reason: "x", ExpiresIn: "soon"}), code: 400,
			want: `{"status":"error","errorType":"bad_data","error":"expires_in: want a positive duration such as 30m, got \"soon\""}`},
		{name: "no reason", call: del("/api/v1/admin/drills/free"), code: 400,
			want: `{"status":"error","errorType":"bad_data","error":"a reason is required (?reason=…)"}`},
		{name: "not JSON", call: post("/api/v1/admin/release", nil), code: 415,
			want: `{"status":"error","errorType":"unsupported_media_type","error":"want Content-Type: application/json, got \"\""}`},
		{name: "wrong token", tokenFile: wrongToken, call: post("/api/v1/admin/release", api.ReleaseRequest{Route: "free", Reason: "x"}), code: 401,
			want: `{"status":"error","errorType":"unauthorized","error":"admin token required"}`},
		{name: "closed", closed: true, call: post("/api/v1/admin/release", api.ReleaseRequest{Route: "free", Reason: "x"}), code: 403,
			want: `{"status":"error","errorType":"forbidden","error":"the admin API is not enabled; start Hermes with --web.enable-admin-api to enable it"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			rec := &recorder{next: web.Handler(web.Options{Loop: &b, Gatherer: prometheus.NewRegistry(), AdminToken: "tok", EnableAdminAPI: !tc.closed,
				Now: func() time.Time { return time.Unix(1000, 0).UTC() }})}
			srv := httptest.NewServer(rec)
			t.Cleanup(srv.Close)
			tf := tokenFile
			if tc.tokenFile != "" {
				tf = tc.tokenFile
			}
			c, err := newAPIClient(srv.URL, tf)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.call(context.Background(), c)

			var compact bytes.Buffer
			if err := json.Compact(&compact, rec.body); err != nil {
				t.Fatalf("reply %q is not JSON: %v", rec.body, err)
			}
			if rec.code != tc.code || compact.String() != tc.want {
				t.Fatalf("web wrote %d %s\nwant        %d %s", rec.code, compact.String(), tc.code, tc.want)
			}
			if tc.code/100 == 2 {
				if err != nil {
					t.Fatalf("ctl: %v", err)
				}
				var wrote api.Response[api.CommandReply]
				strictRoundTrip(t, rec.body, &wrote)
				if !reflect.DeepEqual(got, wrote.Data) {
					t.Errorf("ctl decoded %+v, web wrote %+v", got, wrote.Data)
				}
				return
			}
			var ae *apiError
			if !errors.As(err, &ae) {
				t.Fatalf("ctl returned %v (%T), want an *apiError", err, err)
			}
			var wrote api.ErrorReply
			strictRoundTrip(t, rec.body, &wrote)
			if ae.code != tc.code || !reflect.DeepEqual(ae.reply, wrote) {
				t.Errorf("ctl decoded %d %+v, web wrote %d %+v", ae.code, ae.reply, tc.code, wrote)
			}
		})
	}
}

// strictRoundTrip decodes body into v refusing unknown fields, and checks
// that v encodes, as web encodes, to body again.
func strictRoundTrip(t *testing.T, body []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("the shared type does not hold the reply %s: %v", body, err)
	}
	var again bytes.Buffer
	enc := json.NewEncoder(&again)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), body) {
		t.Errorf("the shared type loses part of the reply:\nwrote   %s\nencodes %s", body, again.Bytes())
	}
}

// TestCtlPrintsTheReply: `hermes ctl` says what the reply says: the tick
// that applied a command, or the tick a queued one applies at; and a 2xx
// that is not in the envelope (a server of another version) is an error,
// not a command done at the zero time.
func TestCtlPrintsTheReply(t *testing.T) {
	_, url := serve(t, &backend{}, "")
	if code, out, errb := hermes(t, "ctl", "--url", url, "pin", "chat", "paid-premium", "--reason", "launch"); code != 0 ||
		out != "pin: done at the tick of 1970-01-01T00:16:45Z; no expiry: it holds until hermes ctl clear chat\n" {
		t.Errorf("applied: exit %d, stdout %q, stderr %q", code, out, errb)
	}
	_, url = serve(t, &backend{queued: true}, "")
	if code, out, errb := hermes(t, "ctl", "--url", url, "pause", "chat", "--reason", "freeze"); code != 0 ||
		out != "pause: queued; applies at the tick of 1970-01-01T00:17:00Z\n" {
		t.Errorf("queued: exit %d, stdout %q, stderr %q", code, out, errb)
	}
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"released","route":"free","tick":"1970-01-01T00:16:45Z"}`))
	}))
	t.Cleanup(old.Close)
	if code, out, errb := hermes(t, "ctl", "--url", old.URL, "release", "free", "--reason", "fixed"); code != 1 || out != "" ||
		!strings.Contains(errb, `not an admin API reply (status "released")`) {
		t.Errorf("a reply outside the envelope: exit %d, stdout %q, stderr %q", code, out, errb)
	}
}
