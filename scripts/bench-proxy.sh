#!/bin/sh
# bench-proxy.sh is make bench-proxy: `hermes proxy` (default validation)
# measured beside nginx as a plain reverse proxy, in one run, against the
# same fake upstream (internal/benchproxy/upstream), all on 127.0.0.1:
# direct, through nginx, through hermes proxy. It prints one Markdown table
# with the budget of issue 30 beside each figure (docs/scale.md keeps it):
#   - plain replies (1.5 kB) at a fixed 500 req/s, open-loop: p50 and p99
#     latency added over direct, within nginx's + 1 ms;
#   - streams (20 events 50 ms apart) at 50 per second, open-loop: time to
#     the first event added over direct, within nginx's + 1 ms at p99; the
#     client's gaps between events minus the upstream's (each event carries
#     its send time), equal: within nginx's + 1 ms (direct's shows the
#     machine's own noise);
#   - throughput, closed-loop: plain replies (wrk -t2 -c64 when installed,
#     else the Go load generator at 64 connections) and 200 concurrent
#     streams of 20 events sent back to back: hermes ≥ 80 % of nginx
#     (medians of ROUNDS rounds, the targets in turn, each round starting
#     one target later than the last). A bare
#     httputil.ReverseProxy (internal/benchproxy/bare: no judging, no
#     metrics, no limits) takes its turn too, and so does a bare one on
#     fasthttp (internal/benchproxy/barefast: its server and HostClient,
#     bodies streamed, the same nothing else), and so does one on an
#     event loop (internal/benchproxy/bareloop: gnet, a loop a core, no
#     goroutine a connection), bare and judging and recording each reply
#     as hermes proxy does; each proxy's CPU time
#     (utime + stime of its processes) per request and per stream is
#     printed beside its rate in a second table: the CPU time is what the
#     proxy itself costs, far less swayed than the rates by what else the
#     machine runs, and the bare proxies are the floors Go's net/http and
#     fasthttp set;
#   - memory: hermes's RSS (VmRSS) idle, then with 1,000 open streams (one
#     event a second): ≤ 64 KiB per open stream (nginx's beside it); and a
#     soak of plain replies at 200 req/s and 20 streams a second, RSS every
#     10 s: flat (the second half's peak within 5 % of the first half's).
# It never fails on a budget (a benchmark is not a test), but it fails when
# a process dies or a figure could not be taken (any failed request).
#
# Fairness: nginx runs worker_processes 2 and hermes GOMAXPROCS 2 (Go's
# default here), so each may use both of the machine's 2 cores, as each
# would in production; the load generator and the upstream share them.
# nginx keeps 256 idle keep-alive connections to the upstream per worker
# (HTTP/1.1), hermes its own pool (prometheus/common's settings: 1,000 per
# host; proxy/h1.go, HTTP/1.1 on the request's goroutine, behind fasthttp's
# server, proxy/front.go).
#
# Environment: DURATION (default 20s) of each latency load; TPUT (default
# 5s) of each throughput load, ROUNDS (default 5) of them per target; HOLD (default 20s) of the 1,000 streams;
# SOAK (default 10m; 0 skips it); STREAMS (default 1000) held open;
# ONLY=throughput runs only the throughput rounds (no memory, latency or
# soak) and prints only their table;
# PORT_BASE (default 19480): the upstream, nginx, hermes and the four bare
# proxies listen on it and the next six ports.
set -eu
cd "$(dirname "$0")/.."
duration=${DURATION:-20s}
tput=${TPUT:-5s}
rounds=${ROUNDS:-5}
hold=${HOLD:-20s}
soak=${SOAK:-10m}
nstreams=${STREAMS:-1000}
only=${ONLY:-}
case $only in "" | throughput) ;; *) echo "bench-proxy: ONLY is empty or throughput, not $only" >&2; exit 1 ;; esac
base=${PORT_BASE:-19480}
uport=$base nport=$((base + 1)) hport=$((base + 2)) bport=$((base + 3)) fport=$((base + 4)) lport=$((base + 5)) jport=$((base + 6))
nginx=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
[ -x "$nginx" ] || { echo "bench-proxy: nginx not found (apt-get install nginx)" >&2; exit 1; }
dir=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for p in $pids; do while kill -0 "$p" 2>/dev/null; do sleep 0.1; done; done
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

