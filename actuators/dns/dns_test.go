package dns

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/traffic"
)

// options is a dns actuator's configuration against k; records are the
// `records` key.
func options(k *knot, records map[string]any) map[string]any {
	return map[string]any{
		"server":  k.addr,
		"zone":    "hermes.test",
		"tsig":    map[string]any{"name": "hermes-update", "secret": k.secret},
		"records": records,
	}
}

// chatSRV is an srv-mode service with three routes at one priority.
func chatSRV() map[string]any {
	return map[string]any{
		"name": "_chat._tcp",
		"mode": "srv",
		"routes": map[string]any{
			"free":   map[string]any{"target": "free.example.net", "port": 443},
			"paid":   map[string]any{"target": "paid.example.net.", "port": 443},
			"backup": map[string]any{"target": "backup.example.net", "port": 8443},
		},
	}
}

func newActuator(t *testing.T, opts map[string]any, services ...string) *Actuator {
	t.Helper()
	a, err := New(actuatortest.Settings(Kind, opts, services...))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

func split(weights map[string]int) actuators.Splits {
	return actuators.Splits{"chat": {Weights: weights, RetriesEnabled: true}}
}

// srvSet reads name's SRV records from knotd as "target weight port
// priority", sorted.
func srvSet(t *testing.T, k *knot, name string) []string {
	t.Helper()
	rrs, err := k.lookup(name, dns.TypeSRV)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rr := range rrs {
		s := rr.(*dns.SRV)
		if s.Hdr.Ttl != DefaultTTL {
			t.Errorf("%s: TTL %d, want %d", s, s.Hdr.Ttl, DefaultTTL)
		}
		out = append(out, fmt.Sprintf("%s %d %d %d", s.Target, s.Weight, s.Port, s.Priority))
	}
	slices.Sort(out)
	return out
}

// values reads name's A, AAAA or CNAME values from knotd, sorted.
func values(t *testing.T, k *knot, name string, rrtype uint16) []string {
	t.Helper()
	rrs, err := k.lookup(name, rrtype)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rr := range rrs {
		switch rr := rr.(type) {
		case *dns.A:
			out = append(out, rr.A.String())
		case *dns.AAAA:
			out = append(out, rr.AAAA.String())
		case *dns.CNAME:
			out = append(out, rr.Target)
		}
	}
	slices.Sort(out)
	return out
}

func mustSerial(t *testing.T, k *knot) uint32 {
	t.Helper()
	s, err := k.serial()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustApply(t *testing.T, a *Actuator, d actuators.Splits) {
	t.Helper()
	if err := a.Apply(context.Background(), d); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

func wantWeights(t *testing.T, a *Actuator, svc string, want map[string]int) traffic.Split {
	t.Helper()
	got, err := a.Current(context.Background())
	if err != nil {
		t.Fatalf("Current: %v", err)
	}
	if !maps.Equal(got[svc].Weights, want) {
		t.Errorf("Current[%s].Weights = %v, want %v", svc, got[svc].Weights, want)
	}
	return got[svc]
}

// TestSuite runs the shared suite, each subtest against a fresh knotd:
// Changed is a move of the SOA serial, Break swaps in a wrong TSIG secret.
func TestSuite(t *testing.T) {
	var (
		k      *knot
		a      *Actuator
		last   uint32
		secret = newSecret(t)
		wrong  = newSecret(t)
	)
	actuatortest.Run(t, actuatortest.Harness{
		New: func(t *testing.T) actuators.Actuator {
			k = startKnotWithSecret(t, secret)
			a = newActuator(t, options(k, map[string]any{
				"chat": map[string]any{"name": "_chat._tcp", "mode": "srv", "routes": map[string]any{
					"free": map[string]any{"target": "free.example.net", "port": 443},
					"paid": map[string]any{"target": "paid.example.net", "port": 443},
				}},
				"embed": map[string]any{"name": "_embed._tcp", "mode": "srv", "routes": map[string]any{
					"embed-free": map[string]any{"target": "embed.example.net", "port": 443},
				}},
			}))
			last = mustSerial(t, k)
			return a
		},
		Changed: func(t *testing.T) bool {
			s := mustSerial(t, k)
			changed := s != last
			last = s
			return changed
		},
		Break:   func(t *testing.T) { a.cfg.TSIG.Secret = Secret(wrong) },
		Repair:  func(t *testing.T) { a.cfg.TSIG.Secret = Secret(secret) },
		Secrets: []string{secret, wrong},
	})
}

// TestUnchangedKeepsSerial re-applies the same split with other levels and
// reasons: no update is sent, so the serial stays.
func TestUnchangedKeepsSerial(t *testing.T) {
	k := startKnot(t)
	a := newActuator(t, options(k, map[string]any{"chat": chatSRV()}))
	mustApply(t, a, actuatortest.Shed())
	serial := mustSerial(t, k)
	d := actuatortest.Shed()
	chat := d["chat"]
	chat.Reasons, chat.Levels = []string{"other reason"}, nil
	d["chat"] = chat
	for range 3 {
		mustApply(t, a, d)
	}
	if s := mustSerial(t, k); s != serial {
		t.Errorf("SOA serial %d -> %d without a change", serial, s)
	}
}

// TestWrongKey checks a refused update says why, without the secret.
func TestWrongKey(t *testing.T) {
	k := startKnot(t)
	wrong := newSecret(t)
	for _, tc := range []struct {
		name string
		tsig map[string]any
		want []string
	}{
		{"wrong secret", map[string]any{"name": "hermes-update", "secret": wrong}, []string{"NOTAUTH", "bad TSIG key?", "dns: bad authentication"}},
		{"unknown key", map[string]any{"name": "nobody", "secret": k.secret}, []string{"NOTAUTH", "bad TSIG key?", "nobody"}},
		{"wrong algorithm", map[string]any{"name": "hermes-update", "algorithm": "hmac-sha512", "secret": k.secret}, []string{"NOTAUTH", "bad TSIG key?"}},
		{"unsigned", nil, []string{"NOTAUTH", "set tsig"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := options(k, map[string]any{"chat": chatSRV()})
			opts["tsig"] = tc.tsig
			if tc.tsig == nil {
				delete(opts, "tsig")
			}
			a := newActuator(t, opts)
			before := mustSerial(t, k)
			err := a.Apply(context.Background(), split(map[string]int{"free": 100}))
			if err == nil {
				t.Fatal("Apply with a bad key: nil error")
			}
			t.Logf("error: %v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, s := range []string{wrong, k.secret} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error reveals a secret: %v", err)
				}
			}
			if s := mustSerial(t, k); s != before {
				t.Errorf("serial moved %d -> %d on a refused update", before, s)
			}
		})
	}
}

// TestIgnoredUpdateIsAnError puts a CNAME where the failover record wants
// A records: the server drops the A records (RFC 2136 §3.4.2.2) or refuses
// the update; either way Apply must fail.
func TestIgnoredUpdateIsAnError(t *testing.T) {
	k := startKnot(t)
	cname := newActuator(t, options(k, map[string]any{"x": map[string]any{
		"name": "chat", "mode": "failover", "type": "CNAME", "routes": map[string]any{"free": "free.example.net"},
	}}))
	mustApply(t, cname, actuators.Splits{"x": {Weights: map[string]int{"free": 100}}})
	a := newActuator(t, options(k, map[string]any{"chat": map[string]any{
		"name": "chat", "mode": "failover", "type": "A", "routes": map[string]any{"free": "192.0.2.1"},
	}}))
	err := a.Apply(context.Background(), split(map[string]int{"free": 100}))
	if err == nil {
		t.Fatalf("Apply of A records next to a CNAME: nil error; A = %v", values(t, k, "chat.hermes.test.", dns.TypeA))
	}
	t.Logf("error: %v", err)
}

// TestPartialApply skips a service whose split cannot be written and
// still applies the others; services absent from the desired state keep
// their records.
func TestPartialApply(t *testing.T) {
	k := startKnot(t)
	embed := map[string]any{"name": "_embed._tcp", "mode": "srv", "routes": map[string]any{
		"embed-free": map[string]any{"target": "embed.example.net", "port": 443},
	}}
	a := newActuator(t, options(k, map[string]any{"chat": chatSRV(), "embed": embed}))
	mustApply(t, a, split(map[string]int{"free": 100}))
	err := a.Apply(context.Background(), actuators.Splits{
		"chat":  {Weights: map[string]int{"free": 50, "ghost": 50}},
		"embed": {Weights: map[string]int{"embed-free": 100}},
	})
	if err == nil || !strings.Contains(err.Error(), "dns: service chat: route ghost (50 %) has traffic but no entry under routes") {
		t.Errorf("Apply error = %v, want one naming chat's route ghost", err)
	}
	if got := srvSet(t, k, "_embed._tcp.hermes.test."); len(got) != 1 {
		t.Errorf("embed SRV = %v, want it written despite chat's error", got)
	}
	if got := srvSet(t, k, "_chat._tcp.hermes.test."); !slices.Equal(got, []string{"free.example.net. 100 443 10"}) {
		t.Errorf("chat SRV = %v, want it left as it was", got)
	}
	err = a.Apply(context.Background(), split(map[string]int{"free": 0, "paid": 0}))
	if err == nil || !strings.Contains(err.Error(), "refusing to remove every SRV record") {
		t.Errorf("Apply of an all-zero split: err = %v", err)
	}
	// embed is absent from this state: its records stay.
	mustApply(t, a, split(map[string]int{"paid": 100}))
	if got := srvSet(t, k, "_embed._tcp.hermes.test."); len(got) != 1 {
		t.Errorf("embed SRV = %v, want it kept", got)
	}
	// An actuator limited to embed neither reads nor writes chat.
	b := newActuator(t, options(k, map[string]any{"chat": chatSRV(), "embed": embed}), "embed")
	got, err := b.Current(context.Background())
	if err != nil || len(got) != 1 || got["embed"].Weights["embed-free"] != 100 {
		t.Errorf("Current of an embed-only actuator = %v, %v", got, err)
	}
}

// TestFlagsOff keeps no TXT record; Current reads the flags as false.
func TestFlagsOff(t *testing.T) {
	k := startKnot(t)
	opts := options(k, map[string]any{"chat": chatSRV()})
	opts["flags"] = false
	opts["ttl"] = 60
	a := newActuator(t, opts)
	mustApply(t, a, split(map[string]int{"free": 100}))
	if txt, err := k.lookup("_hermes-flags._chat._tcp.hermes.test.", dns.TypeTXT); err != nil || len(txt) != 0 {
		t.Errorf("flags TXT = %v, %v; want none", txt, err)
	}
	if st := wantWeights(t, a, "chat", map[string]int{"free": 100, "paid": 0, "backup": 0}); st.RetriesEnabled {
		t.Error("Current reports retries enabled without a flags record")
	}
	rrs, _ := k.lookup("_chat._tcp.hermes.test.", dns.TypeSRV)
	if len(rrs) != 1 || rrs[0].Header().Ttl != 60 {
		t.Errorf("SRV = %v, want one record with TTL 60", rrs)
	}
	// A TTL change alone rewrites the RRset.
	opts["ttl"] = 30
	before := mustSerial(t, k)
	mustApply(t, newActuator(t, opts), split(map[string]int{"free": 100}))
	if mustSerial(t, k) == before {
		t.Error("a new ttl was not written")
	}
}

// TestCurrentEmpty reports nothing for a zone without the records, and a
// clear error for a server that does not serve the zone.
func TestCurrentEmpty(t *testing.T) {
	k := startKnot(t)
	a := newActuator(t, options(k, map[string]any{"chat": chatSRV()}))
	got, err := a.Current(context.Background())
	if err != nil || len(got) != 0 {
		t.Errorf("Current of an empty zone = %v, %v; want empty", got, err)
	}
	opts := options(k, map[string]any{"chat": chatSRV()})
	opts["zone"] = "other.test"
	_, err = newActuator(t, opts).Current(context.Background())
	if err == nil || !strings.Contains(err.Error(), "REFUSED") || !strings.Contains(err.Error(), "other.test.") {
		t.Errorf("Current against a server without the zone: err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Apply(ctx, split(map[string]int{"free": 100})); err == nil {
		t.Error("Apply with a canceled context: nil error")
	}
}

// retryable reports whether err says trying again may succeed (the
// actuators.RetryableError contract, checked without importing it).
func retryable(err error) bool {
	var r interface{ Retryable() bool }
	return errors.As(err, &r) && r.Retryable()
}

// TestRetryable marks an unreachable server as transient and a refused
// update as permanent.
func TestRetryable(t *testing.T) {
	opts := validOptions()
	opts["server"] = freeAddr(t) // nothing listens there
	opts["timeout"] = "2s"
	a := newActuator(t, opts)
	err := a.Apply(context.Background(), split(map[string]int{"free": 100}))
	if err == nil || !retryable(err) || !strings.Contains(err.Error(), "dns: connecting to "+opts["server"].(string)) {
		t.Errorf("Apply against a closed port: err = %v, retryable %v; want a retryable connection error", err, retryable(err))
	}
	if _, err := a.Current(context.Background()); err == nil || !retryable(err) {
		t.Errorf("Current against a closed port: err = %v, retryable %v", err, retryable(err))
	}

	k := startKnot(t)
	opts = options(k, map[string]any{"chat": chatSRV()})
	opts["tsig"] = map[string]any{"name": "hermes-update", "secret": newSecret(t)}
	err = newActuator(t, opts).Apply(context.Background(), split(map[string]int{"free": 100}))
	if err == nil || retryable(err) {
		t.Errorf("Apply with a wrong key: err = %v, retryable %v; want a permanent error", err, retryable(err))
	}
}
