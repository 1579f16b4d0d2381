#!/bin/sh
# bench.sh is make bench: the benchmarks behind the figures in README.md.
#   - the core tick (evaluator.Step over a ready snapshot, shipped policy) at
#     100, 1,000 and 10,000 routes, and the 10k/1k ratio of its ns/op;
#     then the same with every route's samples changing every tick
#     (BenchmarkStepChanging: nothing can be reused from the last tick),
#     and with the counts a live tick delivers (BenchmarkStepChangingCounted);
#   - Hermes's own /metrics at 1,000 and 10,000 routes (bytes and series);
#   - a 24 h backtest at 15 s of 3 and of 100 routes.
#   - a real `hermes run` of 10,000 healthy routes: resident memory and the
#     size of its /metrics (scripts/bench-rss.sh, about 2 minutes; RSS=0
#     skips it).
# BENCHTIME (default 400x: five cycles of two 40-tick phases, calm then
# 10 % degraded, enough ticks at every size for the garbage collector's
# cycles to average out) and COUNT (default 5 for the tick: one run of
# each size is at the mercy of a noisy machine) tune the tick's runs. The
# sizes take turns (one test binary run COUNT times, each time every size
# once: go test -count would run one size COUNT times, then the next, so
# a slow minute would fall on one size). CHANGING_BENCHTIME (default 80x)
# tunes the runs of the two benchmarks where every sample changes. The
# tick's figures and ratios are medians of the COUNT runs. The raw output
# is kept in bench.out for benchstat.
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
turns 'BenchmarkStepChanging$' "$changing"
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
/^BenchmarkStepChanging\/routes=1000-/         { c1[++m1] = $3 }
/^BenchmarkStepChanging\/routes=10000-/        { c10[++m10] = $3 }
/^BenchmarkStepChangingCounted\/routes=1000-/  { d1[++l1] = $3 }
/^BenchmarkStepChangingCounted\/routes=10000-/ { d10[++l10] = $3 }
/^BenchmarkScrape\/routes=10000-/ { for (i = 1; i < NF; i++) if ($(i+1) == "bytes/scrape") printf "/metrics at 10,000 routes: %.1f MB\n", $i / 1e6 }
/^BenchmarkBacktest24h\// { printf "backtest 24 h, %s: %.1f s\n", $1, $3 / 1e9 }
END {
	if (n1 && n10) { a = median(k1, n1); b = median(k10, n10)
		printf "tick at 10,000 routes: %.1f ms; 1,000 routes: %.2f ms (medians of %d runs)\n", b / 1e6, a / 1e6, n10
		printf "tick 10k/1k ratio: %.1f (of the medians)\n", b / a }
	if (m1 && m10) { a = median(c1, m1); b = median(c10, m10)
		printf "tick at 10,000 routes, every sample changing: %.1f ms; ratio %.1f\n", b / 1e6, b / a }
	if (l1 && l10) { a = median(d1, l1); b = median(d10, l10)
		printf "tick at 10,000 routes, every sample changing, counted: %.1f ms; ratio %.1f\n", b / 1e6, b / a }
}
' "$out"
[ "${RSS:-1}" = 0 ] || scripts/bench-rss.sh 10000
