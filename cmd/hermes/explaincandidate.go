package main

import (
	"fmt"
	"io"
	"time"

	"github.com/hermes-failover/hermes/web/api"
)

// explainDifferences is how many of a route's latest differing decisions
// explain prints; the status page and the API hold more.
const explainDifferences = 5

// writeCandidate tells where the candidate policy (hermes run
// --candidate.file) stands apart from live on the route of service, and
// the route's latest decisions that differed, newest first; nothing
// without a candidate.
func writeCandidate(w io.Writer, c *api.Candidate, service, route string) {
	if c == nil {
		return
	}
	fmt.Fprintf(w, "candidate policy %s (never applied, seeded from live at %s)", c.File, c.SeededAt.UTC().Format(time.RFC3339))
	if c.Error != "" {
		fmt.Fprintf(w, "; its last reload was rejected: %s", c.Error)
	}
	fmt.Fprintln(w, ":")
	apart := false
	for _, r := range c.Routes {
		if r.Service == service && r.Route == route {
			apart = true
			fmt.Fprintf(w, "  candidate: %s%s, score %.1f, %d%% of traffic (live: %s%s, score %.1f, %d%%)\n",
				r.Level, stageText(r.Stage), r.Score, r.Traffic, r.LiveLevel, stageText(r.LiveStage), r.LiveScore, r.LiveTraffic)
		}
	}
	if !apart {
		fmt.Fprintln(w, "  stands where live has the route")
	}
	n := 0
	for _, d := range c.Differences {
		if n == explainDifferences {
			break
		}
		e := d.Event
		if e.Service != service || (e.Route != "" && e.Route != route) {
			continue
		}
		fmt.Fprintf(w, "  %s\n", d.Text)
		n++
	}
	if n == 0 {
		fmt.Fprintln(w, "  no decision differed since it was seeded")
	}
}

func stageText(stage int) string {
	if stage == 0 {
		return ""
	}
	return fmt.Sprintf(" stage %d", stage)
}