go build -o "$dir/hermes" ./cmd/hermes
go build -o "$dir/upstream" ./internal/benchproxy/upstream
go build -o "$dir/load" ./internal/benchproxy/load
go build -o "$dir/bare" ./internal/benchproxy/bare
go build -o "$dir/barefast" ./internal/benchproxy/barefast
go build -o "$dir/bareloop" ./internal/benchproxy/bareloop

"$dir/upstream" -listen "127.0.0.1:$uport" 2>"$dir/upstream.log" &
upid=$!
pids="$pids $upid"

mkdir -p "$dir/nginx/tmp"
user=""
[ "$(id -u)" = 0 ] && user="user root;"
cat >"$dir/nginx/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 2;
worker_rlimit_nofile 16384;
$user
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/error.log warn;
events { worker_connections 8192; }
http {
    access_log off;
    client_body_temp_path $dir/nginx/tmp/client_body;
    proxy_temp_path $dir/nginx/tmp/proxy;
    fastcgi_temp_path $dir/nginx/tmp/fastcgi;
    uwsgi_temp_path $dir/nginx/tmp/uwsgi;
    scgi_temp_path $dir/nginx/tmp/scgi;
    upstream bench {
        server 127.0.0.1:$uport;
        keepalive 256;
    }
    server {
        listen 127.0.0.1:$nport;
        location /bench/v1/ {
            proxy_pass http://bench/v1/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_read_timeout 600s;
        }
    }
}
EOF
"$nginx" -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/error.log" &
npid=$!
pids="$pids $npid"

cat >"$dir/proxy.yaml" <<EOF
routes:
  - name: bench
    upstream: http://127.0.0.1:$uport
EOF
"$dir/hermes" proxy --config "$dir/proxy.yaml" --web.listen-address "127.0.0.1:$hport" --log.level warn 2>"$dir/hermes.log" &
hpid=$!
pids="$pids $hpid"
"$dir/bare" -listen "127.0.0.1:$bport" -upstream "http://127.0.0.1:$uport" 2>"$dir/bare.log" &
bpid=$!
pids="$pids $bpid"
"$dir/barefast" -listen "127.0.0.1:$fport" -upstream "http://127.0.0.1:$uport" 2>"$dir/barefast.log" &
fpid=$!
pids="$pids $fpid"
"$dir/bareloop" -listen "127.0.0.1:$lport" -upstream "http://127.0.0.1:$uport" 2>"$dir/bareloop.log" &
epid=$!
pids="$pids $epid"
"$dir/bareloop" -judge -listen "127.0.0.1:$jport" -upstream "http://127.0.0.1:$uport" 2>"$dir/loopjudge.log" &
jpid=$!
pids="$pids $jpid"

direct=http://127.0.0.1:$uport/v1/chat/completions
vianginx=http://127.0.0.1:$nport/bench/v1/chat/completions
viahermes=http://127.0.0.1:$hport/bench/v1/chat/completions
viabare=http://127.0.0.1:$bport/bench/v1/chat/completions
viabarefast=http://127.0.0.1:$fport/bench/v1/chat/completions
viabareloop=http://127.0.0.1:$lport/bench/v1/chat/completions
vialoopjudge=http://127.0.0.1:$jport/bench/v1/chat/completions

