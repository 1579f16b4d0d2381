package validate

import (
	"bytes"
	"encoding/json"
)

// sseWrite splits p into lines and handles each complete one; an
// incomplete last line waits for the next Write. A line ends at CRLF, LF
// or CR alone, the event stream's three line ends (the HTML standard's
// "Parsing an event stream"); a CR that ends one Write and an LF that
// starts the next are one CRLF.
func (c *Classifier) sseWrite(p []byte) {
	if c.afterCR && len(p) > 0 {
		c.afterCR = false
		if p[0] == '\n' {
			p = p[1:]
		}
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		end := i
		if i < 0 {
			end = len(p)
		}
		// Two byte searches, not one for either byte: a CR is rare, and
		// bytes.IndexByte is vectorised where bytes.IndexAny is not.
		if j := bytes.IndexByte(p[:end], '\r'); j >= 0 {
			i, end = j+1, j
			switch {
			case i == len(p):
				c.afterCR = true
			case p[i] == '\n':
				i++
			}
		} else if i < 0 {
			c.appendLine(p)
			return
		} else {
			i++
		}
		c.appendLine(p[:end])
		p = p[i:]
		if !c.skipLine {
			c.sseLine(c.line)
		}
		c.line, c.skipLine = c.line[:0], false
	}
}

func (c *Classifier) appendLine(p []byte) {
	if c.skipLine {
		return
	}
	if len(c.line)+len(p) > maxLine {
		c.skipLine = true
		c.line = c.line[:0]
		c.streamProblem(ReasonInvalidJSON, "an event line longer than %d bytes", maxLine)
		return
	}
	c.line = append(c.line, p...)
}

// sseLine handles one line of the event stream (without its line end).
func (c *Classifier) sseLine(line []byte) {
	if len(line) == 0 {
		c.dispatch()
		return
	}
	if line[0] == ':' {
		return // a comment (keep-alive)
	}
	field, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	if string(field) == "event" {
		c.eventType = eventTypeOf(value)
		return
	}
	if string(field) != "data" {
		return // id, retry: nothing to judge
	}
	if c.hasData {
		c.data = append(c.data, '\n')
	}
	c.data = append(c.data, value...)
	c.hasData = true
}

// eventType is the type an event's event: field gives it. A chat
// completion's chunks have none (the SSE default, message); a provider's
// keep-alives (event: ping, as text-generation-webui and Anthropic's API
// send them) and other notices have one, and error events say so.
type eventType uint8

const (
	eventMessage eventType = iota // no event: field, or event: message
	eventError                    // event: error
	eventOther                    // any other type: not a chunk
)

func eventTypeOf(name []byte) eventType {
	switch string(bytes.TrimSpace(name)) {
	case "", "message":
		return eventMessage
	case "error":
		return eventError
	}
	return eventOther
}

// dispatch judges the event whose data lines were collected.
func (c *Classifier) dispatch() {
	typ := c.eventType
	c.eventType = eventMessage
	if !c.hasData {
		return
	}
	data := bytes.TrimSpace(c.data)
	c.data, c.hasData = c.data[:0], false
	c.events++
	if string(data) == "[DONE]" {
		c.done = true
		return
	}
	if c.done {
		return // nothing may follow [DONE]; ignore it
	}
	switch {
	case typ == eventError:
		c.streamProblem(ReasonErrorBody, "event %d is an error event", c.events)
		return
	case c.v.format == FormatAnthropicMessages:
		c.dispatchMessage(data) // every event is typed
		return
	case c.v.format == FormatOpenAIResponses:
		c.dispatchResponse(data) // every event is typed
		return
	case typ == eventOther:
		return // a keep-alive or a notice, not a chunk of the completion
	}
	r, ok := c.scanEvent(data)
	if !ok {
		return
	}
	doc := r.doc
	choices := r.choices
	if r.error.anError() || !choices.present() && (r.error.present() || rawErrorEnvelope(doc)) {
		c.streamProblem(ReasonErrorBody, "event %d is an error object", c.events)
		return
	}
	if !choices.isArray() {
		if p, ok := rawErrorInStrings(doc, c.v.errorPatterns); ok {
			c.streamProblem(ReasonErrorBody, "event %d is an error template (%q)", c.events, p)
			return
		}
		if !choices.present() && r.usage.isObject() {
			// The usage alone, after the last chunk, without the empty
			// choices OpenAI sends beside it.
			c.usage = usageFrom(r.usage)
			return
		}
		if !choices.present() && doc.field("type").isString() {
			// A typed notice, not a chunk: {"type": "ping"}, as Claude's
			// OpenAI compatibility sends it between chunks.
			return
		}
		c.streamProblem(ReasonMissingField, "event %d has no choices", c.events)
		return
	}
	if u := usageFrom(r.usage); u != (Usage{}) {
		c.usage = u
	}
	for i := range r.choice {
		c.judgeChoice(&r.choice[i])
	}
}

