package config

import (
	"reflect"
	"strings"
	"testing"
)

// AtScalePath is the shipped at-scale policy, relative to this package.
const atScalePath = "../hermes-at-scale.yaml"

// TestAtScaleIsTheDefaultPolicy: hermes-at-scale.yaml validates and is
// hermes.yaml except for its signals' queries, which read records: the
// same signals in the same order with the same settings, each with a
// volume or samples exactly where the default has one, and everything
// else (scoring, levels, failback, services, alerts) equal.
func TestAtScaleIsTheDefaultPolicy(t *testing.T) {
	def, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	at, err := Load(atScalePath)
	if err != nil {
		t.Fatalf("%s: %v", atScalePath, err)
	}
	if len(at.Signals) != len(def.Signals) {
		t.Fatalf("%d signals, the default policy has %d", len(at.Signals), len(def.Signals))
	}
	for i, d := range def.Signals {
		a := at.Signals[i]
		if a.Name != d.Name || a.Missing != d.Missing || a.RequiresTraffic != d.RequiresTraffic || a.Help != d.Help {
			t.Errorf("signal %d = %s, want the settings of the default's %s", i, a.Name, d.Name)
		}
		if (a.Volume == "") != (d.Volume == "") || (a.Samples == "") != (d.Samples == "") {
			t.Errorf("signal %s: volume/samples declared differently from the default", a.Name)
		}
		if a.EvidenceQuery() != "" && QueryWindow(a.EvidenceQuery()) != QueryWindow(d.EvidenceQuery()) {
			t.Errorf("signal %s: evidence window %s, the default's is %s", a.Name, QueryWindow(a.EvidenceQuery()), QueryWindow(d.EvidenceQuery()))
		}
		for _, q := range []string{a.Query, a.EvidenceQuery()} {
			if q != "" && !strings.Contains(q, ":") {
				t.Errorf("signal %s: %q reads no recorded series (level:metric:operations)", a.Name, q)
			}
		}
	}
	at.Signals, def.Signals = nil, nil
	at.src, def.src = nil, nil
	for _, c := range []*Config{at, def} {
		for i := range c.Alerts { // parsed templates hold functions, never deeply equal
			c.Alerts[i].SummaryText, c.Alerts[i].DescriptionText = nil, nil
		}
	}
	if !reflect.DeepEqual(at, def) {
		t.Errorf("%s differs from hermes.yaml outside its signals", atScalePath)
	}
}
