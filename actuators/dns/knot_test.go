package dns

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// testZone is the zone every knotd of the tests serves.
const testZone = "hermes.test."

// knot is a knotd child process serving testZone on a loopback port, with
// a TSIG key allowed to update it.
type knot struct {
	addr   string // 127.0.0.1:port
	secret string // base64 TSIG secret of key "hermes-update."
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
	bin := testenv.Binary(t, "knotd")
	dir := t.TempDir()
	k := &knot{addr: testenv.FreeAddr(t), secret: secret}
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
	p := testenv.Start(t, "knotd", exec.Command(bin, "-c", filepath.Join(dir, "knot.conf")))
	testenv.WaitUntil(t, 15*time.Second, p, func() error {
		_, err := k.serial()
		return err
	})
	return k
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

// freeAddr is testenv.FreeAddr (a port free for both TCP and UDP), for
// tests that want an address where nothing listens.
func freeAddr(t *testing.T) string {
	t.Helper()
	return testenv.FreeAddr(t)
}

func newSecret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}
