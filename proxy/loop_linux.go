//go:build linux

package proxy

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/sys/unix"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/internal/chunked"
)

// loops are the front's event loops, one a P: each waits in one
// epoll_wait for all its connections, callers' and upstreams', reads
// only what is ready and writes on the thread that read, as nginx's
// workers do. A goroutine a connection parks twice a plain reply
// (waiting for the caller's next request and for the upstream's reply),
// and on two cores shared with the load generator and the upstream the
// scheduler's hand-offs around those parks cost more than the proxying:
// a bare proxy on fasthttp reached 75–91 % of nginx's plain rate where
// one on an event loop reached 114 %, and one judging as hermes does 96 %
// (docs/scale.md, "An event loop's floor").
//
// Why hand-rolled on x/sys/unix and not on gnet, the event-loop library
// that measurement used: gnet reads on whatever its caller takes, so a
// slow caller of a fast upstream would be buffered without bound, where a
// loop here stops reading the upstream while the caller's socket is full
// (nginx's proxy_buffering off); and gnet cannot hand a connection back
// to another server, which the loops do with every request they do not
// take (Front).
type loops struct {
	p    *Proxy
	all  []*loop
	next atomic.Uint32
	// handed counts the connections the loops gave the fasthttp server.
	handed atomic.Int64
}

// served is how many requests the loops passed (each loop counts its own,
// so that no cache line goes back and forth between them).
func (ls *loops) served() int64 {
	var n int64
	for _, l := range ls.all {
		n += l.served.Load()
	}
	return n
}

func newLoops(p *Proxy, slow *fasthttp.Server) *loops {
	ls := &loops{p: p}
	n := int(loopCount.Load())
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	for range n {
		l, err := newLoop(p, ls, slow)
		if err != nil {
			p.logger.Warn("no event loop; the fasthttp server serves every connection", "err", err)
			for _, l := range ls.all {
				l.closeFDs()
			}
			return nil
		}
		ls.all = append(ls.all, l)
	}
	for _, l := range ls.all {
		go l.run()
	}
	return ls
}

// add gives c to a loop, in turn, or to slow when its descriptor cannot
// be taken.
func (ls *loops) add(c net.Conn, slow *fasthttp.Server) {
	fd, err := takeFD(c)
	if err != nil {
		go func() { _ = slow.ServeConn(c) }()
		return
	}
	l := ls.all[ls.next.Add(1)%uint32(len(ls.all))]
	if !l.post(func() { l.addCaller(fd) }) {
		unix.Close(fd)
	}
}

// drain closes the loops' idle callers and waits for the open requests
// to end, up to ctx, then stops the loops.
func (ls *loops) drain(ctx context.Context) error {
	stopped := make([]bool, len(ls.all))
	for i, l := range ls.all {
		stopped[i] = !l.post(l.beginDrain)
	}
	var err error
	for i, l := range ls.all {
		if stopped[i] {
			continue
		}
		select {
		case <-l.drained:
		case <-l.done:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			break
		}
	}
	for _, l := range ls.all {
		if l.post(func() { l.stop = true }) {
			<-l.done
		}
	}
	return err
}

// takeFD is c's socket as a descriptor of the caller's own, non-blocking
// (a duplicate shares the file's flags), and c closed.
func takeFD(c net.Conn) (int, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1, errors.New("not a socket")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, derr
	}
	_ = c.Close()
	return fd, nil
}

// loop is one event loop. Everything but its task queue is touched on its
// own goroutine only.
type loop struct {
	p      *Proxy
	ls     *loops
	served atomic.Int64
	slow   *fasthttp.Server
	epfd   int
	evfd   int
	mu     sync.Mutex
	tasks  []func()
	// fdsClosed says epfd and evfd are closed: their numbers may be
	// another file's now.
	fdsClosed bool
	conns     map[int]*lconn
	buf       []byte
	events    []unix.EpollEvent
	now       time.Time
	timers    timerHeap
	pools     map[*lean][]*lconn
	sweep     time.Time

	// Parsing: fasthttp's header types read from a reader over a
	// connection's bytes, as the lean exchange reads them.
	rd     bytes.Reader
	br     *bufio.Reader
	reqIn  fasthttp.RequestHeader
	reqOut fasthttp.RequestHeader
	resp   fasthttp.ResponseHeader
	head   []byte
	chunk  []byte
	tee    tee
	peek   [1]byte

	callers   int
	draining  bool
	drained   chan struct{} // closed once draining with no caller left
	isDrained bool
	stop      bool
	done      chan struct{} // closed when run returns
}

func newLoop(p *Proxy, ls *loops, slow *fasthttp.Server) (*loop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	evfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, evfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(evfd)}); err != nil {
		unix.Close(epfd)
		unix.Close(evfd)
		return nil, fmt.Errorf("epoll_ctl: %w", err)
	}
	l := &loop{p: p, ls: ls, slow: slow, epfd: epfd, evfd: evfd, conns: map[int]*lconn{}, buf: make([]byte, 64<<10),
		events: make([]unix.EpollEvent, 256), pools: map[*lean][]*lconn{},
		drained: make(chan struct{}), done: make(chan struct{})}
	l.br = bufio.NewReaderSize(&l.rd, 8<<10)
	return l, nil
}

