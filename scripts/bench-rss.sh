#!/bin/sh
# bench-rss.sh measures a real `hermes run` with a fleet of ROUTES routes
# (default 10000) and the shipped policy against internal/benchfleet/fakeprom
# (a query API answering every part of every signal query for every route,
# the longer windows' parts included: a healthy fleet):
# after four ticks it prints Hermes's resident memory, the size of its
# /metrics and how many signal queries failed (0 for a clean run). Then it
# measures Hermes's CPU over TICKS more intervals (default 4) scraped as
# users run it: one scrape of /metrics per interval, 7 s past each tick,
# asked as Prometheus asks (OpenMetrics, gzip). That is the budget's
# figure: the whole live tick (queries decoded, Step, state exported,
# actuators, audit) and one scrape, as a share of the evaluation
# interval. Then, apart, TICKS intervals with nothing scraping (the tick
# alone) and the CPU of one scrape (the mean of 5 between ticks, from 8 s
# past one; each
# further Prometheus scraping Hermes, an HA pair's second, adds one per
# interval). fakeprom is a process of its own, so its CPU is not counted.
# PORT_PROM and PORT_HERMES choose the loopback ports. With
# HEAP_PROFILE=FILE it also saves a heap profile there (hermes run
# --web.enable-pprof; read it with `go tool pprof -sample_index=inuse_space`).
# With CPU_PROFILE=FILE it saves a CPU profile of the budget's window (the
# ticks and their scrapes) there, and the binary beside it as FILE.bin
# (`go tool pprof -top -cum FILE.bin FILE`). With HERMES_BIN=FILE it runs
# that hermes binary instead of building one from this tree (to measure
# two versions in turn, A, B, A, B, in the same minutes); FAKEPROM_BIN=FILE
# does the same for fakeprom.
set -eu
cd "$(dirname "$0")/.."
routes=${1:-10000}
pport=${PORT_PROM:-19390}
hport=${PORT_HERMES:-19397}
dir=$(mktemp -d)
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT
if [ -n "${HERMES_BIN:-}" ]; then
	cp "$HERMES_BIN" "$dir/hermes"
else
	go build -o "$dir/hermes" ./cmd/hermes
fi
if [ -n "${FAKEPROM_BIN:-}" ]; then
	cp "$FAKEPROM_BIN" "$dir/fakeprom"
else
	go build -o "$dir/fakeprom" ./internal/benchfleet/fakeprom
fi
go run ./internal/benchfleet/gen -config-only -routes "$routes" -out "$dir"
sed -i "s|url: http://127.0.0.1:9090|url: http://127.0.0.1:$pport|" "$dir/hermes.yaml"
"$dir/fakeprom" -listen "127.0.0.1:$pport" -routes "$routes" >"$dir/fakeprom.log" 2>&1 &
pids="$pids $!"
pprof=""
[ -z "${HEAP_PROFILE:-}${CPU_PROFILE:-}" ] || pprof=--web.enable-pprof
"$dir/hermes" run --config "$dir/hermes.yaml" --web.listen-address "127.0.0.1:$hport" \
	--audit.file "$dir/audit.jsonl" --log.level warn $pprof 2>"$dir/hermes.log" &
hermes=$!
pids="$pids $hermes"
# Wait (up to 5 minutes) for four ticks: 15 s each at the shipped interval.
deadline=$(($(date +%s) + 300))
ticks=0
while [ "$(date +%s)" -lt "$deadline" ]; do
	ticks=$(curl -sf "http://127.0.0.1:$hport/metrics" | awk '/^hermes_ticks_total /{print int($2)}' || true)
	[ "${ticks:-0}" -ge 4 ] && break
	# RSS moves a lot within a tick (answers decoded, garbage collected):
	# sample it from the first tick on and report the median and maximum.
	[ "${ticks:-0}" -ge 1 ] && awk '/^VmRSS:/{print $2}' "/proc/$hermes/status" >>"$dir/rss.txt"
	sleep 2
done
if [ "${ticks:-0}" -lt 4 ]; then
	echo "bench-rss: hermes did not tick 4 times in 5 minutes; its log:" >&2
	tail -20 "$dir/hermes.log" >&2
	exit 1
fi
curl -sf "http://127.0.0.1:$hport/metrics" >"$dir/metrics.txt"
if [ -n "${HEAP_PROFILE:-}" ]; then
	curl -sf "http://127.0.0.1:$hport/debug/pprof/heap" >"$HEAP_PROFILE"
