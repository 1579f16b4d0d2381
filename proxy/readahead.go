package proxy

import (
	"bytes"
	"io"
	"net/http"
)

// maxReadAhead is the largest request body read before the upstream call
// (see readAhead): a page.
const maxReadAhead = 4 << 10

// readAhead reads a small request body (its length declared, at most
// maxReadAhead, no Expect: 100-continue) before the upstream call and
// returns it as an in-memory reader; any other body is returned as it
// is. net/http's transport sends the headers of a request whose body it
// cannot tell is in memory in a write of their own, in case the body is
// slow to come (and httputil.ReverseProxy hands it the caller's body
// behind a wrapper of its own), so that the upstream reads the headers
// and the body apart. A chat request of a few hundred bytes arrives with
// its headers, so the two now leave in one write, as nginx sends them
// (its proxy_request_buffering, on by default, reads bodies up to
// client_body_buffer_size, 16 KiB, whole). A larger body is streamed as
// before. The bytes sent are the same; a read that fails hands the
// transport what was read followed by the body's error, as if it had
// read the body itself. whole is the body when it was read whole (nil
// otherwise): the request can then be sent again (GetBody).
func readAhead(req *http.Request) (body io.ReadCloser, whole []byte) {
	body = req.Body
	if req.ContentLength <= 0 || req.ContentLength > maxReadAhead || body == nil || body == http.NoBody || req.Header.Get("Expect") != "" {
		return body, nil
	}
	buf := make([]byte, req.ContentLength)
	n, err := io.ReadFull(body, buf)
	if err != nil {
		return readCloser{io.MultiReader(bytes.NewReader(buf[:n]), body), body}, nil
	}
	_ = body.Close()
	return io.NopCloser(bytes.NewReader(buf)), buf
}

type readCloser struct {
	io.Reader
	io.Closer
}
