.PHONY: build test demo lab lab-fault lab-heal scenarios bench bench-detect bench-prometheus bench-proxy

# build stamps the version into hermes --version and hermes_build_info.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
VERSION_PKG := github.com/prometheus/common/version
LDFLAGS := -X $(VERSION_PKG).Version=$(VERSION) \
	-X $(VERSION_PKG).Revision=$(shell git rev-parse HEAD 2>/dev/null) \
	-X $(VERSION_PKG).Branch=$(shell git rev-parse --abbrev-ref HEAD 2>/dev/null) \
	-X $(VERSION_PKG).BuildUser=$(shell id -un)@$(shell hostname) \
	-X $(VERSION_PKG).BuildDate=$(shell date -u +%Y%m%d-%H:%M:%S)

build:
	go build -ldflags "$(LDFLAGS)" -o bin/hermes ./cmd/hermes

# test installs what the integration tests need, then runs every test.
test:
	scripts/test.sh

demo:
	go run ./cmd/hermes demo

# lab runs a live lab on 127.0.0.1 until Ctrl-C: real Prometheus,
# Alertmanager and nginx, a fake provider, hermes proxy, probe and run with
# the shipped policy (docs/lab.md). FAST=1 divides the policy's timers by
# 30 (the CI tour's); RATE sets the load in req/s; PORT_BASE moves the ports.
# In another terminal: make lab-fault ROUTE=free RATE=30% KIND=error_body,
# then make lab-heal ROUTE=free.
LAB_FLAGS = $(if $(FAST),--fast) $(if $(LOAD),--rate $(LOAD)) $(if $(PORT_BASE),--port-base $(PORT_BASE))
LAB_PROVIDER = $(if $(PORT_BASE),--provider http://127.0.0.1:$(shell echo $$(($(PORT_BASE)+3))))
lab: build
	bin/hermes lab $(LAB_FLAGS)

ROUTE ?= free
RATE ?= 30%
KIND ?= error_body
lab-fault: build
	bin/hermes lab fault $(ROUTE) $(RATE) $(KIND) $(LAB_PROVIDER)

lab-heal: build
	bin/hermes lab heal $(ROUTE) $(LAB_PROVIDER)

# scenarios regenerates the scenario series and their golden timelines.
scenarios:
	go run ./testdata/scenarios/gen
	go test ./backtest -run Scenario -rewrite

bench:
	scripts/bench.sh

# bench-detect prints how the shipped policy and three common baselines
# detect and act on every scenario, then on NIGHTS random failing and
# healthy low-traffic nights each, then on the healthy fleet's noise: WEEKS
# healthy weeks and FLEET healthy and failing fleet nights per rate and
# failure kind (three Markdown tables; docs/detection.md quotes them).
NIGHTS ?= 100
FLEET ?= 20
WEEKS ?= 3
bench-detect:
	go run ./backtest/benchdetect
	go run ./backtest/benchdetect -nights $(NIGHTS)
	go run ./backtest/benchdetect -fleet $(FLEET) -weeks $(WEEKS)

# bench-prometheus measures the Prometheus CPU per tick of the default and
# the at-scale policy at 1,000 and 10,000 routes (about 15 minutes).
bench-prometheus:
	scripts/bench-prometheus.sh

# bench-proxy measures hermes proxy beside nginx against the same fake
# upstream (latency at 500 req/s, streams, throughput, memory with 1,000
# open streams, a soak: SOAK=10m by default, SOAK=60s to shorten it) and
# prints one Markdown table with issue 30's budget (docs/scale.md).
bench-proxy:
	scripts/bench-proxy.sh
