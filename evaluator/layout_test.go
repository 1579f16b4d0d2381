package evaluator_test

import (
	"bytes"
	"encoding/json"
	"go/build"
	"go/parser"
	"go/token"
	"maps"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/internal/importgraph"
)

const module = "github.com/hermes-failover/hermes"

// shell are the module's packages around the core; the core imports none
// of them, directly or through another package of the module.
var shell = []string{"runner", "promapi", "backtest", "web", "actuators", "cmd", "probe", "gateway", "internal", "test", "rules/config"}

// TestLayout keeps the architecture docs/design.md draws: the packages of
// evaluator/ import no package of the shell, and nothing but cmd/ and web/
// imports web/. It reads the non-test imports of every package of the
// module, as `go list -f '{{.Imports}}'` does. TestCoreDeps checks what
// the core reaches through other modules and the standard library.
func TestLayout(t *testing.T) {
	imports, err := importgraph.Read("..", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(imports["evaluator"]) == 0 || len(imports["runner"]) == 0 {
		t.Fatalf("read %d packages, not the module's (evaluator: %v)", len(imports), imports["evaluator"])
	}
	for pkg := range imports {
		if !under(pkg, "evaluator") {
			continue
		}
		for _, dep := range importgraph.Deps(imports, module, pkg) {
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

// coreForbidden matches the packages the core must not reach, directly or
// through any package it depends on: I/O (files, the network, the
// environment, logs), cancellation, the escape hatches from Go's types,
// fmt and encoding/json (which reach os and reflect: the core writes its
// texts with strconv, and the shell writes its wire forms), and the
// loader's libraries (viper, fsnotify, YAML, mapstructure, the Prometheus
// HTTP client configuration, PromQL's parser), any other Prometheus
// module, and protobuf (which prometheus/common/model brings). Time comes
// in as a parameter, samples as a Snapshot, the policy as a rules.Policy
// built by rules/config.
//
// sync, sync/atomic and unsafe are not in it and cannot be: Go's own time
// and strings import them, so no Go package that reads a time or a string
// is without them.
var coreForbidden = regexp.MustCompile(`^(` + strings.Join([]string{
	`os`, `os/.*`, `net`, `net/.*`, `io/fs`, `embed`, `reflect`, `syscall`,
	`fmt`, `encoding/json`,
	`log`, `log/slog`, `context`, `runtime/debug`,
	`github\.com/spf13/viper`, `github\.com/fsnotify/fsnotify`,
	`go\.yaml\.in/.*`, `gopkg\.in/yaml.*`, `github\.com/go-viper/.*`,
	`github\.com/prometheus/.*`, `google\.golang\.org/protobuf/.*`,
}, "|") + `)$`)

// coreTolerated are the forbidden packages the core still reaches, each
// with the packages outside the module, imported by the core's own
// packages (evaluator, rules, traffic), through which it may reach them.
// Any other way in fails TestCoreDeps, and so does an entry the core no
// longer needs, so the list only shrinks.
var coreTolerated = map[string][]string{
	// Go's time loads zone files, so every package reading a time reaches
	// syscall; embed reaches it through io/fs.
	"syscall": {"time", "embed"},
	// rules/default.go embeds the shipped policy, rules/hermes.yaml, in
	// the folder the docs point at: embed and its io/fs (types only: the
	// files are in the binary, nothing is opened).
	"io/fs": {"embed"},
	"embed": {"embed"},
}

// TestCoreDeps: everything `go list -deps ./evaluator/...` lists, the
// core's packages and all they depend on, is outside coreForbidden, but
// for what coreTolerated names, reached only the way it names. sync and
// unsafe stay in the list, as Go's time and strings import them.
func TestCoreDeps(t *testing.T) {
	graph := goListDeps(t, "./evaluator/...")
	if _, ok := graph[module+"/evaluator"]; !ok {
		t.Fatalf("go list -deps did not list the core (%d packages)", len(graph))
	}
	reached := coreReach(graph)
	if len(reached) == 0 {
		t.Fatal("the core reaches no package outside the module: the graph was not read")
	}
	for _, pkg := range slices.Sorted(maps.Keys(reached)) {
		if !coreForbidden.MatchString(pkg) {
			continue
		}
		for _, via := range slices.Sorted(maps.Keys(reached[pkg])) {
			if !slices.Contains(coreTolerated[pkg], via) {
				t.Errorf("the core reaches %s through %s (imported by %s): the core does no I/O and reads no loader",
					pkg, via, strings.Join(slices.Sorted(maps.Keys(reached[pkg][via])), ", "))
			}
		}
	}
	for pkg, vias := range coreTolerated {
		for _, via := range vias {
			if _, ok := reached[pkg][via]; !ok {
				t.Errorf("coreTolerated lets the core reach %s through %s, which it no longer does: remove the entry", pkg, via)
			}
		}
	}
}

// TestCoreUnsafeOnlyInGo: of everything the core depends on, only Go's
// own packages import unsafe (runtime, sync, math, strings: every Go
// program reaches it through them). No package of the module or of a
// library the core uses (gonum) does.
func TestCoreUnsafeOnlyInGo(t *testing.T) {
	importers := unsafeImporters(goListDeps(t, "./evaluator/..."))
	if !slices.Contains(importers, "runtime") {
		t.Fatalf("runtime is not among the importers of unsafe (%v): the graph was not read", importers)
	}
	for _, pkg := range importers {
		if first, _, _ := strings.Cut(pkg, "/"); strings.Contains(first, ".") {
			t.Errorf("%s imports unsafe: the core reaches unsafe only through Go's standard library", pkg)
		}
	}
}

// unsafeImporters are the packages of graph that import unsafe directly.
func unsafeImporters(graph map[string][]string) []string {
	var out []string
	for pkg, imports := range graph {
		if slices.Contains(imports, "unsafe") {
			out = append(out, pkg)
		}
	}
	slices.Sort(out)
	return out
}

// TestCoreFiles: no non-test file of a package the core depends on
// imports fmt or encoding/json. The core
// writes numbers and messages with strconv (evaluator/text.go), and the
// shell writes its wire forms (web/api.Contribution).
func TestCoreFiles(t *testing.T) {
	graph := goListDeps(t, "./evaluator/...")
	fset := token.NewFileSet()
	var files int
	for _, pkg := range slices.Sorted(maps.Keys(graph)) {
		rel, ok := strings.CutPrefix(pkg, module+"/")
		if !ok {
			continue
		}
		p, err := build.ImportDir(filepath.Join("..", rel), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range p.GoFiles {
			file := rel + "/" + name
			f, err := parser.ParseFile(fset, filepath.Join("..", file), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			files++
			for _, imp := range f.Imports {
				if path, _ := strconv.Unquote(imp.Path.Value); path == "fmt" || path == "encoding/json" {
					t.Errorf("%s imports %s: the core writes with strconv (evaluator/text.go) and the shell encodes", file, path)
				}
			}
		}
	}
	if files < 20 {
		t.Fatalf("read %d files of the core, not the core", files)
	}
}

// listedPackage is the part of `go list -json` TestCoreDeps reads.
type listedPackage struct {
	ImportPath string
	Imports    []string
}

// goListDeps runs `go list -deps -json pattern` at the module's root and
// returns each listed package's imports by import path.
func goListDeps(t *testing.T, pattern string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports", pattern)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pattern, err)
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list -deps %s: %v", pattern, err)
		}
		graph[p.ImportPath] = p.Imports
	}
	return graph
}

// coreReach returns every package outside the module that the module's
// packages in graph reach, with for each the packages outside the module
// that those import directly through which it is reached (a package
// imported directly is reached through itself), and for each of those the
// module's packages importing it.
func coreReach(graph map[string][]string) map[string]map[string]map[string]bool {
	reached := map[string]map[string]map[string]bool{}
	for pkg, imports := range graph {
		if !strings.HasPrefix(pkg, module+"/") {
			continue
		}
		for _, via := range imports {
			if strings.HasPrefix(via, module+"/") {
				continue
			}
			seen := map[string]bool{}
			var walk func(string)
			walk = func(p string) {
				if seen[p] {
					return
				}
				seen[p] = true
				for _, imp := range graph[p] {
					walk(imp)
				}
			}
			walk(via)
			for dep := range seen {
				if reached[dep] == nil {
					reached[dep] = map[string]map[string]bool{}
				}
				if reached[dep][via] == nil {
					reached[dep][via] = map[string]bool{}
				}
				reached[dep][via][pkg] = true
			}
		}
	}
	return reached
}