urlof() { case $1 in direct) echo "$direct" ;; nginx) echo "$vianginx" ;; hermes) echo "$viahermes" ;; bare) echo "$viabare" ;; barefast) echo "$viabarefast" ;; bareloop) echo "$viabareloop" ;; loopjudge) echo "$vialoopjudge" ;; esac; }
# alive fails the run when the upstream, nginx or hermes has died.
alive() {
	for p in "upstream $upid $dir/upstream.log" "nginx $npid $dir/nginx/error.log" "hermes $hpid $dir/hermes.log" "bare $bpid $dir/bare.log" "barefast $fpid $dir/barefast.log" "bareloop $epid $dir/bareloop.log" "loopjudge $jpid $dir/loopjudge.log"; do
		set -- $p
		if ! kill -0 "$2" 2>/dev/null; then
			echo "bench-proxy: $1 (PID $2) died; its log:" >&2
			tail -20 "$3" >&2
			exit 1
		fi
	done
}
# load runs the load generator, failing the run on any failed request.
load() {
	if ! "$dir/load" "$@" >"$dir/load.out" 2>"$dir/load.err"; then
		echo "bench-proxy: load $* failed:" >&2
		cat "$dir/load.err" >&2
		alive
		exit 1
	fi
	cat "$dir/load.out"
}
# val KEY LINE is the value of KEY=value in LINE.
val() { echo "$2" | tr ' ' '\n' | awk -F= -v k="$1" '$1 == k {print $2}'; }
rss() { awk '/^VmRSS:/{print $2}' "/proc/$1/status"; }
nginx_rss() { # master and workers, KiB
	t=$(rss "$npid")
	for w in $(pgrep -P "$npid"); do t=$((t + $(rss "$w"))); done
	echo "$t"
}

for i in $(seq 100); do
	curl -sf -o /dev/null -d '{}' "$direct" && curl -sf -o /dev/null -d '{}' "$vianginx" && curl -sf -o /dev/null -d '{}' "$viahermes" && curl -sf -o /dev/null -d '{}' "$viabare" && curl -sf -o /dev/null -d '{}' "$viabarefast" && curl -sf -o /dev/null -d '{}' "$viabareloop" && curl -sf -o /dev/null -d '{}' "$vialoopjudge" && break
	alive
	[ "$i" = 100 ] && { echo "bench-proxy: the servers did not answer in 10 s" >&2; exit 1; }
	sleep 0.1
done
echo "upstream PID $upid, nginx PID $npid (2 workers), hermes proxy PID $hpid, bare proxies PID $bpid (net/http), $fpid (fasthttp), $epid and $jpid (event loop; judging); $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# cpu PID...: the CPU time (user + system) the processes have used, in
# clock ticks; cpu_of TARGET: that of the target's proxy (nothing for
# direct).
cpu() { t=0; for p in "$@"; do set -- $(cut -d' ' -f14,15 "/proc/$p/stat"); t=$((t + $1 + $2)); done; echo "$t"; }
cpu_of() {
	case $1 in
	direct) echo 0 ;;
	nginx) cpu "$npid" $(pgrep -P "$npid") ;;
	hermes) cpu "$hpid" ;;
	bare) cpu "$bpid" ;;
	barefast) cpu "$fpid" ;;
	bareloop) cpu "$epid" ;;
	loopjudge) cpu "$jpid" ;;
	esac
}
hz=$(getconf CLK_TCK)

