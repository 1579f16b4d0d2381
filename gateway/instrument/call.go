package instrument

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hermes-failover/hermes/gateway/validate"
)

// Call records one upstream call while its reply passes, whatever server
// or client carries it: Middleware and Transport record through it, and a
// front that is not net/http's can too. Begin it when the call starts,
// give Reply the reply's status and header, feed Write the body as it
// passes, then Finish it once; Fail records instead a call that got no
// reply. A call the caller hung up on is not recorded: drop the Call. A
// Call belongs to one goroutine at a time, but for Request, which the
// goroutine that sends the request's body may call meanwhile.
type Call struct {
	m      *Metrics
	route  string
	v      *validate.Validator
	start  time.Time
	c      *validate.Classifier
	status int
	first  firstToken
	// discard says Finish's caller does not read the Result's Content
	// (DiscardContent).
	discard bool
	// request reads the caller's cap on the reply from the request's
	// body (Request), under requestMu: net/http's transport sends a
	// body from a goroutine of its own while the reply is read.
	requestMu     sync.Mutex
	request       validate.MaxTokens
	requestBroken bool // reading the request panicked: no cap
	// replied says Reply was called; broken, that judging panicked
	// (guard): the call is then neither judged further nor recorded.
	replied, broken bool
}

// Begin starts recording a call of route whose reply is judged by v.
func (m *Metrics) Begin(route string, v *validate.Validator) *Call {
	m.InitRoute(route)
	return &Call{m: m, route: route, v: v, start: m.now()}
}

// Reply begins judging the reply; later calls are ignored.
func (c *Call) Reply(status int, header http.Header) {
	if c.replied {
		return
	}
	c.replied, c.status = true, status
	defer c.guard()
	c.judge(c.v.Start(status, header))
}

// guard, deferred around the judge's work on a reply, recovers a panic
// of it. The judge reads whatever an upstream sends; a bug it trips on
// must break neither the reply that passes nor the process that carries
// every route's traffic (a gateway's Transport reads the body on its
// caller's goroutine, and hermes proxy's server does not recover a
// handler's panic). The call is then not recorded: no verdict is
// evidence, and missing data must not move traffic. It is counted in
// llm_gateway_judge_panics_total, the first panic logged with its stack.
func (c *Call) guard() {
	if v := recover(); v != nil {
		c.broken = true
		c.m.judgePanicked(c.route, v)
	}
}

// ReplyContentType is Reply for a front that has the reply's
// Content-Type at hand and no http.Header, for a body with no content
// coding (see validate.Validator.StartContentType).
func (c *Call) ReplyContentType(status int, contentType string) {
	c.ReplyEncoded(status, contentType, "")
}

// ReplyEncoded is Reply for a front that has the reply's Content-Type
// and Content-Encoding at hand and no http.Header: a coded body is
// judged on what it decodes to (see validate.Validator.StartEncoded).
func (c *Call) ReplyEncoded(status int, contentType, contentEncoding string) {
	if c.replied {
		return
	}
	c.replied, c.status = true, status
	defer c.guard()
	c.judge(c.v.StartEncoded(status, contentType, contentEncoding))
}

// DiscardContent says the caller of Finish will not read the Result's
// Content, so that judging need not copy the completion's text (see
// validate.Classifier.DiscardContent); the verdict and what is recorded
// are the same. Call it before Finish.
func (c *Call) DiscardContent() {
	c.discard = true
	if c.c != nil {
		c.c.DiscardContent()
	}
}

// judge keeps the reply's Classifier, told to discard the content when
// the call was.
func (c *Call) judge(cl *validate.Classifier) {
	c.c = cl
	if c.discard {
		cl.DiscardContent()
	}
}

// Request feeds the next piece of the request's body, as it passes to
// the upstream: the caller's max_tokens (or max_completion_tokens) is
// read from it, so that a completion the caller's own cap ended is not
// held against the route (see validate.Classifier.CallerMaxTokens). It
// may be called from another goroutine than the reply's; the body is
// not kept.
func (c *Call) Request(p []byte) {
	c.requestMu.Lock()
	defer c.requestMu.Unlock()
	if c.requestBroken {
		return
	}
	defer func() {
		// As guard: a bug in reading the request must not stop the
		// process; the cap is then unknown (none).
		if v := recover(); v != nil {
			c.request.Reset()
			c.requestBroken = true
			c.m.judgePanicked(c.route, v)
		}
	}()
	c.request.Write(p)
}

// Replied says whether Reply has been called.
func (c *Call) Replied() bool { return c.replied }

// Write feeds the next piece of the reply's body, as it passes.
func (c *Call) Write(p []byte) {
	if c.broken {
		return
	}
	defer c.guard()
	c.c.Write(p)
	c.first.check(c.c, c.m.now)
}

// Interrupted says the reply's body broke off: it is judged as cut.
func (c *Call) Interrupted() {
	if !c.broken {
		c.c.Interrupted()
	}
}

// Finish judges the reply and records it: code, verdict, reason,
// duration, size and, for a stream that delivered a token, the time to
// its first token. early says the reader stopped before the body's end;
// the upstream is then not charged for what was not read (truncated,
// invalid_json and empty count as ok).
func (c *Call) Finish(early bool) validate.Result {
	c.requestMu.Lock()
	limit := c.request.Tokens()
	c.requestMu.Unlock()
	res, ok := c.finishJudging(limit)
	if !ok {
		return validate.Result{Status: c.status} // not judged: not recorded
	}
	if early && res.Verdict == validate.SoftFail && incomplete(res.Reason) {
		res.Verdict, res.Reason = validate.OK, validate.ReasonNone
	}
	c.m.Observe(c.route, statusCode(c.status), res, c.m.now().Sub(c.start), res.Bytes)
	c.first.observe(c.m, c.route, res, c.start)
	return res
}

// finishJudging ends the judging of the reply, the caller's cap on it
// given; false when judging panicked, now or before.
func (c *Call) finishJudging(limit int) (res validate.Result, ok bool) {
	if c.broken {
		return res, false
	}
	defer c.guard()
	c.c.CallerMaxTokens(limit)
	return c.c.Finish(), true
}

// Fail records a call that got no reply: a hard failure with code
// (CodeTimeout or CodeConnError) and no size.
func (c *Call) Fail(code string) {
	c.m.Observe(c.route, code, validate.Result{Verdict: validate.HardFail}, c.m.now().Sub(c.start), 0)
}

// FailureCode names err, the error of an upstream call that got no reply
// and that its caller did not cancel, as Transport names it: CodeTimeout
// for a timeout (a net.Error that says so, or a deadline), CodeConnError
// otherwise. It is for a front that tells a caller's hang-up apart
// itself.
func FailureCode(err error) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return CodeTimeout
	}
	return CodeConnError
}
