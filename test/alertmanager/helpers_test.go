package alertmanager

import (
	"os"
	"path/filepath"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// shippedConfig is the example configuration under test.
const shippedConfig = "../../rules/alertmanager/alertmanager.yml"

// timings replace the grouping timers of every route that sets them (and
// of the root route), so the test runs in minutes rather than hours.
type timings struct{ groupWait, groupInterval, repeatInterval string }

// testConfig writes a copy of the shipped configuration with every webhook
// URL pointed at hooks (path = receiver name) and the timers replaced.
func testConfig(t *testing.T, hooks string, tm timings) string {
	t.Helper()
	data, err := os.ReadFile(shippedConfig)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	webhooks := 0
	for _, r := range cfg["receivers"].([]any) {
		rcv := r.(map[string]any)
		for _, w := range asList(rcv["webhook_configs"]) {
			w.(map[string]any)["url"] = hooks + "/" + rcv["name"].(string)
			webhooks++
		}
	}
	if webhooks < 3 {
		t.Fatalf("the shipped configuration has %d webhook receivers, want pager, ticket and info", webhooks)
	}
	var walk func(route map[string]any, root bool)
	walk = func(route map[string]any, root bool) {
		for key, v := range map[string]string{"group_wait": tm.groupWait, "group_interval": tm.groupInterval, "repeat_interval": tm.repeatInterval} {
			if _, ok := route[key]; ok || root {
				route[key] = v
			}
		}
		for _, child := range asList(route["routes"]) {
			walk(child.(map[string]any), false)
		}
	}
	walk(cfg["route"].(map[string]any), true)
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "alertmanager.yml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// first returns the first notification to receiver holding an alert named
// alertname in state status (with level, when not empty), and whether any.
func first(hooks *testenv.Webhook, receiver, alertname, level, status string) (testenv.Notification, bool) {
	return hooks.First(receiver, func(a testenv.NotifiedAlert) bool {
		return a.Labels["alertname"] == alertname && a.Status == status && (level == "" || a.Labels["level"] == level)
	})
}