func (l *loop) closeFDs() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fdsClosed = true
	unix.Close(l.epfd)
	unix.Close(l.evfd)
}

// post runs f on the loop; false when the loop has stopped (f is then not
// run, and what it would have taken is the caller's to close).
func (l *loop) post(f func()) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fdsClosed {
		return false
	}
	l.tasks = append(l.tasks, f)
	var one = [8]byte{1}
	_, _ = unix.Write(l.evfd, one[:])
	return true
}

func (l *loop) runTasks() {
	var b [8]byte
	_, _ = unix.Read(l.evfd, b[:])
	l.mu.Lock()
	tasks := l.tasks
	l.tasks = nil
	l.mu.Unlock()
	for _, f := range tasks {
		f()
	}
}

func (l *loop) run() {
	defer close(l.done)
	defer l.closeAll()
	busy := false
	for !l.stop {
		// After a round with events, look again without waiting; when
		// there are none, let other goroutines run before the thread
		// blocks in epoll_wait (as gnet polls): a thread blocked in a
		// system call has its P taken by sysmon, and taking one back
		// costs more than a look.
		wait := 0
		if !busy {
			wait = l.waitMillis()
		}
		n, err := unix.EpollWait(l.epfd, l.events, wait)
		if err != nil && err != unix.EINTR {
			l.p.logger.Error("event loop stopped", "err", err)
			return
		}
		if n <= 0 && busy {
			busy = false
			runtime.Gosched()
			continue
		}
		busy = n > 0
		l.now = time.Now()
		tasks := false
		for i := range max(n, 0) {
			ev := l.events[i]
			if int(ev.Fd) == l.evfd {
				tasks = true
				continue
			}
			if c := l.conns[int(ev.Fd)]; c != nil {
				if c.up {
					l.upEvent(c, ev.Events)
				} else {
					l.callerEvent(c, ev.Events)
				}
			}
		}
		// Tasks add descriptors; run after the events, none of which may
		// then be taken for a new connection's that reused a number.
		if tasks {
			l.runTasks()
		}
		l.expire()
		if l.now.Sub(l.sweep) >= time.Second {
			l.sweepPools()
			l.sweep = l.now
		}
	}
}

// waitMillis is how long epoll_wait may wait: to the nearest deadline, and
// at most a second (the pools' sweep).
func (l *loop) waitMillis() int {
	if len(l.timers) == 0 {
		return 1000
	}
	d := time.Until(l.timers[0].deadline)
	if d <= 0 {
		return 0
	}
	return int(min(d/time.Millisecond+1, 1000))
}

// lconn is a connection of the loop: a caller's, or an upstream's.
type lconn struct {
	fd     int
	up     bool
	in     []byte // read and not yet used
	out    []byte // to write
	events uint32 // epoll interest
	ex     *exchange
	closed bool
	// inFull: a caller sent more than a request ahead of its reply; it is
	// not read until the reply ends.
	inFull bool
	// closing: what out holds is written, then the connection closed
	// (a reply cut, or one the proxy answered with Connection: close).
	closing bool

	deadline time.Time
	hidx     int // in the timer heap, or -1

	// A caller's request read so far: since when, and its route's
	// client_body_timeout once its headers are in.
	reading  time.Time
	bodyWait time.Duration
	route    string

	// An upstream's pool and idle time.
	lean   *lean
	idleAt time.Time
}

func (l *loop) register(fd int, up bool) (*lconn, error) {
	c := &lconn{fd: fd, up: up, hidx: -1}
	c.events = unix.EPOLLIN | unix.EPOLLRDHUP
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: c.events, Fd: int32(fd)}); err != nil {
		return nil, err
	}
	l.conns[fd] = c
	return c, nil
}

func (l *loop) addCaller(fd int) {
	if l.draining {
		unix.Close(fd)
		return
	}
	c, err := l.register(fd, false)
	if err != nil {
		unix.Close(fd)
		return
	}
	l.callers++
	l.setDeadline(c, l.now.Add(keepAliveTimeout))
}

// keepAliveTimeout is how long a caller's connection may sit idle between
// requests: nginx's keepalive_timeout, as the fasthttp server's IdleTimeout.
const keepAliveTimeout = 75 * time.Second

// update sets c's epoll interest from its state.
func (l *loop) update(c *lconn) {
	if c.closed {
		return
	}
	// Level-triggered, and changed only when a side must wait: a caller
	// that sent more than a request ahead, an upstream whose caller is
	// slow, a socket full. A plain reply changes nothing (each change is
	// an epoll_ctl).
	var ev uint32
	switch {
	case c.closing:
	case !c.up && c.inFull:
	case c.up && c.ex != nil && c.ex.paused:
	default:
		ev = unix.EPOLLIN | unix.EPOLLRDHUP
	}
	if len(c.out) > 0 {
		ev |= unix.EPOLLOUT
	}
	if ev != c.events {
		c.events = ev
		_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: ev, Fd: int32(c.fd)})
	}
}

func (l *loop) close(c *lconn) {
	if c.closed {
		return
	}
	c.closed = true
	l.setDeadline(c, time.Time{})
	delete(l.conns, c.fd)
	unix.Close(c.fd)
	if !c.up {
		l.callers--
		l.checkDrained()
	}
}

