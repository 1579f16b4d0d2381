package proxy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hermes-failover/hermes/internal/faults"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestOpenAISDK points a real OpenAI SDK's base URL at the proxy's route
// (http://LISTEN/ROUTE/v1), plain and streamed: the SDK gets the
// completion, and each call is recorded ok; a reply with an error template
// inside HTTP 200 reaches the SDK as it is and is recorded error_body.
func TestOpenAISDK(t *testing.T) {
	srv := faults.Start(t)
	s := startStack(t, srv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := func(route string) openai.Client {
		return openai.NewClient(option.WithBaseURL(s.proxy+"/"+route+"/v1"), option.WithAPIKey(secret), option.WithMaxRetries(0))
	}
	params := openai.ChatCompletionNewParams{Model: faults.Model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")}}

	healthy := client(string(faults.Healthy))
	resp, err := healthy.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != faults.Content {
		t.Errorf("plain completion %q, want %q", got, faults.Content)
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
		t.Errorf("streamed completion %q in %d chunks, want %q", got, chunks, faults.Content)
	}
	ok := `llm_gateway_requests_total{code="200",reason="",route="healthy",verdict="ok"} 2`
	testenv.EventuallyDetail(t, 10*time.Second, ok, func() (bool, string) {
		_, page := scrape(t, s.proxy)
		return strings.Contains(page, ok+"\n"), page
	})

	// The proxy passes the error template on; judging it is observation.
	errInOK := client(string(faults.ErrorInOK))
	if _, err := errInOK.Chat.Completions.New(ctx, params); err != nil {
		t.Logf("the SDK's own reading of the template: %v", err)
	}
	bad := fmt.Sprintf(`llm_gateway_requests_total{code="200",reason="error_body",route="%s",verdict="soft_fail"} 1`, faults.ErrorInOK)
	testenv.EventuallyDetail(t, 10*time.Second, bad, func() (bool, string) {
		_, page := scrape(t, s.proxy)
		return strings.Contains(page, bad+"\n"), page
	})
}
