package validate

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Format is how a reply body is read.
type Format string

// The formats.
const (
	// FormatOpenAIChat reads OpenAI-compatible chat completions, plain or
	// streamed (the default).
	FormatOpenAIChat Format = "openai_chat"
	// FormatJSON reads any JSON body: required fields and the schema apply
	// to the whole body.
	FormatJSON Format = "json"
	// FormatText reads the body as text: emptiness, length, fallback
	// phrases and error patterns apply to it.
	FormatText Format = "text"
	// FormatAnthropicMessages reads Anthropic's Messages API
	// (POST /v1/messages), plain or streamed, with the verdicts of a
	// chat completion (messages.go).
	FormatAnthropicMessages Format = "anthropic_messages"
	// FormatOpenAIResponses reads OpenAI's Responses API
	// (POST /v1/responses), plain or streamed, with the verdicts of a
	// chat completion (responses.go).
	FormatOpenAIResponses Format = "openai_responses"
)

// Defaults used when Rules leaves a field empty.
const (
	DefaultMaxBodyBytes     = 4 << 20
	DefaultFallbackMaxChars = 120
)

// DefaultFallbackPhrases are canned answers that providers return, inside
// a well-formed completion, instead of an answer. They match a completion
// of at most Rules.FallbackMaxChars characters that contains one of them
// (case-insensitive), so a long answer that merely mentions them passes.
var DefaultFallbackPhrases = []string{
	"系统繁忙", "请稍后重试", "请稍后再试", "服务器开小差", "服务繁忙", "网络异常", "当前访问人数过多",
	"抱歉，我暂时无法回答", "我无法回答这个问题",
	"service unavailable", "server is busy", "rate limit", "please try again later",
	"i'm sorry, i can't help with that right now", "something went wrong",
}

// DefaultErrorPatterns are substrings (case-insensitive) of error pages and
// error templates that come back with HTTP 200 in place of a reply: a body
// that is not a reply (not JSON, or JSON without choices) and contains one
// of them is an error body.
var DefaultErrorPatterns = []string{
	"系统繁忙", "请稍后重试", "请稍后再试", "服务器开小差", "服务繁忙", "服务不可用", "内部错误", "限流",
	"rate limit", "ratelimit", "too many requests", "service unavailable", "internal server error",
	"bad gateway", "gateway timeout", "quota exceeded", "insufficient_quota", "overloaded",
	"upstream connect error", "<html",
}

// DefaultRequiredFields are the fields a plain chat completion must have.
// Streams are checked chunk by chunk for choices instead.
var DefaultRequiredFields = []string{"choices[0].message"}

// Rules configure a Validator. The zero value validates OpenAI chat
// completions with the default phrase and pattern lists and no minimum
// length.
type Rules struct {
	// Format is how bodies are read (default FormatOpenAIChat).
	Format Format `mapstructure:"format"`
	// RequiredFields are JSON paths that a plain (non-streamed) reply must
	// have, not null: "choices[0].message.content", "$.usage.total_tokens"
	// or "choices.0.message". Default: DefaultRequiredFields for
	// FormatOpenAIChat, none for FormatJSON.
	RequiredFields []string `mapstructure:"required_fields"`
	// MinLength is the least number of characters (runes, so that Chinese
	// and English count alike) a completion's content must have; 0 turns
	// the check off. Derive it from the traffic: the 5th percentile of the
	// content length of a week of normal replies of the route, so that one
	// normal reply in twenty is not already "too short"; lower it for
	// routes whose answers may legitimately be one word.
	MinLength int `mapstructure:"min_length"`
	// FallbackPhrases replace DefaultFallbackPhrases when not nil (an empty
	// list turns the check off).
	FallbackPhrases []string `mapstructure:"fallback_phrases"`
	// FallbackMaxChars is the longest completion still judged by its
	// fallback phrases (default DefaultFallbackMaxChars).
	FallbackMaxChars int `mapstructure:"fallback_max_chars"`
	// ErrorPatterns replace DefaultErrorPatterns when not nil (an empty
	// list turns the check off).
	ErrorPatterns []string `mapstructure:"error_patterns"`
	// Schema, when set, is a JSON schema (draft 2020-12 unless it says
	// otherwise) that a structured-output reply's content — FormatOpenAIChat
	// — or the whole body — FormatJSON — must meet. Content that is not JSON
	// is invalid_json; content that does not meet the schema is
	// missing_field. A Markdown code fence around the content is allowed.
	Schema string `mapstructure:"schema"`
	// MaxBodyBytes bounds what is kept of a plain body and of a stream's
	// content (default DefaultMaxBodyBytes). A 2xx reply whose body is
	// longer is a soft failure with ReasonBodyTooLarge.
	MaxBodyBytes int `mapstructure:"max_body_bytes"`
	// RejectedCodes add OpenAI-style error codes (error.code, or
	// error.type) that make an HTTP 400 a rejection the caller caused, with
	// its reason (context_length, content_policy or invalid_request), to
	// DefaultRejectedCodes; a code mapped to "" is a route failure again.
	RejectedCodes map[string]Reason `mapstructure:"rejected_codes"`
}

