package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/faults"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestCurl calls the proxy with curl as a user would, straight (the
// proxy's route as a client's base URL) and through nginx: a chat
// completion, the same streamed (-N), and one whose request is 1.5 MB
// (a long document in the prompt, past the proxy's read-ahead; curl asks
// the proxy to continue, nginx reads it whole first). curl gets what it
// gets straight from the upstream, byte for byte, and the proxy records
// each call ok, the key in none of its output.
func TestCurl(t *testing.T) {
	curl := testenv.Binary(t, "curl")
	srv := faults.Start(t)
	s := startRoutes(t, []stackRoute{{name: "healthy", upstream: srv.URL + "/" + string(faults.Healthy)}})
	dir := t.TempDir()
	body := func(name string, stream bool, prompt string) string {
		data, err := json.Marshal(map[string]any{
			"model":    faults.Model,
			"messages": []any{map[string]any{"role": "user", "content": prompt}},
			"stream":   stream,
		})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	long := "Summarise this document. " + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 1<<15)
	requests := []struct {
		name, file     string
		stream, expect bool
	}{
		{"plain", body("plain.json", false, "Say hello."), false, false},
		{"streamed", body("stream.json", true, "Say hello."), true, false},
		// curl asks for a body this long itself; the header makes it
		// ask whatever its version.
		{"long prompt", body("long.json", false, long), false, true},
	}
	run := func(t *testing.T, url, file string, stream, expect bool) (stdout, stderr []byte) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		args := []string{"-sS", "-v", "--fail-with-body", "-H", "Content-Type: application/json", "-H", "Authorization: Bearer " + secret, "--data-binary", "@" + file}
		if stream {
			args = append(args, "-N")
		}
		if expect {
			args = append(args, "-H", "Expect: 100-continue")
		}
		cmd := exec.CommandContext(ctx, curl, append(args, url)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("curl %s: %v\n%s", url, err, errb.String())
		}
		return out.Bytes(), errb.Bytes()
	}
	calls := 0
	for _, r := range requests {
		want, _ := run(t, srv.BaseURL(faults.Healthy)+"/chat/completions", r.file, r.stream, r.expect)
		for via, base := range map[string]string{"straight": s.proxy, "through nginx": s.nginx} {
			got, verbose := run(t, base+"/healthy/v1/chat/completions", r.file, r.stream, r.expect)
			calls++
			if !bytes.Equal(got, want) {
				t.Errorf("%s, %s: curl got %q\nstraight from the upstream %q", r.name, via, got, want)
			}
			if r.expect && via == "straight" && !bytes.Contains(verbose, []byte("< HTTP/1.1 100 Continue")) {
				t.Errorf("%s, %s: curl asked to continue and the proxy did not say so:\n%s", r.name, via, verbose)
			}
		}
	}
	line := fmt.Sprintf(`llm_gateway_requests_total{code="200",reason="",route="healthy",verdict="ok"} %d`, calls)
	testenv.EventuallyDetail(t, 10*time.Second, line, func() (bool, string) {
		_, page := scrape(t, s.proxy)
		return strings.Contains(page, line+"\n"), page
	})
	assertNoKey(t, s)
}