// checkDrained closes drained once the loop drains with no caller left.
func (l *loop) checkDrained() {
	if l.draining && l.callers == 0 && !l.isDrained {
		l.isDrained = true
		close(l.drained)
	}
}

func (l *loop) closeAll() {
	for _, c := range l.conns {
		if c.ex != nil && !c.ex.dead {
			l.callerGone(c.ex.caller)
		}
	}
	for _, c := range l.conns {
		l.close(c)
	}
	l.closeFDs()
}

func (l *loop) beginDrain() {
	l.draining = true
	for _, c := range l.conns {
		if !c.up && c.ex == nil {
			l.close(c)
		}
	}
	l.checkDrained()
}

// send writes p to c, keeping what the socket does not take for when it
// is writable; false when c failed (and was dealt with).
func (l *loop) send(c *lconn, p []byte) bool {
	if len(c.out) > 0 {
		c.out = append(c.out, p...)
		return true
	}
	n, err := writeSome(c.fd, p)
	if err != nil {
		l.writeFailed(c, err)
		return false
	}
	if n < len(p) {
		c.out = append(c.out, p[n:]...)
		l.update(c)
	}
	return true
}

// writeSome writes p to fd until the socket takes no more; it returns how
// much it wrote.
func writeSome(fd int, p []byte) (int, error) {
	w := 0
	for w < len(p) {
		n, err := unix.Write(fd, p[w:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return w, nil
		case err != nil:
			return w, err
		}
		w += n
	}
	return w, nil
}

// send2 is send of a then b, in one writev when the socket takes them.
func (l *loop) send2(c *lconn, a, b []byte) bool {
	if len(a) == 0 {
		return l.send(c, b)
	}
	if len(c.out) > 0 || len(b) == 0 {
		return l.send(c, a) && l.send(c, b)
	}
	iov := [2][]byte{a, b}
	for len(a)+len(b) > 0 {
		iov[0], iov[1] = a, b
		bufs := iov[:]
		if len(a) == 0 {
			bufs = iov[1:]
		}
		n, err := unix.Writev(c.fd, bufs)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			break
		}
		if err != nil {
			l.writeFailed(c, err)
			return false
		}
		m := min(n, len(a))
		a, b = a[m:], b[n-m:]
	}
	if len(a)+len(b) > 0 {
		c.out = append(append(c.out, a...), b...)
		l.update(c)
	}
	return true
}

// flush writes what c has kept; false when c failed.
func (l *loop) flush(c *lconn) bool {
	n, err := writeSome(c.fd, c.out)
	if err != nil {
		l.writeFailed(c, err)
		return false
	}
	if n < len(c.out) {
		c.out = c.out[:copy(c.out, c.out[n:])]
		return true
	}
	c.out = c.out[:0]
	if c.closing {
		l.close(c)
		return false
	}
	l.update(c)
	return true
}

func (l *loop) writeFailed(c *lconn, err error) {
	if !c.up {
		l.callerGone(c)
		return
	}
	if ex := c.ex; ex != nil && !ex.dead {
		l.upstreamFailed(ex, fmt.Errorf("writing the request upstream: %w", err))
		return
	}
	l.close(c)
}

// read reads what c has into l.buf: n bytes, or the end (eof) or an
// error; 0 and no error when nothing is there yet.
func (l *loop) read(c *lconn) (int, error) {
	for {
		n, err := unix.Read(c.fd, l.buf)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, nil
		case err != nil:
			return 0, err
		case n == 0:
			return 0, errEOF
		}
		return n, nil
	}
}

var errEOF = errors.New("EOF")

// The caller's side.

func (l *loop) callerEvent(c *lconn, ev uint32) {
	if ev&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
		l.callerGone(c)
		return
	}
	if ev&unix.EPOLLOUT != 0 && !l.flush(c) {
		return
	}
	if ex := c.ex; ex != nil {
		if ev&(unix.EPOLLIN|unix.EPOLLRDHUP) != 0 {
			// Its next request, or its hang-up.
			n, err := l.read(c)
			if err != nil {
				l.callerGone(c)
				return
			}
			c.in = append(c.in, l.buf[:n]...)
			if len(c.in) > maxHead+maxReadAhead {
				c.inFull = true
				l.update(c)
			}
		}
		switch {
		case len(c.out) > 0:
		case ex.upDone:
			l.complete(ex)
		case ex.paused:
			l.resume(ex)
		}
		return
	}
	if ev&(unix.EPOLLIN|unix.EPOLLRDHUP) == 0 {
		return
	}
	n, err := l.read(c)
	if err != nil {
		l.close(c)
		return
	}
	if n == 0 {
		return
	}
	if len(c.in) == 0 {
		c.reading = l.now
	}
	c.in = append(c.in, l.buf[:n]...)
	l.serve(c)
}

// callerGone ends c, whose caller hung up: its call, if any, is not
// recorded (the upstream did nothing wrong) and its upstream connection
// is closed.
func (l *loop) callerGone(c *lconn) {
	if ex := c.ex; ex != nil && !ex.dead {
		l.p.logger.Debug("caller hung up before the reply ended", "route", ex.rt.name)
		up := ex.up
		l.end(ex)
		if up != nil {
			l.close(up)
		}
	}
	l.close(c)
}

