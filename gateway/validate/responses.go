package validate

import "strings"

// OpenAI's Responses API (POST /v1/responses), which OpenAI's newer SDKs,
// its Codex CLI and the relays in front of them call, is judged by
// FormatOpenAIResponses with the verdicts and reasons of a chat
// completion. Where each fact lies:
//
//   - The reply is a response whose output is a list of items: the text
//     of its "message" items' "output_text" parts is the completion; a
//     "refusal" part is the model's answer, as a chat completion's
//     refusal is; "reasoning" items are thinking, not content; any other
//     item (function_call, a built-in tool's call) is an answer without
//     text.
//   - status says how it ended: completed is whole; incomplete with
//     incomplete_details.reason max_output_tokens is finish_reason length
//     (held to the request's max_output_tokens), with content_filter a
//     withheld answer; failed, or an error object, is an error body;
//     queued and in_progress (a background response, fetched later) and
//     cancelled (the caller's own) are not judged on content.
//   - usage counts input_tokens and output_tokens, thinking included.
//   - A stream is typed events (response.created, response.output_text.delta,
//     …) ending with response.completed, response.incomplete or
//     response.failed, each carrying the response; an error arrives as an
//     error event or response.failed. It is whole once one of the three
//     has come, cut (truncated) otherwise; event types this package does
//     not know are let pass.

// Response statuses and incomplete reasons the judge reads.
const (
	responseIncompleteLength = "max_output_tokens"
	responseIncompleteFilter = "content_filter"
)

// responseFinish is the finish of a response in a chat completion's words
// (kept in Classifier.finish): "length", "content_filter", "error",
// "stop", or "" while it has not ended.
func responseFinish(status, reason string) string {
	switch status {
	case "completed":
		return "stop"
	case "failed":
		return "error"
	case "incomplete":
		switch reason {
		case responseIncompleteLength:
			return "length"
		case responseIncompleteFilter:
			return "content_filter"
		}
		return "incomplete"
	case "queued", "in_progress", "cancelled":
		return "not_judged"
	}
	return ""
}

// responseFinishName is a response's finish as its status says it.
func responseFinishName(finish string) string {
	switch finish {
	case "stop":
		return "status completed"
	case "error":
		return "status failed"
	case "length":
		return "status incomplete (" + responseIncompleteLength + ")"
	case "content_filter":
		return "status incomplete (" + responseIncompleteFilter + ")"
	}
	return "status " + finish
}

// outputItems is what the judge reads of a response's output.
type outputItems struct {
	text      strings.Builder
	answered  bool // a refusal, a tool call or another item without text
	generated int
}

// add reads one output item.
func (o *outputItems) add(item rawJSON) {
	f := item.fields("type", "content", "arguments", "summary")
	switch typ, _ := f[0].str(); typ {
	case "message":
		f[1].elements(func(part rawJSON) bool {
			p := part.fields("type", "text", "refusal")
			switch kind, _ := p[0].str(); kind {
			case "output_text":
				if s, ok := p[1].str(); ok {
					o.text.WriteString(s)
					o.generated += len(p[1]) - 2
				}
			case "refusal":
				o.answered = true
				o.generated += len(p[2])
			}
			return true
		})
	case "reasoning":
		o.generated += len(f[3])
	default:
		o.answered = true
		o.generated += len(f[2])
	}
}

// responseUsage reads a response's usage.
func responseUsage(usage rawJSON) Usage {
	f := usage.fields("input_tokens", "output_tokens", "total_tokens", "output_tokens_details")
	n := func(v rawJSON) int { return max(tokenCount(v), 0) }
	u := Usage{PromptTokens: n(f[0]), CompletionTokens: n(f[1]), TotalTokens: n(f[2]),
		ReasoningTokens: n(f[3].field("reasoning_tokens"))}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u
}

// finishResponse judges a plain reply of the Responses API, doc an
// object that is not an error object.
func (c *Classifier) finishResponse(doc rawJSON) Result {
	f := doc.fields("output", "status", "incomplete_details", "usage")
	if !f[0].isArray() {
		return c.notAReply(doc, "output")
	}
	status, _ := f[1].str()
	reason, _ := f[2].field("reason").str()
	c.finish = responseFinish(status, reason)
	switch c.finish {
	case "error":
		return soft(ReasonErrorBody, "%s: the provider reported its failure in the response", c.finishName())
	case "not_judged":
		return okResult()
	}
	var o outputItems
	f[0].elements(func(item rawJSON) bool {
		o.add(item)
		return true
	})
	c.usage = responseUsage(f[3])
	c.generated += o.generated
	return c.judgeText(o.text.String(), o.answered || filteredFinish(c.finish))
}

// dispatchResponse judges one event of a Responses API stream, data its
// data.
func (c *Classifier) dispatchResponse(data []byte) {
	r, ok := c.scanEvent(data)
	if !ok {
		return
	}
	doc := r.doc
	f := doc.fields("type", "delta", "response", "item")
	typ, _ := f[0].str()
	switch typ {
	case "error", "response.failed":
		c.streamProblem(ReasonErrorBody, "event %d is an error (%s)", c.events, typ)
	case "response.output_text.delta":
		if c.content.addRaw(f[1]) {
			c.firstToken = c.firstToken || len(f[1]) > len(`""`)
			c.generated += len(f[1]) - 2
		}
	case "response.refusal.delta":
		c.refused, c.firstToken = true, true
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		// A thinking token is the route's first, as in a chat
		// completion's stream.
		if hasText(f[1]) {
			c.firstToken = true
			c.generated += len(f[1]) - 2
		}
	case "response.function_call_arguments.delta":
		c.toolCalls, c.firstToken = true, true
	case "response.output_item.added":
		if kind, _ := f[3].field("type").str(); kind != "message" && kind != "reasoning" && kind != "" {
			c.toolCalls, c.firstToken = true, true // a tool's call, answered without text
		}
	case "response.completed", "response.incomplete":
		resp := f[2].fields("status", "incomplete_details", "usage")
		status, _ := resp[0].str()
		if status == "" {
			status = strings.TrimPrefix(typ, "response.")
		}
		reason, _ := resp[1].field("reason").str()
		c.finish = responseFinish(status, reason)
		c.usage = responseUsage(resp[2])
		c.done = true
	case "":
		c.untypedEvent(r)
	}
	// Any other type (response.created, response.in_progress, the .done
	// events, one added later) carries nothing the judge reads.
}
