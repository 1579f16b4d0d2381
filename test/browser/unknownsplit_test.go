package browser_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/web/api"
)

// TestStatusPageSaysTheSplitIsUnknown runs a live runner restarted while
// Prometheus refuses connections and its file actuator's state file is
// gone, so the restore learns no split; chat is then paused through the
// admin API. The reply says the split is unknown, and the page Chromium
// renders says "Split unknown (held)" where the split bar was, with no
// route's traffic as a number and no split chart of the placeholder. The page used to draw the core's
// placeholder, free at 100 %, as chat's split.
func TestStatusPageSaysTheSplitIsUnknown(t *testing.T) {
	chromium := testenv.Binary(t, "chromium")
	split := filepath.Join(t.TempDir(), "split.json")
	r, srv := blindHermes(t, split, true)
	testenv.EventuallyDetail(t, 30*time.Second, "a tick that holds chat", func() (bool, string) {
		v := r.View()
		return v.Held["chat"] == runner.HeldUnknownSplit, fmt.Sprintf("held %v, unknown %v", v.Held, v.UnknownSplits)
	})

	res, err := http.Post(srv.URL+"/api/v1/admin/overrides", "application/json",
		strings.NewReader(`{"service":"chat","kind":"pause","reason":"incident","by":"bob"}`))
	if err != nil {
		t.Fatal(err)
	}
	var reply api.Response[api.CommandReply]
	err = json.NewDecoder(res.Body).Decode(&reply)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("pause: %d %+v (%v)", res.StatusCode, reply, err)
	}
	if !reply.Data.SplitUnknown || !strings.Contains(reply.Data.Note, "paused, but the split of chat is unknown") {
		t.Errorf("the pause's reply does not say the split is unknown: %+v", reply.Data)
	}

	dom := browse(t, chromium, "--dump-dom", srv.URL+"/")
	for _, want := range []string{
		`<div class="alarm split-unknown" id="held-chat"><b>Split unknown</b> (held): the split of chat is unknown`,
		`Override <b>pause</b>: incident (by bob)`,
		`<span class="held" title="Hermes does not know the split the backends hold">unknown</span>`,
		`id="split-chart-chat">service chat: no traffic split chart: the split is unknown (held)`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page Chromium rendered lacks %q", want)
		}
	}
	if strings.Contains(dom, `title="free 100%"`) || strings.Contains(dom, "<td>100%</td>") || strings.Contains(dom, "service chat: traffic split") {
		t.Error("the page Chromium rendered shows the placeholder split, free 100 %")
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}
	screenshot(t, chromium, "status-page-split-unknown.png", srv.URL+"/", "1200,1400")
	// Nothing wrote free at 100 %: the state file has no split of chat.
	if data, err := os.ReadFile(split); err == nil && strings.Contains(string(data), `"free":100`) {
		t.Errorf("the state file got the placeholder: %s", data)
	}
}
