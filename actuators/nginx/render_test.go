package nginx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/traffic"
)

func TestRender(t *testing.T) {
	routes := map[string][]string{
		"free":  {"127.0.0.1:8001"},
		"paid":  {"127.0.0.1:8002   max_fails=3\tfail_timeout=10s"},
		"spare": {"10.0.0.1:80", "10.0.0.2:80"},
	}
	st := traffic.Split{
		Weights:        map[string]int{"free": 95, "paid": 5, "spare": 0},
		RetriesEnabled: true,
		Levels:         map[string]traffic.Level{"free": traffic.Warm},
		Reasons:        []string{"not written"},
	}
	got, err := render("chat", "hermes_chat", routes, st)
	if err != nil {
		t.Fatal(err)
	}
	want := `# Written by hermes; changes are overwritten. retries_enabled and
# degraded_mode are recorded for hermes only: nginx ignores them.
# hermes-state: {"service":"chat","weights":{"free":95,"paid":5,"spare":0},"retries_enabled":true,"degraded_mode":false}
upstream hermes_chat {
    server 127.0.0.1:8001 weight=95; # free
    server 127.0.0.1:8002 max_fails=3 fail_timeout=10s weight=5; # paid
    server 10.0.0.1:80 down; # spare
    server 10.0.0.2:80 down; # spare
}
`
	if string(got) != want {
		t.Errorf("render =\n%s\nwant\n%s", got, want)
	}

	// A route's servers share its percentage: weights scale by the least
	// common multiple of the server counts of the routes that are up.
	st.Weights = map[string]int{"free": 34, "paid": 33, "spare": 33}
	got, err = render("chat", "hermes_chat", routes, st)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"server 127.0.0.1:8001 weight=68; # free",
		"server 127.0.0.1:8002 max_fails=3 fail_timeout=10s weight=66; # paid",
		"server 10.0.0.1:80 weight=33; # spare",
		"server 10.0.0.2:80 weight=33; # spare",
	} {
		if !strings.Contains(string(got), line) {
			t.Errorf("render lacks %q:\n%s", line, got)
		}
	}

	name, back, err := parseState(got)
	if err != nil || name != "chat" || !back.Equal(st) {
		t.Errorf("parseState = %q, %+v, %v; want chat, %+v", name, back, err, st)
	}
}

// Configuration keys arrive lower-cased: the desired state's route names
// are matched ignoring case, and recorded as the desired state spells them.
func TestRenderMatchesRoutesIgnoringCase(t *testing.T) {
	routes := map[string][]string{"free": {"127.0.0.1:1"}, "paid": {"127.0.0.1:2"}}
	st := traffic.Split{Weights: map[string]int{"Free": 10, "PAID": 90}}
	got, err := render("Chat", "hermes_chat", routes, st)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "weight=10; # free") || !strings.Contains(string(got), "weight=90; # paid") {
		t.Errorf("render =\n%s", got)
	}
	name, back, err := parseState(got)
	if err != nil || name != "Chat" || !back.Equal(st) {
		t.Errorf("parseState = %q, %+v, %v; want Chat, %+v", name, back, err, st)
	}
	_, err = render("chat", "hermes_chat", routes, traffic.Split{Weights: map[string]int{"free": 10, "Free": 0, "paid": 90}})
	if err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("render with a route given twice: err = %v", err)
	}
}

func TestRouteWeightsErrors(t *testing.T) {
	routes := map[string][]string{"free": {"a:1"}, "paid": {"b:1"}}
	for _, tc := range []struct {
		weights map[string]int
		want    string
	}{
		{map[string]int{"free": 100}, `chat: no weight for route "paid" (upstreams.chat.paid)`},
		{map[string]int{"free": 100, "paid": 0, "x": 0}, `chat: route "x" has no servers in upstreams.chat`},
		{map[string]int{"free": 0, "paid": 0}, "chat: every route has weight 0; nginx needs at least one server up"},
		{map[string]int{"free": 101, "paid": -1}, `chat: route "paid" has a negative weight -1`},
		{nil, `chat: no weight for route "free"`},
	} {
		if _, err := routeWeights("chat", routes, tc.weights); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("routeWeights(%v): err = %v, want %q", tc.weights, err, tc.want)
		}
	}
}

func TestCurrentErrors(t *testing.T) {
	dir := t.TempDir()
	a := newActuator(t, map[string]any{
		"include_path": filepath.Join(dir, "{service}.conf"),
		"upstreams": map[string]any{
			"chat":  map[string]any{"free": []any{"127.0.0.1:1"}},
			"embed": map[string]any{"free": []any{"127.0.0.1:1"}},
		},
	})
	ctx := context.Background()
	if got, err := a.Current(ctx); err != nil || len(got) != 0 {
		t.Fatalf("Current without files = %v, %v; want empty", got, err)
	}
	os.WriteFile(a.IncludePath("chat"), []byte("upstream hermes_chat { server 127.0.0.1:1; }\n"), 0o644)
	os.WriteFile(a.IncludePath("embed"), []byte(statePrefix+`{"service":"chat","weights":{"free":100}}`+"\n"), 0o644)
	_, err := a.Current(ctx)
	for _, want := range []string{
		a.IncludePath("chat") + ": no hermes-state line",
		a.IncludePath("embed") + `: holds service "chat", want "embed"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Current error %v does not contain %q", err, want)
		}
	}
}
