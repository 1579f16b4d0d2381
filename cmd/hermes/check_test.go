package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

func TestCheckDefault(t *testing.T) {
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("config OK: %d signals, %d services, %d alert rules\n", len(cfg.Signals), len(cfg.Services), len(cfg.Alerts))
	// The at-scale policy is the default one reading recorded series: as
	// many signals, services and alert rules.
	for _, args := range [][]string{nil, {"--config", "../../rules/hermes.yaml"}, {"--config", "../../rules/hermes-at-scale.yaml"}} {
		var stdout, stderr bytes.Buffer
		if code := checkCmd(args, &stdout, &stderr); code != 0 {
			t.Fatalf("check %q = %d, stderr:\n%s", args, code, stderr.String())
		}
		if got := stdout.String(); got != want {
			t.Errorf("check %q stdout = %q, want %q", args, got, want)
		}
		if stderr.Len() != 0 {
			t.Errorf("check %q stderr = %q", args, stderr.String())
		}
	}
}

func TestCheckFixtures(t *testing.T) {
	files, err := filepath.Glob("../../testdata/config/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := []string{"--config", path}
			if strings.HasSuffix(path, ".good.yaml") {
				// Good fixtures name hosts' paths (/etc/nginx/…) that this
				// machine need not have; TestCheckActuators checks those.
				args = append(args, "--syntax-only")
			}
			code := checkCmd(args, &stdout, &stderr)
			if strings.HasSuffix(path, ".good.yaml") {
				if code != 0 {
					t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
				}
				return
			}
			if code != 1 {
				t.Fatalf("exit %d, want 1; stdout %q", code, stdout.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out := stderr.String()
			for line := range strings.Lines(string(data)) {
				want, ok := strings.CutPrefix(strings.TrimSpace(line), "# want:")
				if !ok {
					break
				}
				if !strings.Contains(out, strings.TrimSpace(want)) {
					t.Errorf("stderr does not contain %q:\n%s", want, out)
				}
			}
			// One problem per line, each naming the file.
			for line := range strings.Lines(out) {
				if !strings.HasPrefix(line, path+":") {
					t.Errorf("line %q does not start with %q", line, path+":")
				}
			}
		})
	}
}