# gostats is where hermes's memory is, from its Go collector: the
# goroutines, the heap in use and the goroutines' stacks.
gostats() {
	curl -sf "http://127.0.0.1:$hport/metrics" | awk '
		/^go_goroutines / { g = $2 } /^go_memstats_heap_inuse_bytes / { h = $2 } /^go_memstats_stack_inuse_bytes / { s = $2 }
		END { printf "%d goroutines, heap in use %.1f MiB, stacks %.1f MiB", g, h / 1048576, s / 1048576 }'
}
# Memory first, on a fresh hermes (a few requests in): held streams
# measured later would share the heap earlier loads left behind.
held() { # URL PID-RSS-FUNCTION: RSS idle and with $nstreams open streams, KiB
	load -mode plain -url "$1" -rate 50 -duration 1s >/dev/null
	load -mode stream -url "$1" -rate 10 -duration 1s >/dev/null
	sleep 2
	idle=$($2)
	[ "$1" != "$viahermes" ] || echo "  hermes idle: $(gostats)" >&2
	"$dir/load" -mode hold -url "$1" -c "$nstreams" -events 100000 -gap 1s -hold "$hold" >"$dir/hold.out" 2>"$dir/hold.err" &
	lpid=$!
	while ! grep -qs ready "$dir/hold.out"; do
		if ! kill -0 "$lpid" 2>/dev/null; then
			echo "bench-proxy: holding $nstreams streams failed:" >&2
			cat "$dir/hold.err" >&2
			alive
			exit 1
		fi
		sleep 0.5
	done
	sleep 5
	top=0
	for _ in 1 2 3 4 5; do r=$($2); [ "$r" -gt "$top" ] && top=$r; sleep 1; done
	[ "$1" != "$viahermes" ] || echo "  hermes with $nstreams streams: $(gostats)" >&2
	if ! wait "$lpid"; then
		echo "bench-proxy: holding $nstreams streams failed:" >&2
		cat "$dir/hold.err" >&2
		alive
		exit 1
	fi
	alive
	echo "  $1: RSS $idle KiB idle, $top KiB with $nstreams streams open" >&2
	echo "$idle $top"
}
if [ -z "$only" ]; then
echo "memory: $nstreams open streams for $hold through each" >&2
m=$(held "$viahermes" "rss $hpid")
set -- $m
h_idle=$1 h_held=$2
m=$(held "$vianginx" nginx_rss)
set -- $m
n_idle=$1 n_held=$2

# The three take turns within one load (a second each for plain
# replies, two for streams), so that the machine's bursts of noise fall on
# each alike.
all=$direct,$vianginx,$viahermes
echo "plain replies at 500 req/s, $duration each, in turns of 1 s" >&2
load -mode plain -url "$all" -rate 500 -duration 3s >/dev/null # warm-up: connections open
out=$(load -mode plain -url "$all" -rate 500 -duration "$duration")
alive
for t in direct nginx hermes; do
	line=$(echo "$out" | grep "^url=$(urlof $t) ")
	echo "  $t: $line" >&2
	eval "p50_$t=$(val p50_ms "$line") p99_$t=$(val p99_ms "$line")"
done

echo "streams (20 events 50 ms apart) at 50 per second, $duration each, in turns of 2 s" >&2
load -mode stream -url "$all" -rate 50 -duration 6s -slice 2s >/dev/null
out=$(load -mode stream -url "$all" -rate 50 -duration "$duration" -slice 2s)
alive
for t in direct nginx hermes; do
	line=$(echo "$out" | grep "^url=$(urlof $t) ")
	echo "  $t: $line" >&2
	eval "tt50_$t=$(val ttfb_p50_ms "$line") tt99_$t=$(val ttfb_p99_ms "$line") g50_$t=$(val gap_p50_ms "$line") g99_$t=$(val gap_p99_ms "$line")"
done
fi

if command -v wrk >/dev/null; then
	ptool="wrk -t2 -c64"
	cat >"$dir/post.lua" <<'EOF'
wrk.method = "POST"
wrk.body = '{"model":"bench-model","messages":[{"role":"user","content":"Tell me about foxes."}]}'
wrk.headers["Content-Type"] = "application/json"
EOF
else
	ptool="the Go load generator, 64 connections"
