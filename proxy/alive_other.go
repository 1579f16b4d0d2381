//go:build !unix

package proxy

import "net"

// liveness cannot look at the socket here: a pooled connection the
// upstream closed fails its next request, retried once when that is
// safe.
type liveness struct{}

func newLiveness(net.Conn) *liveness { return &liveness{} }

func (*liveness) alive() bool { return true }

// callerGone cannot look either: a caller that hangs up is seen when a
// write to it fails.
func callerGone(net.Conn) bool { return false }
