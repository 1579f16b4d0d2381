#!/bin/sh
# bench-prometheus.sh measures what Hermes's ticks cost a real Prometheus
# (Debian's, 2.42) holding a fleet of healthy routes written through its
# remote-write receiver (internal/promfleet): two hours of history, then
# live samples every 15 s. For each route count (ROUTES, default
# "1000,10000") it prints the Prometheus CPU per 15 s tick of the default
# policy (rules/hermes.yaml) and of the at-scale policy
# (rules/hermes-at-scale.yaml with the shipped recording rules loaded, their
# evaluation included), the slowest tick and the signals in error, as the
# Markdown table docs/scale.md quotes. Then the live check: a runner
# with the at-scale policy over 10,000 routes ticks with no signal in error.
# TICKS (default 4) is the ticks per measured phase. Takes about 15 minutes.
set -eu
cd "$(dirname "$0")/.."
command -v prometheus >/dev/null || { echo "bench-prometheus: prometheus not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
HERMES_BENCH_PROMETHEUS=1 HERMES_SCALE_ROUTES=${ROUTES:-1000,10000} HERMES_BENCH_TICKS=${TICKS:-4} \
	go test -count=1 -v -timeout 60m -run 'TestPrometheusCPUPerTick$' ./test/scale/ |
	sed -n '/Prometheus CPU per 15 s tick/,/^---/p' | grep -v '^---'
CI=true HERMES_SCALE_ROUTES=10000 go test -count=1 -v -timeout 20m -run 'TestAtScaleLiveTick$' ./test/scale/ |
	grep -E 'no signal in error|signal query errors|rule groups|samples read per round|Prometheus CPU while|^(--- |ok|FAIL)'
