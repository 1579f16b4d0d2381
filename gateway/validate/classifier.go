package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"
)

// maxLine bounds one line of a stream; a longer one is not an SSE event a
// chat API sends, and it is not kept.
const maxLine = 1 << 20

type mode uint8

const (
	modeUnknown mode = iota // not decided yet: the body so far is blank or too short to tell
	modePlain               // one body, kept up to MaxBodyBytes
	modeSSE                 // server-sent events, parsed line by line
	modeSkip                // not 2xx: the body is only counted
	modeError               // HTTP 400: the error body is kept, to tell a rejection from a failure
	modeOpaque              // 2xx in a content coding this package does not decode: only counted
)

// maxErrorBody bounds what is kept of an HTTP 400 body: an error object is
// a few hundred bytes.
const maxErrorBody = 64 << 10

// Classifier judges one reply fed to it piece by piece. It keeps a plain
// body (up to Rules.MaxBodyBytes) but only the current line and the
// content of a stream. Get one with [Validator.Start]; it is not safe for
// concurrent use.
type Classifier struct {
	v      *Validator
	status int
	mode   mode
	// declaredSSE says the reply's Content-Type is text/event-stream. Its
	// body is still looked at before it is read as a stream: a relay that
	// fails a streamed request often sends its error object, or its
	// error template's text, under the stream's Content-Type, and that
	// is an error body, not a stream cut before its first event.
	declaredSSE bool
	size        int64
	body        []byte // plain: the body; undecided: the blank or short prefix
	overflow    bool
	interrupted bool
	result      *Result
	// discard says the caller does not read Result.Content
	// (DiscardContent).
	discard bool
	// coded lists the body's content codings: until Finish, body keeps
	// the coded bytes as they pass (up to MaxBodyBytes) and size counts
	// them; Finish decodes them (decodeKept), and wire is then what
	// passed and size what it decoded to.
	coded     []string
	wire      int64
	decodeErr error

	// stream state
	line      []byte
	skipLine  bool // the current line is too long and is being skipped
	afterCR   bool // the last Write ended with a CR: an LF first in the next is its CRLF
	data      []byte
	hasData   bool
	eventType eventType // the current event's event: field
	events    int
	done      bool
	content   content
	finish    string
	toolCalls bool
	refused   bool // a delta carried a refusal
	problem   Reason
	detail    string
	usage     Usage
	// firstToken says an event with content, a tool call, a refusal or
	// thinking has arrived.
	firstToken bool

	// reply is what the judge reads of the plain body or of the stream's
	// current event, borrowed from replies until Finish.
	reply *reply

	// maxTokens is the caller's own cap on the reply (CallerMaxTokens);
	// 0 when unknown. generated counts the bytes of the JSON strings
	// the model generated (content, thinking, refusal, tool calls), an
	// upper bound on their tokens when the reply reports no usage.
	maxTokens int
	generated int
}

// Start begins judging a reply with this status and header; feed the body
// to the Classifier's Write as it arrives and call Finish at its end. A
// body with a Content-Encoding is judged on what it decodes to
// (StartEncoded).
func (v *Validator) Start(status int, header http.Header) *Classifier {
	ce := header.Values("Content-Encoding")
	switch len(ce) {
	case 0:
		return v.StartEncoded(status, header.Get("Content-Type"), "")
	case 1:
		return v.StartEncoded(status, header.Get("Content-Type"), ce[0])
	}
	return v.StartEncoded(status, header.Get("Content-Type"), strings.Join(ce, ","))
}

// StartContentType is Start for a front that has the reply's
// Content-Type at hand and no http.Header, for a body with no content
// coding (see StartEncoded).
func (v *Validator) StartContentType(status int, contentType string) *Classifier {
	return v.StartEncoded(status, contentType, "")
}

