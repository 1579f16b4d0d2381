// Command fakeprom answers Prometheus instant queries for a fleet of
// benchfleet routes, for measuring a real `hermes run` at scale
// (scripts/bench-rss.sh) without a Prometheus that could hold the series.
// Every signal query gets one sample per route: 0 for the failure ratios
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
			v := "1"
			for _, bad := range []string{"soft_fail", "hard_fail", "empty", "error_body", "422", "retr"} {
				if strings.Contains(q, bad) {
					v = "0"
				}
			}
			now := float64(time.Now().UnixMilli()) / 1000
			result = make([]sample, len(names))
			for i, n := range names {
				result[i] = sample{Metric: map[string]string{"route": n}, Value: [2]any{now, v}}
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
