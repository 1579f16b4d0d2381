//go:build !linux

package proxy

import (
	"context"
	"net"

	"github.com/valyala/fasthttp"
)

// loops are the event loops of the Linux front; elsewhere there are none
// and the fasthttp server serves every connection.
type loops struct{}

func newLoops(*Proxy, *fasthttp.Server) *loops { return nil }

func (*loops) add(c net.Conn, slow *fasthttp.Server) { go func() { _ = slow.ServeConn(c) }() }

func (*loops) drain(context.Context) error { return nil }