// Validator judges replies by its Rules. It is safe for concurrent use.
type Validator struct {
	format           Format
	required         []jsonPath
	minLength        int
	fallback         []string // lower case
	fallbackMaxChars int
	errorPatterns    []string // lower case
	schema           *jsonschema.Schema
	maxBody          int
	rejected         map[string]Reason // error code → rejection reason
}

// New compiles rules into a Validator; it reports every invalid rule.
func New(r Rules) (*Validator, error) {
	v := &Validator{
		format:           r.Format,
		minLength:        r.MinLength,
		fallbackMaxChars: r.FallbackMaxChars,
		maxBody:          r.MaxBodyBytes,
	}
	var errs []error
	switch v.format {
	case "":
		v.format = FormatOpenAIChat
	case FormatOpenAIChat, FormatAnthropicMessages, FormatOpenAIResponses, FormatJSON, FormatText:
	default:
		errs = append(errs, fmt.Errorf("format %q: want %s, %s, %s, %s or %s", r.Format, FormatOpenAIChat, FormatAnthropicMessages, FormatOpenAIResponses, FormatJSON, FormatText))
	}
	if v.fallbackMaxChars == 0 {
		v.fallbackMaxChars = DefaultFallbackMaxChars
	}
	if v.maxBody == 0 {
		v.maxBody = DefaultMaxBodyBytes
	}
	if r.MinLength < 0 || r.FallbackMaxChars < 0 || r.MaxBodyBytes < 0 {
		errs = append(errs, errors.New("min_length, fallback_max_chars and max_body_bytes must not be negative"))
	}
	required := r.RequiredFields
	if required == nil && v.format == FormatOpenAIChat {
		required = DefaultRequiredFields
	}
	for i, f := range required {
		p, err := parsePath(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("required_fields[%d]: %w", i, err))
			continue
		}
		v.required = append(v.required, p)
	}
	v.fallback = lowerAll(r.FallbackPhrases, DefaultFallbackPhrases)
	v.errorPatterns = lowerAll(r.ErrorPatterns, DefaultErrorPatterns)
	for i, s := range v.fallback {
		if s == "" {
			errs = append(errs, fmt.Errorf("fallback_phrases[%d] is empty", i))
		}
	}
	for i, s := range v.errorPatterns {
		if s == "" {
			errs = append(errs, fmt.Errorf("error_patterns[%d] is empty", i))
		}
	}
	var codeErrs []error
	v.rejected, codeErrs = rejectedCodes(r.RejectedCodes)
	errs = append(errs, codeErrs...)
	if r.Schema != "" {
		s, err := compileSchema(r.Schema)
		if err != nil {
			errs = append(errs, fmt.Errorf("schema: %w", err))
		}
		v.schema = s
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return v, nil
}

// MaxBodyBytes is the most of a body the Validator keeps
// (Rules.MaxBodyBytes, or its default).
func (v *Validator) MaxBodyBytes() int { return v.maxBody }

// MustNew is New for rules known to be valid; it panics otherwise.
func MustNew(r Rules) *Validator {
	v, err := New(r)
	if err != nil {
		panic(err)
	}
	return v
}

func lowerAll(list, def []string) []string {
	if list == nil {
		list = def
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strings.ToLower(strings.TrimSpace(s))
	}
	return out
}

// compileSchema compiles a JSON schema given inline. Only the schema itself
// is loaded: a $ref to a file or URL fails instead of reaching out.
func compileSchema(src string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(src)))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	const loc = "mem:///schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// noLoader refuses to load anything: schemas are self-contained.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("loading %s: external references are not allowed", url)
}

// containsAny reports whether s (lower case) contains one of subs, and which.
func containsAny(s string, subs []string) (string, bool) {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return sub, true
		}
	}
	return "", false
}
