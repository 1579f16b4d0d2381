package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/actuators/webhook"
	"github.com/hermes-failover/hermes/traffic"
)

// A receiver verifies the signature on the raw body before trusting it,
// answers 2xx once the state is applied, and uses the idempotency key to
// skip a state it already holds (after a Hermes restart, the first tick
// sends every service once more).
func Example_receiver() {
	secret := []byte("s3cret")
	held := map[string]string{} // service → idempotency key of the state applied
	receiver := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || !webhook.Verify(body, r.Header.Get("X-Hermes-Signature"), secret) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var p webhook.Payload
		if err := json.Unmarshal(body, &p); err != nil || p.Version != 1 {
			http.Error(w, "unsupported payload", http.StatusBadRequest) // permanent: not retried
			return
		}
		if held[p.Service] == p.IdempotencyKey {
			w.WriteHeader(http.StatusNoContent) // already applied
			return
		}
		fmt.Printf("apply %s: %v retries=%v degraded=%v\n", p.Service, p.Weights, p.RetriesEnabled, p.DegradedMode)
		held[p.Service] = p.IdempotencyKey
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(receiver)
	defer srv.Close()

	a, err := webhook.New(actuatortest.Settings(webhook.Kind, map[string]any{
		"url": srv.URL, "secret": "s3cret",
	}))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	desired := actuators.Splits{"chat": {
		Weights:        map[string]int{"free": 95, "paid": 5},
		RetriesEnabled: true,
		Levels:         map[string]traffic.Level{"free": traffic.Warm, "paid": traffic.Normal},
	}}
	_ = a.Apply(ctx, desired)
	_ = a.Apply(ctx, desired) // unchanged: nothing is sent

	// A forged request is refused.
	forged := `{"version":1,"service":"chat","weights":{"free":0,"paid":100}}`
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(forged))
	if err == nil {
		fmt.Println("forged:", resp.Status)
		resp.Body.Close()
	}
	// Output:
	// apply chat: map[free:95 paid:5] retries=true degraded=false
	// forged: 401 Unauthorized
}
