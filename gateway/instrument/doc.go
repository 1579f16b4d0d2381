// Package instrument gives a Go gateway the whole gateway metric contract
// in a few lines: an http.RoundTripper (for the client that calls an
// upstream) or a handler middleware (around a reverse proxy) that judges
// each upstream reply with a validate.Validator and records
//
//	llm_gateway_requests_total{route,code,verdict,reason}
//	llm_gateway_request_duration_seconds{route}   (histogram)
//	llm_gateway_response_size_bytes{route}        (histogram)
//	llm_gateway_time_to_first_token_seconds{route} (histogram, streams)
//
// on a registry the caller passes in.
//
//	m, err := instrument.NewMetrics(prometheus.DefaultRegisterer)
//	v, err := validate.New(validate.Rules{MinLength: 20})
//	client := &http.Client{Transport: m.Transport("free", v, http.DefaultTransport)}
//
// A streamed reply is judged while it passes through: the body the caller
// reads is wrapped, each piece is fed to the validator as it is read, and
// the request is recorded at the end of the body (EOF, a read error, or
// Close). Only the current event line and the completion's text of a
// stream are kept, never the stream.
//
// Around a reverse proxy, the proxy's error handler reports a call that got
// no reply with UpstreamError, so that it is recorded as the Transport
// records it (timeout or conn_error); a caller that hangs up is not
// recorded by either. `hermes proxy` records through the Call both use
// (Metrics.Begin), around its own reverse proxy.
//
// Requests carrying the ProbeHeader (synthetic probes such as hermes
// probe) are passed through unrecorded, so probe traffic never mixes with
// user traffic.
package instrument
