package web

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/hermes-failover/hermes/web/api"
)

// guard protects the endpoints that move traffic or reload the
// configuration. Like Prometheus, each group is closed until a flag opens
// it; once open, a browser's cross-origin request is refused (the CSRF
// check of net/http, which reads Sec-Fetch-Site, then Origin against
// Host), and a bearer token is required when one is configured.
type guard struct {
	csrf  *http.CrossOriginProtection
	token string
}

// endpointGroup is a set of endpoints one flag opens.
type endpointGroup struct {
	name    string // in messages: "admin API"
	flag    string // the flag that opens it
	enabled bool
}

func newGuard(token string) *guard {
	return &guard{csrf: http.NewCrossOriginProtection(), token: token}
}

// wrap returns next guarded as a member of g.
func (gd *guard) wrap(g endpointGroup, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !g.enabled {
			writeError(w, api.ErrorForbidden, fmt.Errorf("the %s is not enabled; start Hermes with %s to enable it", g.name, g.flag))
			return
		}
		if err := gd.csrf.Check(r); err != nil {
			writeError(w, api.ErrorForbidden, fmt.Errorf("%s refused: %w (send it from the same origin, or without a browser)", g.name, err))
			return
		}
		if gd.token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(gd.token)) != 1 {
				writeError(w, api.ErrorUnauthorized, errors.New("admin token required"))
				return
			}
		}
		next(w, r)
	}
}

// requireJSON refuses a body that is not declared as JSON: an HTML form
// can send text/plain that happens to parse as JSON, never
// application/json.
func requireJSON(w http.ResponseWriter, r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		writeError(w, api.ErrorUnsupportedMediaType, fmt.Errorf("want Content-Type: application/json, got %q", ct))
		return false
	}
	return true
}
