//go:build unix

package proxy

import (
	"net"
	"syscall"
	"testing"
)

// closedByPeer says whether the peer's end of stream is waiting on conn,
// looked at apart from alive, the code under test.
func closedByPeer(t *testing.T, conn net.Conn) bool {
	rc, err := conn.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var buf [1]byte
	eof := false
	if err := rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		eof = n == 0 && err == nil
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return eof
}
