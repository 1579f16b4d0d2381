.PHONY: build test demo scenarios bench bench-detect

build:
	go build -o bin/hermes ./cmd/hermes

# test installs what the integration tests need, then runs every test.
test:
	scripts/test.sh

demo:
	go run ./cmd/hermes demo

# scenarios regenerates the scenario series and their golden timelines.
scenarios:
	go run ./testdata/scenarios/gen
	go test ./evaluator/replay -run Scenario -rewrite

bench:
	scripts/bench.sh

# bench-detect prints how the shipped policy and three common baselines
# detect and act on every scenario (a Markdown table; README quotes it).
bench-detect:
	go run ./evaluator/replay/benchdetect
