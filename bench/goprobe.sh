#!/usr/bin/env bash
# Times goprobe against bpftrace, side by side and alternating, as root:
#  1. attach + run a trivial command + exit: goprobe stat FUNC -- CMD against
#     bpftrace -e 'uprobe:BIN:FUNC { @ = count(); }' -c CMD (wall time, max RSS);
#  2. the cost of a hit: an ordinary Go method called N times, the program
#     timing its own calls, unprobed and under each tool's count.
# Prints medians and ratios goprobe/bpftrace.
#
#   bash bench/goprobe.sh [RUNS] [CALLS]     (defaults 11 and 200000)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
calls=${2:-200000}
. bench/lib.sh
need bpftrace
[ "$(id -u)" = 0 ] || { echo "bench: probing needs root" >&2; exit 1; }
go build -o "$out/goprobe" ./cmd/goprobe
(cd bench/hits && go build -o "../../$out/hits" .)
bin=$(realpath "$out/hits")
fn='main.(*acc).add'

# One wrapper per tool: the arguments hold spaces, quotes and a '*'.
cat >"$out/run-goprobe" <<EOS
#!/bin/sh
exec "$(realpath "$out/goprobe")" stat '$fn' -- "$bin" "\$@"
EOS
cat >"$out/run-bpftrace" <<EOS
#!/bin/sh
exec bpftrace -e 'uprobe:$bin:"$fn" { @ = count(); }' -c "$bin \$*"
EOS
chmod +x "$out/run-goprobe" "$out/run-bpftrace"

echo "median of $runs alternating runs ($(nproc) cores, $(bpftrace --version))"
compare attach+run "$out/run-goprobe" "$out/run-bpftrace" "$runs" 1

# per-hit: ns per call as the program measures it
percall() { "$@" 2>/dev/null | sed -n 's/.*ns_per_call \([0-9.]*\).*/\1/p' | head -1; }
: >"$out/hit.none"; : >"$out/hit.ours"; : >"$out/hit.theirs"
for ((i = 0; i < runs; i++)); do
	percall "$bin" "$calls" >>"$out/hit.none"
	percall "$out/run-goprobe" "$calls" >>"$out/hit.ours"
	percall "$out/run-bpftrace" "$calls" >>"$out/hit.theirs"
done
none=$(median <"$out/hit.none")
ours=$(median <"$out/hit.ours")
theirs=$(median <"$out/hit.theirs")
awk -v n="$none" -v o="$ours" -v t="$theirs" 'BEGIN {
	printf "per hit  goprobe %.2f us | bpftrace %.2f us | ratio %.2f   (unprobed call %.1f ns)\n", (o-n)/1000, (t-n)/1000, (o-n)/(t-n), n
}'
