package validate

// Verdict is the judgement of one reply, the verdict label of the gateway
// metric contract.
type Verdict string

// The verdicts.
const (
	// OK is a 2xx reply whose content passed every rule.
	OK Verdict = "ok"
	// SoftFail is a 2xx reply whose content failed a rule; Reason says which.
	SoftFail Verdict = "soft_fail"
	// HardFail is any reply that is not 2xx and not Rejected (also a
	// timeout or a connection error, which callers classify themselves).
	HardFail Verdict = "hard_fail"
	// Rejected is an HTTP 400 whose OpenAI-style error code says the
	// caller caused it (a prompt over the context length, one the content
	// policy refused, an invalid request); Reason says which. The route
	// answered as it should: the shipped policy does not count it as a
	// failure of the route.
	Rejected Verdict = "rejected"
)

// Reason says why a reply is a soft failure or a rejection; it is empty
// for the other verdicts. The values are the reason label of the gateway
// metric contract.
type Reason string

// The reasons, in the order the checks run: the first that applies wins.
const (
	ReasonNone           Reason = ""
	ReasonEmpty          Reason = "empty"           // no body, or a completion without content
	ReasonErrorBody      Reason = "error_body"      // the body is an error (an error object or template) instead of a reply
	ReasonInvalidJSON    Reason = "invalid_json"    // the body, an event or the structured content is not JSON
	ReasonMissingField   Reason = "missing_field"   // a required field is absent or null, or the schema is not met
	ReasonTruncated      Reason = "truncated"       // finish_reason "length", a stream cut before [DONE], a body cut while read
	ReasonFallbackPhrase Reason = "fallback_phrase" // a short completion that is a canned phrase ("系统繁忙")
	ReasonTooShort       Reason = "too_short"       // fewer characters than Rules.MinLength
	ReasonBodyTooLarge   Reason = "body_too_large"  // a 2xx body longer than Rules.MaxBodyBytes (a gzip bomb, an endless body)
)

// The reasons of a rejection (verdict Rejected).
const (
	ReasonContextLength  Reason = "context_length"  // the prompt (with max_tokens) is over the model's context length
	ReasonContentPolicy  Reason = "content_policy"  // the content policy or filter refused the prompt
	ReasonInvalidRequest Reason = "invalid_request" // another invalid request (a missing or bad parameter)
)

// RejectedReasons lists every rejection reason.
var RejectedReasons = []Reason{ReasonContextLength, ReasonContentPolicy, ReasonInvalidRequest}

// Reasons lists every soft-failure reason.
var Reasons = []Reason{
	ReasonInvalidJSON, ReasonMissingField, ReasonTruncated, ReasonEmpty,
	ReasonTooShort, ReasonFallbackPhrase, ReasonErrorBody, ReasonBodyTooLarge,
}

// Usage is the token accounting a reply reported (OpenAI's usage object);
// zero when it reported none.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	// ReasoningTokens is the part of the completion spent on thinking
	// (completion_tokens_details.reasoning_tokens). OpenAI counts it in
	// CompletionTokens; some gateways in front of Gemini leave it out.
	ReasoningTokens int
}

// Generated is how many tokens the reply generated, thinking included,
// the most its counts show: CompletionTokens, as OpenAI counts it; or
// TotalTokens less PromptTokens, or ReasoningTokens, where a gateway
// left the thinking out of CompletionTokens (Gemini's thoughts through
// several OpenAI-compatible gateways).
func (u Usage) Generated() int {
	n := max(u.CompletionTokens, u.ReasoningTokens)
	if u.TotalTokens > u.PromptTokens {
		n = max(n, u.TotalTokens-u.PromptTokens)
	}
	return n
}

// Result is what a reply was judged to be.
type Result struct {
	Verdict Verdict
	Reason  Reason
	// Detail explains a soft or hard failure for logs ("finish_reason
	// length", "missing choices[0].message"); never a copy of the body
	// beyond a few characters.
	Detail string
	// Status is the HTTP status the reply came with.
	Status int
	// Stream says whether the body was read as server-sent events.
	Stream bool
	// Bytes is the size of the body seen.
	Bytes int64
	// Chars is the number of characters (runes) of the completion's content
	// (the body's, for FormatText).
	Chars int
	// Content is the completion's content, kept up to Rules.MaxBodyBytes.
	Content string
	// FinishReason is the completion's finish_reason, when it had one.
	FinishReason string
	// Usage is the token usage the reply reported.
	Usage Usage
}

func okResult() Result { return Result{Verdict: OK} }