var crlf2 = []byte("\r\n\r\n")

// maxHead is the longest request head the loop reads; the fasthttp
// server, which reads 8 KiB, answers a longer one.
const maxHead = 8 << 10

// serve takes c's next request when it is here whole: a route's, the
// loop's to pass; any other, the fasthttp server's.
func (l *loop) serve(c *lconn) {
	if c.ex != nil || c.closed || c.closing {
		return
	}
	if l.draining {
		l.close(c)
		return
	}
	h := bytes.Index(c.in, crlf2)
	if h < 0 {
		if len(c.in) >= maxHead {
			l.handOff(c)
			return
		}
		if len(c.in) > 0 {
			l.setDeadline(c, c.reading.Add(DefaultLimits.ClientBodyTimeout))
		}
		return
	}
	in := &l.reqIn
	in.Reset()
	in.DisableNormalizing()
	l.rd.Reset(c.in[:h+4])
	l.br.Reset(&l.rd)
	if err := in.Read(l.br); err != nil {
		l.handOff(c) // the fasthttp server answers it
		return
	}
	uri := in.RequestURI()
	path, query := uri, []byte(nil)
	if i := bytes.IndexByte(uri, '?'); i >= 0 {
		path, query = uri[:i], uri[i+1:]
	}
	rt, rest, ok := l.p.routeOf(path)
	if !ok || !l.takes(in, rt, path) {
		l.handOff(c)
		return
	}
	n := max(in.ContentLength(), 0) // -2: no body
	if len(c.in) < h+4+n {
		c.bodyWait, c.route = rt.clientBodyTimeout, rt.name
		l.setDeadline(c, l.now.Add(rt.clientBodyTimeout))
		return
	}
	c.bodyWait = 0
	body := c.in[h+4 : h+4+n]
	l.begin(c, rt, rest, query, body)
	rest2 := copy(c.in, c.in[h+4+n:])
	c.in = c.in[:rest2]
	if len(c.in) > 0 {
		c.reading = l.now
	}
}

// takes says whether the loop passes in, a request of route rt: an
// HTTP/1.1 request to an http:// upstream the lean exchange takes
// (leanRequest), on a plain path, neither HEAD nor CONNECT nor one that
// closes the connection.
func (l *loop) takes(in *fasthttp.RequestHeader, rt *route, path []byte) bool {
	if rt.lean == nil || rt.lean.key.scheme != "http" || !in.IsHTTP11() || in.ConnectionClose() ||
		in.IsHead() || in.IsConnect() {
		return false
	}
	n := in.ContentLength()
	if !(n == -2 || n >= 0 && n <= maxReadAhead) || len(in.Peek("Upgrade")) > 0 || len(in.Peek("Expect")) > 0 {
		return false
	}
	// A path fasthttp would normalize is left to it (judges reads the
	// normalized path).
	return bytes.IndexByte(path, '%') < 0 && !bytes.Contains(path, []byte("/.")) && !bytes.Contains(path, []byte("//"))
}

// handOff gives c, with the bytes read of it, to the fasthttp server for
// the rest of its life.
func (l *loop) handOff(c *lconn) {
	pre := append([]byte(nil), c.in...)
	fd := c.fd
	_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	f := os.NewFile(uintptr(fd), "caller")
	nc, err := net.FileConn(f) // a duplicate, on Go's poller
	c.closed = true
	l.setDeadline(c, time.Time{})
	delete(l.conns, fd)
	_ = f.Close()
	l.callers--
	l.checkDrained()
	if err != nil {
		return
	}
	l.ls.handed.Add(1)
	go func() { _ = l.slow.ServeConn(&handedConn{Conn: nc, pre: pre}) }()
}

// handedConn is a connection handed to the fasthttp server: what the loop
// read of it first, then the socket. SyscallConn reaches the socket, for
// the lean exchange's look at its caller (callerGone).
type handedConn struct {
	net.Conn
	pre []byte
}

