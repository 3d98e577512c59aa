#!/usr/bin/env bash
# Profiles the same CPU-bound program (probe/testdata/profile/cpu.c: main ->
# outer -> inner, gcc -O2 -fomit-frame-pointer) with goprobe profile and
# with perf record --call-graph dwarf, at the same frequency, alternating,
# as root. Prints medians of:
#  - bytes moved to user space per sample (goprobe: the counted stacks it
#    reads at the end; perf: perf.data's size, mostly the raw stack copies);
#  - the program's slowdown: its own calls per second, unprofiled over
#    profiled.
#
#   bash bench/profile.sh [RUNS] [SECONDS] [HZ]     (defaults 5, 2 and 999)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
secs=${2:-2}
hz=${3:-999}
. bench/lib.sh
need perf
[ "$(id -u)" = 0 ] || { echo "bench: profiling needs root" >&2; exit 1; }
go build -o "$out/goprobe" ./cmd/goprobe
gcc -O2 -g -fomit-frame-pointer -o "$out/cpu" probe/testdata/profile/cpu.c

rate() { sed -n 's/^calls \([0-9]*\).*/\1/p' | head -1 | awk -v s="$secs" '{print $1 / s}'; }
: >"$out/prof.none"; : >"$out/prof.ours"; : >"$out/prof.perf"; : >"$out/bytes.ours"; : >"$out/bytes.perf"
for ((i = 0; i < runs; i++)); do
	"$out/cpu" "$secs" | rate >>"$out/prof.none"
	"$out/goprobe" profile -F "$hz" --top 0 -- "$out/cpu" "$secs" 2>"$out/ours.err" | rate >>"$out/prof.ours"
	sed -n 's/.* (\([0-9.]*\) per sample).*/\1/p' "$out/ours.err" >>"$out/bytes.ours"
	perf record -q -F "$hz" --call-graph dwarf -o "$out/perf.data" -- "$out/cpu" "$secs" 2>/dev/null | rate >>"$out/prof.perf"
	n=$(perf report -i "$out/perf.data" --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
	size=$(stat -c %s "$out/perf.data")
	awk -v s="$size" -v n="$n" 'BEGIN {if (n > 0) print s / n}' >>"$out/bytes.perf"
done
none=$(median <"$out/prof.none")
ours=$(median <"$out/prof.ours")
theirs=$(median <"$out/prof.perf")
bo=$(median <"$out/bytes.ours")
bp=$(median <"$out/bytes.perf")
echo "median of $runs alternating runs, $secs s at $hz Hz ($(nproc) cores, $(perf --version))"
awk -v bo="$bo" -v bp="$bp" 'BEGIN { printf "bytes to user space per sample  goprobe %.0f | perf --call-graph dwarf %.0f | ratio %.4f\n", bo, bp, bo/bp }'
awk -v n="$none" -v o="$ours" -v t="$theirs" 'BEGIN {
	printf "slowdown (calls/s unprofiled / profiled)  goprobe %.3f | perf %.3f   (unprofiled %.0f calls/s)\n", n/o, n/t, n
}'