fi
echo "throughput: plain replies ($ptool) and 200 concurrent streams, $tput each, $rounds rounds in turn (medians)" >&2
: >"$dir/tput"
targets="direct nginx bare barefast bareloop loopjudge hermes"
for r in $(seq "$rounds"); do
	# Each round starts one target later than the round before, so that
	# no target always follows the same one (and what it leaves behind:
	# the bare net/http proxy's thousand idle connections, the streams'
	# closing) or always comes last, as the load rises.
	order=$(echo $targets | awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $((i + r - 1) % NF + 1) }')
	for t in $order; do
		url=$(urlof $t)
		c0=$(cpu_of $t)
		if command -v wrk >/dev/null; then
			wrk -t2 -c64 -d"$tput" -s "$dir/post.lua" "$url" >"$dir/wrk.out" 2>&1 || { cat "$dir/wrk.out" >&2; exit 1; }
			if grep -Eq 'Non-2xx|Socket errors' "$dir/wrk.out"; then
				echo "bench-proxy: wrk against $t had errors:" >&2
				cat "$dir/wrk.out" >&2
				exit 1
			fi
			rps=$(awk '/^Requests\/sec:/{print $2}' "$dir/wrk.out")
			n=$(awk '/ requests in /{print $1}' "$dir/wrk.out")
		else
			out=$(load -mode max-plain -url "$url" -c 64 -duration "$tput")
			rps=$(val rps "$out")
			n=$(val requests "$out")
		fi
		alive
		c1=$(cpu_of $t)
		out=$(load -mode max-stream -url "$url" -c 200 -events 20 -gap 0 -duration "$tput")
		alive
		c2=$(cpu_of $t)
		ns=$(val streams "$out")
		# CPU µs per request and per stream of the target's proxy.
		cp=$(awk -v a="$c0" -v b="$c1" -v n="$n" -v hz="$hz" 'BEGIN { printf "%.1f", (b - a) / hz * 1e6 / n }')
		cs=$(awk -v a="$c1" -v b="$c2" -v n="$ns" -v hz="$hz" 'BEGIN { printf "%.1f", (b - a) / hz * 1e6 / n }')
		echo "  round $r, $t: plain $rps req/s ($cp µs CPU per request); streams $out ($cs µs CPU per stream); load average $(cut -d' ' -f1 /proc/loadavg)" >&2
		echo "$t $rps $(val streams_per_s "$out") $cp $cs" >>"$dir/tput"
	done
done
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for t in $targets; do
	eval "rps_$t=$(awk -v t=$t '$1 == t {print $2}' "$dir/tput" | median) sps_$t=$(awk -v t=$t '$1 == t {print $3}' "$dir/tput" | median)"
	eval "cpr_$t=$(awk -v t=$t '$1 == t {print $4}' "$dir/tput" | median) cps_$t=$(awk -v t=$t '$1 == t {print $5}' "$dir/tput" | median)"
done

soakline=""
if [ "$soak" != 0 ] && [ -z "$only" ]; then
	echo "soak: $soak of plain replies at 200 req/s and 20 streams a second through hermes, RSS every 10 s" >&2
	"$dir/load" -mode plain -url "$viahermes" -rate 200 -duration "$soak" >"$dir/soak1.out" 2>"$dir/soak1.err" &
	s1=$!
	"$dir/load" -mode stream -url "$viahermes" -rate 20 -duration "$soak" >"$dir/soak2.out" 2>"$dir/soak2.err" &
	s2=$!
	pids="$pids $s1 $s2"
	: >"$dir/soak.rss"
	while kill -0 "$s1" 2>/dev/null || kill -0 "$s2" 2>/dev/null; do
		alive
		rss "$hpid" >>"$dir/soak.rss"
		sleep 10
	done
	wait "$s1" || { echo "bench-proxy: soak plain load failed:" >&2; cat "$dir/soak1.err" >&2; exit 1; }
	wait "$s2" || { echo "bench-proxy: soak stream load failed:" >&2; cat "$dir/soak2.err" >&2; exit 1; }
	alive
	echo "  RSS samples (KiB): $(tr '\n' ' ' <"$dir/soak.rss")" >&2
	echo "  plain: $(cat "$dir/soak1.out"); streams: $(cat "$dir/soak2.out")" >&2
	soakline=$(awk -v d="$soak" '{ v[NR] = $1 } END {
		h = int(NR / 2); a = 0; b = 0; m = 0; verdict = "too short to tell"
		for (i = 1; i <= NR; i++) { if (i <= h) { if (v[i] > a) a = v[i] } else if (v[i] > b) b = v[i]; if (v[i] > m) m = v[i] }
		if (NR >= 4) { verdict = "met"; if (b > a * 1.05) verdict = sprintf("MISSED: the second half peaks %.0f %% above the first", (b / a - 1) * 100) }
		printf "| hermes RSS over a %s soak (200 req/s plain + 20 streams/s), %d samples 10 s apart | | | first %.1f MiB, last %.1f MiB, max %.1f MiB (peak of the first half %.1f, of the second %.1f) | | flat | %s |\n",
			d, NR, v[1] / 1024, v[NR] / 1024, m / 1024, a / 1024, b / 1024, verdict
	}' "$dir/soak.rss")