func (c *handedConn) Read(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

func (c *handedConn) SyscallConn() (syscall.RawConn, error) {
	return c.Conn.(syscall.Conn).SyscallConn()
}

// ReadFrom is the socket's: fasthttp's server writes a body of declared
// length through it, each read of the upstream's body straight to the
// caller, so that what came before a cut reaches the caller (a buffered
// write would lose it).
func (c *handedConn) ReadFrom(r io.Reader) (int64, error) {
	return c.Conn.(io.ReaderFrom).ReadFrom(r)
}

// The exchange.

// exchange is a request the loop passes: its caller, its upstream
// connection (nil while one is dialled) and how far its reply has come.
type exchange struct {
	caller, up *lconn
	rt         *route
	call       *instrument.Call
	req        []byte // the request as sent: its head and body
	replayable bool
	reused     bool // up came from the pool
	retried    bool
	start      time.Time
	last       time.Time // the body's last read
	body       bool      // the reply's head is in and sent
	paused     bool      // the caller's socket is full: the upstream waits
	left       int64     // the body's declared length left; -1 chunked; -2 to the close
	chunks     chunked.Scanner
	keep       bool // the upstream keeps the connection
	upDone     bool // the upstream's reply ended whole
	oneXX      int
	dead       bool // ended
}

// begin starts passing a request: a slot of the route, the call's
// recording, the upstream's request, a connection.
func (l *loop) begin(c *lconn, rt *route, rest, query, body []byte) {
	select {
	case rt.slots <- struct{}{}:
	default:
		l.p.busy.WithLabelValues(rt.name).Inc()
		l.answer(c, fasthttp.StatusServiceUnavailable, "text/plain; charset=utf-8", "hermes proxy: too many concurrent requests on route "+rt.name, false)
		return
	}
	l.served.Add(1)
	in := &l.reqIn
	ex := &exchange{caller: c, rt: rt, start: l.now, replayable: replayable(in)}
	if l.judges(in, rt) {
		ex.call = l.p.metrics.Begin(rt.name, rt.v)
		ex.call.DiscardContent() // the proxy reads the verdict alone
		if len(body) > 0 {
			ex.call.Request(body)
		}
	}
	// The request as the lean exchange writes it (exchangeLean).
	out := &l.reqOut
	out.Reset()
	l.head = rt.lean.outRequest(out, in, rest, query, l.head)
	head := out.Header()
	ex.req = append(append(make([]byte, 0, len(head)+len(body)), head...), body...)
	c.ex = ex
	l.update(c)
	l.setDeadline(c, ex.start.Add(min(rt.lean.limits.FirstByteTimeout, rt.lean.limits.TotalTimeout)))
	l.connect(ex)
}

// judges is route.judges on the loop's request header.
func (l *loop) judges(in *fasthttp.RequestHeader, rt *route) bool {
	if !in.IsPost() || len(in.Peek(instrument.ProbeHeader)) > 0 {
		return false
	}
	uri := in.RequestURI()
	if i := bytes.IndexByte(uri, '?'); i >= 0 {
		uri = uri[:i]
	}
	for _, s := range rt.judgedPaths {
		if bytes.HasSuffix(uri, s) {
			return true
		}
	}
	return false
}

// replayable is leanReplayable on the loop's request header.
func replayable(in *fasthttp.RequestHeader) bool {
	switch string(in.Method()) {
	case fasthttp.MethodGet, fasthttp.MethodOptions, fasthttp.MethodTrace:
		return true
	}
	return len(in.Peek("Idempotency-Key")) > 0 || len(in.Peek("X-Idempotency-Key")) > 0
}

// connect sends ex's request on a kept connection of its route that is
// still open, or dials one.
func (l *loop) connect(ex *exchange) {
	ln := ex.rt.lean
	conns := l.pools[ln]
	for len(conns) > 0 {
		up := conns[len(conns)-1]
		conns[len(conns)-1] = nil
		conns = conns[:len(conns)-1]
		l.pools[ln] = conns
		if l.now.Sub(up.idleAt) < ln.t.idleTimeout && l.alive(up) {
			ex.reused = true
			l.attach(ex, up)
			return
		}
		l.close(up)
	}
	ex.reused = false
	timeout := min(ln.limits.FirstByteTimeout, ln.limits.TotalTimeout) - l.now.Sub(ex.start)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		conn, err := ln.t.dialer.DialContext(ctx, "tcp", ln.key.addr)
		cancel()
		fd := -1
		if err == nil {
			fd, err = takeFD(conn)
			if err != nil {
				_ = conn.Close()
			}
		}
		if !l.post(func() { l.dialed(ex, ln, fd, err) }) && fd >= 0 {
			unix.Close(fd)
		}
	}()
}

// alive looks at a kept connection before it carries a request, as the
// lean exchange does (liveness): open, with nothing unread.
func (l *loop) alive(c *lconn) bool {
	_, _, err := unix.Recvfrom(c.fd, l.peek[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	return err == unix.EAGAIN // nothing to read, and not the end
}

func (l *loop) dialed(ex *exchange, ln *lean, fd int, err error) {
	if err == nil {
		up, rerr := l.register(fd, true)
		if rerr != nil {
			unix.Close(fd)
			err = rerr
		} else {
			up.lean = ln
			if ex.dead {
				l.pool(up)
				return
			}
			l.attach(ex, up)
			return
		}
	}
	if ex.dead {
		return
	}
	l.upstreamFailed(ex, err)
}

func (l *loop) attach(ex *exchange, up *lconn) {
	ex.up, up.ex = up, ex
	up.in = up.in[:0]
	l.update(up)
	l.send(up, ex.req)
}

// The upstream's side.

func (l *loop) upEvent(c *lconn, ev uint32) {
	ex := c.ex
	if ex == nil || ex.dead {
		// A kept connection the upstream closed, or spoke on unasked.
		l.unpool(c)
		l.close(c)
		return
	}
	if ev&unix.EPOLLOUT != 0 && !l.flush(c) {
		return
	}
	if ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLERR|unix.EPOLLHUP) == 0 || ex.paused {
		if ev&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			l.upstreamFailed(ex, errors.New("the upstream connection failed"))
		}
		return
	}
	n, err := l.read(c)
	if err != nil {
		l.upstreamEnded(ex, err)
		return
	}
	if n == 0 {
		return
	}
	if !ex.body {
		c.in = append(c.in, l.buf[:n]...)
		l.replyHead(ex)
		return
	}
	l.pass(ex, l.buf[:n], nil)
}

