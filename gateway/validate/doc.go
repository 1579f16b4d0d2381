// Package validate judges the content of an LLM API reply: given its
// status, headers and body (whole or fed in chunks as it streams), it
// returns a verdict — ok, soft_fail, hard_fail or rejected — and, for a
// soft failure, a reason from the gateway metric contract (invalid_json,
// missing_field, truncated, empty, too_short, fallback_phrase,
// error_body); for a rejection (an HTTP 400 the caller caused, by the
// OpenAI-style error code of its body), context_length, content_policy or
// invalid_request.
//
// It does no I/O: a gateway, the instrumentation in gateway/instrument or
// the prober in probe/ hands it what it has read.
//
//	v, err := validate.New(validate.Rules{MinLength: 20})
//	res := v.Classify(resp.StatusCode, resp.Header, body)
//
// or, for a reply that is being streamed through:
//
//	c := v.Start(resp.StatusCode, resp.Header)
//	for each chunk read: c.Write(chunk)
//	res := c.Finish()
//
// OpenAI-compatible chat completions are understood out of the box, plain
// (one JSON object) and streamed (server-sent events, data: {...} chunks
// ending with data: [DONE]). A stream is whole once it has ended cleanly
// after a final finish_reason, with or without [DONE]; one that ends
// before both, or a reply whose finish_reason is "length", is truncated.
// An error object ({"error":…}, or {"code":500,"msg":"…"}) is an
// error_body wherever it arrives: as the body, or as an event of a stream. Other APIs are judged as
// plain JSON ([FormatJSON]) or text ([FormatText]).
package validate
