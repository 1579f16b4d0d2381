package validate

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	brrr "github.com/molecule-man/go-brrr"
)

// encode applies the codings of a Content-Encoding value to data, in
// order, as an upstream would ("deflate-raw" is a raw deflate body sent
// as deflate, as some servers do).
func encode(t testing.TB, ce string, data []byte) []byte {
	t.Helper()
	for c := range strings.SplitSeq(ce, ",") {
		var b bytes.Buffer
		var w interface {
			Write([]byte) (int, error)
			Close() error
		}
		var err error
		switch strings.TrimSpace(c) {
		case "gzip", "x-gzip":
			w = gzip.NewWriter(&b)
		case "deflate":
			w = zlib.NewWriter(&b)
		case "deflate-raw":
			w, err = flate.NewWriter(&b, flate.DefaultCompression)
		case "br":
			w, err = brrr.NewWriter(&b, 5)
		case "zstd":
			w, err = zstd.NewWriter(&b)
		case "identity":
			continue
		default:
			t.Fatalf("no encoder for %q", c)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		data = b.Bytes()
	}
	return data
}

// classifyPieces judges body fed in pieces of n bytes, as a proxy passes
// it.
func classifyPieces(v *Validator, status int, header http.Header, body []byte, n int) Result {
	c := v.Start(status, header)
	for len(body) > 0 {
		k := min(n, len(body))
		_, _ = c.Write(body[:k])
		body = body[k:]
	}
	return c.Finish()
}

// TestCodedRepliesJudgedAsDecoded: a reply in a content coding gets the
// verdict, reason and facts its decoded body gets, and Bytes counts what
// passed. Each coding runs twice, so that its pooled decoder is reused.
func TestCodedRepliesJudgedAsDecoded(t *testing.T) {
	v := MustNew(Rules{MinLength: 5})
	long := "Paris is the capital and most populous city of France, on the Seine."
	bodies := []struct {
		name   string
		status int
		ct     string
		body   string
		want   Verdict
		reason Reason
	}{
		{"healthy", 200, "application/json", completion(long, "stop"), OK, ""},
		{"fallback phrase", 200, "application/json", completion("系统繁忙", "stop"), SoftFail, ReasonFallbackPhrase},
		{"finish length", 200, "application/json", completion(long, "length"), SoftFail, ReasonTruncated},
		{"error object", 200, "application/json", `{"error":{"message":"rate limit reached","type":"requests"}}`, SoftFail, ReasonErrorBody},
		{"stream", 200, "text/event-stream", sse(delta("Paris is "), delta("the capital."), finishChunk("stop"), "[DONE]"), OK, ""},
		{"stream cut", 200, "text/event-stream", sse(delta("Paris is "), delta("the capital.")), SoftFail, ReasonTruncated},
		{"stream without its type", 200, "application/json", sse(delta("Paris is "), delta("the capital."), finishChunk("stop"), "[DONE]"), OK, ""},
		{"rejected", 400, "application/json", `{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`, Rejected, ReasonContextLength},
	}
	for _, ce := range []string{"gzip", "x-gzip", "deflate", "deflate-raw", "br", "zstd", "gzip, br", "identity, zstd"} {
		for round := range 2 {
			for _, b := range bodies {
				plain := v.Classify(b.status, http.Header{"Content-Type": {b.ct}}, []byte(b.body))
				if plain.Verdict != b.want || plain.Reason != b.reason {
					t.Fatalf("%s: uncoded %s/%s, the test wants %s/%s", b.name, plain.Verdict, plain.Reason, b.want, b.reason)
				}
				coded := encode(t, ce, []byte(b.body))
				header := http.Header{"Content-Type": {b.ct}, "Content-Encoding": {strings.Replace(ce, "deflate-raw", "deflate", 1)}}
				got := classifyPieces(v, b.status, header, coded, 7)
				want := plain
				want.Bytes = int64(len(coded))
				if got != want {
					t.Errorf("%s, %s (round %d):\n got %+v\nwant %+v", ce, b.name, round, got, want)
				}
			}
		}
	}
}

// TestCodedRepliesThatFail: a coded body that does not decode, one cut
// inside its coding, one that decodes or passes past MaxBodyBytes, an
// empty one, and one in a coding nothing here decodes.
func TestCodedRepliesThatFail(t *testing.T) {
	v := MustNew(Rules{MaxBodyBytes: 64 << 10})
	healthy := []byte(completion("Paris is the capital and most populous city of France.", "stop"))
	gz := encode(t, "gzip", healthy)
	corrupt := append([]byte{}, gz...)
	for i := 12; i < len(corrupt)-8; i++ {
		corrupt[i] ^= 0x5a
	}
	bomb := encode(t, "gzip", bytes.Repeat([]byte(" "), 1<<20))
	noise := make([]byte, 80<<10)
	_, _ = rand.Read(noise)
	tests := []struct {
		name   string
		status int
		ce     string
		body   []byte
		want   Verdict
		reason Reason
		detail string
	}{
		{"does not decode", 200, "gzip", corrupt, SoftFail, ReasonInvalidJSON, "the body does not decode: gzip: "},
		{"not gzip at all", 200, "gzip", healthy, SoftFail, ReasonInvalidJSON, "the body does not decode: gzip: "},
		{"cut inside its coding", 200, "gzip", gz[:len(gz)-12], SoftFail, ReasonTruncated, "the body was cut"},
		{"cut inside brotli", 200, "br", encode(t, "br", healthy)[:20], SoftFail, ReasonTruncated, "the body was cut"},
		{"decodes past the cap", 200, "gzip", bomb, SoftFail, ReasonBodyTooLarge, "the reply is longer"},
		{"passes past the cap", 200, "gzip", noise, SoftFail, ReasonBodyTooLarge, "the reply is longer"},
		{"empty", 200, "gzip", nil, SoftFail, ReasonEmpty, "empty body"},
		{"a coding not decoded here", 200, "compress", healthy, OK, "", `not judged: Content-Encoding "compress"`},
		{"a 400 in a coding not decoded here", 400, "compress", healthy, HardFail, "", "HTTP 400"},
		{"a 503 in gzip", 503, "gzip", gz, HardFail, "", "HTTP 503"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			header := http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {tc.ce}}
			got := classifyPieces(v, tc.status, header, tc.body, 4096)
			if got.Verdict != tc.want || got.Reason != tc.reason || !strings.HasPrefix(got.Detail, tc.detail) {
				t.Errorf("got %s/%s %q; want %s/%s %q…", got.Verdict, got.Reason, got.Detail, tc.want, tc.reason, tc.detail)
			}
			if got.Bytes != int64(len(tc.body)) {
				t.Errorf("Bytes %d; want %d, what passed", got.Bytes, len(tc.body))
			}
		})
	}
}

