package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var hermes struct {
	main bool // Main is running the tests
	once sync.Once
	dir  string
	bin  string
	err  error
}

// Main runs the tests of a package that uses [HermesBinary], then removes
// the binary; call it from TestMain.
func Main(m *testing.M) {
	hermes.main = true
	code := m.Run()
	if hermes.dir != "" {
		os.RemoveAll(hermes.dir)
	}
	os.Exit(code)
}

// HermesBinary builds ./cmd/hermes once per test binary and returns its
// path. The package's TestMain must call [Main], which removes it.
func HermesBinary(t testing.TB) string {
	t.Helper()
	if !hermes.main {
		t.Fatal("testenv.HermesBinary needs TestMain to call testenv.Main")
	}
	hermes.once.Do(func() { hermes.bin, hermes.err = buildHermes() })
	if hermes.err != nil {
		t.Fatal(hermes.err)
	}
	return hermes.bin
}

func buildHermes() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	if root == "." || root == "" {
		return "", errors.New("not inside the module")
	}
	hermes.dir, err = os.MkdirTemp("", "hermes-test-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(hermes.dir, "hermes")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/hermes")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/hermes: %v\n%s", err, out)
	}
	return bin, nil
}
