#!/bin/sh
# bench.sh is make bench: the benchmarks behind docs/scale.md, and the
# budget they are held to (printed here, never asserted in tests: these
# machines are shared and noisy):
#   - Step at 10,000 routes with every route's samples changing every
#     tick, with the counts a live tick delivers
#     (BenchmarkStepChangingCounted): at most 100 ms;
#   - a whole live tick's CPU in Hermes (decode, Step, export) at 10,000
#     routes: at most 2 % of the evaluation interval (scripts/bench-rss.sh,
#     a real `hermes run` against internal/benchfleet/fakeprom, about 3
#     minutes; it prints one scrape of /metrics apart; RSS=0 skips it);
#   - a 24 h backtest at 15 s of 100 routes: under 10 s.
# Besides: the core tick on a calm and degraded fleet (BenchmarkStep) at
# 100, 1,000 and 10,000 routes; Hermes's /metrics at 10,000 routes; the
# resident memory of `hermes run` at 10,000 routes.
# BENCHTIME (default 400x: five cycles of two 40-tick phases, calm then
# 10 % degraded) and COUNT (default 5) tune the tick's runs; the sizes take
# turns (one test binary run COUNT times, each time every size once), and
# the figures are medians of the COUNT runs. CHANGING_BENCHTIME (default
# 80x) tunes the runs where every sample changes. The raw output is kept
# in bench.out for benchstat.
set -eu
cd "$(dirname "$0")/.."
benchtime=${BENCHTIME:-400x}
changing=${CHANGING_BENCHTIME:-80x}
count=${COUNT:-5}
out=bench.out
: >"$out"
run() {
	go test -run '^$' -benchmem -count "$count" "$@" | tee -a "$out" | grep -E '^(Benchmark|ok|FAIL|---)'
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/evaluator.test" ./evaluator/
turns() { # BENCH BENCHTIME: COUNT runs of every size of BENCH, in turn
	for _ in $(seq "$count"); do
		status=0
		"$tmp/evaluator.test" -test.run '^$' -test.benchmem -test.bench "$1" -test.benchtime "$2" >"$tmp/run.out" || status=$?
		tee -a "$out" <"$tmp/run.out" | grep -E '^(Benchmark|PASS|FAIL|---)'
		[ "$status" = 0 ] || exit "$status"
	done
}
turns 'BenchmarkStep$' "$benchtime"
turns 'BenchmarkStepChangingCounted$' "$changing"
count=1
run -bench 'BenchmarkScrape$' -benchtime 3x ./runner/telemetry/
run -bench 'BenchmarkBacktest24h$' -benchtime 1x -timeout 60m ./backtest/
awk '
function median(x, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && x[j-1] > x[j]; j--) { t = x[j]; x[j] = x[j-1]; x[j-1] = t }
	return n % 2 ? x[(n+1)/2] : (x[n/2] + x[n/2+1]) / 2
}
/^BenchmarkStep\/routes=1000-/                 { k1[++n1] = $3 }
/^BenchmarkStep\/routes=10000-/                { k10[++n10] = $3 }
/^BenchmarkStepChangingCounted\/routes=1000-/  { d1[++l1] = $3 }
/^BenchmarkStepChangingCounted\/routes=10000-/ { d10[++l10] = $3 }
/^BenchmarkScrape\/routes=10000-/ { for (i = 1; i < NF; i++) if ($(i+1) == "bytes/scrape") printf "/metrics at 10,000 routes: %.1f MB\n", $i / 1e6 }
/^BenchmarkBacktest24h\// { printf "backtest 24 h, %s: %.1f s\n", $1, $3 / 1e9 }
/^BenchmarkBacktest24h\/routes=100-/ { bt = $3 / 1e9 }
END {
	if (n1 && n10) { a = median(k1, n1); b = median(k10, n10)
		printf "tick at 10,000 routes: %.1f ms; 1,000 routes: %.2f ms (medians of %d runs); ratio %.1f\n", b / 1e6, a / 1e6, n10, b / a }
	print "budget:"
	if (l10) { b = median(d10, l10)
		printf "  Step at 10,000 routes, every sample changing, counted: %.1f ms (budget 100 ms: %s)\n", b / 1e6, b <= 100e6 ? "met" : "OVER" }
	if (bt) printf "  backtest 24 h of 100 routes: %.1f s (budget 10 s: %s)\n", bt, bt < 10 ? "met" : "OVER"
}
' "$out"
# The third line of the budget: its "live tick CPU" line.
[ "${RSS:-1}" = 0 ] || scripts/bench-rss.sh 10000