// StartEncoded is Start for a front that has the reply's Content-Type
// and Content-Encoding at hand and no http.Header (hermes proxy's
// fasthttp front): the header is read for nothing else, and one built
// for each reply was a map and a slice to allocate. A body in gzip, br,
// zstd or deflate (contentEncoding lists the codings applied, in order)
// is judged on what it decodes to, at Finish (see coding.go); a 2xx body
// in another coding is only counted, judged ok: nothing can be read of
// it.
func (v *Validator) StartEncoded(status int, contentType, contentEncoding string) *Classifier {
	c := &Classifier{v: v, status: status}
	c.content.max = v.maxBody
	switch {
	case status == http.StatusBadRequest:
		c.mode = modeError
	case status < 200 || status > 299:
		c.mode = modeSkip
	case v.format == FormatJSON || v.format == FormatText:
		c.mode = modePlain // a stream is a format of its own
	case isEventStream(contentType):
		c.declaredSSE = true // modeUnknown: see Write
	}
	if contentEncoding != "" && c.mode != modeSkip {
		list, known := codings(contentEncoding)
		switch {
		case !known && c.mode == modeError:
			c.mode = modeSkip
		case !known:
			c.mode, c.detail = modeOpaque, fmt.Sprintf("not judged: Content-Encoding %q", contentEncoding)
		case len(list) > 0:
			c.coded = list
		}
	}
	return c
}

// DiscardContent says the caller will not read the Result's Content:
// Finish then leaves it empty for a plain reply, and judges a long
// completion's text where it lies in the body instead of copying it
// (1.2 kB for a typical completion; hermes proxy reads only the verdict
// and its reason). The verdict, the reason and Chars are the same. Call
// it before Finish; a stream's content is still kept (its deltas are
// joined to be judged).
func (c *Classifier) DiscardContent() { c.discard = true }

// CallerMaxTokens says the request capped the reply at n tokens
// (max_tokens or max_completion_tokens, read by MaxTokens; 0: no cap, or
// unknown). A completion that finish_reason "length" ends is then judged
// by what it came to: at the caller's cap it ended where the caller asked
// (see lengthFinish), short of it the route cut it (truncated). Call it
// before Finish.
func (c *Classifier) CallerMaxTokens(n int) { c.maxTokens = max(n, 0) }

// Classify judges a whole reply.
func (v *Validator) Classify(status int, header http.Header, body []byte) Result {
	c := v.Start(status, header)
	_, _ = c.Write(body)
	return c.Finish()
}

