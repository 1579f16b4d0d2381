package proxy

import "sync"

// copyBufferSize is the buffer a reply is copied through: a page, like
// nginx's proxy_buffer_size on x86-64. An SSE event is far smaller, and
// the buffer is held for as long as a stream is open (the copy blocks in
// Read with it), so it counts in what each open stream costs: 8 KiB made
// 8 of the 90 KiB an open stream cost under make bench-proxy. A larger
// reply takes one read and one write a page; the upstream connection's
// own read buffer is a page too. httputil.ReverseProxy would allocate
// 32 KiB for every request.
const copyBufferSize = 4 << 10

// bufferPool lends ReverseProxy its copy buffers (httputil.BufferPool).
type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, copyBufferSize)
}

func (b *bufferPool) Put(buf []byte) {
	if cap(buf) == copyBufferSize {
		buf = buf[:copyBufferSize]
		b.p.Put(&buf)
	}
}
