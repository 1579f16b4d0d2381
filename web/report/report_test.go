package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
)

func TestSummaryAndReport(t *testing.T) {
	pol := testenv.DefaultPolicy(t)
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 15 * time.Second) }
	lv := func(i int, from, to string) evaluator.Event {
		return evaluator.Event{Time: at(i), Type: evaluator.EventLevel, Service: "chat", Route: "free", From: from, To: to}
	}
	tl := &backtest.Timeline{Start: t0, End: at(3), Step: 15 * time.Second, Events: []evaluator.Event{
		lv(1, "normal", "warm"), lv(2, "warm", "shed"), lv(3, "shed", "failover"),
		{Time: at(3), Type: evaluator.EventAlert, Name: "HermesRouteFailedOver", Tier: "A", State: "firing", Service: "chat", Route: "free"},
		{Time: at(3), Type: evaluator.EventAlert, Name: "HermesWarmStageInUse", Tier: "C", State: "firing", Service: "chat", Route: "free"},
	}}
	levels := []string{"normal", "warm", "shed", "failover"}
	shares := []int{100, 95, 50, 0}
	for i := range 4 {
		tl.Ticks = append(tl.Ticks, evaluator.Tick{Time: at(i),
			Routes: map[string]evaluator.TickRoute{"free": {Score: 100 - 30*float64(i), Level: levels[i]}, "paid-standard": {Score: 100, Level: "normal"}},
			Splits: map[string]map[string]int{"chat": {"free": shares[i], "paid-standard": 100 - shares[i]}}})
	}
	// warm (95 %) and shed (50 %) carried traffic for one tick each: user-minutes 0.25 × (0.95 + 0.5).
	want := backtest.Summary{Detected: 1, Shed: 1, FailedOver: 1, Pages: 1, DegradedMinutes: 0.25 * (0.95 + 0.5)}
	if got := backtest.Summarize(tl, nil); got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
	var b bytes.Buffer
	if err := Write(&b, []Backtest{{Name: "incident <1>.yaml", Timeline: tl, Policy: pol}}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, w := range []string{"<h2>incident &lt;1&gt;.yaml</h2>", `<td id="pages">1</td>`, `<td id="degraded-minutes">0.4</td>`,
		`aria-label="service chat: traffic split"`, `aria-label="route free: score"`, `data-label="warm ≥ 75"`, `data-label="failover ≥ 0"`,
		"normal → warm", "HermesRouteFailedOver firing (tier A)"} {
		if !strings.Contains(html, w) {
			t.Errorf("report lacks %q", w)
		}
	}
	for _, bad := range []string{"<script", "http://", "https://"} {
		if strings.Contains(html, bad) {
			t.Errorf("report holds %q: it must be self-contained", bad)
		}
	}
}
