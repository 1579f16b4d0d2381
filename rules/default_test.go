package rules

import (
	"strings"
	"testing"
)

// TestDefaultAlertsHaveRunbooks keeps every shipped alert linked to its
// section of docs/runbooks.md.
func TestDefaultAlertsHaveRunbooks(t *testing.T) {
	cfg, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.Alerts {
		want := "docs/runbooks.md#" + strings.ToLower(a.Name)
		if !strings.HasSuffix(a.RunbookURL, want) {
			t.Errorf("%s: runbook_url %q, want …%s", a.Name, a.RunbookURL, want)
		}
	}
}
