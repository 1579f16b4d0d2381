package validate

// reply is what the judge reads of a chat completion or a stream's chunk
// event, recorded by scanJSON while it validates the document: the
// top-level choices, error and usage, and for each element of choices
// its index, finish_reason, delta and message, with their content,
// tool_calls and function_call. Before it, the judge validated the
// document, then walked it again for each of these (three or four passes
// over every reply and event; the walks were half of judging a stream,
// BenchmarkJudgeStream). Each is the member's last value, as a decoded
// map keeps it: a member named again starts afresh, and what was
// recorded inside its earlier value is forgotten.
//
// Its values are views of the document: Finish resets it (putReply)
// before a plain body goes back to its pool.
type reply struct {
	doc                   rawJSON
	choices, error, usage rawJSON
	// choice holds the elements of choices when it is an array; inline
	// holds the first, so that a reply of one choice allocates nothing.
	choice []choice
	inline [1]choice
}

// choice is one element of choices.
type choice struct {
	value, index, finish rawJSON
	delta, message       message
}

// message is a choice's delta or message object. refusal is OpenAI's
// (a structured output the model declined, content null); reasoning is
// a reasoning model's thinking, reasoning_content (DeepSeek, vLLM,
// SGLang, Qwen) or reasoning (OpenRouter, Ollama, Groq).
type message struct {
	value, content, toolCalls, functionCall, refusal, reasoning rawJSON
}

// generated is how many bytes of the model's output m carries: the raw
// JSON of its content, thinking, refusal and tool calls (a string's
// without its quotes). Escapes and a tool call's structure count too:
// it bounds the output's tokens from above.
func (m *message) generated() int {
	n := 0
	for _, v := range [...]rawJSON{m.content, m.reasoning, m.refusal, m.toolCalls, m.functionCall} {
		switch {
		case v.isString():
			n += len(v) - 2
		case v.present():
			n += len(v)
		}
	}
	return n
}

// scan validates b as validJSON does and records in r what the judge
// reads of it; r's earlier content is dropped, its storage reused.
func (r *reply) scan(b []byte) bool {
	r.reset()
	if !scanJSON(b, r) {
		r.reset()
		return false
	}
	return true
}

// reset forgets every value, so that none keeps a view of a document.
func (r *reply) reset() {
	clear(r.choice)
	kept := r.choice[:0]
	if kept == nil {
		kept = r.inline[:0]
	}
	r.doc, r.choices, r.error, r.usage, r.choice = nil, nil, nil, nil, kept
	r.inline = [1]choice{} // left behind when choice grew past it
}

// lookup is p.lookupRaw(r.doc), read from what the scan recorded as far
// as p runs through it (the default required field, choices[0].message,
// needs no walk), then by lookupRaw.
func (r *reply) lookup(p jsonPath) (rawJSON, bool) {
	if len(p) == 0 || p[0] != "choices" || !r.doc.isObject() {
		return p.lookupRaw(r.doc)
	}
	if len(p) == 1 || !r.choices.isArray() {
		return p[1:].lookupRaw(r.choices)
	}
	i, ok := p[1].(int)
	if !ok {
		return nil, false // a name in an array
	}
	if i >= len(r.choice) {
		return nil, false
	}
	ch := &r.choice[i]
	if len(p) == 2 || !ch.value.isObject() {
		return p[2:].lookupRaw(ch.value)
	}
	switch p[2] {
	case "message":
		return p[3:].lookupRaw(ch.message.value)
	case "delta":
		return p[3:].lookupRaw(ch.delta.value)
	}
	return p[2:].lookupRaw(ch.value)
}

// slot is the role of a value in a chat completion, as far as the judge
// reads it.
type slot uint8

