package nginx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBootstrapFromEmptyIncludeDir follows docs/actuators.md's order of
// first start with a real nginx whose proxy_pass names the upstream (as
// production configurations do): from an empty include directory `nginx
// -t` fails, WriteInitial writes the initial split, nginx then starts and
// serves it, Hermes's Apply takes over, and WriteInitial never overwrites
// a file that exists.
func TestBootstrapFromEmptyIncludeDir(t *testing.T) {
	n := configureNginx(t, "proxy_pass http://hermes_chat;")
	a := newActuator(t, with(n.options(), chatUpstreams(t, "")))
	nginxTest := func() (string, error) {
		out, err := exec.Command(n.bin, "-t", "-p", n.dir, "-c", n.conf, "-e", n.errLog).CombinedOutput()
		return string(out), err
	}
	if out, err := nginxTest(); err == nil || !strings.Contains(out, `host not found in upstream "hermes_chat"`) {
		t.Fatalf("nginx -t from an empty include dir: %v %s; want host not found in upstream", err, out)
	}

	initial := split(100, 0, 0)
	wrote, err := a.WriteInitial(initial)
	if want := []string{filepath.Join(n.dir, "hermes", "chat.conf")}; err != nil || !slices.Equal(wrote, want) {
		t.Fatalf("WriteInitial = %q, %v; want %q", wrote, err, want)
	}
	if out, err := nginxTest(); err != nil {
		t.Fatalf("nginx -t after WriteInitial: %v %s", err, out)
	}
	n.start()
	wantSplit(t, n, initial)
	if got, err := a.Current(context.Background()); err != nil || !got["chat"].Equal(initial["chat"]) {
		t.Errorf("Current after the bootstrap = %+v, %v; want %+v", got, err, initial)
	}

	// Hermes runs: its first Apply reloads the running nginx.
	moved := split(0, 100, 0)
	applyAndWait(t, n, a, moved)
	wantSplit(t, n, moved)
	before, err := os.ReadFile(a.IncludePath("chat"))
	if err != nil {
		t.Fatal(err)
	}
	if wrote, err := a.WriteInitial(initial); err != nil || len(wrote) != 0 {
		t.Errorf("WriteInitial over an existing file = %q, %v; want nothing written", wrote, err)
	}
	if after, _ := os.ReadFile(a.IncludePath("chat")); string(after) != string(before) {
		t.Errorf("WriteInitial changed an existing include file:\n%s\nwas\n%s", after, before)
	}
}
