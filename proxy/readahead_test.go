package proxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/gateway/validate"
)

// TestReadAhead: a small body of declared length is handed on in memory
// with the same bytes; a body that fails is handed on as what was read,
// then its error; a large, undeclared or 100-continue body is left as it
// is, to be streamed.
func TestReadAhead(t *testing.T) {
	small := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	req := func(body io.Reader, length int64) *http.Request {
		r, err := http.NewRequest(http.MethodPost, "http://upstream/v1/chat/completions", body)
		if err != nil {
			t.Fatal(err)
		}
		r.Body = io.NopCloser(body) // not a type net/http knows as in memory
		r.ContentLength = length
		return r
	}

	r := req(strings.NewReader(small), int64(len(small)))
	orig := r.Body
	got, _ := readAhead(r)
	if got == orig {
		t.Fatal("a small body was not read ahead")
	}
	b, err := io.ReadAll(got)
	if err != nil || string(b) != small {
		t.Errorf("read ahead: %q, %v; want %q", b, err, small)
	}

	broken := errors.New("the caller hung up")
	r = req(io.MultiReader(strings.NewReader(small[:10]), errReader{broken}), int64(len(small)))
	b, err = io.ReadAll(first(readAhead(r)))
	if string(b) != small[:10] || !errors.Is(err, broken) {
		t.Errorf("a failing body: %q, %v; want %q, %v", b, err, small[:10], broken)
	}

	large := bytes.Repeat([]byte("x"), maxReadAhead+1)
	for name, r := range map[string]*http.Request{
		"larger than maxReadAhead": req(bytes.NewReader(large), int64(len(large))),
		"length unknown":           req(strings.NewReader(small), -1),
		"100-continue": func() *http.Request {
			r := req(strings.NewReader(small), int64(len(small)))
			r.Header.Set("Expect", "100-continue")
			return r
		}(),
	} {
		if got, _ := readAhead(r); got != r.Body {
			t.Errorf("%s: the body was read ahead", name)
		}
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestRequestBodyUnchanged: through the proxy, a request body reaches the
// upstream with the same bytes and the same length framing, whether it is
// read ahead (small, length declared), streamed (larger than
// maxReadAhead) or of unknown length (chunked).
func TestRequestBodyUnchanged(t *testing.T) {
	type got struct {
		body   []byte
		length int64
		te     []string
	}
	seen := make(chan got, 1)
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("upstream reading the body: %v", err)
		}
		seen <- got{b, r.ContentLength, r.TransferEncoding}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}]}`)
	}))
	base, _, _ := startProxy(t, &Config{Routes: []Route{testRoute("free", up, validate.Rules{})}}, nil)
	small := []byte(`{"model":"m","messages":[{"role":"user","content":"Tell me about foxes."}]}`)
	large := append([]byte(`{"model":"m","messages":[{"role":"user","content":"`), bytes.Repeat([]byte("fox "), 4*maxReadAhead)...)
	large = append(large, `"}]}`...)
	for _, c := range []struct {
		name    string
		body    io.Reader
		length  int64
		chunked bool
	}{
		{"small, read ahead", bytes.NewReader(small), int64(len(small)), false},
		{"larger than maxReadAhead", bytes.NewReader(large), int64(len(large)), false},
		{"length unknown", io.MultiReader(bytes.NewReader(small)), -1, true},
	} {
		req, err := http.NewRequest(http.MethodPost, base+"/free/v1/chat/completions", c.body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = c.length
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		g := <-seen
		want := small
		if c.length == int64(len(large)) {
			want = large
		}
		if !bytes.Equal(g.body, want) {
			t.Errorf("%s: the upstream got %d bytes, want the %d sent", c.name, len(g.body), len(want))
		}
		if chunked := len(g.te) > 0 && g.te[0] == "chunked"; chunked != c.chunked || (!c.chunked && g.length != c.length) {
			t.Errorf("%s: the upstream got Content-Length %d, Transfer-Encoding %q; want %d, chunked %v", c.name, g.length, g.te, c.length, c.chunked)
		}
	}
}

func first(rc io.ReadCloser, _ []byte) io.ReadCloser { return rc }
