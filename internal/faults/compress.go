package faults

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	brrr "github.com/molecule-man/go-brrr"
)

// preferredCoding is the coding a Server that compresses answers in, of
// those an Accept-Encoding header lists (without q=0): br, then zstd,
// then gzip; "" for none of them.
func preferredCoding(accept []string) string {
	offered := map[string]bool{}
	for _, line := range accept {
		for part := range strings.SplitSeq(line, ",") {
			name, params, _ := strings.Cut(part, ";")
			q := 1.0
			if k, v, ok := strings.Cut(params, "="); ok && strings.TrimSpace(k) == "q" {
				q, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
			}
			if q > 0 {
				offered[strings.ToLower(strings.TrimSpace(name))] = true
			}
		}
	}
	for _, c := range []string{"br", "zstd", "gzip"} {
		if offered[c] {
			return c
		}
	}
	return ""
}

// compressor is the http.ResponseWriter of a Server that compresses: a
// reply whose Content-Type is application/json, and that has no coding
// of its own, is sent in coding (dropping its Content-Length); anything
// else passes as written. Flush flushes the coder too.
type compressor struct {
	http.ResponseWriter
	coding  string
	enc     io.WriteCloser
	flusher interface{ Flush() error }
	started bool
}

func (c *compressor) WriteHeader(status int) {
	if c.started {
		return
	}
	c.started = true
	h := c.Header()
	if c.coding != "" && h.Get("Content-Encoding") == "" && strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		h.Del("Content-Length")
		h.Set("Content-Encoding", c.coding)
		h.Add("Vary", "Accept-Encoding")
		switch c.coding {
		case "gzip":
			z := gzip.NewWriter(c.ResponseWriter)
			c.enc, c.flusher = z, z
		case "zstd":
			z, _ := zstd.NewWriter(c.ResponseWriter, zstd.WithEncoderConcurrency(1))
			c.enc, c.flusher = z, z
		case "br":
			b, _ := brrr.NewWriter(c.ResponseWriter, 5)
			c.enc, c.flusher = b, b
		}
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *compressor) Write(p []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	if c.enc != nil {
		return c.enc.Write(p)
	}
	return c.ResponseWriter.Write(p)
}

// FlushError is what http.ResponseController's Flush calls.
func (c *compressor) FlushError() error {
	if c.flusher != nil {
		if err := c.flusher.Flush(); err != nil {
			return err
		}
	}
	return http.NewResponseController(c.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection (Hijack).
func (c *compressor) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// close ends the coded body.
func (c *compressor) close() {
	if c.enc != nil {
		_ = c.enc.Close()
	}
}
