package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/nginxconf"
)

// NginxConf writes the nginx.conf of a test nginx run from its own
// prefix dir (daemon off, one master and one worker, so weighted round
// robin splits exactly; its temp paths under dir/tmp) and returns its
// path. Its http block includes each of includes (globs relative to dir,
// such as "hermes/*.conf", whose directories it makes) and serves listen
// with location / of body. The prologue is nginxconf.Conf's, the lab's too.
func NginxConf(t testing.TB, dir, listen, body string, includes ...string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	var inc string
	for _, g := range includes {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(g)), 0o755); err != nil {
			t.Fatal(err)
		}
		inc += fmt.Sprintf("    include %s;\n", g)
	}
	conf := nginxconf.Conf(dir, 256, fmt.Sprintf(`%s    server {
        listen %s;
        location / {
            %s
        }
    }
`, inc, listen, body))
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// StartNginx starts the nginx binary bin from prefix dir with conf,
// logging to errLog, and waits until it listens on addr. When t ends it
// is asked to quit gracefully (SIGQUIT, nginx's graceful shutdown; SIGTERM
// is its fast one), then killed, by its PID.
func StartNginx(t testing.TB, bin, dir, conf, errLog, addr string) *Process {
	t.Helper()
	p := Start(t, "nginx", exec.Command(bin, "-p", dir, "-c", conf, "-e", errLog))
	p.StopSignal, p.StopTimeout = syscall.SIGQUIT, 5*time.Second
	WaitUntil(t, 10*time.Second, p, func() error {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return err
		}
		return c.Close()
	})
	return p
}
