package nginxconf_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/internal/nginxconf"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestConfPassesNginx checks a Conf with a server in its http block with
// the real nginx (nginx -t), and that everything nginx writes stays under
// the prefix dir.
func TestConfPassesNginx(t *testing.T) {
	bin := testenv.Binary(t, "nginx")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := nginxconf.Conf(dir, 64, "    server {\n        listen "+testenv.FreeAddr(t)+";\n        location / { return 204; }\n    }\n")
	for _, want := range []string{"daemon off;", "worker_processes 1;", "worker_connections 64;", "pid " + dir + "/nginx.pid;",
		"error_log " + dir + "/error.log", "proxy_temp_path " + dir + "/tmp/proxy;", "location / { return 204; }"} {
		if !strings.Contains(conf, want) {
			t.Errorf("conf lacks %q:\n%s", want, conf)
		}
	}
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-t", "-p", dir, "-c", path, "-e", filepath.Join(dir, "error.log")).CombinedOutput()
	if err != nil {
		t.Fatalf("nginx -t: %v\n%s\n%s", err, out, conf)
	}
}
