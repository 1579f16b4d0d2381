package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hermes-failover/hermes/gateway/validate"
)

// ProbeHeader marks probe requests (gateway/instrument skips them); its
// value is "layer/probe".
const ProbeHeader = "X-Hermes-Probe"

// maxBody bounds what is read of a /models answer.
const maxBody = 4 << 20

// outcome is the result of one probe run.
type outcome struct {
	probe  string
	ok     bool
	res    validate.Result
	code   string // HTTP status, timeout or conn_error
	took   time.Duration
	tokens int
	// ttft is the time to the first token of a streamed reply (0: none).
	ttft time.Duration
}

func (p *Prober) request(ctx context.Context, t *target, method, url, probe string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	if body == nil {
		req.Body, req.GetBody, req.ContentLength = http.NoBody, nil, 0
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range t.Headers {
		req.Header.Set(k, v)
	}
	if t.messagesAPI() {
		// Anthropic's API takes its key in x-api-key and names the version
		// of the API each request is written to; a header of the target
		// that sets it wins.
		if req.Header.Get("anthropic-version") == "" {
			req.Header.Set("anthropic-version", anthropicVersion)
		}
		if t.key != "" {
			req.Header.Set("x-api-key", t.key)
		}
	} else if t.key != "" {
		req.Header.Set("Authorization", "Bearer "+t.key)
	}
	req.Header.Set(ProbeHeader, probe)
	req.Header.Set("User-Agent", "hermes-probe")
	return req, nil
}

// The codes of a probe that got no HTTP answer, as the gateway contract
// spells them.
const (
	codeTimeout   = "timeout"
	codeConnError = "conn_error"
)

// failure turns a transport error into an outcome.
func failure(probe string, start time.Time, now time.Time, err error) outcome {
	code := codeConnError
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		code = codeTimeout
	}
	return outcome{probe: probe, code: code, took: now.Sub(start),
		res: validate.Result{Verdict: validate.HardFail, Detail: redact(err.Error())}}
}

