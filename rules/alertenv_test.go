package rules

import (
	"reflect"
	"testing"
)

// TestAlertVarsAreAlertEnv: AlertVars, the one place the alert language's
// variables are spelled, has one variable per field of AlertEnv, in its
// order, of its field's type, and each reads its own field.
func TestAlertVarsAreAlertEnv(t *testing.T) {
	// Every field set to a value telling it from the others.
	env := AlertEnv{Route: "route", Service: "service", Score: 1, Level: "level", Stage: 2,
		Signals: map[string]float64{"x": 1}, Missing: []string{"missing"}, Degraded: true, Weights: map[string]int{"w": 1},
		Evidence: []string{"e", "e"}, Causes: []string{"c", "c", "c"}, MovedBy: []string{"m"}, MovedTo: "to", MovedAt: "at",
		Aborted: "aborted", StageFor: 4, Observe: 5, StageObserved: 6, OutOfReach: true, Waiting: []string{"w"}, Weight: 7,
		Drill: true, Actuator: "actuator", FailingFor: 3, Error: "error"}
	fields := reflect.VisibleFields(reflect.TypeFor[AlertEnv]())
	if len(fields) != len(AlertVars()) {
		t.Fatalf("AlertEnv has %d fields, AlertVars %d variables", len(fields), len(AlertVars()))
	}
	types := map[ExprType]reflect.Type{TypeBool: reflect.TypeFor[bool](), TypeInt: reflect.TypeFor[int](),
		TypeFloat: reflect.TypeFor[float64](), TypeString: reflect.TypeFor[string](), TypeStrings: reflect.TypeFor[[]string](),
		TypeFloatMap: reflect.TypeFor[map[string]float64](), TypeIntMap: reflect.TypeFor[map[string]int]()}
	v := reflect.ValueOf(env)
	seen := map[string]bool{}
	for i, f := range fields {
		av := AlertVars()[i]
		if seen[av.Name] {
			t.Errorf("variable %s twice", av.Name)
		}
		seen[av.Name] = true
		if types[av.Type] != f.Type {
			t.Errorf("variable %s is of type %v, AlertEnv.%s of %v", av.Name, types[av.Type], f.Name, f.Type)
		}
		if got, want := av.Value(&env), v.Field(i).Interface(); !reflect.DeepEqual(got, want) {
			t.Errorf("variable %s reads %v, want AlertEnv.%s = %v", av.Name, got, f.Name, want)
		}
		detail := av.Name == AlertSignals || av.Name == "evidence" || av.Name == "causes" || av.Name == "waiting"
		if av.Detail != detail {
			t.Errorf("%s: Detail %v, want %v (the route's details are signals, evidence, causes and waiting)", av.Name, av.Detail, detail)
		}
		if got, ok := LookupAlertVar(av.Name); !ok || got.Name != av.Name {
			t.Errorf("LookupAlertVar(%q) = %v, %v", av.Name, got.Name, ok)
		}
	}
}
