package promapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
)

// maxDecoding bounds how many answers one Client reads and decodes at
// once, by either path. Hermes's memory peaks while it decodes: an
// answer is read whole (client_golang's api.Client.Do), about 2 MB a
// signal at 10,000 routes, and Client.Query also builds a label map per
// series; a tick's queries all answer at about the same time. Waiting for
// Prometheus is not bounded (a slow Prometheus must not make a tick last
// several query times), only what follows once an answer arrives, which
// is CPU-bound anyway.
const maxDecoding = 2

// decodeSlot is one query's claim on a slot of a Client's slots: taken
// when its answer's body is first read (slotBodies), given back when the
// query returns, after decoding.
type decodeSlot struct {
	slots chan struct{}

	mu         sync.Mutex
	held, done bool
}

type decodeSlotKey struct{}

// withDecodeSlot returns ctx carrying a new claim on slots.
func withDecodeSlot(ctx context.Context, slots chan struct{}) (context.Context, *decodeSlot) {
	d := &decodeSlot{slots: slots}
	return context.WithValue(ctx, decodeSlotKey{}, d), d
}

// acquire waits for a slot. client_golang reads the body in a goroutine it
// may leave behind on cancellation, so a slot taken after release is given
// back at once. A claim holds one slot however many bodies its query
// reads: a redirect's body (which net/http reads before following it)
// took a second slot that release never gave back, and two redirected
// queries left every later query waiting for its deadline.
func (d *decodeSlot) acquire(ctx context.Context) error {
	d.mu.Lock()
	held := d.held
	d.mu.Unlock()
	if held {
		return nil
	}
	select {
	case d.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		<-d.slots
		return errors.New("query already returned")
	}
	d.held = true
	return nil
}

// release gives the slot back, if taken; the claim ends.
func (d *decodeSlot) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.done = true
	if d.held {
		<-d.slots
		d.held = false
	}
}

// slotBodies makes the first read of a response body wait for the decode
// slot its request's context carries (requests without one pass through).
func slotBodies(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		d, ok := req.Context().Value(decodeSlotKey{}).(*decodeSlot)
		if err != nil || !ok {
			return resp, err
		}
		resp.Body = &slotBody{rc: resp.Body, ctx: req.Context(), slot: d}
		return resp, nil
	})
}

// slotBody takes its decode slot before its first read.
type slotBody struct {
	rc      io.ReadCloser
	ctx     context.Context
	slot    *decodeSlot
	started bool
}

func (b *slotBody) Read(p []byte) (int, error) {
	if !b.started {
		b.started = true
		if err := b.slot.acquire(b.ctx); err != nil {
			return 0, err
		}
	}
	return b.rc.Read(p)
}

func (b *slotBody) Close() error { return b.rc.Close() }
