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
func alive(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var buf [1]byte
	open := false
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && open
}
