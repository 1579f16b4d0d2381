package validate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	brrr "github.com/molecule-man/go-brrr"
)

// A reply whose body has a content coding (Content-Encoding: gzip, br,
// zstd, deflate) is judged on what it decodes to, as the caller's client
// will read it; the bytes that pass are never changed. Most providers
// compress a JSON reply when the request asks for it, and the clients
// gateways are built on ask (an OpenAI SDK's httpx, aiohttp, Go's
// transport when a gateway forwards the caller's Accept-Encoding): judged
// as it passes, every healthy reply would be invalid_json.
//
// The coded body is kept as it arrives, up to Rules.MaxBodyBytes, and
// decoded once, when the reply ends (decodeKept): Go's decoders read
// from a source and cannot be fed piece by piece without a goroutine per
// reply. So a coded stream's events are judged at its end, and its time
// to first token is not known (FirstToken stays false until Finish).
// The decoders are klauspost/compress's (gzip, zlib, raw deflate, zstd)
// and go-brrr's (Brotli), both already in the build through fasthttp.

// codings reads a Content-Encoding value: the codings applied, in order,
// without identity, lower-cased. known is false when one of them is not
// a coding this package decodes.
func codings(ce string) (list []string, known bool) {
	known = true
	for part := range strings.SplitSeq(ce, ",") {
		c := strings.ToLower(strings.TrimSpace(part))
		switch c {
		case "", "identity":
			continue
		case "x-gzip":
			c = "gzip"
		case "gzip", "deflate", "br", "zstd":
		default:
			known = false
		}
		list = append(list, c)
	}
	return list, known
}

// errTooLarge says a decoded body grew past the limit it was read to.
var errTooLarge = errors.New("decoded body over the limit")

// decodeBody undoes codings (applied in the order listed; at least one)
// on body and returns what it decodes to, at most limit+1 bytes, in a
// buffer of the bodies pool: longer, and the decoding stops there with
// errTooLarge.
func decodeBody(list []string, body []byte, limit int) ([]byte, error) {
	data, owned := body, false
	for i := len(list) - 1; i >= 0; i-- {
		out, err := decodeOne(list[i], data, getBody(), limit)
		if owned {
			putBody(data)
		}
		data, owned = out, true
		if err != nil {
			return data, fmt.Errorf("%s: %w", list[i], err)
		}
		if len(data) > limit {
			return data, errTooLarge
		}
	}
	return data, nil
}

// decodeOne undoes one coding of in, appending to out up to limit+1
// bytes.
func decodeOne(coding string, in, out []byte, limit int) ([]byte, error) {
	src := bytes.NewReader(in)
	switch coding {
	case "gzip":
		z, _ := gzipReaders.Get().(*gzip.Reader)
		if z == nil {
			z = new(gzip.Reader)
		}
		defer gzipReaders.Put(z)
		if err := z.Reset(src); err != nil {
			return out, err
		}
		return readUpTo(z, out, limit)
	case "deflate":
		// RFC 9110 says zlib (RFC 1950); some servers send raw deflate
		// (RFC 1951), which clients read too: the zlib header tells.
		if len(in) >= 2 && in[0]&0x0f == 8 && (uint16(in[0])<<8|uint16(in[1]))%31 == 0 {
			return readPooled(&zlibReaders, src, out, limit, zlib.NewReader)
		}
		return readPooled(&flateReaders, src, out, limit, func(r io.Reader) (io.ReadCloser, error) { return flate.NewReader(r), nil })
	case "br":
		b, _ := brotliReaders.Get().(*brrr.Reader)
		if b == nil {
			b = brrr.NewReader(src)
		} else {
			b.Reset(src)
		}
		defer func() {
			b.Reset(nil) // keeps its ring buffer for the next reply, lets go of in
			brotliReaders.Put(b)
		}()
		out, err := readUpTo(b, out, limit)
		if err != nil && src.Len() == 0 {
			// go-brrr's error for a stream that ends too soon has no
			// type of its own: it failed with all of the body read.
			err = fmt.Errorf("%w (%v)", io.ErrUnexpectedEOF, err)
		}
		return out, err
	case "zstd":
		d, err := zstdDecoder()
		if err != nil {
			return out, err
		}
		defer func() {
			_ = d.Reset(nil)
			zstdDecoders.Put(d)
		}()
		if err := d.Reset(src); err != nil {
			return out, err
		}
		return readUpTo(d, out, limit)
	}
	return out, fmt.Errorf("unknown coding %q", coding)
}

