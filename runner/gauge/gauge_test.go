package gauge

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestSeriesFollowsItsSeries: a Series sets, deletes and sets again the
// series it stands for, and a handle never outlives its series.
func TestSeriesFollowsItsSeries(t *testing.T) {
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "x"}, []string{"route"})
	var s Series
	s.Set(v, 2, "a")
	if got := testutil.ToFloat64(v.WithLabelValues("a")); got != 2 {
		t.Fatalf("value %v, want 2", got)
	}
	s.SetOrDelete(v, 0, false, "a")
	if n := testutil.CollectAndCount(v); n != 0 {
		t.Fatalf("%d series after the delete, want 0", n)
	}
	s.Delete(v, "a") // nothing to delete: no-op
	s.SetOrDelete(v, 5, true, "a")
	if n, got := testutil.CollectAndCount(v), testutil.ToFloat64(v.WithLabelValues("a")); n != 1 || got != 5 {
		t.Fatalf("%d series of value %v after setting again, want 1 of 5", n, got)
	}
}