func TestCheckUsage(t *testing.T) {
	for _, args := range [][]string{{"--nosuch"}, {"extra"}, {"--config"}} {
		var stdout, stderr bytes.Buffer
		if code := checkCmd(args, &stdout, &stderr); code != 2 {
			t.Errorf("check %q = %d, want 2", args, code)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := checkCmd([]string{"--config", "does-not-exist.yaml"}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "does-not-exist.yaml") {
		t.Errorf("missing file: code %d, stderr %q", code, stderr.String())
	}
}

// TestCheckActuators: check builds the actuators as run does and reports
// what cannot work on this machine, and actuators overwriting each other,
// with the file:line of the option at fault; run refuses the same.
func TestCheckActuators(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-dir", "split.json")
	split := filepath.Join(dir, "split.json")
	cases := []struct {
		name, actuators string
		// key is the option whose line the problem must name.
		key, want  string
		syntaxOnly bool // --syntax-only still reports it
	}{
		{"missing directory", "  - type: file\n    path: " + missing + "\n",
			"path:", "actuators[0] (file): path: directory " + filepath.Dir(missing) + " does not exist", false},
		{"missing nginx binary", "  - type: nginx\n    include_path: " + dir + "/{service}.conf\n    nginx_binary: " + dir + "/nginx\n" +
			"    upstreams:\n      chat: {free: [127.0.0.1:8001], paid-standard: [127.0.0.1:8002], paid-premium: [127.0.0.1:8003]}\n",
			"nginx_binary:", "actuators[0] (nginx): nginx_binary: exec: \"" + dir + "/nginx\": stat " + dir + "/nginx: no such file or directory", false},
		{"two actuators on one file", "  - {name: a, type: file, path: " + split + "}\n  - name: b\n    type: file\n    path: " + split + "\n",
			"- name: b", "actuators[1] (b): writes " + split + ", as actuators[0] (a) does: they would overwrite each other", true},
		{"nginx include over a state file", "  - {type: file, path: " + dir + "/chat.conf}\n  - type: nginx\n    include_path: " + dir + "/{service}.conf\n" +
			"    upstreams:\n      chat: {free: [127.0.0.1:8001], paid-standard: [127.0.0.1:8002], paid-premium: [127.0.0.1:8003]}\n",
			"- type: nginx", "actuators[1] (nginx): writes " + dir + "/chat.conf, as actuators[0] (file) does", true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := strings.Replace(string(rules.DefaultYAML), "actuators: []\n", "actuators:\n"+c.actuators, 1)
			path := filepath.Join(dir, fmt.Sprintf("hermes%d.yaml", i))
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			line := 0
			for n, l := range strings.Split(body, "\n") {
				if strings.Contains(l, c.key) && n+1 > strings.Count(body[:strings.Index(body, "actuators:\n")], "\n") {
					line = n + 1
					break
				}
			}
			want := fmt.Sprintf("%s:%d: %s", path, line, c.want)
			for _, args := range [][]string{{"check", "--config", path}, {"check", "--syntax-only", "--config", path}} {
				code, out, errb := hermes(t, args...)
				syntaxOnly := len(args) == 4
				if syntaxOnly && !c.syntaxOnly {
					if code != 0 {
						t.Errorf("%v: exit %d, stderr %s", args, code, errb)
					}
					continue
				}
				if code != 1 || out != "" || !strings.Contains(errb, want) {
					t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 1 and %q", args, code, errb, want)
				}
			}
			code, _, errb := hermes(t, "run", "--config", path, "--web.listen-address", "127.0.0.1:0", "--audit.file", filepath.Join(dir, "audit.log"))
			if code != 1 || !strings.Contains(errb, want) {
				t.Errorf("run: exit %d, stderr:\n%s\nwant exit 1 and %q", code, errb, want)
			}
		})
	}
	// The same actuators where the machine has what they need.
	good := strings.Replace(string(rules.DefaultYAML), "actuators: []\n", "actuators:\n  - type: file\n    path: "+split+"\n", 1)
	path := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errb := hermes(t, "check", "--config", path); code != 0 || !strings.HasPrefix(out, "config OK") {
		t.Errorf("good: exit %d, stderr %s", code, errb)
	}
}

// TestCheckProbeReplyRules: hermes check validates a prober
// configuration's reply rules (rejected_codes, max_body_bytes), each
// problem with its file and line.
func TestCheckProbeReplyRules(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := checkCmd([]string{"--config", "../../probe/testdata/probe_rejected_codes.good.yaml"}, &stdout, &stderr); code != 0 {
		t.Fatalf("good: exit %d, stderr:\n%s", code, stderr.String())
	}
	path := "../../probe/testdata/probe_rejected_codes.bad.yaml"
	stdout.Reset()
	if code := checkCmd([]string{"--config", path}, &stdout, &stderr); code != 1 {
		t.Fatalf("bad: exit %d, want 1; stdout %q", code, stdout.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		want, ok := strings.CutPrefix(strings.TrimSpace(line), "# want:")
		if !ok {
			break
		}
		line := "12"
		if strings.Contains(want, "rejected_codes") {
			line = "14"
		}
		if !strings.Contains(stderr.String(), "probe_rejected_codes.bad.yaml:"+line+": "+strings.TrimSpace(want)) {
			t.Errorf("stderr does not contain %q at line %s:\n%s", want, line, stderr.String())
		}
	}
}

// TestCheckWriteInitial follows docs/actuators.md's first start of nginx:
// from an empty include directory `hermes check --write-initial` writes
// each service's include with its first route at 100 %, after which a
// real `nginx -t` passes although nginx.conf names the upstream; a second
// run keeps the file.
func TestCheckWriteInitial(t *testing.T) {
	bin := testenv.Binary(t, "nginx")
	dir := t.TempDir()
	for _, d := range []string{"hermes", "tmp"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(`daemon off;
pid `+dir+`/nginx.pid;
error_log `+dir+`/error.log;
events {}
http {
    access_log off;
    client_body_temp_path `+dir+`/tmp/b; proxy_temp_path `+dir+`/tmp/p; fastcgi_temp_path `+dir+`/tmp/f; uwsgi_temp_path `+dir+`/tmp/u; scgi_temp_path `+dir+`/tmp/s;
    include hermes/*.conf;
    server { listen 127.0.0.1:1; location / { proxy_pass http://hermes_chat; } }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	include := filepath.Join(dir, "hermes", "chat.conf")
	body := strings.Replace(string(rules.DefaultYAML), "actuators: []\n", "actuators:\n  - type: nginx\n    include_path: "+filepath.Join(dir, "hermes", "{service}.conf")+
		"\n    nginx_binary: "+bin+"\n    prefix: "+dir+"\n    config_file: "+conf+
		"\n    upstreams:\n      chat: {free: [127.0.0.1:8001], paid-standard: [127.0.0.1:8002], paid-premium: [127.0.0.1:8003]}\n", 1)
	path := filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	nginxTest := func() (string, error) {
		out, err := exec.Command(bin, "-t", "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log")).CombinedOutput()
		return string(out), err
	}
	if out, err := nginxTest(); err == nil || !strings.Contains(out, "host not found in upstream") {
		t.Fatalf("nginx -t before: %v %s", err, out)
	}
	code, out, errb := hermes(t, "check", "--config", path, "--write-initial")
	if code != 0 || !strings.Contains(out, "wrote the initial state of nginx: "+include+"\n") {
		t.Fatalf("check --write-initial: exit %d\n%s%s", code, out, errb)
	}
	data, err := os.ReadFile(include)
	if err != nil || !strings.Contains(string(data), "server 127.0.0.1:8001 weight=") || !strings.Contains(string(data), "server 127.0.0.1:8002 down;") {
		t.Errorf("initial include %v:\n%s", err, data)
	}
	if out, err := nginxTest(); err != nil {
		t.Errorf("nginx -t after check --write-initial: %v %s", err, out)
	}
	if code, out, errb := hermes(t, "check", "--config", path, "--write-initial"); code != 0 || !strings.Contains(out, "nothing written") {
		t.Errorf("second check --write-initial: exit %d\n%s%s", code, out, errb)
	}
}

// TestCheckProxyConfig: hermes check recognises a proxy configuration and
// reports each problem with its file and line.
func TestCheckProxyConfig(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := checkCmd([]string{"--config", "../../proxy/testdata/proxy.good.yaml"}, &stdout, &stderr); code != 0 || stdout.String() != "proxy config OK: 2 routes\n" {
		t.Fatalf("good: exit %d, stdout %q, stderr:\n%s", code, stdout.String(), stderr.String())
	}
	path := "../../proxy/testdata/proxy.bad.yaml"
	stdout.Reset()
	if code := checkCmd([]string{"--config", path}, &stdout, &stderr); code != 1 {
		t.Fatalf("bad: exit %d, want 1; stdout %q", code, stdout.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(data)) {
		if want, ok := strings.CutPrefix(strings.TrimSpace(line), "# want: "); ok {
			n++
			if !strings.Contains(stderr.String(), path+":"+want) {
				t.Errorf("stderr does not contain %q:\n%s", path+":"+want, stderr.String())
			}
		}
	}
	if got := strings.Count(strings.TrimSpace(stderr.String()), "\n") + 1; n == 0 || got != n {
		t.Errorf("%d problems reported, want %d:\n%s", got, n, stderr.String())
	}
}