// readPooled reads r's decoding of src through a reader of pool (zlib's
// and flate's, which Reset with a dictionary), made by open when the pool
// has none.
func readPooled(pool *sync.Pool, src io.Reader, out []byte, limit int, open func(io.Reader) (io.ReadCloser, error)) ([]byte, error) {
	rc, _ := pool.Get().(io.ReadCloser)
	if rc == nil {
		var err error
		if rc, err = open(src); err != nil {
			return out, err
		}
	} else if err := rc.(interface {
		Reset(io.Reader, []byte) error
	}).Reset(src, nil); err != nil {
		pool.Put(rc)
		return out, err
	}
	defer pool.Put(rc)
	return readUpTo(rc, out, limit)
}

// readUpTo appends what r reads to out until r ends or out holds more
// than limit bytes.
func readUpTo(r io.Reader, out []byte, limit int) ([]byte, error) {
	for len(out) <= limit {
		if len(out) == cap(out) {
			out = append(out, 0)[:len(out)] // grow, as append does
		}
		n, err := r.Read(out[len(out):min(cap(out), limit+1)])
		out = out[:len(out)+n]
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// The decoders of the codings, reused from reply to reply: a gzip or
// zlib reader holds a 32 KiB window, a Brotli one a 32 KiB buffer and the
// ring buffer of the last body it read (up to its window, at most 16
// MiB); made afresh, a Brotli reader cost 25 kB and twice the time a
// reply (BenchmarkJudgePlainCoded). sync.Pool lets the collector take
// them back.
var gzipReaders, zlibReaders, flateReaders, brotliReaders, zstdDecoders sync.Pool

// zstdDecoder is a pooled zstd decoder, made synchronous (no goroutine of
// its own) and held to a window of 8 MiB, the least RFC 8878 asks a
// decoder to support: a frame that asks for more is refused, not
// allocated.
func zstdDecoder() (*zstd.Decoder, error) {
	if d, _ := zstdDecoders.Get().(*zstd.Decoder); d != nil {
		return d, nil
	}
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(8<<20))
}

// keepCoded keeps p, a piece of a coded body, until Finish decodes it:
// past MaxBodyBytes nothing more is kept, and the reply is judged too
// large.
func (c *Classifier) keepCoded(p []byte) {
	switch {
	case c.overflow || len(p) == 0:
	case len(c.body)+len(p) > c.v.maxBody:
		c.overflow = true
		putBody(c.body)
		c.body = nil
	default:
		if c.body == nil {
			c.body = getBody()
		}
		c.body = append(c.body, p...)
	}
}

// decodeKept decodes the coded body kept so far and feeds what it
// decodes to through Write, as if it had passed so. A body cut inside
// its coding is judged as cut; one that does not decode, as not JSON;
// one that decodes past MaxBodyBytes, as too large.
func (c *Classifier) decodeKept() {
	list, kept := c.coded, c.body
	c.coded, c.body, c.wire = nil, nil, c.size
	if c.overflow || len(kept) == 0 {
		putBody(kept) // size stays the coded size: past the cap, or nothing
		return
	}
	c.size = 0
	data, err := decodeBody(list, kept, c.v.maxBody)
	putBody(kept)
	switch {
	case errors.Is(err, errTooLarge):
		c.size, c.overflow = int64(len(data)), true
	default:
		_, _ = c.Write(data)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			c.interrupted = true
		} else if err != nil {
			c.decodeErr = err
		}
	}
	putBody(data)
}
