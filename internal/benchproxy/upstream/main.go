// Command upstream is benchproxy's fake OpenAI-compatible upstream as a
// process, for scripts/bench-proxy.sh: POST …/chat/completions answers a
// plain completion of about 1.5 kB, or a stream of -events events -gap
// apart (a request's X-Bench-Events and X-Bench-Gap headers override
// both).
package main

import (
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/hermes-failover/hermes/internal/benchproxy"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:19480", "address to serve on")
	events := flag.Int("events", 20, "events in a stream")
	gap := flag.Duration("gap", 50*time.Millisecond, "time between two events of a stream")
	flag.Parse()
	srv := &http.Server{Addr: *listen, Handler: &benchproxy.Upstream{Events: *events, Gap: *gap}, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
