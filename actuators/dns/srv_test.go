package dns

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestSRV walks a split through the SRV weights and checks every step in
// DNS, as a client sees it.
func TestSRV(t *testing.T) {
	k := startKnot(t)
	a := newActuator(t, options(k, map[string]any{"chat": chatSRV()}))
	const name = "_chat._tcp.hermes.test."
	serial := mustSerial(t, k)
	for _, step := range []struct {
		weights map[string]int
		want    []string
	}{
		{map[string]int{"free": 100, "paid": 0, "backup": 0}, []string{"free.example.net. 100 443 10"}},
		{map[string]int{"free": 95, "paid": 5, "backup": 0}, []string{"free.example.net. 95 443 10", "paid.example.net. 5 443 10"}},
		{map[string]int{"free": 50, "paid": 50, "backup": 0}, []string{"free.example.net. 50 443 10", "paid.example.net. 50 443 10"}},
		{map[string]int{"free": 0, "paid": 100, "backup": 0}, []string{"paid.example.net. 100 443 10"}},
		{map[string]int{"free": 0, "paid": 60, "backup": 40}, []string{"backup.example.net. 40 8443 10", "paid.example.net. 60 443 10"}},
		{map[string]int{"free": 100}, []string{"free.example.net. 100 443 10"}}, // absent routes are at 0
	} {
		t.Run(fmt.Sprint(step.weights), func(t *testing.T) {
			mustApply(t, a, split(step.weights))
			if got := srvSet(t, k, name); !slices.Equal(got, step.want) {
				t.Errorf("SRV %s = %q, want %q", name, got, step.want)
			}
			s := mustSerial(t, k)
			if s == serial {
				t.Errorf("SOA serial still %d after a change", s)
			}
			serial = s
			// Re-applying changes nothing, not even the serial.
			mustApply(t, a, split(step.weights))
			if s := mustSerial(t, k); s != serial {
				t.Errorf("SOA serial %d -> %d on an unchanged re-apply", serial, s)
			}
			want := map[string]int{"free": 0, "paid": 0, "backup": 0}
			maps.Copy(want, step.weights)
			if st := wantWeights(t, a, "chat", want); !st.RetriesEnabled || st.Degraded {
				t.Errorf("Current flags = retries %v, degraded %v; want true, false", st.RetriesEnabled, st.Degraded)
			}
		})
	}
	txt, err := k.lookup("_hermes-flags._chat._tcp.hermes.test.", dns.TypeTXT)
	if err != nil || len(txt) != 1 {
		t.Fatalf("flags TXT = %v, %v; want one record", txt, err)
	}
	if got, want := strings.Join(txt[0].(*dns.TXT).Txt, " "), "retries_enabled=true degraded_mode=false"; got != want {
		t.Errorf("flags TXT = %q, want %q", got, want)
	}
}
