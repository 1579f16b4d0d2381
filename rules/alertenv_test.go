package rules

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestTemplate(t *testing.T) {
	tmpl, err := ParseTemplate("t", `{{ .Route }}/{{ .Service }} {{ printf "%.1f" (pct .Signals.x) }}% [{{ join .Missing ", " }}] {{ humanizeDuration 3725 }} {{ .Weights.free }}`)
	if err != nil {
		t.Fatal(err)
	}
	env := AlertEnv{Route: "free", Service: "chat", Signals: map[string]float64{"x": 0.034},
		Missing: []string{"a", "b"}, Weights: map[string]int{"free": 95}}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, env.TemplateData()); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "free/chat 3.4% [a, b] 1h 2m 5s 95"; got != want {
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

// TestAlertVarsAreAlertEnv: the variables the core reads by name
// (alertFloats, alertInts, alertStrings, alertBools, alertLists,
// alertMaps) are exactly AlertEnv's expr tags, each once, of its field's
// type, and each reads its own field.
func TestAlertVarsAreAlertEnv(t *testing.T) {
	seen := map[string]int{}
	for name := range alertFloats {
		seen[name]++
	}
	for name := range alertInts {
		seen[name]++
	}
	for name := range alertStrings {
		seen[name]++
	}
	for name := range alertBools {
		seen[name]++
	}
	for name := range alertLists {
		seen[name]++
	}
	for _, name := range alertMaps {
		seen[name]++
	}
	// Every field set to a value telling it from the others.
	env := AlertEnv{Route: "route", Service: "service", Score: 1, Level: "level", Stage: 2,
		Signals: map[string]float64{}, Missing: []string{"missing"}, Degraded: true, Weights: map[string]int{},
		Evidence: []string{"e", "e"}, Causes: []string{"c", "c", "c"}, Drill: true,
		Actuator: "actuator", FailingFor: 3, Error: "error"}
	v := reflect.ValueOf(env)
	for i, f := range reflect.VisibleFields(reflect.TypeFor[AlertEnv]()) {
		name := f.Tag.Get("expr")
		if seen[name] != 1 {
			t.Errorf("AlertEnv.%s (expr %q) is among the core's variables %d times, want once", f.Name, name, seen[name])
		}
		delete(seen, name)
		field := v.Field(i).Interface()
		var got any
		switch f.Type.Kind() {
		case reflect.Float64:
			if get, ok := AlertFloat(name); ok {
				got = get(&env)
			}
		case reflect.Int:
			if get, ok := AlertInt(name); ok {
				got = get(&env)
			}
		case reflect.String:
			if get, ok := AlertString(name); ok {
				got = get(&env)
			}
		case reflect.Bool:
			if get, ok := AlertBool(name); ok {
				got = get(&env)
			}
		case reflect.Slice:
			if l, ok := AlertListVar(name); ok {
				got = l.Get(&env)
				if detail := name == "evidence" || name == "causes" || name == "waiting"; l.Detail != detail {
					t.Errorf("%s: Detail %v, want %v (the route's details are signals, evidence, causes and waiting)", name, l.Detail, detail)
				}
			}
		case reflect.Map:
			if slices.Contains(alertMaps, name) {
				continue
			}
		}
		if !reflect.DeepEqual(got, field) {
			t.Errorf("variable %s reads %v, want AlertEnv.%s = %v", name, got, f.Name, field)
		}
	}
	for name := range seen {
		t.Errorf("variable %s is no expr tag of AlertEnv", name)
	}
}
