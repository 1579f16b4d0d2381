package validate

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultRejectedCodes are the OpenAI-style error codes (error.code, then
// error.type) that make an HTTP 400 a rejection the caller caused rather
// than a failure of the route. Envoy's outlier detection and LiteLLM's
// cooldowns do not count a 400 either; 401, 403, 404, 408, 429 and every
// 5xx stay failures whatever their code says, and 422 keeps its own
// signal.
var DefaultRejectedCodes = map[string]Reason{
	"context_length_exceeded":  ReasonContextLength,
	"string_above_max_length":  ReasonContextLength,
	"content_policy_violation": ReasonContentPolicy,
	"content_filter":           ReasonContentPolicy,
	"invalid_request_error":    ReasonInvalidRequest,
}

// rejectedCodes merges the rules' codes into the defaults and reports
// every invalid entry.
func rejectedCodes(extra map[string]Reason) (map[string]Reason, []error) {
	codes := make(map[string]Reason, len(DefaultRejectedCodes)+len(extra))
	for k, r := range DefaultRejectedCodes {
		codes[k] = r
	}
	var errs []error
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r := extra[k]
		switch {
		case strings.TrimSpace(k) == "":
			errs = append(errs, fmt.Errorf("rejected_codes[%q]: the code is empty", k))
		case r != "" && !slices.Contains(RejectedReasons, r):
			errs = append(errs, fmt.Errorf("rejected_codes[%q]: %q is not a rejection reason (want %s, %s or %s, or \"\" for a route failure)",
				k, r, ReasonContextLength, ReasonContentPolicy, ReasonInvalidRequest))
		case r == "":
			delete(codes, k)
		default:
			codes[k] = r
		}
	}
	return codes, errs
}

// finishError judges an HTTP 400 by its error object: a code the caller
// caused is a rejection, anything else (no error object, an unknown code)
// a hard failure.
func (c *Classifier) finishError() Result {
	hard := Result{Verdict: HardFail, Detail: fmt.Sprintf("HTTP %d", c.status)}
	doc, ok := parseJSON(c.body)
	if !ok {
		return hard
	}
	for _, key := range []string{"code", "type"} {
		code, _ := rawGetString(doc, "error", key)
		if r, ok := c.v.rejected[code]; ok && code != "" {
			if r == ReasonInvalidRequest && promptTooLong(doc) {
				r = ReasonContextLength
			}
			return Result{Verdict: Rejected, Reason: r, Detail: fmt.Sprintf("HTTP %d %s", c.status, code)}
		}
	}
	return hard
}

// promptTooLong says whether an error object says the prompt did not fit
// the context window in the words of Anthropic's API, which has no code
// for it: an invalid_request_error whose message begins "prompt is too
// long" ("prompt is too long: 215000 tokens > 200000 maximum").
func promptTooLong(doc rawJSON) bool {
	msg, _ := rawGetString(doc, "error", "message")
	return strings.HasPrefix(strings.ToLower(msg), "prompt is too long")
}
