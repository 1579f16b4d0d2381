package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// syncBuffer is a log that the command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestProxyReloadEndpoint runs `hermes proxy --web.enable-lifecycle`: POST
// /-/reload serves a changed file's routes, refuses a bad file with its
// problems (500) and keeps the routes; without the flag it is 403.
func TestProxyReloadEndpoint(t *testing.T) {
	up := http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "upstream "+r.URL.Path)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go up.Serve(l)
	defer up.Close()
	upstream := "http://" + l.Addr().String()

	path := filepath.Join(t.TempDir(), "proxy.yaml")
	write := func(routes ...string) {
		var b strings.Builder
		b.WriteString("routes:\n")
		for _, r := range routes {
			fmt.Fprintf(&b, "  - name: %s\n    upstream: %s\n", r, upstream)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("free")
	for _, lifecycle := range []bool{true, false} {
		t.Run(fmt.Sprintf("lifecycle=%v", lifecycle), func(t *testing.T) {
			addr := testenv.FreeAddr(t)
			base := "http://" + addr
			args := []string{"proxy", "--config", path, "--web.listen-address", addr}
			if lifecycle {
				args = append(args, "--web.enable-lifecycle")
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan int)
			var stderr syncBuffer
			go func() { done <- run(ctx, args, io.Discard, &stderr) }()
			defer func() {
				cancel()
				if code := <-done; code != 0 {
					t.Errorf("exit %d: %s", code, stderr.String())
				}
			}()
			get := func(p string) (int, string) {
				resp, err := http.Get(base + p)
				if err != nil {
					return 0, err.Error()
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			reload := func() (int, string) {
				resp, err := http.Post(base+"/-/reload", "", nil)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			testenv.EventuallyDetail(t, 10*time.Second, "the proxy serves", func() (bool, string) {
				code, body := get("/-/ready")
				return code == http.StatusOK, body + stderr.String()
			})
			write("free", "paid")
			if !lifecycle {
				if code, _ := reload(); code != http.StatusForbidden {
					t.Errorf("reload without --web.enable-lifecycle: %d", code)
				}
				write("free")
				return
			}
			if code, body := reload(); code != http.StatusOK {
				t.Fatalf("reload: %d %s", code, body)
			}
			if code, body := get("/paid/v1/models"); code != http.StatusOK || body != "upstream /v1/models" {
				t.Errorf("the reloaded route: %d %q", code, body)
			}
			write("free", "paid", "Paid")
			if code, body := reload(); code != http.StatusInternalServerError || !strings.Contains(body, "proxy.yaml:6: routes[2].name") {
				t.Errorf("bad reload: %d %q", code, body)
			}
			if code, _ := get("/paid/v1/models"); code != http.StatusOK {
				t.Errorf("after a bad reload: %d", code)
			}
			write("free")
		})
	}
}
