package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/faults"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestOpenAISDK points a real OpenAI SDK's base URL at the proxy's route
// (http://LISTEN/ROUTE/v1), plain and streamed: the SDK gets the
// completion, and each call is recorded ok; a reply with an error template
// inside HTTP 200 reaches the SDK as it is and is recorded error_body.
// The same again from an upstream that compresses its JSON replies, as a
// provider behind Cloudflare does for the gzip the SDK's transport asks
// for: the proxy judges what the SDK reads once it has inflated them.
func TestOpenAISDK(t *testing.T) {
	srv := faults.Start(t)
	csrv := faults.Start(t)
	csrv.Compress = true
	s := startStack(t, srv, map[string]string{
		"gz-healthy": csrv.URL + "/" + string(faults.Healthy),
		"gz-error":   csrv.URL + "/" + string(faults.ErrorInOK),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var inflated atomic.Int64 // plain replies the SDK's transport inflated
	client := func(route string) openai.Client {
		return openai.NewClient(option.WithBaseURL(s.proxy+"/"+route+"/v1"), option.WithAPIKey(secret), option.WithMaxRetries(0),
			option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
				resp, err := next(req)
				if err == nil && resp.Uncompressed {
					inflated.Add(1)
				}
				return resp, err
			}))
	}
	params := openai.ChatCompletionNewParams{Model: faults.Model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")}}

	for _, c := range []struct {
		healthy, errInOK string
		compressed       bool
	}{{string(faults.Healthy), string(faults.ErrorInOK), false}, {"gz-healthy", "gz-error", true}} {
		before := inflated.Load()
		healthy := client(c.healthy)
		resp, err := healthy.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Message.Content; got != faults.Content {
			t.Errorf("%s: plain completion %q, want %q", c.healthy, got, faults.Content)
		}
		if got := inflated.Load() > before; got != c.compressed {
			t.Errorf("%s: the plain reply came compressed: %v, want %v", c.healthy, got, c.compressed)
		}

		stream := healthy.Chat.Completions.NewStreaming(ctx, params)
		var acc openai.ChatCompletionAccumulator
		chunks := 0
		for stream.Next() {
			acc.AddChunk(stream.Current())
			chunks++
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if got := acc.Choices[0].Message.Content; got != faults.Content || chunks < 3 {
			t.Errorf("%s: streamed completion %q in %d chunks, want %q", c.healthy, got, chunks, faults.Content)
		}
		ok := fmt.Sprintf(`llm_gateway_requests_total{code="200",reason="",route="%s",verdict="ok"} 2`, c.healthy)
		testenv.EventuallyDetail(t, 10*time.Second, ok, func() (bool, string) {
			_, page := scrape(t, s.proxy)
			return strings.Contains(page, ok+"\n"), page
		})

		// The proxy passes the error template on; judging it is observation.
		errInOK := client(c.errInOK)
		if _, err := errInOK.Chat.Completions.New(ctx, params); err != nil {
			t.Logf("the SDK's own reading of the template: %v", err)
		}
		bad := fmt.Sprintf(`llm_gateway_requests_total{code="200",reason="error_body",route="%s",verdict="soft_fail"} 1`, c.errInOK)
		testenv.EventuallyDetail(t, 10*time.Second, bad, func() (bool, string) {
			_, page := scrape(t, s.proxy)
			return strings.Contains(page, bad+"\n"), page
		})
	}
}

// TestOpenAINodeSDK is TestOpenAISDK with the OpenAI SDK for Node, through
// nginx as the gateway: its fetch asks for compression (gzip and deflate
// with Node 20's), and the compressing upstream answers the plain reply
// so. The SDK reads every completion whole, and the proxy records each
// call ok.
func TestOpenAINodeSDK(t *testing.T) {
	script := nodeSDK(t, "the OpenAI SDK for Node", "HERMES_OPENAI_NODE_DIR", "/var/cache/hermes-test/openai-node", "openai", "openai-node.cjs")
	srv := faults.Start(t)
	csrv := faults.Start(t)
	csrv.Compress = true
	s := startStack(t, srv, map[string]string{"gz-healthy": csrv.URL + "/" + string(faults.Healthy)})
	plainURL, codedURL := s.nginx+"/healthy/v1", s.nginx+"/gz-healthy/v1"

	stdout := script(t, "OPENAI_API_KEY="+secret, plainURL, codedURL)
	var got map[string]struct {
		Plain, Encoding, Stream string
		Chunks                  int
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("the script's output %q: %v", stdout, err)
	}
	for url, coded := range map[string]bool{plainURL: false, codedURL: true} {
		g := got[url]
		if g.Plain != faults.Content || g.Stream != faults.Content || g.Chunks < 3 {
			t.Errorf("%s: the SDK read %+v, want %q plain and streamed", url, g, faults.Content)
		}
		if (g.Encoding != "") != coded {
			t.Errorf("%s: the plain reply came with Content-Encoding %q; compressed wanted: %v", url, g.Encoding, coded)
		}
		t.Logf("%s: the plain reply's Content-Encoding %q", url, g.Encoding)
	}
	for _, route := range []string{"healthy", "gz-healthy"} {
		ok := fmt.Sprintf(`llm_gateway_requests_total{code="200",reason="",route="%s",verdict="ok"} 2`, route)
		testenv.EventuallyDetail(t, 10*time.Second, ok, func() (bool, string) {
			_, page := scrape(t, s.proxy)
			return strings.Contains(page, ok+"\n"), page
		})
	}
}

// TestOpenAISDKCallerMaxTokens: the OpenAI Go SDK, through nginx as the
// gateway and hermes proxy, caps its replies (max_completion_tokens, as
// the SDK sends it for newer models, and max_tokens), with a short prompt
// and with a long conversation (its body streamed on by the proxy). A
// completion the caller's own cap ended (finish_reason length) is
// recorded ok; one a provider ended short of the cap, truncated.
func TestOpenAISDKCallerMaxTokens(t *testing.T) {
	srv := faults.Start(t)
	s := startStack(t, srv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	long := strings.Repeat("An earlier turn of a long conversation. ", 400) // 16 KiB
	for _, c := range []struct {
		route   faults.Fault
		cap     func(*openai.ChatCompletionNewParams)
		verdict string
	}{
		{faults.Healthy, func(p *openai.ChatCompletionNewParams) { p.MaxCompletionTokens = openai.Int(3) }, `reason="",route="healthy",verdict="ok"`},
		{faults.MaxTokensCapped, func(p *openai.ChatCompletionNewParams) { p.MaxTokens = openai.Int(8) }, `reason="truncated",route="max_tokens_capped",verdict="soft_fail"`},
	} {
		client := openai.NewClient(option.WithBaseURL(s.nginx+"/"+string(c.route)+"/v1"), option.WithAPIKey(secret), option.WithMaxRetries(0))
		for _, prompt := range []string{"Say hello.", long} {
			params := openai.ChatCompletionNewParams{Model: faults.Model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)}}
			c.cap(&params)
			resp, err := client.Chat.Completions.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Choices[0].FinishReason != "length" {
				t.Errorf("%s: finish_reason %q, want length", c.route, resp.Choices[0].FinishReason)
			}
			stream := client.Chat.Completions.NewStreaming(ctx, params)
			for stream.Next() {
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
		}
		want := `llm_gateway_requests_total{code="200",` + c.verdict + `} 4`
		testenv.EventuallyDetail(t, 10*time.Second, want, func() (bool, string) {
			_, page := scrape(t, s.proxy)
			return strings.Contains(page, want+"\n"), page
		})
	}
}

// TestAnthropicNodeSDK is TestOpenAINodeSDK with Anthropic's SDK for
// Node, its key in x-api-key, through nginx as the gateway, to routes
// whose validation format is anthropic_messages: the SDK reads each
// message whole, plain and streamed, and the proxy records a healthy
// route's calls ok and those of a route that caps max_tokens below what
// was asked truncated.
func TestAnthropicNodeSDK(t *testing.T) {
	script := nodeSDK(t, "Anthropic's SDK for Node", "HERMES_ANTHROPIC_NODE_DIR", "/var/cache/hermes-test/anthropic-node", "@anthropic-ai/sdk", "anthropic-node.cjs")
	// The SDK appends /v1/messages to its base URL.
	healthyAndCapped(t, script, "ANTHROPIC_API_KEY", validate.FormatAnthropicMessages, "", "end_turn", "max_tokens")
}

// TestAnthropicSDK is TestAnthropicNodeSDK with Anthropic's SDK for Go.
func TestAnthropicSDK(t *testing.T) {
	params := anthropic.MessageNewParams{Model: faults.Model, MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello."))}}
	script := goSDK("ANTHROPIC_API_KEY", func(ctx context.Context, apiKey, base string) (sdkRead, error) {
		// The SDK appends /v1/messages to its base URL.
		client := anthropic.NewClient(anthropicopt.WithBaseURL(base), anthropicopt.WithAPIKey(apiKey), anthropicopt.WithMaxRetries(0))
		plain, err := client.Messages.New(ctx, params)
		if err != nil {
			return sdkRead{}, err
		}
		r := sdkRead{PlainEnd: string(plain.StopReason)}
		for _, b := range plain.Content {
			if b.Type == "text" {
				r.Plain += b.Text
			}
		}
		stream := client.Messages.NewStreaming(ctx, params)
		for stream.Next() {
			ev := stream.Current()
			r.Events++
			switch {
			case ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta":
				r.Stream += ev.Delta.Text
			case ev.Type == "message_delta":
				r.StreamEnd = string(ev.Delta.StopReason)
			}
		}
		return r, stream.Err()
	})
	healthyAndCapped(t, script, "ANTHROPIC_API_KEY", validate.FormatAnthropicMessages, "", "end_turn", "max_tokens")
}

// TestOpenAINodeSDKResponses is TestAnthropicNodeSDK with the Responses
// API of the OpenAI SDK for Node, to routes whose validation format is
// openai_responses.
func TestOpenAINodeSDKResponses(t *testing.T) {
	script := nodeSDK(t, "the OpenAI SDK for Node", "HERMES_OPENAI_NODE_DIR", "/var/cache/hermes-test/openai-node", "openai", "openai-node-responses.cjs")
	healthyAndCapped(t, script, "OPENAI_API_KEY", validate.FormatOpenAIResponses, "/v1", "completed", "incomplete")
}

// TestOpenAISDKResponses is TestOpenAINodeSDKResponses with the OpenAI
// SDK for Go.
func TestOpenAISDKResponses(t *testing.T) {
	params := responses.ResponseNewParams{Model: faults.Model, MaxOutputTokens: openai.Int(1024),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello.")}}
	script := goSDK("OPENAI_API_KEY", func(ctx context.Context, apiKey, base string) (sdkRead, error) {
		client := openai.NewClient(option.WithBaseURL(base), option.WithAPIKey(apiKey), option.WithMaxRetries(0))
		plain, err := client.Responses.New(ctx, params)
		if err != nil {
			return sdkRead{}, err
		}
		r := sdkRead{Plain: plain.OutputText(), PlainEnd: string(plain.Status)}
		stream := client.Responses.NewStreaming(ctx, params)
		for stream.Next() {
			ev := stream.Current()
			r.Events++
			switch ev.Type {
			case "response.output_text.delta":
				r.Stream += ev.Delta
			case "response.completed", "response.incomplete":
				r.StreamEnd = string(ev.Response.Status)
			}
		}
		return r, stream.Err()
	})
	healthyAndCapped(t, script, "OPENAI_API_KEY", validate.FormatOpenAIResponses, "/v1", "completed", "incomplete")
}

// sdkRead is what an SDK read of one base URL, plain and streamed: the
// text and its end (stop_reason, status), and the stream's events.
type sdkRead struct {
	Plain, PlainEnd, Stream, StreamEnd string
	Events                             int
}

// goSDK is a script for healthyAndCapped that calls each base URL with
// read, an SDK for Go, its API key taken from the variable key.
func goSDK(key string, read func(ctx context.Context, apiKey, base string) (sdkRead, error)) func(t *testing.T, kv string, baseURLs ...string) []byte {
	return func(t *testing.T, kv string, baseURLs ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		apiKey, _ := strings.CutPrefix(kv, key+"=")
		out := map[string]sdkRead{}
		for _, base := range baseURLs {
			r, err := read(ctx, apiKey, base)
			if err != nil {
				t.Fatalf("%s: %v", base, err)
			}
			out[base] = r
		}
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// healthyAndCapped runs script, an SDK's calls plain and streamed, with
// its API key in the variable key, through nginx and the proxy to two
// routes in format: one healthy, one that caps the reply below what was
// asked. The SDK must read each reply whole, its end (stop_reason,
// status) healthyEnd or cappedEnd, and the proxy record the healthy
// route's calls ok and the capped one's truncated. suffix ends the base
// URLs given to the script.
func healthyAndCapped(t *testing.T, script func(t *testing.T, key string, args ...string) []byte, key string, format validate.Format, suffix, healthyEnd, cappedEnd string) {
	t.Helper()
	srv := faults.Start(t)
	var routes []stackRoute
	for _, f := range []faults.Fault{faults.Healthy, faults.MaxTokensCapped} {
		routes = append(routes, stackRoute{name: string(f), upstream: srv.URL + "/" + string(f), validation: "{format: " + string(format) + "}"})
	}
	s := startRoutes(t, routes)
	healthy, capped := s.nginx+"/"+string(faults.Healthy)+suffix, s.nginx+"/"+string(faults.MaxTokensCapped)+suffix
	stdout := script(t, key+"="+secret, healthy, capped)
	var got map[string]sdkRead
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("the script's output %q: %v", stdout, err)
	}
	short := strings.Join(strings.Fields(faults.Content)[:faults.CappedTokens], " ")
	for url, want := range map[string]struct{ text, end string }{healthy: {faults.Content, healthyEnd}, capped: {short, cappedEnd}} {
		g := got[url]
		if g.Plain != want.text || g.Stream != want.text || g.PlainEnd != want.end || g.StreamEnd != want.end || g.Events < 4 {
			t.Errorf("%s: the SDK read %+v, want %q ended by %s, plain and streamed", url, g, want.text, want.end)
		}
	}
	for route, want := range map[faults.Fault]string{faults.Healthy: `reason="",route="healthy",verdict="ok"`, faults.MaxTokensCapped: `reason="truncated",route="max_tokens_capped",verdict="soft_fail"`} {
		line := `llm_gateway_requests_total{code="200",` + want + `} 2`
		testenv.EventuallyDetail(t, 10*time.Second, line, func() (bool, string) {
			_, page := scrape(t, s.proxy)
			return strings.Contains(page, line+"\n"), page
		})
		t.Logf("%s: %s", route, line)
	}
	assertNoKey(t, s)
}

// nodeSDK finds an SDK for Node (the npm package pkg) in the directory
// that env names, or in dir; it fails the test when it is missing and
// CI=true, and skips it otherwise. The script it returns runs
// testdata/file with node, the SDK's directory in env and the variable
// key=value set, and returns what it printed.
func nodeSDK(t *testing.T, what, env, dir, pkg, file string) func(t *testing.T, key string, args ...string) []byte {
	t.Helper()
	node := testenv.Binary(t, "node")
	if d := os.Getenv(env); d != "" {
		dir = d
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
		msg := what + " is not installed in " + dir + " (scripts/install-deps.sh installs it)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "; it is required when CI=true")
		}
		t.Skip(msg)
	}
	return func(t *testing.T, key string, args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("testdata", file)}, args...)...)
		cmd.Env = append(os.Environ(), env+"="+dir, key)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		if err != nil {
			t.Fatalf("node: %v\n%s", err, stderr.String())
		}
		return stdout
	}
}
