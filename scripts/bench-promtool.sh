#!/bin/sh
# bench-promtool.sh times a 24 h backtest of the shipped service (3 routes,
# the healthy scenario four times end to end, 15 s ticks) two ways over the
# same series: `hermes backtest`, and Prometheus's own rule engine
# (`promtool test rules`) evaluating the shipped recording rules that
# compute the same signals (rules/prometheus/hermes-recording.rules.yml).
set -eu
cd "$(dirname "$0")/.."
routes=3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
command -v promtool >/dev/null || { echo "bench-promtool: promtool not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
go build -o "$dir/hermes" ./cmd/hermes
go run ./internal/benchfleet/gen -routes "$routes" -out "$dir"
elapsed() { start=$(date +%s.%N); "$@" >/dev/null; end=$(date +%s.%N); echo "$end - $start" | bc; }
h=$(elapsed "$dir/hermes" backtest --series "$dir/series.yaml")
p=$(elapsed promtool test rules "$dir/promtool.test.yml")
printf 'backtest 24h x %s routes at 15s\n  hermes backtest      %6.1f s\n  promtool test rules  %6.1f s\n' "$routes" "$h" "$p"