// replyHead reads the reply's head once it is here, passes it to the
// caller and what came of the body after it.
func (l *loop) replyHead(ex *exchange) {
	up := ex.up
	for {
		h := bytes.Index(up.in, crlf2)
		if h < 0 {
			if len(up.in) >= 8<<10 {
				l.upstreamFailed(ex, errors.New("reading the upstream's reply: its header is too large"))
			}
			return
		}
		r := &l.resp
		r.Reset()
		r.DisableNormalizing()
		r.SetNoDefaultContentType(true)
		l.rd.Reset(up.in[:h+4])
		l.br.Reset(&l.rd)
		if err := r.Read(l.br); err != nil {
			l.upstreamFailed(ex, fmt.Errorf("reading the upstream's reply: %w", err))
			return
		}
		status := r.StatusCode()
		if status >= 200 {
			break
		}
		if status == fasthttp.StatusSwitchingProtocols {
			l.upstreamFailed(ex, errors.New("the upstream switched protocols on a request that asked for no upgrade"))
			return
		}
		if ex.oneXX++; ex.oneXX > maxOneXX {
			l.upstreamFailed(ex, errors.New("the upstream sent too many 1xx replies"))
			return
		}
		up.in = up.in[:copy(up.in, up.in[h+4:])] // read past it, as nginx drops it
	}
	h := bytes.Index(up.in, crlf2)
	r := &l.resp
	status := r.StatusCode()
	ex.body, ex.last = true, l.now
	ex.keep = r.IsHTTP11() && !r.ConnectionClose()
	b := append(l.head[:0], "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	if msg := r.StatusMessage(); len(msg) > 0 {
		b = append(b, msg...)
	} else {
		b = append(b, fasthttp.StatusMessage(status)...)
	}
	b = append(b, "\r\n"...)
	r.VisitAll(func(k, v []byte) {
		if !leanReplyHopByHop(k) {
			b = append(append(append(append(b, k...), ": "...), v...), "\r\n"...)
		}
	})
	switch n := r.ContentLength(); {
	case status == fasthttp.StatusNoContent || status == fasthttp.StatusNotModified:
		ex.left = 0
	case n >= 0:
		ex.left = int64(n)
		b = append(strconv.AppendInt(append(b, "Content-Length: "...), int64(n), 10), "\r\n"...)
	case n == -1:
		ex.left = -1
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	default:
		ex.left, ex.keep = -2, false // to the connection's end: chunked to the caller
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	}
	if l.draining {
		b = append(b, "Connection: close\r\n"...) // complete closes it
	}
	b = append(b, "\r\n"...)
	l.head = b
	if ex.call != nil {
		ex.call.ReplyEncoded(status, string(r.ContentType()), string(r.ContentEncoding()))
	}
	l.setDeadline(ex.caller, l.bodyDeadline(ex))
	rest := up.in[h+4:]
	up.in = up.in[:0] // rest stays where it is: nothing appends to it now
	l.pass(ex, rest, b)
}

