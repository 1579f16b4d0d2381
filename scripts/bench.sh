#!/bin/sh
# bench.sh is make bench: the benchmarks behind docs/scale.md, and the
# budget they are held to (printed here, never asserted in tests: these
# machines are shared and noisy):
#   - Step at 10,000 routes with every route's samples changing every
#     tick, with the counts a live tick delivers
#     (BenchmarkStepChangingCounted): at most 100 ms;
#   - Hermes's CPU per evaluation interval at 10,000 routes, as users run
#     it: the whole live tick (decode, Step, export) and one scrape of
#     /metrics as Prometheus makes it (OpenMetrics asked, gzip): at most
#     2 % of the interval (scripts/bench-rss.sh, a real `hermes run`
#     against internal/benchfleet/fakeprom, about 4 minutes; it prints the
#     tick alone and one scrape apart; RSS=0 skips it);
#   - a 24 h backtest at 15 s of 100 routes as users run it, `hermes
#     backtest --series` over the file internal/benchfleet/gen writes:
#     under 10 s and under 300 MB resident (/usr/bin/time -v; BT=0 skips
#     it). BenchmarkBacktest24h is the same backtest in process.
# Besides: the core tick on a calm and degraded fleet (BenchmarkStep) at
# 100, 1,000 and 10,000 routes; Hermes's /metrics at 10,000 routes
# (encoded, and served over HTTP as Prometheus scrapes it, with its CPU
# time per scrape); the resident memory of `hermes run` at 10,000 routes.
# On a shared machine the wall times follow the other processes: the
# CPU figures (cpu-ns/op, user+sys) much less. Run it several times.
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
run -bench 'BenchmarkScrape(HTTP)?$' -benchtime 5x ./runner/telemetry/
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
/^BenchmarkScrapeHTTP\/routes=10000-/ { for (i = 1; i < NF; i++) if ($(i+1) == "cpu-ns/op") printf "one scrape of /metrics at 10,000 routes over HTTP (gzip), in process: %.0f ms CPU\n", $i / 1e6 }
/^BenchmarkBacktest24h\// { printf "backtest 24 h, %s: %.1f s\n", $1, $3 / 1e9 }
/^BenchmarkBacktest24h\/routes=100-/ { bt = $3 / 1e9 }
END {
	if (n1 && n10) { a = median(k1, n1); b = median(k10, n10)
		printf "tick at 10,000 routes: %.1f ms; 1,000 routes: %.2f ms (medians of %d runs); ratio %.1f\n", b / 1e6, a / 1e6, n10, b / a }
	print "budget:"
	if (l10) { b = median(d10, l10)
		printf "  Step at 10,000 routes, every sample changing, counted: %.1f ms (budget 100 ms: %s)\n", b / 1e6, b <= 100e6 ? "met" : "OVER" }
	if (bt) printf "  backtest 24 h of 100 routes, in process (BenchmarkBacktest24h): %.1f s (budget 10 s: %s)\n", bt, bt < 10 ? "met" : "OVER"
}
' "$out"
# The backtest as users run it: wall time, CPU and peak resident memory
# of `hermes backtest --series` over 24 h of 100 routes (a 47 MB file).
if [ "${BT:-1}" != 0 ]; then
	go build -o "$tmp/hermes" ./cmd/hermes
	go run ./internal/benchfleet/gen -routes 100 -out "$tmp"
	go run ./internal/benchfleet/gen -config-only -routes 100 -out "$tmp"
	/usr/bin/time -v "$tmp/hermes" backtest --series "$tmp/series.yaml" --config "$tmp/hermes.yaml" >/dev/null 2>"$tmp/time.txt"
	awk -F': ' '
	/Elapsed \(wall clock\)/ { n = split($2, p, ":"); wall = 0; for (i = 1; i <= n; i++) wall = wall * 60 + p[i] }
	/User time/   { cpu += $2 }
	/System time/ { cpu += $2 }
	/Maximum resident set size/ { rss = $2 / 1024 }
	END { printf "  hermes backtest --series, 24 h of 100 routes: %.1f s wall, %.1f s CPU, peak RSS %.0f MB (budget < 10 s: %s; < 300 MB: %s)\n",
		wall, cpu, rss, wall < 10 ? "met" : "OVER", rss < 300 ? "met" : "OVER" }
	' "$tmp/time.txt"
fi
# The third line of the budget: its "tick + 1 scrape" line.
[ "${RSS:-1}" = 0 ] || scripts/bench-rss.sh 10000