const (
	slotNone slot = iota
	slotTop       // the document
	slotChoices
	slotError
	slotUsage
	slotChoice // an element of choices
	slotIndex
	slotFinish
	slotDelta
	slotMessage
	slotDeltaContent
	slotDeltaToolCalls
	slotDeltaFunctionCall
	slotDeltaRefusal
	slotDeltaReasoning
	slotMessageContent // the message's roles, in the order of the delta's
	slotMessageToolCalls
	slotMessageFunctionCall
	slotMessageRefusal
	slotMessageReasoning
)

// member is the role of the member name of an object of role s.
func (s slot) member(name rawJSON) slot {
	body := name[1 : len(name)-1]
	for _, c := range body {
		if c == '\\' || c >= 0x80 {
			// An escape, or a byte encoding/json may replace: compare
			// the name as it unquotes. (Comparing each name with
			// rawJSON.equals was a fifth of BenchmarkJudgeStream.)
			u, _ := name.str()
			return s.memberNamed([]byte(u))
		}
	}
	return s.memberNamed(body) // plain ASCII unquotes to itself
}

// memberNamed is member for an unquoted name. (It switches on
// string(name), which Go compares without a copy.)
func (s slot) memberNamed(name []byte) slot {
	switch s {
	case slotTop:
		switch string(name) {
		case "choices":
			return slotChoices
		case "error":
			return slotError
		case "usage":
			return slotUsage
		}
	case slotChoice:
		switch string(name) {
		case "index":
			return slotIndex
		case "finish_reason":
			return slotFinish
		case "delta":
			return slotDelta
		case "message":
			return slotMessage
		}
	case slotDelta, slotMessage:
		var m slot // the delta's roles, moved to the message's
		switch string(name) {
		case "content":
			m = slotDeltaContent
		case "tool_calls":
			m = slotDeltaToolCalls
		case "function_call":
			m = slotDeltaFunctionCall
		case "refusal":
			m = slotDeltaRefusal
		case "reasoning_content", "reasoning":
			m = slotDeltaReasoning
		default:
			return slotNone
		}
		if s == slotMessage {
			m += slotMessageContent - slotDeltaContent
		}
		return m
	}
	return slotNone
}

// element is the role of an element of an array of role s.
func (s slot) element() slot {
	if s == slotChoices {
		return slotChoice
	}
	return slotNone
}

// open is called as a value of role s starts: a member named again
// forgets what its earlier value held.
func (r *reply) open(s slot) {
	switch s {
	case slotChoices:
		clear(r.choice)
		r.choice = r.choice[:0]
	case slotChoice:
		r.choice = append(r.choice, choice{})
	case slotDelta:
		r.last().delta = message{}
	case slotMessage:
		r.last().message = message{}
	}
}

// set records v, the value of role s that just ended.
func (r *reply) set(s slot, v []byte) {
	val := rawJSON(v)
	switch s {
	case slotTop:
		r.doc = val
	case slotChoices:
		r.choices = val
	case slotError:
		r.error = val
	case slotUsage:
		r.usage = val
	case slotChoice:
		r.last().value = val
	case slotIndex:
		r.last().index = val
	case slotFinish:
		r.last().finish = val
	case slotDelta:
		r.last().delta.value = val
	case slotMessage:
		r.last().message.value = val
	case slotDeltaContent:
		r.last().delta.content = val
	case slotDeltaToolCalls:
		r.last().delta.toolCalls = val
	case slotDeltaFunctionCall:
		r.last().delta.functionCall = val
	case slotDeltaRefusal:
		r.last().delta.refusal = val
	case slotDeltaReasoning:
		r.last().delta.reasoning = val
	case slotMessageContent:
		r.last().message.content = val
	case slotMessageToolCalls:
		r.last().message.toolCalls = val
	case slotMessageFunctionCall:
		r.last().message.functionCall = val
	case slotMessageRefusal:
		r.last().message.refusal = val
	case slotMessageReasoning:
		r.last().message.reasoning = val
	}
}

// last is the element of choices being scanned.
func (r *reply) last() *choice { return &r.choice[len(r.choice)-1] }
