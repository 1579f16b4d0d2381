package validate

// What the judge shares among the reply formats it reads: OpenAI's chat
// completions (plain.go, stream.go), Anthropic's Messages API
// (messages.go) and OpenAI's Responses API (responses.go).

// finishName is how the reply said it ended, for details: its
// finish_reason, stop_reason or status.
func (c *Classifier) finishName() string {
	switch c.v.format {
	case FormatAnthropicMessages:
		return "stop_reason " + c.finish
	case FormatOpenAIResponses:
		return responseFinishName(c.finish)
	}
	return "finish_reason " + c.finish
}

// streamEnds names what ends a whole stream, for details.
func (c *Classifier) streamEnds() string {
	switch c.v.format {
	case FormatAnthropicMessages:
		return "a stop_reason or message_stop"
	case FormatOpenAIResponses:
		return "response.completed, response.incomplete or response.failed"
	}
	return "a finish_reason or [DONE]"
}

// lengthStop says whether the reply ended at a token limit: finish_reason
// length, or stop_reason max_tokens or model_context_window_exceeded.
func (c *Classifier) lengthStop() bool {
	if c.v.format == FormatAnthropicMessages {
		return c.finish == "max_tokens" || c.finish == "model_context_window_exceeded"
	}
	return c.finish == "length"
}

// judgeText judges a plain reply's completion, text, once its format has
// found it: answered says it also holds an answer without text (a tool
// call, a refusal, a filtered answer).
func (c *Classifier) judgeText(text string, answered bool) Result {
	if c.discard {
		c.content.chars += runeCount(text)
	} else {
		c.content.add(text)
	}
	if c.lengthStop() {
		return c.lengthFinish(text, c.content.chars)
	}
	return c.v.judgeContent(text, c.content.chars, false, answered)
}

// notAReply judges a plain body that is an object without the member
// where its format keeps the reply (what): an error envelope or template
// is an error body; anything else misses the member.
func (c *Classifier) notAReply(doc rawJSON, what string) Result {
	if rawErrorEnvelope(doc) {
		return soft(ReasonErrorBody, "the body is an error object")
	}
	if p, ok := rawErrorInStrings(doc, c.v.errorPatterns); ok {
		return soft(ReasonErrorBody, "the body is an error template (%q)", p)
	}
	return soft(ReasonMissingField, "missing %s", what)
}

// untypedEvent judges an event of a typed stream (the Messages or the
// Responses API's) whose data has no type: an error object, envelope or
// template is an error body; anything else misses its type.
func (c *Classifier) untypedEvent(r *reply) {
	switch {
	case r.error.present() || rawErrorEnvelope(r.doc):
		c.streamProblem(ReasonErrorBody, "event %d is an error object", c.events)
	default:
		if p, ok := rawErrorInStrings(r.doc, c.v.errorPatterns); ok {
			c.streamProblem(ReasonErrorBody, "event %d is an error template (%q)", c.events, p)
			return
		}
		c.streamProblem(ReasonMissingField, "event %d has no type", c.events)
	}
}
