// Package importgraph reads the non-test imports of a tree of Go packages
// with go/build, as `go list -f '{{.Imports}}'` lists them, for the
// layout tests that keep the core and the stages apart
// (evaluator/layout_test.go, runner/layout_test.go).
package importgraph

import (
	"errors"
	"go/build"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// Read returns the non-test imports of every package in the tree at root,
// keyed by its path relative to root joined to prefix ("runner" and
// "actuation" give "runner/actuation"; with prefix "" root itself is
// "."). Folders named testdata, or starting with "." or "_", are skipped,
// as the go tool skips them.
func Read(root, prefix string) (map[string][]string, error) {
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
			if _, ok := errors.AsType[*build.NoGoError](err); ok {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(filepath.Join(prefix, rel))] = p.Imports
		return nil
	})
	return out, err
}

// Deps returns, sorted, the packages of module that pkg depends on in
// imports (as Read returns them), transitively through the packages
// imports holds, as paths relative to module.
func Deps(imports map[string][]string, module, pkg string) []string {
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
	return slices.Sorted(maps.Keys(seen))
}
