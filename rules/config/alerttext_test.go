package config

import (
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules"
)

func TestTemplate(t *testing.T) {
	tmpl, err := ParseTemplate("t", `{{ .Route }}/{{ .Service }} {{ printf "%.1f" (pct .Signals.x) }}% [{{ join .Missing ", " }}] {{ humanizeDuration 3725 }} {{ .Weights.free }}`)
	if err != nil {
		t.Fatal(err)
	}
	env := rules.AlertEnv{Route: "free", Service: "chat", Signals: map[string]float64{"x": 0.034},
		Missing: []string{"a", "b"}, Weights: map[string]int{"free": 95}}
	got, err := alertText{tmpl}.Render(env.TemplateData())
	if err != nil {
		t.Fatal(err)
	}
	if want := "free/chat 3.4% [a, b] 1h 2m 5s 95"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for in, want := range map[any]string{
		90 * time.Second: "1m 30s", 0.25: "250ms", 86400.0: "1d", -61: "-1m 1s",
	} {
		if got, err := humanizeDuration(in); err != nil || got != want {
			t.Errorf("humanizeDuration(%v) = %q, %v; want %q", in, got, err, want)
		}
	}
}
