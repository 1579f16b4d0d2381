package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestReloadKeepsOpenStreams: a stream open across a reload completes on
// the routes it began on and is recorded; later requests take the new
// routes; a bad file keeps them, logs one line and sets
// hermes_proxy_config_last_reload_successful to 0.
func TestReloadKeepsOpenStreams(t *testing.T) {
	held, release, _ := holdingUpstream(t)
	echo, got := echoUpstream(t)
	path := filepath.Join(t.TempDir(), "proxy.yaml")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(fmt.Sprintf("routes:\n  - name: free\n    upstream: %s\n", held))
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	reg := prometheus.NewRegistry()
	p, err := New(cfg, reg, logger)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReloader(path, p, reg, logger)
	if err != nil {
		t.Fatal(err)
	}
	base := serveFront(t, p)

	resp, err := http.DefaultClient.Do(chatRequest(t, base+"/free/v1", true))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body := bufio.NewReader(resp.Body)
	if _, err := body.ReadString('\n'); err != nil {
		t.Fatal(err)
	}

	write(fmt.Sprintf("routes:\n  - name: free\n    upstream: %s\n  - name: paid\n    upstream: %s\n", echo, echo))
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	close(release)
	rest, err := io.ReadAll(body)
	if err != nil || !strings.HasSuffix(string(rest), "data: [DONE]\n\n") {
		t.Fatalf("the open stream did not complete: %q, %v", rest, err)
	}
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} 1`)
	for _, rt := range []string{"free", "paid"} {
		if reply := call(http.DefaultClient, chatRequest(t, base+"/"+rt+"/v1", false)); reply.status != http.StatusOK {
			t.Fatalf("%s after the reload: %d", rt, reply.status)
		}
	}
	got.mu.Lock()
	n := len(got.reqs)
	got.mu.Unlock()
	if n != 2 {
		t.Fatalf("the new upstream got %d requests, want 2", n)
	}
	page := scrape(t, reg)
	if !strings.Contains(page, "hermes_proxy_config_last_reload_successful 1\n") || !strings.Contains(page, "hermes_proxy_config_last_reload_success_timestamp_seconds ") {
		t.Errorf("reload series after a good reload:\n%s", page)
	}

	write("routes:\n  - name: free\n    upstream: ftp://nowhere\n    retries: 3\n")
	logs.Reset()
	if err := r.Reload(); err == nil {
		t.Fatal("a bad file reloaded")
	}
	if lines := strings.Count(logs.String(), "\n"); lines != 1 || !strings.Contains(logs.String(), "proxy.yaml:4: routes[0].retries: unknown key") {
		t.Errorf("a bad reload logs one line with its problems; got %d:\n%s", lines, logs.String())
	}
	if reply := call(http.DefaultClient, chatRequest(t, base+"/paid/v1", false)); reply.status != http.StatusOK {
		t.Errorf("paid after a bad reload: %d", reply.status)
	}
	if page := scrape(t, reg); !strings.Contains(page, "hermes_proxy_config_last_reload_successful 0\n") {
		t.Errorf("reload series after a bad reload:\n%s", page)
	}
}
