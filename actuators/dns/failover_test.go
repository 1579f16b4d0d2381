package dns

import (
	"slices"
	"testing"

	"github.com/miekg/dns"

	"github.com/hermes-failover/hermes/actuators"
)

// TestFailover checks A records follow the largest share, ties going to
// the earliest route of `order` (by default the names sorted), and that a
// change of flags alone is written too.
func TestFailover(t *testing.T) {
	k := startKnot(t)
	rec := func(order ...string) map[string]any {
		r := map[string]any{
			"name": "chat.hermes.test", "mode": "failover", "type": "a",
			"routes": map[string]any{
				"free": []any{"192.0.2.2", "192.0.2.1"},
				"paid": "198.51.100.7",
			},
		}
		if order != nil {
			r["order"] = order
		}
		return r
	}
	a := newActuator(t, options(k, map[string]any{"chat": rec()}))
	const name = "chat.hermes.test."
	free, paid := []string{"192.0.2.1", "192.0.2.2"}, []string{"198.51.100.7"}
	for _, step := range []struct {
		weights map[string]int
		want    []string
		changed bool
	}{
		{map[string]int{"free": 100, "paid": 0}, free, true},
		{map[string]int{"free": 95, "paid": 5}, free, false},
		{map[string]int{"free": 50, "paid": 50}, free, false}, // tie: free sorts first
		{map[string]int{"free": 0, "paid": 100}, paid, true},
		{map[string]int{"free": 50, "paid": 50}, free, true}, // a tie does not depend on history
		{map[string]int{"free": 40, "paid": 60}, paid, true},
	} {
		before := mustSerial(t, k)
		mustApply(t, a, split(step.weights))
		if got := values(t, k, name, dns.TypeA); !slices.Equal(got, step.want) {
			t.Errorf("%v: A %s = %v, want %v", step.weights, name, got, step.want)
		}
		if changed := mustSerial(t, k) != before; changed != step.changed {
			t.Errorf("%v: serial changed = %v, want %v", step.weights, changed, step.changed)
		}
		want := map[string]int{"free": 0, "paid": 0}
		if slices.Equal(step.want, free) {
			want["free"] = 100
		} else {
			want["paid"] = 100
		}
		wantWeights(t, a, "chat", want)
	}

	// With order [paid, free] the tie goes to paid.
	b := newActuator(t, options(k, map[string]any{"chat": rec("paid", "free")}))
	mustApply(t, b, split(map[string]int{"free": 50, "paid": 50}))
	if got := values(t, k, name, dns.TypeA); !slices.Equal(got, paid) {
		t.Errorf("tie with order [paid free]: A = %v, want %v", got, paid)
	}

	// Flags alone change the TXT record, not the A RRset.
	before := mustSerial(t, k)
	mustApply(t, b, actuators.Splits{"chat": {Weights: map[string]int{"paid": 100}, Degraded: true}})
	if mustSerial(t, k) == before {
		t.Error("a change of flags was not written")
	}
	if st := wantWeights(t, b, "chat", map[string]int{"free": 0, "paid": 100}); st.RetriesEnabled || !st.Degraded {
		t.Errorf("Current flags = retries %v, degraded %v; want false, true", st.RetriesEnabled, st.Degraded)
	}
}

// TestFailoverCNAMEAndAAAA drives two services of other types with one
// update per Apply.
func TestFailoverCNAMEAndAAAA(t *testing.T) {
	k := startKnot(t)
	a := newActuator(t, options(k, map[string]any{
		"chat": map[string]any{"name": "api", "mode": "failover", "type": "CNAME", "routes": map[string]any{
			"free": []any{"free.example.net"}, "paid": "Paid.Example.NET.",
		}},
		"embed": map[string]any{"name": "embed", "mode": "failover", "type": "AAAA", "routes": map[string]any{
			"embed-free": []any{"2001:db8::1"}, "embed-paid": []any{"2001:DB8:0::2", "2001:db8::3"},
		}},
	}))
	before := mustSerial(t, k)
	mustApply(t, a, actuators.Splits{
		"chat":  {Weights: map[string]int{"free": 0, "paid": 100}},
		"embed": {Weights: map[string]int{"embed-free": 10, "embed-paid": 90}},
	})
	if got := mustSerial(t, k); got != before+1 {
		t.Errorf("serial %d -> %d, want one update for both services", before, got)
	}
	if got := values(t, k, "api.hermes.test.", dns.TypeCNAME); !slices.Equal(got, []string{"paid.example.net."}) {
		t.Errorf("CNAME = %v", got)
	}
	if got := values(t, k, "embed.hermes.test.", dns.TypeAAAA); !slices.Equal(got, []string{"2001:db8::2", "2001:db8::3"}) {
		t.Errorf("AAAA = %v", got)
	}
	wantWeights(t, a, "chat", map[string]int{"free": 0, "paid": 100})
	wantWeights(t, a, "embed", map[string]int{"embed-free": 0, "embed-paid": 100})
}
