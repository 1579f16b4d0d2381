package validate

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// finishPlain judges a body read whole.
func (c *Classifier) finishPlain() Result {
	v := c.v
	if c.interrupted {
		return soft(ReasonTruncated, "the body was cut after %d bytes", c.size)
	}
	body := bytes.TrimSpace(bytes.TrimPrefix(c.body, []byte("\ufeff")))
	if c.overflow {
		return okResult() // too big to keep: not judged on its content
	}
	if len(body) == 0 {
		return soft(ReasonEmpty, "empty body")
	}
	if v.format == FormatText {
		text := string(body)
		chars := utf8.RuneCountInString(text)
		if chars <= v.fallbackMaxChars {
			if p, ok := containsAny(strings.ToLower(text), v.errorPatterns); ok {
				return soft(ReasonErrorBody, "the body is an error template (%q)", p)
			}
		}
		r := v.judgeContent(text, chars, false, false)
		r.Chars = chars
		if !c.discard {
			r.Content = text
		}
		return r
	}
	r, ok := c.scan(body)
	if !ok {
		head := body[:min(len(body), 4096)]
		if p, ok := containsAny(strings.ToLower(string(head)), v.errorPatterns); ok {
			return soft(ReasonErrorBody, "the body is an error page (%q)", p)
		}
		_, err := decodeJSON(body) // for encoding/json's account of the fault
		return soft(ReasonInvalidJSON, "the body is not JSON: %s", firstLine(err.Error()))
	}
	doc := r.doc
	isObj := doc.isObject()
	hasChoices := r.choices.present()
	if isObj && (r.error.present() && !hasChoices || r.error.anError()) {
		// An error beside choices too: OpenRouter reports a provider's
		// failure so, with finish_reason error.
		return soft(ReasonErrorBody, "the body is an error object")
	}
	if v.format == FormatOpenAIChat && isObj && !hasChoices {
		if rawErrorEnvelope(doc) {
			return soft(ReasonErrorBody, "the body is an error object")
		}
		if p, ok := rawErrorInStrings(doc, v.errorPatterns); ok {
			return soft(ReasonErrorBody, "the body is an error template (%q)", p)
		}
	}
	for _, p := range v.required {
		if _, ok := r.lookup(p); !ok {
			return soft(ReasonMissingField, "missing %s", p)
		}
	}
	if v.format == FormatJSON {
		if v.schema != nil {
			return v.checkSchema(string(body), "body")
		}
		return okResult()
	}
	switch v.format {
	case FormatAnthropicMessages:
		return c.finishMessage(doc)
	case FormatOpenAIResponses:
		return c.finishResponse(doc)
	}
	// An OpenAI chat completion.
	if !r.choices.isArray() || len(r.choice) == 0 || !r.choice[0].value.present() {
		return soft(ReasonMissingField, "missing choices[0]")
	}
	choice := &r.choice[0]
	finish, _ := choice.finish.str()
	c.finish = finish
	if failedFinish(finish) {
		return soft(ReasonErrorBody, "%s: the provider reported its failure in the completion", c.finishName())
	}
	c.usage = usageFrom(r.usage)
	msg := choice.message
	tools := notEmpty(msg.toolCalls) || notEmpty(msg.functionCall) || hasText(msg.refusal) || filteredFinish(finish)
	c.generated += msg.generated()
	if c.discard && msg.content.isString() {
		// Nobody reads Result.Content: a long text is judged where it
		// lies, a short one (or one for the schema) is read as below.
		chars, blank := textFacts(msg.content[1 : len(msg.content)-1])
		if !v.readsText(chars) {
			c.content.chars += chars
			if finish == "length" {
				return c.lengthFinish("", chars)
			}
			return v.judgeLong(blank, chars, tools)
		}
	}
	// The text is copied once, out of the pooled body: Result.Content
	// holds it after Finish, unless it is discarded.
	text, _ := msg.content.str()
	if msg.content.isArray() {
		var b strings.Builder
		msg.content.eachPart(func(t rawJSON) {
			s, _ := t.str()
			b.WriteString(s)
		}, func() {})
		text = b.String()
	}
	if c.discard {
		c.content.chars += runeCount(text)
	} else {
		c.content.add(text)
	}
	if finish == "length" {
		return c.lengthFinish(text, c.content.chars)
	}
	return v.judgeContent(text, c.content.chars, false, tools)
}

// jsonschemaUnmarshal decodes a document the way the schema library wants
// it (numbers as json.Number).
func jsonschemaUnmarshal(s string) (any, error) {
	return jsonschema.UnmarshalJSON(strings.NewReader(s))
}