// TestCodingsAcrossHeaderLines: codings listed on two header lines are
// applied in the order of the lines; StartEncoded takes the same list.
func TestCodingsAcrossHeaderLines(t *testing.T) {
	v := MustNew(Rules{})
	body := encode(t, "zstd, br", []byte(completion("Paris is the capital of France.", "stop")))
	header := http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"zstd", "br"}}
	if got := v.Classify(200, header, body); got.Verdict != OK {
		t.Errorf("two lines: %+v", got)
	}
	c := v.StartEncoded(200, "application/json", "ZSTD , br")
	_, _ = c.Write(body)
	if got := c.Finish(); got.Verdict != OK {
		t.Errorf("StartEncoded: %+v", got)
	}
}

// FuzzCoded holds the judge of coded bodies to two properties: a body
// sent in a coding is judged as it is sent uncoded (but for Bytes, what
// passed), however the coded bytes are split; and any bytes at all,
// claimed to be in a coding, are judged without a panic, with a known
// verdict, and with Bytes what passed. Its seeds run in go test.
func FuzzCoded(f *testing.F) {
	f.Add([]byte(completion("Paris is the capital of France.", "stop")), uint8(0), uint(9), false)
	f.Add([]byte(sse(delta("Paris"), finishChunk("stop"), "[DONE]")), uint8(1), uint(3), false)
	f.Add([]byte(`{"code":500,"msg":"系统繁忙"}`), uint8(2), uint(1), false)
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, uint8(0), uint(4), true)
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x05, 0x29, 0, 0}, uint8(2), uint(2), true)
	f.Add([]byte{0x0b, 0x02, 0x80}, uint8(1), uint(1), true)
	list := []string{"gzip", "br", "zstd", "deflate", "deflate-raw"}
	v := MustNew(Rules{MinLength: 3, MaxBodyBytes: 64 << 10})
	f.Fuzz(func(t *testing.T, body []byte, which uint8, cut uint, raw bool) {
		ce := list[int(which)%len(list)]
		header := http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {strings.Replace(ce, "deflate-raw", "deflate", 1)}}
		coded := body
		if !raw {
			coded = encode(t, ce, body)
		}
		c := v.Start(200, header)
		a := int(cut % uint(len(coded)+1))
		_, _ = c.Write(coded[:a])
		_, _ = c.Write(coded[a:])
		got := c.Finish()
		if got.Bytes != int64(len(coded)) {
			t.Fatalf("Bytes %d, %d passed", got.Bytes, len(coded))
		}
		if got.Verdict != OK && got.Verdict != SoftFail {
			t.Fatalf("a 2xx judged %s", got.Verdict)
		}
		if raw {
			return
		}
		want := v.Classify(200, http.Header{"Content-Type": {"application/json"}}, body)
		want.Bytes = got.Bytes
		if got != want {
			t.Fatalf("coded %s:\n got %+v\nwant %+v", ce, got, want)
		}
	})
}