fi

echo
echo "hermes proxy beside nginx: $(date -u +%Y-%m-%d), $(nproc) cores, load average before the run's end $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "$only" ]; then
echo
awk -v d50="$p50_direct" -v n50="$p50_nginx" -v h50="$p50_hermes" -v d99="$p99_direct" -v n99="$p99_nginx" -v h99="$p99_hermes" \
	-v dt50="$tt50_direct" -v nt50="$tt50_nginx" -v ht50="$tt50_hermes" -v dt99="$tt99_direct" -v nt99="$tt99_nginx" -v ht99="$tt99_hermes" \
	-v dg50="$g50_direct" -v ng50="$g50_nginx" -v hg50="$g50_hermes" -v dg99="$g99_direct" -v ng99="$g99_nginx" -v hg99="$g99_hermes" \
	-v drps="$rps_direct" -v nrps="$rps_nginx" -v hrps="$rps_hermes" -v dsps="$sps_direct" -v nsps="$sps_nginx" -v hsps="$sps_hermes" \
	-v hi="$h_idle" -v hh="$h_held" -v ni="$n_idle" -v nh="$n_held" -v ns="$nstreams" -v ptool="$ptool" 'BEGIN {
	print "| figure | direct | nginx | hermes proxy | hermes − nginx | budget | |"
	print "|---|---|---|---|---|---|---|"
	lat("plain 1.5 kB replies at 500 req/s, p50 latency (ms; added over direct)", d50, n50, h50, "within nginx + 1 ms")
	lat("plain 1.5 kB replies at 500 req/s, p99 latency", d99, n99, h99, "within nginx + 1 ms")
	printf "| streams at 50/s, time to first event p50 (ms; added over direct) | %.2f | %.2f (%+.2f) | %.2f (%+.2f) | %+.2f ms | | |\n", dt50, nt50, nt50 - dt50, ht50, ht50 - dt50, ht50 - nt50
	lat("streams at 50/s, time to first event p99", dt99, nt99, ht99, "within nginx + 1 ms")
	gap("gap between events at the client minus the upstream'"'"'s, p50 (ms)", dg50, ng50, hg50)
	gap("same, p99", dg99, ng99, hg99)
	tp("throughput, plain replies (req/s, " ptool ")", drps, nrps, hrps)
	tp("throughput, 200 concurrent streams of 20 events back to back (streams/s)", dsps, nsps, hsps)
	pk = (hh - hi) / ns; nk = (nh - ni) / ns
	v = "met"; if (pk > 64) v = sprintf("MISSED by %.1f KiB", pk - 64)
	printf "| RSS idle → %d open streams (1 event/s), per stream | | %.1f → %.1f MiB: %.1f KiB | %.1f → %.1f MiB: %.1f KiB | | ≤ 64 KiB per stream | %s |\n", ns, ni / 1024, nh / 1024, nk, hi / 1024, hh / 1024, pk, v
}
function lat(name, d, n, h, budget,   over, v) {
	over = (h - d) - (n - d) - 1
	v = "met"; if (over > 0) v = sprintf("MISSED by %.2f ms", over)
	printf "| %s | %.2f | %.2f (%+.2f) | %.2f (%+.2f) | %+.2f ms | %s | %s |\n", name, d, n, n - d, h, h - d, h - n, budget, v
}
function gap(name, d, n, h,   off, v) {
	off = h - n - 1
	v = "met"; if (off > 0) v = sprintf("MISSED by %.2f ms", off)
	printf "| %s | %.3f | %.3f | %.3f | %+.3f ms | equal to the upstream'"'"'s: within nginx + 1 ms | %s |\n", name, d, n, h, h - n, v
}
function tp(name, d, n, h,   r, v) {
	r = h / n * 100
	v = "met"; if (r < 80) v = sprintf("MISSED by %.0f points", 80 - r)
	printf "| %s | %.0f | %.0f | %.0f | %.0f %% of nginx | ≥ 80 %% of nginx | %s |\n", name, d, n, h, r, v
}'
[ -z "$soakline" ] || echo "$soakline"
fi
echo
echo "Each proxy's rate in the throughput rounds beside the CPU time its own processes used (user + system, medians of the rounds; direct has no proxy):"
echo
awk -v nrps="$rps_nginx" -v brps="$rps_bare" -v frps="$rps_barefast" -v fsps="$sps_barefast" -v fcpr="$cpr_barefast" -v fcps="$cps_barefast" \
	-v lrps="$rps_bareloop" -v lsps="$sps_bareloop" -v lcpr="$cpr_bareloop" -v lcps="$cps_bareloop" -v jrps="$rps_loopjudge" -v jsps="$sps_loopjudge" -v jcpr="$cpr_loopjudge" -v jcps="$cps_loopjudge" -v hrps="$rps_hermes" -v nsps="$sps_nginx" -v bsps="$sps_bare" -v hsps="$sps_hermes" \
	-v ncpr="$cpr_nginx" -v bcpr="$cpr_bare" -v hcpr="$cpr_hermes" -v ncps="$cps_nginx" -v bcps="$cps_bare" -v hcps="$cps_hermes" -v ptool="$ptool" 'BEGIN {
	print "| proxy | plain replies (req/s, " ptool ") | % of nginx | CPU per plain request (µs) | 200 streams (streams/s) | % of nginx | CPU per stream of 20 events (µs) |"
	print "|---|---|---|---|---|---|---|"
	printf "| nginx (2 workers) | %.0f | 100 %% | %.1f | %.0f | 100 %% | %.1f |\n", nrps, ncpr, nsps, ncps
	printf "| bare httputil.ReverseProxy (internal/benchproxy/bare) | %.0f | %.0f %% | %.1f | %.0f | %.0f %% | %.1f |\n", brps, brps / nrps * 100, bcpr, bsps, bsps / nsps * 100, bcps
	printf "| bare fasthttp proxy (internal/benchproxy/barefast) | %.0f | %.0f %% | %.1f | %.0f | %.0f %% | %.1f |\n", frps, frps / nrps * 100, fcpr, fsps, fsps / nsps * 100, fcps
	printf "| bare event-loop proxy (internal/benchproxy/bareloop) | %.0f | %.0f %% | %.1f | %.0f | %.0f %% | %.1f |\n", lrps, lrps / nrps * 100, lcpr, lsps, lsps / nsps * 100, lcps
	printf "| event-loop proxy judging and recording (bareloop -judge) | %.0f | %.0f %% | %.1f | %.0f | %.0f %% | %.1f |\n", jrps, jrps / nrps * 100, jcpr, jsps, jsps / nsps * 100, jcps
	printf "| hermes proxy | %.0f | %.0f %% | %.1f | %.0f | %.0f %% | %.1f |\n", hrps, hrps / nrps * 100, hcpr, hsps, hsps / nsps * 100, hcps
}'
echo
[ -n "$only" ] || echo "Latencies are open-loop (from each request's scheduled send time), $duration per target in turns, after a warm-up; throughput is the median of $rounds rounds of $tput."
