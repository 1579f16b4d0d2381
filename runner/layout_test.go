package runner

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/internal/importgraph"
)

const module = "github.com/hermes-failover/hermes"

// stagePackages are the packages under runner/ that are stages of the
// tick, or the machinery of one (runner.go's package doc lists them).
var stagePackages = []string{"persist", "telemetry", "audit", "actuation", "alerting"}

// sharedPackages are the packages under runner/ that the loop and the
// stages share and that keep no stage's state: the tick's Result, sinks
// (the audit log, the condition log), names and data structures. They
// import no stage's package.
var sharedPackages = []string{"tick", "auditlog", "condlog", "series", "gauge", "history"}

// knownReaches are imports of one stage's package by another that are
// still to be removed, with why each is left; the test fails once one
// is gone, so the list only shrinks.
var knownReaches = map[[2]string]string{}

// TestStagesKeepToThemselves keeps the rule of tick.Stage: a stage reads
// the tick's Result and its own state only. It reads the non-test
// imports of every package under runner/ (go/build, as evaluator's
// TestLayout does) and fails when a stage's package depends on another
// stage's package, directly or through a package of the module, when a
// shared package depends on a stage's, or when a package under runner/
// is neither a stage nor shared (a new one must be placed).
func TestStagesKeepToThemselves(t *testing.T) {
	imports := runnerImports(t)
	for _, want := range append(slices.Clone(stagePackages), sharedPackages...) {
		if _, ok := imports["runner/"+want]; !ok {
			t.Errorf("runner/%s: no such package; update stagePackages or sharedPackages", want)
		}
	}
	for pkg := range imports {
		name := strings.TrimPrefix(pkg, "runner/")
		if pkg != "runner" && !slices.Contains(stagePackages, name) && !slices.Contains(sharedPackages, name) {
			t.Errorf("%s is neither a stage nor shared: add it to stagePackages or sharedPackages", pkg)
		}
	}
	seen := map[[2]string]bool{}
	for _, from := range append(slices.Clone(stagePackages), sharedPackages...) {
		for _, dep := range importgraph.Deps(imports, module, "runner/"+from) {
			to, ok := strings.CutPrefix(dep, "runner/")
			if !ok || to == from || !slices.Contains(stagePackages, to) {
				continue
			}
			if _, known := knownReaches[[2]string{from, to}]; known {
				seen[[2]string{from, to}] = true
				continue
			}
			if slices.Contains(sharedPackages, from) {
				t.Errorf("runner/%s, shared by the stages, depends on the stage runner/%s", from, to)
			} else {
				t.Errorf("the stage runner/%s depends on the stage runner/%s: what one stage needs of another travels in tick.Result", from, to)
			}
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(knownReaches), func(a, b [2]string) int { return strings.Compare(a[0]+a[1], b[0]+b[1]) }) {
		if !seen[k] {
			t.Errorf("runner/%s no longer depends on runner/%s: remove it from knownReaches", k[0], k[1])
		}
	}
}

// runnerImports returns, by module-relative path, the non-test imports of
// runner and of every package under it.
func runnerImports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := importgraph.Read(".", "runner")
	if err != nil {
		t.Fatal(err)
	}
	if len(out["runner"]) == 0 || len(out["runner/actuation"]) == 0 {
		t.Fatalf("read %d packages, not runner's", len(out))
	}
	return out
}
