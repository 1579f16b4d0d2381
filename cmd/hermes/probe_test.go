package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestCheckProbeConfig(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", "--config", "../../probe/testdata/probe.good.yaml"}, &out, &errOut); code != 0 {
		t.Fatalf("good probe config: exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "probe config OK: 2 targets") {
		t.Errorf("output: %s", out.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run(context.Background(), []string{"check", "--config", "../../probe/testdata/probe.bad.yaml"}, &out, &errOut); code != 1 {
		t.Fatalf("bad probe config: exit %d", code)
	}
	if lines := strings.Count(errOut.String(), "probe.bad.yaml:"); lines < 10 {
		t.Errorf("%d problems reported:\n%s", lines, errOut.String())
	}
}

func TestProbeUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"probe"}, &out, &errOut); code != 2 {
		t.Fatalf("probe without --config: exit %d", code)
	}
}
