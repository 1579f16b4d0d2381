package probe

import (
	"fmt"

	"github.com/hermes-failover/hermes/gateway/validate"
)

// The reasons of a hard failure in llm_probe_results_total: classes of the
// gateway contract's code label (the status as text, timeout, conn_error),
// so that the label takes a fixed, small set of values whatever status a
// provider invents.
const (
	ReasonTimeout   validate.Reason = "timeout"    // no answer within the layer's timeout
	ReasonConnError validate.Reason = "conn_error" // no HTTP answer: refused, reset, a redirect to another host
	ReasonHTTP429   validate.Reason = "http_429"   // rate limited or quota spent
	ReasonHTTP4xx   validate.Reason = "http_4xx"   // another 4xx (401, 403, 404, 408, 422, a 400 without a known code)
	ReasonHTTP5xx   validate.Reason = "http_5xx"   // a 5xx
	ReasonHTTPOther validate.Reason = "http_other" // any other status that is not a success (1xx, 3xx, ≥ 600)
	ReasonRejected  validate.Reason = "rejected"   // a 400 the gateway contract calls rejected (context_length, content_policy, invalid_request)
)

// HardReasons lists every hard-failure reason of llm_probe_results_total.
var HardReasons = []validate.Reason{ReasonTimeout, ReasonConnError, ReasonHTTP429, ReasonHTTP4xx, ReasonHTTP5xx, ReasonHTTPOther, ReasonRejected}

// SoftReasons lists every soft-failure reason of llm_probe_results_total:
// the validator's and the prober's own body_too_large.
var SoftReasons = append(append([]validate.Reason(nil), validate.Reasons...), ReasonBodyTooLarge)

// resultLabels are the verdict and reason llm_probe_results_total counts a
// result under. The verdict is the gateway contract's without rejected:
// a probe's prompts are short and fixed, so a route that rejects them is
// broken, and the result is a hard failure with reason rejected.
// A result the layer takes as a success (a boundary case cut by
// max_tokens) is ok.
func resultLabels(o outcome) (verdict validate.Verdict, reason validate.Reason) {
	switch {
	case o.ok:
		return validate.OK, validate.ReasonNone
	case o.res.Verdict == validate.SoftFail:
		return validate.SoftFail, o.res.Reason
	case o.res.Verdict == validate.Rejected:
		return validate.HardFail, ReasonRejected
	}
	return validate.HardFail, hardReason(o.code)
}

// hardReason classes a hard failure's code (the status as text, timeout
// or conn_error).
func hardReason(code string) validate.Reason {
	switch code {
	case codeTimeout:
		return ReasonTimeout
	case codeConnError:
		return ReasonConnError
	}
	var status int
	if _, err := fmt.Sscan(code, &status); err != nil {
		return ReasonHTTPOther
	}
	switch {
	case status == 429:
		return ReasonHTTP429
	case status >= 400 && status < 500:
		return ReasonHTTP4xx
	case status >= 500 && status < 600:
		return ReasonHTTP5xx
	}
	return ReasonHTTPOther
}

// resultSeries lists the (verdict, reason) pairs a layer's results are
// counted under, the series New creates at 0: ok, every hard-failure
// reason and, except for liveness (an HTTP answer below 500 or not), every
// soft-failure reason. A series that first appears at 1 hides its first
// increment from increase() and rate(); created at 0, the first result
// counts.
func resultSeries(layer string) [][2]string {
	out := [][2]string{{string(validate.OK), ""}}
	if layer != Liveness {
		for _, r := range SoftReasons {
			out = append(out, [2]string{string(validate.SoftFail), string(r)})
		}
	}
	for _, r := range HardReasons {
		out = append(out, [2]string{string(validate.HardFail), string(r)})
	}
	return out
}
