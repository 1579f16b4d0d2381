package dns

import (
	"context"
	"encoding/binary"
	"io"
	"maps"
	"net"
	"sync/atomic"
	"testing"

	"github.com/miekg/dns"
)

// lossyProxy forwards TCP connections to a DNS server; while lose is set,
// the server's replies to UPDATE messages are dropped (queries are still
// answered), the way a crash or a cut connection loses the answer to an
// update the server applied.
type lossyProxy struct {
	addr string
	lose atomic.Bool
}

func startLossyProxy(t *testing.T, target string) *lossyProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &lossyProxy{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c, target)
		}
	}()
	return p
}

func (p *lossyProxy) serve(c net.Conn, target string) {
	defer c.Close()
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer s.Close()
	go func() { io.Copy(s, c); s.Close() }()
	for {
		var n [2]byte
		if _, err := io.ReadFull(s, n[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint16(n[:]))
		if _, err := io.ReadFull(s, msg); err != nil {
			return
		}
		if len(msg) > 2 && int(msg[2]>>3&0xf) == dns.OpcodeUpdate && p.lose.Load() {
			continue
		}
		if _, err := c.Write(append(n[:], msg...)); err != nil {
			return
		}
	}
}

// TestLostUpdateReplyIsReconciled: an UPDATE whose reply is lost is an
// unknown outcome, an error; the next Apply reads what the server serves
// and converges without assuming either way, and Current reads the served
// records, not what was last sent.
func TestLostUpdateReplyIsReconciled(t *testing.T) {
	k := startKnot(t)
	p := startLossyProxy(t, k.addr)
	opts := options(k, map[string]any{"chat": chatSRV()})
	opts["server"] = p.addr
	opts["timeout"] = "300ms"
	a := newActuator(t, opts)
	healthy := map[string]int{"free": 100, "paid": 0, "backup": 0}
	mustApply(t, a, split(healthy))
	failed := map[string]int{"free": 0, "paid": 100, "backup": 0}
	p.lose.Store(true)
	if err := a.Apply(context.Background(), split(failed)); err == nil {
		t.Fatal("Apply without a reply succeeded")
	}
	p.lose.Store(false)
	// The server applied the update whose reply was lost.
	wantWeights(t, a, "chat", failed)
	before := mustSerial(t, k)
	mustApply(t, a, split(failed))
	wantWeights(t, a, "chat", failed)
	if after := mustSerial(t, k); after < before {
		t.Errorf("serial went back from %d to %d", before, after)
	}

	// Records changed behind Hermes's back (another writer, a restore
	// from backup): Current says what is served, Apply repairs it.
	direct := newActuator(t, options(k, map[string]any{"chat": chatSRV()}))
	mustApply(t, direct, split(healthy))
	cur, err := a.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(cur["chat"].Weights, healthy) {
		t.Errorf("Current %v after the records changed, want what is served %v", cur["chat"].Weights, healthy)
	}
	mustApply(t, a, split(failed))
	wantWeights(t, a, "chat", failed)
}
