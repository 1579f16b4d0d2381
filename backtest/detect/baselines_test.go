package detect

import (
	"context"
	"fmt"
	"testing"

	"github.com/hermes-failover/hermes/backtest"
)

// TestBaselinesCountWhatTheyCount feeds each baseline 20 minutes in which
// 80 % of a route's calls fail with one code, and checks who reacts: the
// classic alert and Envoy's consecutive_5xx count 5xx and timeouts, LiteLLM
// also 429, and none of them a 422 (a refused parameter).
func TestBaselinesCountWhatTheyCount(t *testing.T) {
	for _, c := range []struct {
		code                    string
		classic, envoy, litellm bool
	}{
		{"503", true, true, true},
		{"timeout", true, true, true},
		{"429", false, false, true},
		{"422", false, false, false},
	} {
		t.Run(c.code, func(t *testing.T) {
			// 300 calls per 15s scrape, 240 of them failing with c.code.
			src := fmt.Sprintf(`interval: 15s
input_series:
  - series: 'llm_gateway_requests_total{route="free",code="200",verdict="ok"}'
    values: '0+60x80'
  - series: 'llm_gateway_requests_total{route="free",code=%q,verdict="hard_fail"}'
    values: '0+240x80'
`, c.code)
			f, err := backtest.Parse([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			bt, err := backtest.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer bt.Close()
			routes := []string{"free", "paid"}
			for _, m := range []struct {
				name string
				want bool
				run  func(context.Context, *backtest.Store, []string) ([]Tick, error)
			}{{MethodClassic, c.classic, Classic}, {MethodEnvoy, c.envoy, Envoy}, {MethodLiteLLM, c.litellm, LiteLLM}} {
				ticks, err := m.run(context.Background(), bt, routes)
				if err != nil {
					t.Fatal(err)
				}
				var reacted bool
				for _, tk := range ticks {
					reacted = reacted || tk.Alerting["free"] || tk.Weights["free"] < 100
				}
				if reacted != m.want {
					t.Errorf("%s reacted %v to 80 %% %s, want %v", m.name, reacted, c.code, m.want)
				}
			}
		})
	}
}
