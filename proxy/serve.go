package proxy

import (
	"context"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// Front is hermes proxy's server. On Linux its event loops (loop_linux.go)
// serve each connection while its requests are a route's plain HTTP/1.1
// calls to an http:// upstream, as nginx's workers serve them; a
// connection whose request is anything else (another path, a TLS
// upstream, a body past maxReadAhead or streamed, Expect, Upgrade, HEAD,
// Connection: close, HTTP/1.0) is handed to the fasthttp server for the
// rest of its life, with the bytes already read. Elsewhere the fasthttp
// server serves every connection.
type Front struct {
	slow  *fasthttp.Server
	loops *loops // nil: none

	mu       sync.Mutex
	ln       net.Listener
	shutdown bool
}

// Serve accepts connections on l until Shutdown; it returns nil then, and
// the listener's error otherwise.
func (f *Front) Serve(l net.Listener) error {
	if f.loops == nil {
		return f.slow.Serve(l)
	}
	f.mu.Lock()
	if f.shutdown {
		f.mu.Unlock()
		return errors.New("hermes proxy: the server was shut down")
	}
	f.ln = l
	f.mu.Unlock()
	var delay backoff
	for {
		c, err := l.Accept()
		if err != nil {
			f.mu.Lock()
			down := f.shutdown
			f.mu.Unlock()
			if down {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				delay.wait() // as net/http's server waits out a full file table
				continue
			}
			return err
		}
		delay.reset()
		f.loops.add(c, f.slow)
	}
}

// Shutdown is ShutdownWithContext without a bound.
func (f *Front) Shutdown() error { return f.ShutdownWithContext(context.Background()) }

// ShutdownWithContext stops accepting, closes idle connections and waits
// for open requests to end, up to ctx; what is left then is cut.
func (f *Front) ShutdownWithContext(ctx context.Context) error {
	if f.loops == nil {
		return f.slow.ShutdownWithContext(ctx)
	}
	f.mu.Lock()
	f.shutdown = true
	if f.ln != nil {
		_ = f.ln.Close()
	}
	f.mu.Unlock()
	err := f.loops.drain(ctx)
	if serr := f.slow.ShutdownWithContext(ctx); err == nil {
		err = serr
	}
	return err
}

// backoff is the wait between failed accepts: 5 ms, doubled up to 1 s.
type backoff struct{ d time.Duration }

func (b *backoff) wait() {
	b.d = min(max(2*b.d, 5*time.Millisecond), time.Second)
	time.Sleep(b.d)
}

func (b *backoff) reset() { b.d = 0 }
