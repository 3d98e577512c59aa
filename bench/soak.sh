#!/usr/bin/env bash
# Soak test of goprobe serve (as root): a Go HTTP server (bench/soak) under
# a bounded load generator on localhost, first without probes, then for
# SECONDS with goprobe serve counting its handler (main.handle) and serving
# the count as soak_requests_total. Prints:
#  - goprobe's RSS over time (sampled 30 times, scraped every second) and its growth
#    from the end of the first tenth of the run to the end;
#  - soak_requests_total against the server's own count of requests;
#  - the server's latency (p50/p90/p99 of the load generator's requests)
#    without and with the probes.
#
#   bash bench/soak.sh [SECONDS] [RATE] [WORKERS]   (defaults 1800, 500 requests/s, 4)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-1800}
rate=${2:-500}
workers=${3:-4}
. bench/lib.sh
[ "$(id -u)" = 0 ] || { echo "bench: probing needs root" >&2; exit 1; }
step=$((secs / 30)); [ "$step" -ge 1 ] || step=1
base=$((secs / 6)); [ "$base" -ge 10 ] || base=10; [ "$base" -le 120 ] || base=120
go build -o "$out/goprobe" ./cmd/goprobe
go build -o "$out/soak" ./bench/soak
free() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
sport=$(free)
mport=$(free)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

"$out/soak" server "127.0.0.1:$sport" &
pids+=($!)
for _ in $(seq 50); do curl -sf "127.0.0.1:$sport/count" >/dev/null && break; sleep 0.1; done

echo "without probes: $base s at $rate requests/s, $workers workers"
before=$("$out/soak" load "http://127.0.0.1:$sport/" "$base" "$rate" "$workers")
echo "  $before"

cat >"$out/soak.json" <<JSON
{"listen": "127.0.0.1:$mport", "probes": [
  {"binary": "$(realpath "$out/soak")", "probe": "main.handle", "metric": "soak_requests_total",
   "help": "Requests the soak server handled, counted by goprobe."}]}
JSON
"$out/goprobe" serve "$out/soak.json" 2>"$out/soak.err" &
gp=$!
pids+=($gp)
for _ in $(seq 100); do grep -q attached "$out/soak.err" && break; sleep 0.1; done
metric() { curl -sf "127.0.0.1:$mport/metrics" | awk -v n="$1" '$1 == n {print $2}'; }
start=$(metric soak_requests_total)
served0=$(curl -sf "127.0.0.1:$sport/count")

echo "with goprobe serve: $secs s"
"$out/soak" load "http://127.0.0.1:$sport/" "$secs" "$rate" "$workers" >"$out/soak.load" &
load=$!
pids+=($load)
# A scraper, as Prometheus every second: each scrape reads the kernel's maps.
(while kill -0 "$load" 2>/dev/null; do curl -sf "127.0.0.1:$mport/metrics" >/dev/null || true; sleep 1; done) &
pids+=($!)
: >"$out/soak.rss"
t=0
while kill -0 "$load" 2>/dev/null; do
	rss=$(awk '/^VmRSS/ {print $2}' "/proc/$gp/status")
	echo "$t $rss" >>"$out/soak.rss"
	sleep "$step"
	t=$((t + step))
done
wait "$load" || true
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$gp/status")
echo "$t $rss" >>"$out/soak.rss"
after=$(cat "$out/soak.load")
echo "  $after"
served=$(( $(curl -sf "127.0.0.1:$sport/count") - served0 ))
sleep 1
got=$(( $(metric soak_requests_total) - start ))
echo "goprobe RSS (KiB) every $step s: $(awk '{printf "%s ", $2}' "$out/soak.rss")"
awk -v n="$(wc -l <"$out/soak.rss")" '
	NR == 1 {first = $2}
	NR == int(n / 10) + 1 {warm = $2}
	{last = $2; if ($2 > peak) peak = $2}
	END {printf "goprobe RSS: start %.1f MB, after the first tenth %.1f MB, end %.1f MB, peak %.1f MB; growth after the first tenth %+.1f MB\n", first/1024, warm/1024, last/1024, peak/1024, (last-warm)/1024}' "$out/soak.rss"
echo "requests: server's own count $served, soak_requests_total $got$([ "$served" = "$got" ] && echo " (equal)" || echo " (DIFFER)")"
lat() { echo "$1" | awk -v k="$2" '{for (i = 1; i < NF; i++) if ($i == k) print $(i + 1)}'; }
for k in p50_us p90_us p99_us; do
	printf "latency %s: without probes %s, with %s\n" "$k" "$(lat "$before" $k)" "$(lat "$after" $k)"
done
grep -v "attached\|metrics at" "$out/soak.err" || true
[ "$served" = "$got" ]
