package browser_test

import (
	"context"
	"fmt"
	"image/color"
	"image/png"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/file"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/web"
	"github.com/hermes-failover/hermes/web/api"
)

// TestStatusPageSaysPrometheusUnreachable runs a live runner whose
// Prometheus refuses connections (the real query side, a closed port) and
// looks at the page in Chromium: it says "Prometheus unreachable:
// connection refused", no route shows a score as if judged, and nothing on
// the page is drawn in the colour of a good score.
func TestStatusPageSaysPrometheusUnreachable(t *testing.T) {
	chromium := testenv.Binary(t, "chromium")
	r, srv := blindHermes(t, "", false)
	testenv.EventuallyDetail(t, 30*time.Second, "a blind tick", func() (bool, string) {
		st := web.StatusOf(r.View())
		return st.Ticked && len(st.Problems) > 0, fmt.Sprintf("%+v", st.Problems)
	})
	st := web.StatusOf(r.View())
	if got := st.Problems; len(got) != 1 || got[0] != "Prometheus unreachable: connection refused" {
		t.Errorf("problems %q", got)
	}
	for _, rt := range st.Services[0].Routes {
		if rt.ScoreState == api.ScoreJudged {
			t.Errorf("route %s: score %v judged with Prometheus unreachable", rt.Name, rt.Score)
		}
	}

	dom := browse(t, chromium, "--dump-dom", srv.URL+"/")
	for _, want := range []string{
		`<div class="alarm problem">Prometheus unreachable: connection refused</div>`,
		`<td class="held" title="signals without data and no score with full data yet">not judged</td>`,
		`<li>soft_fail_ratio, hard_fail_ratio, `, `probe_success missing: Prometheus unreachable: connection refused (level held)</li>`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page Chromium rendered lacks %q", want)
		}
	}
	for _, bad := range []string{`class="good">100.0`, "held: blind", "all signals within thresholds"} {
		if strings.Contains(dom, bad) {
			t.Errorf("the page Chromium rendered shows %q with Prometheus unreachable", bad)
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}
	shot := screenshot(t, chromium, "status-page-blind.png", srv.URL+"/", "1200,900")
	if n := pixels(t, shot, color.RGBA{0x1a, 0x7f, 0x37, 0xff}); n > 0 {
		t.Errorf("%d pixels in the colour of a good score with Prometheus unreachable", n)
	}
	if n := pixels(t, shot, color.RGBA{0x57, 0x60, 0x6a, 0xff}); n == 0 {
		t.Error("no pixel in the neutral colour of a held score")
	}
}

// blindHermes runs a live runner of the shipped policy, ticking every
// second, whose Prometheus refuses connections (the real query side, a
// closed port), and its status page, with the admin API when admin. With
// split, a file actuator keeps the state file there. Both stop when t
// ends.
func blindHermes(t *testing.T, split string, admin bool) (*runner.Runner, *httptest.Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	cfg := strings.Replace(string(rules.DefaultYAML), "evaluation_interval: 15s", "evaluation_interval: 1s", 1)
	cfg = strings.Replace(cfg, "query_timeout: 10s", "query_timeout: 500ms", 1)
	cfg = strings.Replace(cfg, "url: http://127.0.0.1:9090", "url: http://"+closed, 1)
	kinds := &actuators.Registry{}
	if split != "" {
		cfg = strings.Replace(cfg, "\nactuators: []\n", "\nactuators:\n  - type: file\n    path: "+split+"\n", 1)
		file.Register(kinds)
	}
	cfgPath := filepath.Join(t.TempDir(), "hermes.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	r, err := runner.New(runner.Options{ConfigPath: cfgPath, Registerer: reg, Actuators: kinds})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, func(ctx context.Context) { _ = r.Run(ctx) })
	srv := httptest.NewServer(web.Handler(web.Options{Loop: web.Live(r), Gatherer: reg, EnableAdminAPI: admin}))
	t.Cleanup(srv.Close)
	return r, srv
}

// pixels counts the pixels of the PNG file at path that are exactly c.
func pixels(t *testing.T, path string, c color.RGBA) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)) == c {
				n++
			}
		}
	}
	return n
}
