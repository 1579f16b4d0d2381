package deploy

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/faults"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestCompanionUnits verifies hermes-proxy.service and
// hermes-probe.service with systemd-analyze and runs each one's ExecStart
// as it is, /etc/hermes moved to a temporary directory and the listen
// address to a free one, against a real upstream (the fault server): the
// process serves (/-/ready), the proxy passes a call to its route and
// records it, takes a new route from its file on SIGHUP (the unit's
// ExecReload), and each stops on SIGTERM (systemctl stop) with exit 0.
func TestCompanionUnits(t *testing.T) {
	hermes := testenv.HermesBinary(t)
	srv := faults.Start(t)
	for _, c := range []struct {
		unit, command, port, config, file string
	}{
		{"hermes-proxy.service", "proxy", ":9799", "proxy.yaml",
			"routes:\n  - name: free\n    upstream: " + srv.URL + "/" + string(faults.Healthy) + "\n"},
		{"hermes-probe.service", "probe", ":9798", "probe.yaml",
			"targets:\n  - route: free\n    base_url: " + srv.BaseURL(faults.Healthy) + "\n    model: " + faults.Model + "\n"},
	} {
		t.Run(c.unit, func(t *testing.T) {
			dir := t.TempDir()
			text := verifyUnit(t, c.unit, hermes, dir)

			args := execStart(t, text)
			if len(args) < 2 || args[0] != hermes || args[1] != c.command {
				t.Fatalf("ExecStart = %q, want %s %s …", args, hermes, c.command)
			}
			addr := testenv.FreeAddr(t)
			moved := strings.NewReplacer("/etc/hermes", dir, c.port, addr)
			for i := range args {
				args[i] = moved.Replace(args[i])
			}
			config := filepath.Join(dir, c.config)
			if !strings.Contains(strings.Join(args, " "), config) {
				t.Fatalf("ExecStart = %q: want --config /etc/hermes/%s", args, c.config)
			}
			if err := os.WriteFile(config, []byte(c.file), 0o644); err != nil {
				t.Fatal(err)
			}
			base := "http://" + addr
			s := testenv.NewServer(t, c.command, dir, base+"/-/ready", args[0], args[1:]...)
			s.Start(t)
			p := s.Process()
			if c.command == "proxy" {
				post(t, base+"/free/v1/chat/completions", http.StatusOK)
				line := `llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} 1`
				testenv.EventuallyDetail(t, 10*time.Second, line, func() (bool, string) {
					page := get(t, base+"/metrics")
					return strings.Contains(page, line+"\n"), page
				})
				// systemctl reload: a route added to the file is served.
				file := c.file + "  - name: paid\n    upstream: " + srv.URL + "/" + string(faults.Healthy) + "\n"
				if err := os.WriteFile(config, []byte(file), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := p.Signal(syscall.SIGHUP); err != nil {
					t.Fatal(err)
				}
				testenv.Eventually(t, 10*time.Second, "route paid served after SIGHUP", func() bool {
					return post(nil, base+"/paid/v1/chat/completions", 0) == http.StatusOK
				})
			}
			if err := p.Stop(); err != nil {
				t.Fatal(err)
			}
			if err := p.Err(); err != nil {
				t.Errorf("%s stopped by SIGTERM: %v, want exit 0:\n%s", c.command, err, p.LogTail(20))
			}
		})
	}
}

// post sends a chat completion to url and returns the status; with t set,
// it fails t unless the status is want.
func post(t *testing.T, url string, want int) int {
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"Say hello."}]}`, faults.Model)
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		if t != nil {
			t.Fatal(err)
		}
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if t != nil && resp.StatusCode != want {
		t.Fatalf("POST %s: %d %q, want %d", url, resp.StatusCode, b, want)
	}
	return resp.StatusCode
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
