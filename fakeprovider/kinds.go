package fakeprovider

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is how the provider answers a request that a fault hits.
type Kind string

// The kinds of the chat-completions API's content and transport faults.
// The first group is how a cheap route's content fails inside HTTP 200;
// the second is internal/faults' catalogue (the same names), the faults a
// route to a model provider shows.
const (
	Healthy       Kind = "healthy"        // a correct answer
	Truncated     Kind = "truncated"      // plain: finish_reason length; stream: cut before [DONE]
	ErrorTemplate Kind = "error_template" // HTTP 200 with an error object ("系统繁忙") instead of a completion
	Fallback      Kind = "fallback"       // a completion whose content is a fallback phrase
	Empty         Kind = "empty"          // a completion with empty content
	TooShort      Kind = "too_short"      // a completion of one character
	InvalidJSON   Kind = "invalid_json"   // a body (or event) that is not JSON
	Slow          Kind = "slow"           // a healthy answer after the delay (SetDelay)
	ServerError   Kind = "5xx"            // HTTP 503, on every path
	Unready       Kind = "unready"        // /v1/models without the model; completions answer 404
	Drop          Kind = "drop"           // the connection is closed without an answer, on every path
	StrictParams  Kind = "strict_params"  // healthy, but 422 for temperature > 1, top_p < 0.01 or max_tokens < 2

	RateLimitedRetry   Kind = "429_retry_after"      // HTTP 429 with Retry-After
	RateLimited        Kind = "429"                  // HTTP 429 without Retry-After
	InternalError      Kind = "500"                  // HTTP 500
	Unavailable        Kind = "503"                  // HTTP 503
	ResetBeforeHeaders Kind = "reset_before_headers" // the connection is reset before any header
	NoResponse         Kind = "no_response"          // no answer at all until the client gives up
	SlowFirstToken     Kind = "slow_first_token"     // a healthy answer whose first token comes after the delay
	StreamCut          Kind = "stream_cut"           // the connection breaks in the middle of the body
	Stall              Kind = "stall"                // the body stops in the middle until the client gives up
	MalformedChunk     Kind = "malformed_chunk"      // stream: one event is not JSON; plain: the body is not JSON
	NoDone             Kind = "no_done"              // stream: complete but no data: [DONE]; plain: healthy
	ContextLength      Kind = "context_length"       // HTTP 400 context_length_exceeded
	ContentFilter      Kind = "content_filter"       // HTTP 400 content_policy_violation
	ErrorInOK          Kind = "error_in_200"         // HTTP 200 whose body is {"code":500,"msg":"系统繁忙，请稍后重试"}
	ErrorAsStream      Kind = "error_as_stream"      // streamed: HTTP 200, text/event-stream, and the error_in_200 body without data:; plain: as error_in_200
	MaxTokensCapped    Kind = "max_tokens_capped"    // a completion ended at 4 words (finish_reason length), whatever max_tokens asked
	ErrorMidStream     Kind = "error_mid_stream"     // streamed: HTTP 200, half the answer, then an error event; plain: half the answer, an error beside it and finish_reason error
)

// Kinds lists every kind, in the order of their help.
var Kinds = []Kind{
	Healthy, Truncated, ErrorTemplate, Fallback, Empty, TooShort, InvalidJSON, Slow, ServerError, Unready, Drop, StrictParams,
	RateLimitedRetry, RateLimited, InternalError, Unavailable, ResetBeforeHeaders, NoResponse, SlowFirstToken,
	StreamCut, Stall, MalformedChunk, NoDone, ContextLength, ContentFilter, ErrorInOK, ErrorAsStream,
	MaxTokensCapped, ErrorMidStream,
}

// aliases are other names a kind is asked for by: error_body is the
// reason hermes proxy and gateway/instrument record for an error template
// inside HTTP 200, the word an operator reads on the page.
var aliases = map[string]Kind{"error_body": ErrorInOK}

// ParseKind returns the kind named s (a name of Kinds, or error_body for
// error_in_200), or an error listing the names.
func ParseKind(s string) (Kind, error) {
	if k, ok := aliases[s]; ok {
		return k, nil
	}
	if slices.Contains(Kinds, Kind(s)) {
		return Kind(s), nil
	}
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return "", fmt.Errorf("unknown fault kind %q (want one of %s, or error_body)", s, strings.Join(names, ", "))
}

// everyPath reports whether k hits /v1/models too, not only completions.
func (k Kind) everyPath() bool { return k == ServerError || k == Drop || k == Unready }
