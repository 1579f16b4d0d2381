package browser_test

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/web"
)

// recorder remembers the status of every admin request Hermes answered.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(sw, r)
		if strings.HasPrefix(r.URL.Path, "/api/v1/admin/") {
			rec.mu.Lock()
			rec.seen = append(rec.seen, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, sw.code))
			rec.mu.Unlock()
		}
	})
}

func (rec *recorder) requests() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.seen...)
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) { s.code = code; s.ResponseWriter.WriteHeader(code) }

// TestCrossOriginFormCannotPin opens, in a real headless Chromium, a page
// from another origin that auto-submits a form to Hermes's admin API with
// a text/plain body shaped as JSON: the classic CSRF an operator's browser
// would carry out. Hermes runs with the admin API enabled and no token, the
// most exposed set-up; the request must arrive and be refused, and no tick
// may pin.
func TestCrossOriginFormCannotPin(t *testing.T) {
	chromium := testenv.Binary(t, "chromium")
	r, reg := startRunner(t, t.TempDir())
	rec := &recorder{}
	hermes := httptest.NewServer(rec.wrap(web.Handler(web.Options{Loop: web.Live(r), Gatherer: reg, EnableAdminAPI: true})))
	defer hermes.Close()

	// The attacker's page, on another site (localhost, not 127.0.0.1).
	// text/plain encodes the one field as name=value, which makes
	// {"…","by":"="} out of it: valid JSON for a lax server.
	name := `{"service":"chat","kind":"pin","route":"paid-premium","reason":"csrf","by":"`
	page := `<!doctype html><html><body><form method="POST" enctype="text/plain" action="` + hermes.URL + `/api/v1/admin/overrides">` +
		`<input name="` + html.EscapeString(name) + `" value='"}'></form><script>document.forms[0].submit()</script></body></html>`
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	}))
	defer attacker.Close()
	attackURL := strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1) + "/"

	dom := browse(t, chromium, "--virtual-time-budget=10000", "--dump-dom", attackURL)
	testenv.EventuallyDetail(t, 30*time.Second, "the forged request reaching Hermes", func() (bool, string) {
		return len(rec.requests()) > 0, dom
	})
	for _, req := range rec.requests() {
		if req != "POST /api/v1/admin/overrides 403" {
			t.Errorf("Hermes answered the forged request %q, want 403 (cross-origin)", req)
		}
	}
	// Two ticks after the attempt: nothing is pinned.
	after := time.Now()
	testenv.Eventually(t, 30*time.Second, "two ticks after the attempt", func() bool {
		return web.StatusOf(r.View()).LastTick.After(after.Add(time.Second))
	})
	if o := web.StatusOf(r.View()).Services[0].Override; o != nil {
		t.Errorf("a cross-origin form set an override: %+v", o)
	}
}
