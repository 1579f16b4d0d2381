package evaluator_test

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/hermes-failover/hermes"

// coreForbidden are the standard packages the core must not import: I/O,
// concurrency and the escape hatches from Go's types. Time comes in as a
// parameter, samples as a Snapshot, and Step replaces what it changes.
var coreForbidden = []string{"os", "net", "net/http", "io/fs", "sync", "sync/atomic", "unsafe", "reflect", "log", "log/slog", "context"}

// shell are the module's packages around the core; the core imports none
// of them, directly or through another package of the module.
var shell = []string{"runner", "promapi", "backtest", "web", "actuators", "cmd", "probe", "gateway", "internal", "test"}

// TestLayout keeps the architecture docs/design.md draws: the packages of
// evaluator/ import no I/O and no package of the shell, and nothing but
// cmd/ and web/ imports web/. It reads the non-test imports of every
// package of the module, as `go list -f '{{.Imports}}'` does.
func TestLayout(t *testing.T) {
	imports := moduleImports(t, "..")
	if len(imports["evaluator"]) == 0 || len(imports["runner"]) == 0 {
		t.Fatalf("read %d packages, not the module's (evaluator: %v)", len(imports), imports["evaluator"])
	}
	for pkg := range imports {
		if !under(pkg, "evaluator") {
			continue
		}
		for _, imp := range imports[pkg] {
			if slices.Contains(coreForbidden, imp) {
				t.Errorf("%s imports %s: the core does no I/O and shares no memory", pkg, imp)
			}
		}
		for _, dep := range moduleDeps(imports, pkg) {
			for _, sh := range shell {
				if under(dep, sh) {
					t.Errorf("%s depends on %s, a package of the shell", pkg, dep)
				}
			}
		}
	}
	for pkg, imps := range imports {
		if under(pkg, "cmd") || under(pkg, "web") {
			continue
		}
		for _, imp := range imps {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok && under(rel, "web") {
				t.Errorf("%s imports %s: only cmd/ wires the web", pkg, imp)
			}
		}
	}
}

// under reports whether the module-relative package pkg is dir or below it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// moduleImports returns, by module-relative path, the non-test imports of
// every package in the tree at root.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = p.Imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// moduleDeps returns the module's packages pkg depends on, transitively,
// as module-relative paths.
func moduleDeps(imports map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, imp := range imports[p] {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok || seen[rel] {
				continue
			}
			seen[rel] = true
			walk(rel)
		}
	}
	walk(pkg)
	var out []string
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}