// bodyDeadline is when the body's idle gap or the total limit ends.
func (l *loop) bodyDeadline(ex *exchange) time.Time {
	lim := ex.rt.lean.limits
	return minTime(ex.last.Add(lim.IdleTimeout), ex.start.Add(lim.TotalTimeout))
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// pass passes p, the next bytes of the reply's body, to the caller (after
// head, the reply's head when it is the first, in one write) and the
// judge; at the body's end the exchange completes once the caller has it
// all.
func (l *loop) pass(ex *exchange, p, head []byte) {
	var j chunked.Judge
	if ex.call != nil {
		j = ex.call
	}
	ex.last = l.now
	l.setDeadline(ex.caller, l.bodyDeadline(ex))
	var out []byte
	switch {
	case ex.left == -1:
		// Sent on chunked as it was read, not as the upstream framed it:
		// what one read brought leaves in one chunk and one write, as the
		// fasthttp front sends it, trailers dropped.
		t := &l.tee
		t.data, t.j = t.data[:0], j
		n, end := ex.chunks.Feed(p, t)
		t.j = nil
		if ex.chunks.Bad() {
			l.broken(ex, errors.New("reading the upstream's reply: bad chunked framing"))
			return
		}
		b := l.chunk[:0]
		if len(t.data) > 0 {
			b = appendChunk(b, t.data)
		}
		if end {
			b = append(b, "0\r\n\r\n"...)
		}
		l.chunk = b
		out, ex.upDone = b, end
		if n < len(p) {
			ex.keep = false // bytes past the body's end
		}
	case ex.left == -2:
		if len(p) > 0 {
			if j != nil {
				j.Write(p)
			}
			l.chunk = appendChunk(l.chunk[:0], p)
			out = l.chunk
		}
	default:
		n := min(int64(len(p)), ex.left)
		if j != nil && n > 0 {
			j.Write(p[:n])
		}
		out = p[:n]
		ex.left -= n
		if int64(len(p)) > n {
			ex.keep = false
		}
		ex.upDone = ex.left == 0
	}
	if len(head)+len(out) > 0 && !l.send2(ex.caller, head, out) {
		return
	}
	if len(ex.caller.out) > 0 && !ex.upDone {
		l.pause(ex)
		return
	}
	if ex.paused {
		l.resume(ex)
	}
	if ex.upDone {
		l.releaseUp(ex)
		if len(ex.caller.out) == 0 {
			l.complete(ex)
		}
	}
}

// appendChunk appends p as one chunk of a chunked body.
func appendChunk(b, p []byte) []byte {
	b = strconv.AppendInt(b, int64(len(p)), 16)
	return append(append(append(b, "\r\n"...), p...), "\r\n"...)
}

// tee collects a chunked body's data for the chunk it leaves in, and
// passes it to the judge.
type tee struct {
	data []byte
	j    chunked.Judge
}

func (t *tee) Write(p []byte) {
	t.data = append(t.data, p...)
	if t.j != nil {
		t.j.Write(p)
	}
}

// pause stops reading the upstream while the caller's socket is full
// (nginx's proxy_buffering off). The idle gap does not run meanwhile: the
// upstream is not the one that is slow; the total limit does.
func (l *loop) pause(ex *exchange) {
	ex.paused = true
	l.update(ex.up)
	l.setDeadline(ex.caller, ex.start.Add(ex.rt.lean.limits.TotalTimeout))
}

// resume reads the upstream again once the caller took what it had; the
// idle gap runs from now.
func (l *loop) resume(ex *exchange) {
	ex.paused = false
	ex.last = l.now
	l.update(ex.up)
	l.setDeadline(ex.caller, l.bodyDeadline(ex))
}

// releaseUp lets go of the upstream connection of an exchange whose reply
// has come whole: kept for the route's next request, or closed.
func (l *loop) releaseUp(ex *exchange) {
	up := ex.up
	if up == nil {
		return
	}
	ex.up, up.ex = nil, nil
	if ex.keep && len(up.in) == 0 && !l.draining {
		l.pool(up)
	} else {
		l.close(up)
	}
}

// upstreamEnded handles the upstream's close (or a failed read): the end
// of a body to the close, a cut body, or no reply.
func (l *loop) upstreamEnded(ex *exchange, err error) {
	switch {
	case ex.body && ex.left == -2 && err == errEOF:
		ex.upDone, ex.keep = true, false
		l.releaseUp(ex)
		if l.send(ex.caller, []byte("0\r\n\r\n")) && len(ex.caller.out) == 0 {
			l.complete(ex)
		}
	case ex.body:
		l.broken(ex, fmt.Errorf("reading the upstream's reply: %w", err))
	default:
		l.upstreamFailed(ex, fmt.Errorf("reading the upstream's reply: %w", err))
	}
}

// upstreamFailed ends an exchange that got no reply: a kept connection
// the upstream closed under a request that may be sent again is tried
// once more on a new one; otherwise it is failed's answer, 502 or 504,
// recorded with its code.
func (l *loop) upstreamFailed(ex *exchange, err error) {
	if ex.body {
		l.broken(ex, err)
		return
	}
	if up := ex.up; up != nil {
		ex.up, up.ex = nil, nil
		l.close(up)
	}
	if ex.reused && ex.replayable && !ex.retried {
		ex.retried = true
		l.connect(ex)
		return
	}
	code := instrument.FailureCode(err)
	l.p.logger.Warn("upstream call failed", "route", ex.rt.name, "code", code, "err", redact(err))
	if ex.call != nil {
		ex.call.Fail(code)
	}
	status := fasthttp.StatusBadGateway
	if code == instrument.CodeTimeout {
		status = fasthttp.StatusGatewayTimeout
	}
	c := ex.caller
	l.end(ex)
	l.answer(c, status, "application/json", fmt.Sprintf(`{"error":{"message":"hermes proxy: the upstream of route %s gave no reply (%s)","type":"upstream_error","code":%q}}`+"\n", ex.rt.name, code, code), false)
}

// broken ends an exchange whose reply broke off after its head: judged as
// cut and recorded; the caller's connection is cut too, as the fasthttp
// server cuts it, once what came before the cut is written.
func (l *loop) broken(ex *exchange, err error) {
	if ex.call != nil {
		ex.call.Interrupted()
		ex.call.Finish(false)
		ex.call = nil
	}
	l.p.logger.Debug("upstream reply broke off", "route", ex.rt.name, "err", redact(err))
	c, up := ex.caller, ex.up
	l.end(ex)
	if up != nil {
		l.close(up)
	}
	l.closeAfterFlush(c)
}

// closeAfterFlush closes c once what it holds is written.
func (l *loop) closeAfterFlush(c *lconn) {
	if len(c.out) == 0 || c.closed {
		l.close(c)
		return
	}
	c.closing = true
	l.setDeadline(c, l.now.Add(sendTimeout))
	l.update(c)
}

// sendTimeout bounds how long a caller that reads nothing may keep what
// is left to write to a connection being closed: nginx's send_timeout.
const sendTimeout = 60 * time.Second

// complete ends an exchange whose reply the caller has whole: recorded,
// the upstream connection kept, the caller's next request served.
func (l *loop) complete(ex *exchange) {
	if ex.call != nil {
		ex.call.Finish(false)
		ex.call = nil
	}
	c := ex.caller
	l.end(ex)
	if l.draining {
		l.close(c)
		return
	}
	if c.inFull {
		c.inFull = false
		l.update(c)
	}
	if len(c.in) > 0 {
		c.reading = l.now
		l.serve(c)
	}
}

// end frees what ex holds: its slot, its caller's state.
func (l *loop) end(ex *exchange) {
	if ex.dead {
		return
	}
	ex.dead = true
	<-ex.rt.slots
	c := ex.caller
	c.ex = nil
	l.setDeadline(c, l.now.Add(keepAliveTimeout)) // until its next request
	l.update(c)
	if up := ex.up; up != nil {
		up.ex = nil
	}
}

// answer writes a reply of the proxy's own to c.
func (l *loop) answer(c *lconn, status int, contentType, body string, closeAfter bool) {
	b := append(l.head[:0], "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(append(append(b, ' '), fasthttp.StatusMessage(status)...), "\r\nContent-Type: "...)
	b = append(append(b, contentType...), "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	if closeAfter {
		b = append(b, "\r\nConnection: close"...)
	}
	b = append(append(b, "\r\n\r\n"...), body...)
	l.head = b
	if !l.send(c, b) {
		return
	}
	if closeAfter {
		l.closeAfterFlush(c)
	}
}

// pool keeps up for its route's next request, or closes it when the pool
// is full.
func (l *loop) pool(up *lconn) {
	up.ex = nil
	up.idleAt = l.now
	conns := l.pools[up.lean]
	if len(conns) >= up.lean.t.maxIdle || l.draining {
		l.close(up)
		return
	}
	l.pools[up.lean] = append(conns, up)
	l.update(up)
}

func (l *loop) unpool(up *lconn) {
	conns := l.pools[up.lean]
	for i, c := range conns {
		if c == up {
			l.pools[up.lean] = append(conns[:i], conns[i+1:]...)
			return
		}
	}
}

// sweepPools closes the kept connections idle past their idle timeout, and
// those of routes a reload replaced.
func (l *loop) sweepPools() {
	current := map[*lean]bool{}
	for _, rt := range l.p.routes.Load().byName {
		if rt.lean != nil {
			current[rt.lean] = true
		}
	}
	for ln, conns := range l.pools {
		keep := conns[:0]
		for _, c := range conns {
			if current[ln] && l.now.Sub(c.idleAt) < ln.t.idleTimeout {
				keep = append(keep, c)
			} else {
				l.close(c)
			}
		}
		if len(keep) == 0 {
			delete(l.pools, ln)
		} else {
			l.pools[ln] = keep
		}
	}
}

// Timers.

func (l *loop) setDeadline(c *lconn, t time.Time) {
	c.deadline = t
	switch {
	case t.IsZero() && c.hidx >= 0:
		heap.Remove(&l.timers, c.hidx)
	case t.IsZero():
	case c.hidx >= 0:
		heap.Fix(&l.timers, c.hidx)
	default:
		heap.Push(&l.timers, c)
	}
}

// expire acts on the deadlines that passed.
func (l *loop) expire() {
	for len(l.timers) > 0 && !l.timers[0].deadline.After(l.now) {
		c := l.timers[0]
		l.setDeadline(c, time.Time{})
		l.expired(c)
	}
}

func (l *loop) expired(c *lconn) {
	if c.closed {
		return
	}
	if c.closing {
		l.close(c)
		return
	}
	ex := c.ex
	if ex == nil {
		switch {
		case c.bodyWait > 0:
			// The caller stopped sending its body: 408, counted apart,
			// as bodyTimedOut answers it.
			l.p.stalled.WithLabelValues(c.route).Inc()
			l.p.logger.Debug("caller stopped sending the request body", "route", c.route)
			l.answer(c, fasthttp.StatusRequestTimeout, "application/json", fmt.Sprintf(`{"error":{"message":"hermes proxy: the request body of route %s stopped arriving (client_body_timeout)","type":"invalid_request_error","code":"request_timeout"}}`+"\n", c.route), true)
		case len(c.in) > 0:
			l.answer(c, fasthttp.StatusRequestTimeout, "text/plain; charset=utf-8", "Request timeout", true)
		default:
			l.close(c)
		}
		return
	}
	lim := ex.rt.lean.limits
	last := ex.last
	if ex.paused {
		last = l.now
	}
	_, cause := limitAt(lim, l.now.Sub(ex.start), ex.body, last.Sub(ex.start))
	if cause == nil {
		switch {
		case ex.paused:
			l.setDeadline(c, ex.start.Add(lim.TotalTimeout))
		case ex.body:
			l.setDeadline(c, l.bodyDeadline(ex))
		default:
			l.setDeadline(c, ex.start.Add(min(lim.FirstByteTimeout, lim.TotalTimeout)))
		}
		return
	}
	if ex.body {
		l.broken(ex, cause)
		return
	}
	ex.retried = true // a limit is not a closed connection to try again
	l.upstreamFailed(ex, cause)
}

// timerHeap is the loop's connections with a deadline, the nearest first.
type timerHeap []*lconn

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = i, j
}
func (h *timerHeap) Push(x any) {
	c := x.(*lconn)
	c.hidx = len(*h)
	*h = append(*h, c)
}
func (h *timerHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	c.hidx = -1
	return c
}
