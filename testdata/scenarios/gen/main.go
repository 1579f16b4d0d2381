// Command gen writes the backtest scenarios of testdata/scenarios as promtool
// input_series files, drawn by internal/synth (the same bytes every run),
// and the scenario `hermes demo` embeds.
//
//	go run ./testdata/scenarios/gen [-dir testdata/scenarios]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/hermes-failover/hermes/internal/synth"
)

func main() {
	dir := flag.String("dir", "testdata/scenarios", "where to write the scenario files")
	flag.Parse()
	for _, sc := range synth.Scenarios() {
		data := sc.File()
		path := filepath.Join(*dir, sc.Name()+".yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Println("wrote", path)
		if sc.Name() == "content_failure" {
			// hermes demo embeds this scenario.
			demo := filepath.Join(*dir, "..", "..", "cmd", "hermes", "demo_content_failure.yaml")
			if err := os.WriteFile(demo, data, 0o644); err != nil {
				log.Fatal(err)
			}
		}
	}
}
