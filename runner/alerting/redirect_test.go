package alerting

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	commoncfg "github.com/prometheus/common/config"

	"github.com/hermes-failover/hermes/rules/config"
)

// TestRedirectToAnotherHostCarriesNoSecrets: the Alertmanager client sent
// its http_headers to whatever host a redirect named (issue 31, item 11).
// An Alertmanager at 127.0.0.1 answers 307 to one at localhost: the
// second gets neither the header nor the bearer token.
func TestRedirectToAnotherHostCarriesNoSecrets(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	record := func(who string, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, who+" key="+r.Header.Get("X-Api-Key")+" auth="+r.Header.Get("Authorization"))
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("other", r)
	}))
	defer other.Close()
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	am := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("am", r)
		http.Redirect(w, r, otherURL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer am.Close()

	hc := commoncfg.DefaultHTTPClientConfig
	hc.HTTPHeaders = &commoncfg.Headers{Headers: map[string]commoncfg.Header{"X-Api-Key": {Secrets: []commoncfg.Secret{"s3cret"}}}}
	hc.Authorization = &commoncfg.Authorization{Type: "Bearer", Credentials: "t0ken"}
	a, err := newAlertmanager(config.AlertmanagerConfig{URL: am.URL, HTTPClient: hc}, 10)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := a.client.Post(a.endpoint, "application/json", strings.NewReader("[]"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	a.client.CloseIdleConnections()
	want := "am key=s3cret auth=Bearer t0ken\nother key= auth="
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(seen, "\n"); got != want {
		t.Errorf("requests:\n%s\nwant\n%s", got, want)
	}
}
