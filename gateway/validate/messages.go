package validate

import "strings"

// Anthropic's Messages API (POST /v1/messages), which Claude and the
// relays in front of it serve, is judged by FormatAnthropicMessages with
// the verdicts and reasons of a chat completion. What differs is where
// each fact lies:
//
//   - The reply is a message whose content is a list of blocks: the text
//     of its "text" blocks is the completion; "thinking" and
//     "redacted_thinking" are not content, as a reasoning model's
//     thinking is not; any other block (tool_use, server_tool_use, a
//     tool's result) is an answer that is not text, as a tool call is.
//   - stop_reason says how it ended: end_turn, stop_sequence, tool_use and
//     pause_turn are whole; max_tokens and model_context_window_exceeded
//     are finish_reason length (held to the caller's max_tokens, which
//     the API requires); refusal is the model's answer, as OpenAI's
//     refusal is. A failure's finish (failedFinish) is an error body.
//   - usage counts input_tokens and output_tokens, thinking included.
//   - A stream is typed events (message_start, content_block_start,
//     content_block_delta, message_delta with the stop_reason,
//     message_stop, ping), each event's type in its data too; an error
//     arrives as an error event ({"type":"error","error":{…}}), with the
//     HTTP status already 200, often after the first text (overloaded_error).
//     It is whole once message_stop or a stop_reason has come, as a chat
//     completion is after [DONE] or its finish_reason; event types this
//     package does not know are let pass, as the API's versioning asks.
//   - An error body is {"type":"error","error":{"type":…,"message":…}}.

// blocks is what the judge reads of a message's content blocks.
type blocks struct {
	text     strings.Builder
	answered bool // a block that is an answer without text (tool_use…)
	// shown says a block carried output: text, thinking, redacted
	// thinking or an answer without text.
	shown bool
	// generated counts the bytes of the model's output, as
	// message.generated does.
	generated int
}

// add reads one content block.
func (b *blocks) add(block rawJSON) {
	f := block.fields("type", "text", "thinking", "input")
	typ, _ := f[0].str()
	switch typ {
	case "text":
		if s, ok := f[1].str(); ok {
			b.text.WriteString(s)
			b.generated += len(f[1]) - 2
			b.shown = b.shown || s != ""
		}
	case "thinking":
		if hasText(f[2]) {
			b.generated += len(f[2]) - 2
			b.shown = true
		}
	case "redacted_thinking":
		b.shown = true
	default:
		b.answered, b.shown = true, true
		b.generated += len(f[3])
	}
}

// messageUsage reads the token counts of a message's usage (or a
// message_delta's, whose counts are the totals so far): output_tokens
// include the thinking.
func messageUsage(usage rawJSON, u Usage) Usage {
	f := usage.fields("input_tokens", "output_tokens")
	n := func(v rawJSON, old int) int {
		if c := tokenCount(v); c >= 0 {
			return c
		}
		return old
	}
	u.PromptTokens = n(f[0], u.PromptTokens)
	u.CompletionTokens = n(f[1], u.CompletionTokens)
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// finishMessage judges a plain reply of the Messages API, doc an object
// that is not an error object.
func (c *Classifier) finishMessage(doc rawJSON) Result {
	content := doc.field("content")
	if !content.isArray() {
		return c.notAReply(doc, "content")
	}
	var b blocks
	content.elements(func(block rawJSON) bool {
		b.add(block)
		return true
	})
	stop, _ := doc.field("stop_reason").str()
	c.finish = stop
	if failedFinish(stop) {
		return soft(ReasonErrorBody, "%s: the provider reported its failure in the message", c.finishName())
	}
	c.usage = messageUsage(doc.field("usage"), Usage{})
	c.generated += b.generated
	return c.judgeText(b.text.String(), b.answered || stop == "refusal")
}

// dispatchMessage judges one event of a Messages API stream, data its
// data.
func (c *Classifier) dispatchMessage(data []byte) {
	r, ok := c.scanEvent(data)
	if !ok {
		return
	}
	doc := r.doc
	f := doc.fields("type", "message", "content_block", "delta")
	typ, _ := f[0].str()
	if typ == "error" || r.error.anError() {
		c.streamProblem(ReasonErrorBody, "event %d is an error object", c.events)
		return
	}
	switch typ {
	case "message_start":
		msg := f[1].fields("usage", "content")
		c.usage = messageUsage(msg[0], c.usage)
		msg[1].elements(func(block rawJSON) bool {
			c.addBlock(block)
			return true
		})
	case "content_block_start":
		c.addBlock(f[2])
	case "content_block_delta":
		d := f[3].fields("type", "text", "thinking", "partial_json")
		switch kind, _ := d[0].str(); kind {
		case "text_delta":
			if c.content.addRaw(d[1]) {
				c.firstToken = c.firstToken || len(d[1]) > len(`""`)
				c.generated += len(d[1]) - 2
			}
		case "thinking_delta":
			// A thinking token is the route's first, as in a chat
			// completion's stream.
			if hasText(d[2]) {
				c.firstToken = true
				c.generated += len(d[2]) - 2
			}
		case "input_json_delta":
			c.toolCalls, c.firstToken = true, true
			if d[3].isString() {
				c.generated += len(d[3]) - 2
			}
		}
	case "message_delta":
		if stop, ok := f[3].field("stop_reason").str(); ok && stop != "" {
			c.finish = stop
			if stop == "refusal" {
				c.refused = true
			}
		}
		c.usage = messageUsage(doc.field("usage"), c.usage)
	case "message_stop":
		c.done = true
	case "":
		c.untypedEvent(r)
	}
	// Any other type (ping, content_block_stop, one added later) carries
	// nothing the judge reads.
}

// addBlock reads a content block that a stream starts (its text, if any,
// is the completion's first).
func (c *Classifier) addBlock(block rawJSON) {
	var b blocks
	b.add(block)
	if s := b.text.String(); s != "" {
		c.content.add(s)
	}
	c.toolCalls = c.toolCalls || b.answered
	c.firstToken = c.firstToken || b.shown
	c.generated += b.generated
}
