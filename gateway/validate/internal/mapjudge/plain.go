package mapjudge

import (
	"bytes"
	"encoding/json"
	"strconv"
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
		r.Chars, r.Content = chars, text
		return r
	}
	doc, err := decodeJSON(body)
	if err != nil {
		head := body[:min(len(body), 4096)]
		if p, ok := containsAny(strings.ToLower(string(head)), v.errorPatterns); ok {
			return soft(ReasonErrorBody, "the body is an error page (%q)", p)
		}
		return soft(ReasonInvalidJSON, "the body is not JSON: %s", firstLine(err.Error()))
	}
	obj, isObj := doc.(map[string]any)
	if isObj && obj["error"] != nil && obj["choices"] == nil {
		return soft(ReasonErrorBody, "the body is an error object")
	}
	if v.format == FormatOpenAIChat && isObj && obj["choices"] == nil {
		if errorEnvelope(obj) {
			return soft(ReasonErrorBody, "the body is an error object")
		}
		if p, ok := errorInStrings(obj, v.errorPatterns); ok {
			return soft(ReasonErrorBody, "the body is an error template (%q)", p)
		}
	}
	for _, p := range v.required {
		if _, ok := p.lookup(doc); !ok {
			return soft(ReasonMissingField, "missing %s", p)
		}
	}
	if v.format == FormatJSON {
		if v.schema != nil {
			return v.checkSchema(string(body), "body")
		}
		return okResult()
	}
	// An OpenAI chat completion.
	choice, ok := get(doc, "choices", 0)
	if !ok {
		return soft(ReasonMissingField, "missing choices[0]")
	}
	finish, _ := getString(choice, "finish_reason")
	c.finish = finish
	c.usage = usageOf(doc)
	text, _ := getString(choice, "message", "content")
	c.content.add(text)
	tools := hasAny(choice, "message", "tool_calls") || hasAny(choice, "message", "function_call")
	if finish == "length" {
		return soft(ReasonTruncated, "finish_reason length")
	}
	return v.judgeContent(text, c.content.chars, false, tools)
}

// hasAny reports whether the value at the path is present and not empty.
func hasAny(doc any, segs ...any) bool {
	v, ok := get(doc, segs...)
	if !ok {
		return false
	}
	if a, isArr := v.([]any); isArr {
		return len(a) > 0
	}
	return true
}

// errorInStrings looks for an error pattern in the top-level strings of an
// object that is not a completion ({"code": 500, "msg": "系统繁忙"}).
func errorInStrings(obj map[string]any, patterns []string) (string, bool) {
	for _, val := range obj {
		if s, ok := val.(string); ok {
			if p, ok := containsAny(strings.ToLower(s), patterns); ok {
				return p, true
			}
		}
	}
	return "", false
}

// errorEnvelope reports whether an object that is not a completion is a
// provider's error envelope: the code of an HTTP error (400–599, as a
// number or as text) next to a message, as in {"code":500,"msg":"…"}.
func errorEnvelope(obj map[string]any) bool {
	hasCode := false
	for _, k := range []string{"code", "status", "status_code", "error_code"} {
		var s string
		switch v := obj[k].(type) {
		case json.Number:
			s = v.String()
		case string:
			s = v
		}
		if n, err := strconv.Atoi(s); err == nil && n >= 400 && n <= 599 {
			hasCode = true
		}
	}
	if !hasCode {
		return false
	}
	for _, k := range []string{"msg", "message", "error_msg", "errmsg", "detail"} {
		if _, ok := obj[k].(string); ok {
			return true
		}
	}
	return false
}

// jsonschemaUnmarshal decodes a document the way the schema library wants
// it (numbers as json.Number).
func jsonschemaUnmarshal(s string) (any, error) {
	return jsonschema.UnmarshalJSON(strings.NewReader(s))
}
