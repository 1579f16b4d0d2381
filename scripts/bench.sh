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
# BENCHTIME (default 80x for the tick: two 40-tick phases, calm then 10 % degraded) and COUNT (default 1) tune the runs;
# the raw output is kept in bench.out for benchstat.
set -eu
cd "$(dirname "$0")/.."
benchtime=${BENCHTIME:-80x}
count=${COUNT:-1}
out=bench.out
: >"$out"
run() {
	go test -run '^$' -benchmem -count "$count" "$@" | tee -a "$out" | grep -E '^(Benchmark|ok|FAIL|---)'
}
run -bench 'BenchmarkStep$' -benchtime "$benchtime" ./evaluator/
run -bench 'BenchmarkStepChanging$' -benchtime "$benchtime" ./evaluator/
run -bench 'BenchmarkStepChangingCounted$' -benchtime "$benchtime" ./evaluator/
run -bench 'BenchmarkScrape$' -benchtime 3x ./evaluator/telemetry/
run -bench 'BenchmarkBacktest24h$' -benchtime 1x -timeout 60m ./evaluator/replay/
awk '
/^BenchmarkStep\/routes=1000-/  { k1 += $3; n1++ }
/^BenchmarkStep\/routes=10000-/ { k10 += $3; n10++ }
/^BenchmarkStep\/routes=10000-/ { printf "tick at 10,000 routes: %.1f ms\n", $3 / 1e6 }
/^BenchmarkStepChanging\/routes=1000-/  { c1 += $3; m1++ }
/^BenchmarkStepChanging\/routes=10000-/ { c10 += $3; m10++ }
/^BenchmarkStepChanging\/routes=10000-/ { printf "tick at 10,000 routes, every sample changing: %.1f ms\n", $3 / 1e6 }
/^BenchmarkStepChangingCounted\/routes=1000-/  { d1 += $3; l1++ }
/^BenchmarkStepChangingCounted\/routes=10000-/ { d10 += $3; l10++ }
/^BenchmarkStepChangingCounted\/routes=10000-/ { printf "tick at 10,000 routes, every sample changing, counted: %.1f ms\n", $3 / 1e6 }
/^BenchmarkScrape\/routes=10000-/ { for (i = 1; i < NF; i++) if ($(i+1) == "bytes/scrape") printf "/metrics at 10,000 routes: %.1f MB\n", $i / 1e6 }
/^BenchmarkBacktest24h\// { printf "backtest 24 h, %s: %.1f s\n", $1, $3 / 1e9 }
END {
	if (n1 && n10) printf "tick 10k/1k ratio: %.1f\n", (k10 / n10) / (k1 / n1)
	if (m1 && m10) printf "tick 10k/1k ratio, every sample changing: %.1f\n", (c10 / m10) / (c1 / m1)
	if (l1 && l10) printf "tick 10k/1k ratio, every sample changing, counted: %.1f\n", (d10 / l10) / (d1 / l1)
}
' "$out"
[ "${RSS:-1}" = 0 ] || scripts/bench-rss.sh 10000
