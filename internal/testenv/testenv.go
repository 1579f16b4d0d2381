// Package testenv runs the real servers that tests need (Prometheus,
// VictoriaMetrics, Alertmanager, nginx, knotd, Unleash…) as child processes
// on 127.0.0.1, and holds the helpers that tests of several packages share.
//
// A test finds the program with [Binary] (skipped when it is missing,
// failed when $CI is "true"), picks a port with [FreePort] or [FreeAddr],
// starts the server with [Start] (its output in a log file, stopped by its
// PID when the test ends, the log's tail printed if the test failed), and
// waits for it with [WaitHTTP] or [WaitUntil]. A server that a test stops
// and starts again on the same address and data is a [Server]; one whose
// life is not one test's — shared by a package's tests — is started with
// [Launch] and stopped by its owner.
//
// Ready-made servers: [StartTSDB] (Prometheus or VictoriaMetrics),
// [StartAlertmanager] with a [Webhook] for its receivers, and
// [HermesBinary] for Hermes itself. In-process stand-ins: [FakeAlertmanager].
// Conditions are awaited with [Eventually] and [EventuallyDetail], never
// with fixed sleeps; [Go] runs a loop until the test ends.
package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Binary returns the path of the program name, looked up on $PATH and
// then in /usr/sbin (where Debian installs daemons such as nginx and
// knotd, and which a non-root $PATH may lack). When it is missing the test
// is skipped, or failed if $CI is "true".
func Binary(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p, err := exec.LookPath(filepath.Join("/usr/sbin", name)); err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found on $PATH or in /usr/sbin (scripts/install-deps.sh installs it)", name)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; it is required when CI=true")
	}
	t.Skip(msg)
	return ""
}

var ports struct {
	sync.Mutex
	given map[int]bool
}

// FreePort returns a loopback port that was free for both TCP and UDP a
// moment ago and that no other caller in this process got.
func FreePort(t testing.TB) int {
	t.Helper()
	ports.Lock()
	defer ports.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", l.Addr().String())
		l.Close()
		if err != nil {
			continue
		}
		u.Close()
		if !ports.given[port] {
			if ports.given == nil {
				ports.given = map[int]bool{}
			}
			ports.given[port] = true
			return port
		}
	}
	t.Fatal("testenv: no free loopback port for TCP and UDP")
	return 0
}

// FreeAddr returns "127.0.0.1:PORT" for a port from [FreePort].
func FreeAddr(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", FreePort(t))
}
