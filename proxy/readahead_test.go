package proxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
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
	got := readAhead(r)
	if got == orig {
		t.Fatal("a small body was not read ahead")
	}
	b, err := io.ReadAll(got)
	if err != nil || string(b) != small {
		t.Errorf("read ahead: %q, %v; want %q", b, err, small)
	}

	broken := errors.New("the caller hung up")
	r = req(io.MultiReader(strings.NewReader(small[:10]), errReader{broken}), int64(len(small)))
	b, err = io.ReadAll(readAhead(r))
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
		if got := readAhead(r); got != r.Body {
			t.Errorf("%s: the body was read ahead", name)
		}
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
