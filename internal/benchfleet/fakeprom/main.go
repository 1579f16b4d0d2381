// Command fakeprom answers Prometheus instant queries for a fleet of
// benchfleet routes, for measuring a real `hermes run` at scale
// (scripts/bench-rss.sh) without a Prometheus that could hold the series.
// Every signal query gets one sample per route in each of its parts (and a
// count of 1200 behind each value for a signal with evidence, its longer
// windows' included): 0 for the failure ratios
// (queries naming soft_fail, hard_fail, empty, error_body, 422 or retr),
// 1 for the others, so the fleet is healthy. Hermes's own series
// (restore queries) get an empty vector.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/internal/benchfleet"
	"github.com/hermes-failover/hermes/rules"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve the query API on")
	routes := flag.Int("routes", 10000, "routes in the fleet")
	flag.Parse()
	names := make([]string, *routes)
	for i := range names {
		names[i] = benchfleet.Route(i)
	}
	http.HandleFunc("/api/v1/query", func(w http.ResponseWriter, r *http.Request) {
		q := r.FormValue("query")
		type sample struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		result := []sample{}
		if !strings.Contains(q, "hermes_") {
			// A signal with a volume or samples asks for every part in
			// one query: its value, a count of 1200 behind it, and each
			// of its longer windows' value and count (rules.TickParts).
			parts := []struct{ q, part, v string }{{q: q}}
			if tick, ok := rules.TickParts(q); ok {
				parts = parts[:0]
				for i, tp := range tick {
					p := struct{ q, part, v string }{q: tp.Query, part: tp.Part}
					if i%2 == 1 { // the evidence of the part before
						p.v = "1200"
					}
					parts = append(parts, p)
				}
			}
			now := float64(time.Now().UnixMilli()) / 1000
			for _, p := range parts {
				if p.v == "" {
					p.v = "1"
					for _, bad := range []string{"soft_fail", "hard_fail", "empty", "error_body", "422", "retr"} {
						if strings.Contains(p.q, bad) {
							p.v = "0"
						}
					}
				}
				for _, n := range names {
					m := map[string]string{"route": n}
					if p.part != "" {
						m[rules.PartLabel] = p.part
					}
					result = append(result, sample{Metric: m, Value: [2]any{now, p.v}})
				}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": result}}); err != nil {
			log.Print(err)
		}
	})
	fmt.Printf("listening on %s\n", *listen)
	log.Fatal(http.ListenAndServe(*listen, nil))
}