// scanEvent reads an event's data as an object; when it is not one, it
// records why (an error template, not JSON, not an object) and reports
// false.
func (c *Classifier) scanEvent(data []byte) (*reply, bool) {
	r, ok := c.scan(data)
	switch {
	case !ok:
		if p, ok := containsAny(lowerHead(data), c.v.errorPatterns); ok {
			c.streamProblem(ReasonErrorBody, "an event is an error template (%q)", p)
		} else {
			c.streamProblem(ReasonInvalidJSON, "event %d is not JSON", c.events)
		}
		return nil, false
	case !r.doc.isObject():
		c.streamProblem(ReasonMissingField, "event %d is not an object", c.events)
		return nil, false
	}
	return r, true
}

// judgeChoice adds what an element of an event's choices brings.
func (c *Classifier) judgeChoice(ch *choice) {
	if idx := ch.index; idx.present() && !(idx.isNumber() && string(idx) == "0") {
		return // only the first choice is judged
	}
	if content := ch.delta.content; content.isArray() {
		content.eachPart(func(text rawJSON) {
			c.content.addRaw(text)
			c.firstToken = c.firstToken || len(text) > len(`""`)
		}, func() { c.firstToken = true })
	} else if c.content.addRaw(content) {
		c.firstToken = c.firstToken || len(content) > len(`""`)
	}
	if notEmpty(ch.delta.toolCalls) || notEmpty(ch.delta.functionCall) {
		c.toolCalls, c.firstToken = true, true
	}
	if hasText(ch.delta.refusal) {
		c.refused, c.firstToken = true, true
	}
	if hasText(ch.delta.reasoning) {
		// A thinking token is the route's first: how long the model
		// thinks before it answers depends on the prompt, not the route.
		c.firstToken = true
	}
	c.generated += ch.delta.generated()
	if f, ok := ch.finish.str(); ok && f != "" {
		c.finish = f
	}
}

// streamProblem records a problem of the stream; the worst one is kept
// (error_body, then invalid_json, then missing_field).
func (c *Classifier) streamProblem(r Reason, format string, args ...any) {
	if rank(r) <= rank(c.problem) {
		return
	}
	c.problem = r
	c.detail = soft(r, format, args...).Detail
}

func rank(r Reason) int {
	switch r {
	case ReasonErrorBody:
		return 3
	case ReasonInvalidJSON:
		return 2
	case ReasonMissingField:
		return 1
	}
	return 0
}

func lowerHead(b []byte) string {
	return string(bytes.ToLower(b[:min(len(b), 4096)]))
}

// finishStream judges a stream at its end.
func (c *Classifier) finishStream() Result {
	cut := c.interrupted
	if len(c.line) > 0 && !c.skipLine {
		// The last line had no line end: use it if it is whole.
		line := c.line
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimSpace(value)
		if string(field) == "data" && (string(value) == "[DONE]" || json.Valid(value)) {
			c.sseLine(line)
		} else {
			cut = true
		}
		c.line = c.line[:0]
	}
	if !cut {
		c.dispatch()
	}
	switch {
	case c.problem != ReasonNone:
		return soft(c.problem, "%s", c.detail)
	case failedFinish(c.finish):
		return soft(ReasonErrorBody, "%s: the provider reported its failure in the completion", c.finishName())
	case c.events == 0 && c.content.chars == 0 && !cut:
		return soft(ReasonEmpty, "a stream without events")
	case cut || !c.done && c.finish == "":
		// A stream that ended cleanly after its final finish_reason is
		// whole: some OpenAI-compatible providers never send [DONE].
		return soft(ReasonTruncated, "the stream ended before %s after %d events", c.streamEnds(), c.events)
	case c.lengthStop():
		return c.lengthFinish(c.content.String(), c.content.chars)
	}
	return c.v.judgeContent(c.content.String(), c.content.chars, c.content.overflow, c.toolCalls || c.refused || filteredFinish(c.finish))
}
