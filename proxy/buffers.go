package proxy

import "sync"

// copyBufferSize is the buffer a reply is copied through: a page or two,
// like nginx's proxy_buffer_size. An SSE event is far smaller, and the
// buffer is held for as long as a stream is open, so it is most of what an
// open stream costs beyond its connections; httputil.ReverseProxy would
// allocate 32 KiB for every request.
const copyBufferSize = 8 << 10

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
