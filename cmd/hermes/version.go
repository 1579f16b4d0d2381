package main

import (
	"runtime/debug"

	"github.com/prometheus/common/version"
)

// setVersion fills version.Version (hermes --version, hermes_build_info)
// when the build did not set it with -ldflags (see the Makefile's build
// target): from the module version Go records in the binary, a
// pseudo-version such as v0.0.0-20261201023800-7169c9e0f1a2 for a build in
// a git checkout, else "devel" (go run). The revision needs nothing:
// version.GetRevision reads it from the same build information.
func setVersion() {
	if version.Version != "" {
		return
	}
	version.Version = "devel"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		version.Version = v
	}
}
