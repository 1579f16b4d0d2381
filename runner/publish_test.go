package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hermes-failover/hermes/runner/auditlog"
)

// seeingAudit is an audit sink that notes, at each record it is given,
// the tick the loop has published (View.LastTick).
type seeingAudit struct {
	r *Runner

	mu   sync.Mutex
	buf  bytes.Buffer
	seen []time.Time
}

func (a *seeingAudit) Write(p []byte) (int, error) {
	seen := a.r.View().LastTick
	a.mu.Lock()
	defer a.mu.Unlock()
	for range bytes.Count(p, []byte("\n")) {
		a.seen = append(a.seen, seen)
	}
	return a.buf.Write(p)
}

// TestStatusShowsATickOnlyOnRecord: a tick's state reaches the status API
// only once the audit log has the tick's decisions, so that a move a
// caller sees is on record. (The status API used to show it first, and
// an end-to-end test had to wait for the record.)
func TestStatusShowsATickOnlyOnRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{hard: 0.9}
		sink := &seeingAudit{}
		r, _ := newFileRunner(t, fp, t.TempDir(), Options{Audit: auditlog.New(sink)})
		sink.r = r
		stop := start(t, r)
		tickFor(3 * time.Minute)
		stop()

		sink.mu.Lock()
		defer sink.mu.Unlock()
		sc := bufio.NewScanner(bytes.NewReader(sink.buf.Bytes()))
		levels := 0
		for i := 0; sc.Scan(); i++ {
			var rec struct {
				Type string    `json:"type"`
				Time time.Time `json:"time"`
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("record %d: %v: %s", i, err, sc.Bytes())
			}
			switch rec.Type {
			case "actuation":
				// A backend's outcome is on record when it comes, after
				// the tick was published: the backends may be slow.
				continue
			case "level":
				levels++
			}
			if !sink.seen[i].Before(rec.Time) {
				t.Errorf("record %d (%s of the tick at %s) written while the status API already showed the tick at %s",
					i, rec.Type, rec.Time.Format(time.TimeOnly), sink.seen[i].Format(time.TimeOnly))
			}
		}
		if levels == 0 {
			t.Fatalf("no level change on record; the test needs one:\n%s", sink.buf.String())
		}
	})
}
