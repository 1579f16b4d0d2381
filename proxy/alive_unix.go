//go:build unix

package proxy

import (
	"net"
	"syscall"
)

// alive says whether an idle connection is still open and has nothing
// waiting to be read: a look at its socket (recv with MSG_PEEK and
// MSG_DONTWAIT) that takes nothing from it. net/http's Transport learns
// the same from its readLoop goroutine, blocked in a read on every idle
// connection; an upstream that closed the connection (its keep-alive
// timeout) has sent an end of stream, and one that sent bytes nobody
// asked for cannot be trusted with the next request.
//
// A liveness is made once per connection, when it is dialled, so that
// the look before each reuse allocates nothing: SyscallConn's RawConn
// and the function Control runs were four allocations per plain reply.
type liveness struct {
	rc   syscall.RawConn // nil: the connection has no socket to look at
	look func(fd uintptr)
	open bool
	buf  [1]byte
}

func newLiveness(conn net.Conn) *liveness {
	l := &liveness{}
	if sc, ok := conn.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			l.rc = rc
		}
	}
	l.look = func(fd uintptr) {
		_, _, err := syscall.Recvfrom(int(fd), l.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		l.open = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
	}
	return l
}

// alive is the look at the socket; it is not safe for concurrent use
// (an idle connection has one user, the one taking it from the pool).
func (l *liveness) alive() bool {
	if l.rc == nil {
		return true
	}
	l.open = false
	return l.rc.Control(l.look) == nil && l.open
}

// callerGone says whether the caller of conn has hung up: its end of
// stream (or a reset) is waiting on the socket. Bytes waiting (a next
// request, pipelined) say nothing: the caller is taken to be there.
// net/http's server learns this from a background read it starts for
// each request; fasthttp's server does not look, so the proxy peeks
// while it waits on the upstream (see clock.fire).
func callerGone(conn net.Conn) bool {
	open, data := peek(conn)
	return !open && !data
}

// peek looks at conn's socket without taking anything from it: open
// when nothing is waiting, data when bytes are. It goes through Control,
// not Read, so that a read deadline that has passed does not stop it.
func peek(conn net.Conn) (open, data bool) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return true, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false, false
	}
	var buf [1]byte
	err = rc.Control(func(fd uintptr) {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		data = rerr == nil && n > 0
	})
	return err == nil && open, err == nil && data
}
