package browser_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/web"
)

// wrapProbe is a page of the test's own, on the status page's origin,
// that loads the status page in a narrow frame and writes into its own
// DOM whether the recent events fit their box: Chromium's --dump-dom
// then shows what a person would see, a scrollbar or not.
const wrapProbe = `<!DOCTYPE html><html><body>
<iframe id="f" src="/" style="width: 420px; height: 600px"></iframe>
<script>
document.getElementById("f").onload = function () {
  var pre = this.contentDocument.querySelector("pre.events");
  var p = document.createElement("p");
  p.id = "result";
  p.textContent = pre ? ("events scrollWidth=" + pre.scrollWidth + " clientWidth=" + pre.clientWidth + " lines=" + pre.textContent.split("\n").length) : "no events";
  document.body.appendChild(p);
};
</script></body></html>`

// TestStatusPageTellsTheIncidentInChromium (issue 34): in a real Chromium,
// with a live runner that failed free over and then saw it heal, free's
// score is not green while it stays failed over, its row says what it
// waits for, a rejected reload is in the header with its error, and the
// recent events wrap in a narrow window instead of scrolling sideways.
func TestStatusPageTellsTheIncidentInChromium(t *testing.T) {
	chromium := testenv.Binary(t, "chromium")
	dir := t.TempDir()
	var healed atomic.Bool
	q := promapi.ByPart(func(ctx context.Context, q string, at time.Time) (model.Vector, error) {
		v, err := answer(ctx, q, at)
		if healed.Load() && strings.Contains(q, `verdict="hard_fail"}`) {
			for _, s := range v {
				s.Value = 0
			}
		}
		return v, err
	})
	r, reg := startRunnerQuery(t, dir, q)
	mux := http.NewServeMux()
	mux.Handle("/", web.Handler(web.Options{Loop: web.Live(r), Gatherer: reg}))
	mux.HandleFunc("GET /wrap-probe", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, wrapProbe)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	free := func() (level string, score float64, state string) {
		for _, rt := range web.StatusOf(r.View()).Services[0].Routes {
			if rt.Name == "free" {
				return rt.Level, rt.Score, rt.ScoreState
			}
		}
		return "", 0, ""
	}
	testenv.EventuallyDetail(t, 20*time.Second, "free failed over", func() (bool, string) {
		l, s, _ := free()
		return l == "failover", fmt.Sprintf("free %s %.1f", l, s)
	})
	healed.Store(true)
	testenv.EventuallyDetail(t, 20*time.Second, "free healthy again, still failed over", func() (bool, string) {
		l, s, st := free()
		return l == "failover" && st == "judged" && s >= 85, fmt.Sprintf("free %s %.1f (%s)", l, s, st)
	})
	cfgPath := filepath.Join(dir, "hermes.yaml")
	good, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, []byte("global: {evaluation_interval: soon}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(context.Background()); err == nil {
		t.Fatal("a bad configuration reloaded")
	}

	dom := browse(t, chromium, "--dump-dom", srv.URL+"/")
	i, j := strings.Index(dom, `id="route-free"`), strings.Index(dom, `id="route-paid-standard"`)
	if i < 0 || j < i {
		t.Fatalf("no row of free:\n%s", dom)
	}
	row := dom[i:j]
	if !regexp.MustCompile(`<td class="bad" title="the score is (8[5-9]|9[0-9]|100)\.[0-9], but the route is at failover: the level decides its traffic">`).MatchString(row) {
		t.Errorf("free, failed over with a healthy score, is not shown in the failover colour:\n%s", row)
	}
	if !regexp.MustCompile(`<td class="waits">[^<]*for failback stage 1 \([0-9]+%\)</td>`).MatchString(row) {
		t.Errorf("free's row does not say what it waits for:\n%s", row)
	}
	if !strings.Contains(dom, `<div class="alarm reload" id="reload-failure">Reload rejected at `) || !strings.Contains(dom, "evaluation_interval") {
		t.Errorf("the rejected reload is not in the header:\n%s", dom[:min(len(dom), 3000)])
	}

	probe := browse(t, chromium, "--dump-dom", "--virtual-time-budget=10000", "--window-size=600,800", srv.URL+"/wrap-probe")
	m := regexp.MustCompile(`events scrollWidth=(\d+) clientWidth=(\d+) lines=(\d+)`).FindStringSubmatch(probe)
	if m == nil {
		t.Fatalf("the probe found no events on the page:\n%s", probe)
	}
	if m[1] != m[2] {
		t.Errorf("the recent events overflow their box (%s): they scroll sideways instead of wrapping", m[0])
	}
	shot := screenshot(t, chromium, "status-page-incident.png", srv.URL+"/", "1200,1400")
	_ = shot

	// A good reload clears the header.
	if err := os.WriteFile(cfgPath, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if dom := browse(t, chromium, "--dump-dom", srv.URL+"/"); strings.Contains(dom, "Reload rejected") {
		t.Error("the header still shows a rejected reload after a good one")
	}
}
