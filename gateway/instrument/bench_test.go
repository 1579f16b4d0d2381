package instrument_test

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/gateway/validate"
)

// BenchmarkCall records a plain chat completion as hermes proxy records
// each one (Begin, ReplyEncoded, Write, Finish, the content discarded),
// from 64 callers at once on one route: what the recording costs a
// reply, the judge included.
func BenchmarkCall(b *testing.B) {
	m := instrument.MustNewMetrics(prometheus.NewRegistry())
	v := validate.MustNew(validate.Rules{})
	body := []byte(`{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Paris is the capital of France, and its largest city."},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}}`)
	b.SetParallelism(32)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c := m.Begin("free", v)
			c.DiscardContent()
			c.ReplyEncoded(http.StatusOK, "application/json", "")
			c.Write(body)
			if r := c.Finish(false); r.Verdict != validate.OK {
				b.Error(r)
				return
			}
		}
	})
}