fi
# cpu is Hermes's user and system CPU so far, in clock ticks.
cpu() { awk '{print $14 + $15}' "/proc/$hermes/stat"; }
interval=15
# between waits until SECONDS past the next tick boundary (ticks are
# aligned to multiples of the interval). It sleeps until that time rather
# than polling the clock: on a loaded machine a poll can miss the second
# and wait a whole interval more.
between() {
	sleep "$(date +%s.%N | awk -v iv="$interval" -v at="$1" '{ d = at - ($1 - int($1 / iv) * iv); if (d < 0) d += iv; printf "%.3f", d }')"
}
# scrape fetches /metrics as Prometheus 2.x asks for it: OpenMetrics
# first, gzip-compressed (curl does not decompress it: Hermes's side is
# what is measured).
scrape() {
	curl -sf -H 'Accept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1' \
		-H 'Accept-Encoding: gzip' "http://127.0.0.1:$hport/metrics" >/dev/null
}
n=${TICKS:-4}
# With one scrape per interval, 7 s past each tick (the window starts and
# ends 2 s past a tick, so it holds TICKS ticks and TICKS scrapes).
between 2
p0=$(cpu)
v0=$(date +%s.%N)
if [ -n "${CPU_PROFILE:-}" ]; then
	cp "$dir/hermes" "$CPU_PROFILE.bin"
	curl -sf "http://127.0.0.1:$hport/debug/pprof/profile?seconds=$((interval * n))" >"$CPU_PROFILE" &
	profiler=$!
fi
for _ in $(seq "$n"); do
	between 7
	scrape
	between 2
done
p1=$(cpu)
v1=$(date +%s.%N)
[ -z "${CPU_PROFILE:-}" ] || wait "$profiler"
# Nothing scraping: the tick alone.
cpu0=$(cpu)
w0=$(date +%s.%N)
sleep $((interval * n))
cpu1=$(cpu)
w1=$(date +%s.%N)
# The scrapes apart start 8 s past a tick, as the tick's own work (its
# last queries, Step, the export) can run past 2 s on a loaded machine
# and would be counted as the scrapes'.
between 8
s0=$(cpu)
for _ in 1 2 3 4 5; do scrape; done
s1=$(cpu)
hz=$(getconf CLK_TCK)
rss=$(awk '/^VmRSS:/{print $2}' "/proc/$hermes/status")
hwm=$(awk '/^VmHWM:/{print $2}' "/proc/$hermes/status")
echo "$rss" >>"$dir/rss.txt"
med=$(sort -n "$dir/rss.txt" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
top=$(sort -n "$dir/rss.txt" | tail -1)
errs=$(awk '/^hermes_query_errors_total/{n += $2} END {print n + 0}' "$dir/metrics.txt")
printf 'hermes run, %s routes, after %s ticks, %s failed signal queries\n  resident memory  %6.1f MB now, median %.1f MB and max %.1f MB of %s samples since the first tick (peak %.1f MB)\n  /metrics         %6.1f MB, %s series\n' \
	"$routes" "$ticks" "$errs" "$(echo "$rss / 1024" | bc -l)" "$(echo "$med / 1024" | bc -l)" "$(echo "$top / 1024" | bc -l)" \
	"$(wc -l <"$dir/rss.txt")" "$(echo "$hwm / 1024" | bc -l)" \
	"$(echo "$(wc -c <"$dir/metrics.txt") / 1000000" | bc -l)" "$(grep -vc '^#' "$dir/metrics.txt")"
# Each share is CPU over wall time: ticks (and scrapes) come every
# interval, so it is the share of each interval, whatever the window's
# alignment.
awk -v c="$((cpu1 - cpu0))" -v hz="$hz" -v w="$(echo "$w1 - $w0" | bc -l)" -v iv="$interval" -v r="$routes" -v sc="$((s1 - s0))" \
	-v pc="$((p1 - p0))" -v pw="$(echo "$v1 - $v0" | bc -l)" 'BEGIN {
	scraped = pc / hz / pw * 100
	share = c / hz / w * 100
	printf "  tick + 1 scrape  %6.0f ms CPU per %d s interval at %s routes (over %.0f s, one scrape per interval): %.2f %% of the interval (budget 2 %%: %s)\n", scraped * iv * 10, iv, r, pw, scraped, (scraped <= 2 ? "met" : "OVER")
	printf "  tick alone       %6.0f ms per interval (over %.0f s, nothing scraping): %.2f %%\n", share * iv * 10, w, share
	printf "  one scrape       %6.0f ms CPU for /metrics (the mean of 5 scrapes between ticks), %.2f %% of the interval per further scraper\n", sc / hz / 5 * 1000, sc / hz / 5 / iv * 100
}'
