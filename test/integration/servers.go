package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// engineFlags are the flags the tests add to each query engine's own.
var engineFlags = map[string][]string{
	testenv.Prometheus.Name:      {"--storage.tsdb.retention.time=1d", "--log.level=info"},
	testenv.VictoriaMetrics.Name: {"-retentionPeriod=1d"},
}

// StartTSDB starts e on a free port, scraping every second the targets of
// jobs (job name → host:port). It runs until the end of t, even when a
// subtest restarts it.
func StartTSDB(t testing.TB, e testenv.Engine, jobs map[string]string) *testenv.TSDB {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n")
	for _, job := range []string{"gateway", "hermes"} {
		if target, ok := jobs[job]; ok {
			fmt.Fprintf(&sb, "  - job_name: %s\n    static_configs:\n      - targets: ['%s']\n", job, target)
		}
	}
	d := testenv.StartTSDB(t, e, sb.String(), "", engineFlags[e.Name]...)
	d.StopTimeout = 15 * time.Second
	return d
}