// redact keeps error texts short; they never hold the key (it travels in
// a header), but may hold long URLs.
func redact(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// liveness: the API answers HTTP below 500.
func (p *Prober) liveness(ctx context.Context, t *target) outcome {
	start := p.now()
	req, err := p.request(ctx, t, http.MethodGet, t.BaseURL, Liveness+"/http", nil)
	if err != nil {
		return failure("http", start, p.now(), err)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return failure("http", start, p.now(), err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	o := outcome{probe: "http", code: fmt.Sprint(resp.StatusCode), took: p.now().Sub(start), ok: resp.StatusCode < 500,
		res: validate.Result{Verdict: validate.OK, Status: resp.StatusCode}}
	if !o.ok {
		o.res = validate.Result{Verdict: validate.HardFail, Status: resp.StatusCode, Detail: "HTTP " + o.code}
	}
	return o
}

// readiness: GET {base_url}/models answers 200 and lists the model.
func (p *Prober) readiness(ctx context.Context, t *target) outcome {
	const probe = "models"
	start := p.now()
	req, err := p.request(ctx, t, http.MethodGet, t.BaseURL+"/models", Readiness+"/"+probe, nil)
	if err != nil {
		return failure(probe, start, p.now(), err)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return failure(probe, start, p.now(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	o := outcome{probe: probe, code: fmt.Sprint(resp.StatusCode), took: p.now().Sub(start)}
	switch {
	case resp.StatusCode != http.StatusOK:
		o.res = validate.Result{Verdict: validate.HardFail, Detail: "HTTP " + o.code}
	case err != nil:
		o.res = validate.Result{Verdict: validate.SoftFail, Reason: validate.ReasonTruncated, Detail: redact(err.Error())}
	default:
		var list struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			o.res = validate.Result{Verdict: validate.SoftFail, Reason: validate.ReasonInvalidJSON, Detail: "the model list is not JSON"}
		} else if !slices.ContainsFunc(list.Data, func(m struct {
			ID string `json:"id"`
		}) bool {
			return m.ID == t.Model
		}) {
			o.res = validate.Result{Verdict: validate.SoftFail, Reason: validate.ReasonMissingField, Detail: fmt.Sprintf("model %q is not listed", t.Model)}
		} else {
			o.res = validate.Result{Verdict: validate.OK}
			o.ok = true
		}
	}
	o.res.Status = resp.StatusCode
	return o
}

// chatRequest is the body of a probe's chat-completions call.
type chatRequest struct {
	Model          string         `json:"model"`
	Messages       []chatMessage  `json:"messages"`
	MaxTokens      int            `json:"max_tokens,omitempty"`
	Temperature    *float64       `json:"temperature,omitempty"`
	TopP           *float64       `json:"top_p,omitempty"`
	Stream         bool           `json:"stream,omitempty"`
	StreamOptions  map[string]any `json:"stream_options,omitempty"`
	ResponseFormat map[string]any `json:"response_format,omitempty"`
	User           string         `json:"user"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// anthropicVersion is the version of Anthropic's API the prober's
// requests are written to (its anthropic-version header).
const anthropicVersion = "2023-06-01"

// messagesRequest is the body of a probe's call of Anthropic's Messages
// API: a chatRequest with its system messages in system, max_tokens set
// (the API requires it) and its user in metadata.
type messagesRequest struct {
	Model       string            `json:"model"`
	System      string            `json:"system,omitempty"`
	Messages    []chatMessage     `json:"messages"`
	MaxTokens   int               `json:"max_tokens"`
	Temperature *float64          `json:"temperature,omitempty"`
	TopP        *float64          `json:"top_p,omitempty"`
	Stream      bool              `json:"stream,omitempty"`
	Metadata    map[string]string `json:"metadata"`
}

// format is the format of the target's replies: its API.
func (t *target) format() validate.Format {
	if t.API == "" {
		return validate.FormatOpenAIChat
	}
	return t.API
}

func (t *target) messagesAPI() bool { return t.API == validate.FormatAnthropicMessages }

// responsesRequest is the body of a probe's call of OpenAI's Responses
// API: a chatRequest with its system messages in instructions, the rest
// as input, and response_format as text.format.
type responsesRequest struct {
	Model           string            `json:"model"`
	Instructions    string            `json:"instructions,omitempty"`
	Input           []chatMessage     `json:"input"`
	MaxOutputTokens int               `json:"max_output_tokens,omitempty"`
	Temperature     *float64          `json:"temperature,omitempty"`
	TopP            *float64          `json:"top_p,omitempty"`
	Stream          bool              `json:"stream,omitempty"`
	Text            map[string]any    `json:"text,omitempty"`
	Metadata        map[string]string `json:"metadata"`
}

// splitSystem parts a prompt's messages into its system messages, joined,
// and the rest.
func splitSystem(msgs []chatMessage) (string, []chatMessage) {
	var system []string
	var rest []chatMessage
	for _, msg := range msgs {
		if msg.Role == "system" {
			system = append(system, msg.Content)
			continue
		}
		rest = append(rest, msg)
	}
	return strings.Join(system, "\n\n"), rest
}

// encode is the URL and body of a probe's call in the target's API. A
// call of the Messages API without max_tokens asks for
// DefaultMaxReplyTokens, the most the budget counts a reply; it has no
// response_format, and a prompt that sets one is judged by its schema on
// what its instructions got. A call of the Responses API sends the
// response_format as text.format.
func (t *target) encode(body *chatRequest) (string, []byte, error) {
	body.Model, body.User = t.Model, "hermes-probe"
	switch t.API {
	case validate.FormatAnthropicMessages:
		if body.MaxTokens <= 0 {
			body.MaxTokens = DefaultMaxReplyTokens
		}
		m := messagesRequest{Model: body.Model, MaxTokens: body.MaxTokens, Temperature: body.Temperature, TopP: body.TopP,
			Stream: body.Stream, Metadata: map[string]string{"user_id": body.User}}
		m.System, m.Messages = splitSystem(body.Messages)
		data, err := json.Marshal(m)
		return t.BaseURL + "/messages", data, err
	case validate.FormatOpenAIResponses:
		r := responsesRequest{Model: body.Model, MaxOutputTokens: body.MaxTokens, Temperature: body.Temperature, TopP: body.TopP,
			Stream: body.Stream, Metadata: map[string]string{"user": body.User}}
		r.Instructions, r.Input = splitSystem(body.Messages)
		if body.ResponseFormat != nil {
			r.Text = map[string]any{"format": body.ResponseFormat}
		}
		data, err := json.Marshal(r)
		return t.BaseURL + "/responses", data, err
	}
	if body.Stream {
		body.StreamOptions = map[string]any{"include_usage": true}
	}
	data, err := json.Marshal(body)
	return t.BaseURL + "/chat/completions", data, err
}

// chat sends one request of a completion in the target's API and judges
// its reply with v, reading a stream through the validator as it arrives.
func (p *Prober) chat(ctx context.Context, t *target, layer, probe string, body chatRequest, v *validate.Validator) outcome {
	start := p.now()
	url, data, err := t.encode(&body)
	if err != nil {
		return failure(probe, start, p.now(), fmt.Errorf("encoding request: %w", err))
	}
	req, err := p.request(ctx, t, http.MethodPost, url, layer+"/"+probe, data)
	if err != nil {
		return failure(probe, start, p.now(), err)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return failure(probe, start, p.now(), err)
	}
	defer resp.Body.Close()
	c := v.Start(resp.StatusCode, resp.Header)
	w := &tokenWatch{c: c, now: p.now}
	// One byte more than the limit tells a reply at the limit from one
	// over it; what is over is never read.
	limit := int64(v.MaxBodyBytes())
	if _, err := io.Copy(w, io.LimitReader(resp.Body, limit+1)); err != nil {
		c.Interrupted()
	}
	// A reply the probe's own max_tokens ended is not the route's fault;
	// one over the limit is judged validate.ReasonBodyTooLarge.
	c.CallerMaxTokens(body.MaxTokens)
	res := c.Finish()
	o := outcome{probe: probe, res: res, code: fmt.Sprint(resp.StatusCode), took: p.now().Sub(start), ok: res.Verdict == validate.OK}
	if res.Stream && w.seen {
		o.ttft = w.at.Sub(start)
	}
	o.tokens = tokens(body, res)
	return o
}

// DefaultMaxReplyTokens is the most a reply counts toward the token
// budget when its request sets no max_tokens.
const DefaultMaxReplyTokens = 4096

// promptOverheadTokens is what a chat template adds to a message, and to
// the prompt, at most.
const promptOverheadTokens = 8

// tokens is what a probe spent, as the budget counts it. The reply's
// usage is taken but not trusted (one reply claiming 40 M tokens would
// spend the day's budget): its completion part counts at most the
// request's max_tokens (DefaultMaxReplyTokens without one; a provider
// stops there), its prompt part at most the prompt's bytes (a token is at
// least a byte) and promptOverheadTokens a message and for the prompt.
// Without usage, four characters make a token, the completion's part
// capped in the same way: a reply that goes on, or is cut by the timeout,
// spends no more.
func tokens(req chatRequest, res validate.Result) int {
	maxReply := req.MaxTokens
	if maxReply <= 0 {
		maxReply = DefaultMaxReplyTokens
	}
	chars, maxPrompt := 0, promptOverheadTokens
	for _, m := range req.Messages {
		chars += utf8.RuneCountInString(m.Content)
		maxPrompt += len(m.Content) + promptOverheadTokens
	}
	clamp := func(n, most int) int { return min(max(n, 0), most) }
	switch u := res.Usage; {
	case u.PromptTokens > 0 || u.CompletionTokens > 0:
		return clamp(u.PromptTokens, maxPrompt) + clamp(u.Generated(), maxReply)
	case u.TotalTokens > 0:
		return clamp(u.TotalTokens, maxPrompt+maxReply)
	}
	return chars/4 + 1 + min(res.Chars/4, maxReply)
}

// tokenWatch feeds a reply to its classifier and notes when the first
// token arrived.
type tokenWatch struct {
	c    *validate.Classifier
	now  func() time.Time
	at   time.Time
	seen bool
}

func (w *tokenWatch) Write(p []byte) (int, error) {
	n, err := w.c.Write(p)
	if !w.seen && w.c.FirstToken() {
		w.at, w.seen = w.now(), true
	}
	return n, err
}

// prompt runs one e2e prompt.
func (p *Prober) prompt(ctx context.Context, t *target, pr Prompt) outcome {
	body := chatRequest{MaxTokens: pr.MaxTokens, Stream: pr.Stream}
	for _, m := range pr.Messages {
		body.Messages = append(body.Messages, chatMessage{Role: m.Role, Content: m.Content})
	}
	if pr.ResponseFormat != "" {
		body.ResponseFormat = map[string]any{"type": pr.ResponseFormat}
	}
	return p.chat(ctx, t, E2E, pr.Name, body, t.validators[pr.Name])
}

// boundary runs one edge-value request. A reply cut by max_tokens or not
// meeting the prompt's rules is fine: only a refusal (not 2xx), an error
// body or a reply that is not a completion fails.
func (p *Prober) boundary(ctx context.Context, t *target, bc boundaryCase) outcome {
	body := chatRequest{
		Messages:  []chatMessage{{Role: "user", Content: boundaryPrompt}},
		MaxTokens: bc.maxTokens, Temperature: bc.temperature, TopP: bc.topP,
	}
	if t.messagesAPI() && bc.temperature != nil && *bc.temperature > anthropicMaxTemperature {
		body.Temperature = f(anthropicMaxTemperature) // the top of the Messages API's range
	}
	if t.API == validate.FormatOpenAIResponses && body.MaxTokens < responsesMinOutputTokens {
		body.MaxTokens = responsesMinOutputTokens // the least the Responses API takes
	}
	o := p.chat(ctx, t, Boundary, bc.name, body, t.boundaryValidator)
	switch o.res.Reason {
	case validate.ReasonTruncated, validate.ReasonTooShort, validate.ReasonEmpty, validate.ReasonFallbackPhrase:
		o.ok = true
	}
	return o
}
