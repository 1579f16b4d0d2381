package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
)

// startRun runs `hermes run` in this process with the shipped policy (its
// Prometheus is unreachable: the HTTP side is what these tests are about)
// and the given flags; it stops it at the end of the test.
func startRun(t *testing.T, flags ...string) (addr string, logs *testenv.Buffer) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(cfg, rules.DefaultYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	addr = testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	logs = &testenv.Buffer{}
	done := make(chan int, 1)
	args := append([]string{"run", "--config", cfg, "--web.listen-address", addr, "--audit.file", filepath.Join(dir, "audit.jsonl")}, flags...)
	go func() { done <- run(ctx, args, logs, logs) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("hermes run exited %d:\n%s", code, logs.String())
		}
	})
	testenv.Eventually(t, 30*time.Second, "hermes run listening", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return addr, logs
}

func TestRunRefusesAnEmptyTokenFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(cfg, rules.DefaultYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"empty": "", "blank": " \n\t\n"} {
		token := filepath.Join(dir, name)
		if err := os.WriteFile(token, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"run", "--config", cfg, "--web.enable-admin-api", "--web.admin-token-file", token}, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "--web.admin-token-file") || !strings.Contains(errb.String(), "holds no token") {
			t.Errorf("run with a %s token file: exit %d %s", name, code, errb.String())
		}
		errb.Reset()
		code = run(context.Background(), []string{"ctl", "--token-file", token, "status"}, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "holds no token") {
			t.Errorf("ctl with a %s token file: exit %d %s", name, code, errb.String())
		}
	}
	bad := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(bad, []byte("tls_server_config:\n  cert_file: /nonexistent.crt\n  key_file: /nonexistent.key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"run", "--config", cfg, "--web.config.file", bad}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--web.config.file") {
		t.Errorf("run with a broken web config: exit %d %s", code, errb.String())
	}
}

// TestRunServesTLSAndBasicAuth starts `hermes run` with an exporter-toolkit
// web configuration: plain HTTP is refused, HTTPS needs the password.
func TestRunServesTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webCfg := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(webCfg, []byte("tls_server_config:\n  cert_file: "+certFile+"\n  key_file: "+keyFile+
		"\nbasic_auth_users:\n  alice: "+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, _ := startRun(t, "--web.config.file", webCfg)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(url, user, pass string) int {
		t.Helper()
		req, err := http.NewRequest("GET", url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("https://"+addr+"/api/v1/status", "", ""); code != http.StatusUnauthorized {
		t.Errorf("HTTPS without a password: %d, want 401", code)
	}
	if code := get("https://"+addr+"/api/v1/status", "alice", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("HTTPS with a wrong password: %d, want 401", code)
	}
	if code := get("https://"+addr+"/api/v1/status", "alice", "s3cret"); code != http.StatusOK {
		t.Errorf("HTTPS with the password: %d, want 200", code)
	}
	if code := get("http://"+addr+"/api/v1/status", "alice", "s3cret"); code != http.StatusBadRequest {
		t.Errorf("plain HTTP to the TLS port: %d, want 400", code)
	}
}

// TestRunClosesSlowBodies holds a request body open: the server must drop
// the connection after --web.read-timeout instead of waiting for ever.
func TestRunClosesSlowBodies(t *testing.T) {
	addr, _ := startRun(t, "--web.enable-admin-api", "--web.read-timeout", "1s")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("POST /api/v1/admin/overrides HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() {
		_, err := bufio.NewReader(c).ReadString(0) // returns when the server closes
		closed <- err
	}()
	select {
	case <-closed:
	case <-time.After(60 * time.Second): // a generous bound, far above the 1 s timeout
		t.Fatal("the connection with an unfinished body is still open after 60 s")
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hermes"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestRunLimitsConnections holds --web.max-connections connections open:
// a further one must not be served until one of them closes.
func TestRunLimitsConnections(t *testing.T) {
	addr, _ := startRun(t, "--web.max-connections", "2")
	type conn struct {
		net.Conn
		r *bufio.Reader
	}
	dial := func() conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return conn{c, bufio.NewReader(c)}
	}
	send := func(c conn) {
		if _, err := c.Write([]byte("GET /-/healthy HTTP/1.1\r\nHost: " + addr + "\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
	}
	answer := func(c conn) (int, error) {
		resp, err := http.ReadResponse(c.r, nil)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	roundTrip := func(c conn) {
		send(c)
		if code, err := answer(c); err != nil || code != http.StatusOK {
			t.Fatalf("GET /-/healthy on a held connection: %d %v", code, err)
		}
	}
	held := []conn{dial(), dial()}
	for _, c := range held {
		roundTrip(c) // served, so the server has accepted it and keeps it alive
	}
	third := dial()
	send(third)
	answered := make(chan error, 1)
	go func() {
		code, err := answer(third)
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("status %d", code)
		}
		answered <- err
	}()
	// The server is busy serving the held connections while the third
	// waits: many round trips give its accept loop every chance to take
	// the third, had it no limit.
	for range 50 {
		roundTrip(held[0])
		roundTrip(held[1])
	}
	select {
	case err := <-answered:
		t.Fatalf("a third connection was served while two were held with --web.max-connections 2 (err %v)", err)
	default:
	}
	held[0].Close()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("the third connection, once one closed: %v", err)
		}
	case <-time.After(60 * time.Second): // a generous bound: it is served as soon as the server accepts it
		t.Fatal("the third connection is still not served 60 s after one of the two closed")
	}
}
