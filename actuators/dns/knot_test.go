package dns

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// testZone is the zone every knotd of the tests serves.
const testZone = "hermes.test."

// knot is a knotd child process serving testZone on a loopback port, with
// a TSIG key allowed to update it.
type knot struct {
	addr   string // 127.0.0.1:port
	secret string // base64 TSIG secret of key "hermes-update."
	logs   *lockedBuffer
}

// knotd finds the binary: Debian installs it in /usr/sbin, which a
// non-root PATH may lack. Outside CI a missing knotd skips the test; with
// CI=true it fails it.
func knotd(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("knotd"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/knotd"); err == nil {
		return "/usr/sbin/knotd"
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("knotd not found (apt-get install knot)")
	}
	t.Skip("knotd not found (apt-get install knot); skipping")
	return ""
}

// startKnot starts a knotd whose every file lives in a temporary
// directory, waits until it answers, and stops it (by its PID) when the
// test ends.
func startKnot(t *testing.T) *knot {
	t.Helper()
	return startKnotWithSecret(t, newSecret(t))
}

// startKnotWithSecret is startKnot with a given TSIG secret.
func startKnotWithSecret(t *testing.T, secret string) *knot {
	t.Helper()
	bin := knotd(t)
	dir := t.TempDir()
	k := &knot{addr: freeAddr(t), secret: secret, logs: &lockedBuffer{}}
	_, port, _ := net.SplitHostPort(k.addr)
	zoneFile := `$ORIGIN hermes.test.
$TTL 300
@    SOA ns1 hostmaster 1 3600 600 86400 30
@    NS  ns1
ns1  A   127.0.0.1
`
	conf := fmt.Sprintf(`server:
    rundir: "%[1]s"
    pidfile: "%[1]s/knot.pid"
    listen: 127.0.0.1@%[2]s
control:
    listen: "%[1]s/knot.sock"
database:
    storage: "%[1]s"
log:
  - target: stderr
    any: info
key:
  - id: hermes-update
    algorithm: hmac-sha256
    secret: %[3]s
acl:
  - id: update
    key: hermes-update
    action: update
template:
  - id: default
    storage: "%[1]s"
    file: "%%s.zone"
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: all
    semantic-checks: off
zone:
  - domain: %[4]s
    acl: update
`, dir, port, k.secret, testZone)
	for name, data := range map[string]string{"knot.conf": conf, testZone + "zone": zoneFile} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-c", filepath.Join(dir, "knot.conf"))
	cmd.Stdout, cmd.Stderr = k.logs, k.logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting knotd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		// Stop exactly the process started here, by its PID.
		_ = syscall.Kill(pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("knotd log:\n%s", k.logs.String())
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := k.serial(); err == nil {
			return k
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("knotd exited early (%v):\n%s", err, k.logs.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("knotd did not answer on %s within 15s:\n%s", k.addr, k.logs.String())
		}
	}
}

// serial returns the zone's SOA serial.
func (k *knot) serial() (uint32, error) {
	rrs, err := k.lookup(testZone, dns.TypeSOA)
	if err != nil {
		return 0, err
	}
	if len(rrs) != 1 {
		return 0, fmt.Errorf("SOA: got %d records", len(rrs))
	}
	return rrs[0].(*dns.SOA).Serial, nil
}

// lookup queries knotd directly, as a client would.
func (k *knot) lookup(name string, rrtype uint16) ([]dns.RR, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), rrtype)
	c := &dns.Client{Net: "tcp", Timeout: 2 * time.Second}
	r, _, err := c.Exchange(m, k.addr)
	if err != nil {
		return nil, err
	}
	if r.Rcode != dns.RcodeSuccess && r.Rcode != dns.RcodeNameError {
		return nil, fmt.Errorf("%s %s: %s", name, dns.TypeToString[rrtype], dns.RcodeToString[r.Rcode])
	}
	var out []dns.RR
	for _, rr := range r.Answer {
		if rr.Header().Rrtype == rrtype {
			out = append(out, rr)
		}
	}
	return out, nil
}

// freeAddr returns a loopback address whose port is free for both TCP and
// UDP right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		u, err := net.ListenPacket("udp", addr)
		l.Close()
		if err == nil {
			u.Close()
			return addr
		}
	}
	t.Fatal("no free loopback port for TCP and UDP")
	return ""
}

func newSecret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// lockedBuffer collects knotd's output; the process writes while the test
// may read.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