// isEventStream says whether ct is text/event-stream as
// mime.ParseMediaType reads it. The media type is looked at first, as
// ParseMediaType takes it (lower-cased, white space trimmed): a
// chat completion's application/json is then told apart without the
// parse and the map of parameters it makes.
func isEventStream(ct string) bool {
	base, _, params := strings.Cut(ct, ";")
	if strings.TrimSpace(strings.ToLower(base)) != "text/event-stream" {
		return false
	}
	if !params {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "text/event-stream"
}

// Write feeds the next piece of the body. It never fails; it returns
// len(p) so that a Classifier can be an io.Writer (for io.TeeReader).
func (c *Classifier) Write(p []byte) (int, error) {
	n := len(p)
	c.size += int64(n)
	if c.coded != nil {
		c.keepCoded(p)
		return n, nil
	}
	if c.declaredSSE && c.mode == modeUnknown && c.body == nil && hasSSEPrefix(bytes.TrimLeft(p, " \t\r\n\ufeff")) {
		c.mode = modeSSE // the common case, decided without a copy
	}
	if c.body == nil && c.result == nil && n > 0 && (c.mode == modeUnknown || c.mode == modePlain || c.mode == modeError) {
		c.body = getBody()
	}
	switch c.mode {
	case modeSkip, modeOpaque:
	case modeError:
		if len(c.body)+len(p) <= maxErrorBody {
			c.body = append(c.body, p...)
		}
	case modeSSE:
		c.sseWrite(p)
	case modePlain:
		c.keep(p)
	case modeUnknown:
		c.body = append(c.body, p...)
		head := bytes.TrimLeft(c.body, " \t\r\n\ufeff")
		switch {
		case hasSSEPrefix(head):
			c.mode = modeSSE
			buf := c.body
			c.body = nil
			c.sseWrite(buf) // copies what it keeps
			putBody(buf)
		case len(head) >= len("event:") || (len(head) > 0 && !couldBeSSE(head)):
			c.mode = modePlain
			buf := c.body
			c.body = buf[:0] // kept in place: the body so far is the body
			c.keep(buf)
		case len(c.body) > 4096 && c.declaredSSE: // blank so far: a stream of blank lines
			c.mode = modeSSE
			buf := c.body
			c.body = nil
			c.sseWrite(buf)
			putBody(buf)
		case len(c.body) > 4096: // blank so far: keep as plain
			c.mode = modePlain
		}
	}
	return n, nil
}

var ssePrefixes = []string{"data:", "event:", "id:", "retry:", ":"}

func hasSSEPrefix(b []byte) bool {
	for _, p := range ssePrefixes {
		if bytes.HasPrefix(b, []byte(p)) {
			return true
		}
	}
	return false
}

// couldBeSSE reports whether b may still grow into an SSE field name.
func couldBeSSE(b []byte) bool {
	for _, p := range ssePrefixes {
		if strings.HasPrefix(p, string(b)) {
			return true
		}
	}
	return false
}

func (c *Classifier) keep(p []byte) {
	if c.overflow {
		return
	}
	if len(c.body)+len(p) > c.v.maxBody {
		c.overflow = true
		c.body = nil
		return
	}
	c.body = append(c.body, p...)
}

// Interrupted records that reading the body failed before its end (the
// connection broke, a deadline passed): what was seen is judged as cut.
func (c *Classifier) Interrupted() { c.interrupted = true }

// Finish judges the reply from what was written. Later calls return the
// same Result.
func (c *Classifier) Finish() Result {
	if c.result != nil {
		return *c.result
	}
	if c.coded != nil {
		c.decodeKept()
	}
	if c.mode == modeUnknown && c.declaredSSE {
		// Blank, or too short to tell: a stream, as declared.
		c.mode = modeSSE
		buf := c.body
		c.body = nil
		c.sseWrite(buf)
		putBody(buf)
	}
	var r Result
	switch c.mode {
	case modeSkip:
		r = Result{Verdict: HardFail, Detail: fmt.Sprintf("HTTP %d", c.status)}
	case modeOpaque:
		r = Result{Verdict: OK, Detail: c.detail}
	case modeError:
		r = c.finishError()
	case modeSSE:
		r = c.finishStream()
	default:
		r = c.finishPlain()
	}
	if c.decodeErr != nil && c.mode != modeError && !c.interrupted {
		r = soft(ReasonInvalidJSON, "the body does not decode: %v", c.decodeErr)
	}
	if c.size > int64(c.v.maxBody) && (r.Verdict == OK || r.Verdict == SoftFail) {
		// Past the cap the rules no longer see what they need: the
		// reply fails on its size, whatever else it showed.
		r = soft(ReasonBodyTooLarge, "the reply is longer than max_body_bytes (%d)", c.v.maxBody)
	}
	r.Status = c.status
	r.Stream = c.mode == modeSSE
	r.Bytes = c.size
	if c.wire > 0 {
		r.Bytes = c.wire // what passed, not what it decoded to
	}
	if r.Chars == 0 {
		r.Chars = c.content.chars
	}
	if r.Content == "" {
		r.Content = c.content.String()
	}
	if r.FinishReason == "" {
		r.FinishReason = c.finish
	}
	if r.Usage == (Usage{}) {
		r.Usage = c.usage
	}
	if r.Verdict == OK || r.Verdict == HardFail {
		r.Reason = ReasonNone
	}
	c.result = &r
	// The Result holds copies of what it reports, never the body.
	putReply(c.reply)
	c.reply = nil
	putBody(c.body)
	c.body = nil
	return r
}

// scan validates b and records what the judge reads of it in the
// Classifier's reply, borrowed on its first use.
func (c *Classifier) scan(b []byte) (*reply, bool) {
	if c.reply == nil {
		c.reply = replies.Get().(*reply)
	}
	return c.reply, c.reply.scan(b)
}

// bodies lends Classifiers the buffer a plain or error body is kept in,
// from Write to Finish: a chat completion's body is a few kilobytes, and
// a buffer grown afresh for each reply was the largest allocation of the
// proxy's plain replies (growing by doubling, copied on the way). A
// buffer that grew past maxPooledBody is left to the collector.
var bodies = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

const maxPooledBody = 64 << 10

func getBody() []byte { return (*bodies.Get().(*[]byte))[:0] }

func putBody(b []byte) {
	if b != nil && cap(b) <= maxPooledBody {
		bodies.Put(&b)
	}
}

// replies lends Classifiers the record of the reply they judge, from
// their first scan to Finish: kept in the Classifier, it made every
// Classifier 384 bytes larger (BenchmarkJudgePlain). A record of more
// than maxPooledChoices choices is left to the collector.
var replies = sync.Pool{New: func() any { r := new(reply); r.reset(); return r }}

const maxPooledChoices = 16

func putReply(r *reply) {
	if r != nil && cap(r.choice) <= maxPooledChoices {
		r.reset() // it keeps no view of a body
		replies.Put(r)
	}
}

func soft(reason Reason, format string, args ...any) Result {
	return Result{Verdict: SoftFail, Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// content is the completion's text, kept up to max bytes, and its length
// in characters. A plain reply's text is one piece, a string the
// classifier made (add): it is kept as given, which a builder would copy
// a second time. A stream's pieces are unquoted into the builder (addRaw).
type content struct {
	first    string
	b        strings.Builder
	chars    int
	max      int
	overflow bool
}

func (t *content) add(s string) {
	t.chars += runeCount(s)
	if t.overflow {
		return
	}
	if len(t.first)+t.b.Len()+len(s) > t.max {
		t.overflow = true
		return
	}
	switch {
	case t.first == "" && t.b.Len() == 0:
		t.first = s
	case t.first != "":
		t.b.Grow(len(t.first) + len(s))
		t.b.WriteString(t.first)
		t.first = ""
		fallthrough
	default:
		t.b.WriteString(s)
	}
}

// addRaw adds the text of raw, a JSON string, unquoted straight into the
// builder: a stream's deltas become one string without a string of their
// own each. It returns false when raw is not a string.
func (t *content) addRaw(raw rawJSON) bool {
	if !raw.isString() {
		return false
	}
	body := raw[1 : len(raw)-1]
	if t.overflow || len(t.first)+t.b.Len()+3*len(body) > t.max {
		// Near the cap (a bad byte becomes the three of U+FFFD): the
		// text's own length decides, as add decides it.
		s, _ := raw.str()
		t.add(s)
		return true
	}
	if t.first != "" {
		t.b.WriteString(t.first)
		t.first = ""
	}
	n := t.b.Len()
	writeUnquoted(&t.b, body)
	t.chars += runeCount(t.b.String()[n:])
	return true
}

func (t *content) String() string {
	if t.first != "" {
		return t.first
	}
	return t.b.String()
}

// judgeContent applies the content rules to a completion.
func (v *Validator) judgeContent(text string, chars int, truncatedText, toolCalls bool) Result {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" && !truncatedText {
		return blankContent(toolCalls)
	}
	if chars <= v.fallbackMaxChars {
		if p, ok := containsAny(strings.ToLower(trimmed), v.fallback); ok {
			return soft(ReasonFallbackPhrase, "the completion is a fallback phrase (%q)", p)
		}
	}
	if v.schema != nil && !truncatedText {
		if r := v.checkSchema(stripFence(trimmed), "content"); r.Verdict != OK {
			return r
		}
	}
	return v.judgeLength(chars)
}

// lengthFinish judges a completion that finish_reason "length" ended,
// of text (when read; "" for a long one judged where it lies) and chars
// characters. Without the caller's cap, the route's own limit cut it:
// truncated. With it, the reply is held to the cap in the tokens its
// usage reports, or, without usage, in the bytes the model generated
// (a token is at least a byte, so fewer bytes than the cap are fewer
// tokens too; a reply with neither, blank, spent the cap on thinking it
// did not show): under nine tenths of the cap the route stopped it short
// (a provider capping max_tokens below what was asked, or cutting
// replies), truncated; at the cap the caller's own limit ended it, and
// the reply is whole as far as the route goes. It is then held only to
// the fallback phrases: a blank one (the cap spent on thinking), a short
// one and one a schema would refuse are what the caller asked for.
func (c *Classifier) lengthFinish(text string, chars int) Result {
	limit := c.maxTokens
	if limit == 0 {
		return soft(ReasonTruncated, "%s", c.finishName())
	}
	used, unit := c.usage.Generated(), "tokens generated"
	if used == 0 {
		used, unit = c.generated, "bytes generated"
	}
	if used == 0 {
		// Nothing shown and nothing counted: a model that thinks
		// without showing it (OpenAI's o-series, Gemini's thinking
		// through its OpenAI compatibility) spent the cap on thinking.
		return okResult()
	}
	if int64(used)*10 < int64(limit)*9 {
		return soft(ReasonTruncated, "%s after %d %s, short of the caller's cap of %d", c.finishName(), used, unit, limit)
	}
	v := c.v
	if chars <= v.fallbackMaxChars {
		if p, ok := containsAny(strings.ToLower(strings.TrimSpace(text)), v.fallback); ok {
			return soft(ReasonFallbackPhrase, "the completion is a fallback phrase (%q)", p)
		}
	}
	return okResult()
}

// readsText says whether judging a completion of chars characters reads
// its text (for a fallback phrase, or the schema), and not only whether
// it is blank and its length (judgeLong).
func (v *Validator) readsText(chars int) bool {
	return chars <= v.fallbackMaxChars || v.schema != nil
}

// judgeLong is judgeContent for a completion whose text it does not read
// (readsText is false): blank, and its length in characters.
func (v *Validator) judgeLong(blank bool, chars int, toolCalls bool) Result {
	if blank {
		return blankContent(toolCalls)
	}
	return v.judgeLength(chars)
}

// filteredFinish says whether finish is the finish_reason of a
// completion the provider's content filter withheld, on the prompt or
// the answer: OpenAI's and Azure OpenAI's "content_filter", Zhipu's
// "sensitive" (its safety review stopped the answer; the Vercel AI
// SDK's Zhipu provider maps it to content-filter).
func filteredFinish(finish string) bool {
	return finish == "content_filter" || finish == "sensitive"
}

// failedFinish says whether finish is the finish_reason of a completion
// the provider ended on its own failure: OpenRouter's "error", DeepSeek's
// "insufficient_system_resource" (the completion was interrupted for
// want of capacity), Zhipu's "network_error" (its inference failed; the
// Vercel AI SDK's Zhipu provider maps it to error) and vLLM's "abort"
// (its engine ended the request: a shutdown, a scale-down or sleep-mode
// pause; the stream still ends with [DONE], vllm-project/vllm#57082).
func failedFinish(finish string) bool {
	switch finish {
	case "error", "insufficient_system_resource", "network_error", "abort":
		return true
	}
	return false
}

// blankContent is the verdict on a completion with no text: fine when it
// calls tools, refuses (a refusal is the model's answer, and OpenAI
// sends it with content null) or was withheld by the provider's content
// filter (filteredFinish: the caller's content met a policy, as a 400
// content_policy_violation is rejected and not the route's fault),
// empty otherwise.
func blankContent(answered bool) Result {
	if answered {
		return okResult()
	}
	return soft(ReasonEmpty, "the completion has no content")
}

// judgeLength holds a completion of chars characters to min_length.
func (v *Validator) judgeLength(chars int) Result {
	if v.minLength > 0 && chars < v.minLength {
		return soft(ReasonTooShort, "%d characters, less than %d", chars, v.minLength)
	}
	return okResult()
}

// checkSchema validates a JSON document (the content, or the body) against
// the schema.
func (v *Validator) checkSchema(doc, what string) Result {
	inst, err := jsonschemaUnmarshal(doc)
	if err != nil {
		return soft(ReasonInvalidJSON, "the %s is not JSON", what)
	}
	if err := v.schema.Validate(inst); err != nil {
		return soft(ReasonMissingField, "the %s does not meet the schema: %s", what, firstLine(err.Error()))
	}
	return okResult()
}

// stripFence removes a Markdown code fence (```json … ```) around s.
func stripFence(s string) string {
	if !strings.HasPrefix(s, "```") {
		return s
	}
	_, rest, ok := strings.Cut(s, "\n")
	if !ok {
		return s
	}
	rest = strings.TrimSpace(rest)
	return strings.TrimSpace(strings.TrimSuffix(rest, "```"))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// decodeJSON decodes one JSON document, numbers as json.Number, refusing
// trailing data.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b[dec.InputOffset():])) > 0 {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return v, nil
}

// FirstToken reports whether the stream has delivered its first token:
// an event with content, a tool call, a refusal or thinking. It is false
// for a plain body, and until Finish for a coded one.
func (c *Classifier) FirstToken() bool { return c.firstToken }
