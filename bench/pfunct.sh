#!/usr/bin/env bash
# Times gofunct against pfunct, side by side and alternating, listing every
# function of a 20 MB Go binary with DWARF (cmd/go built from the local Go
# toolchain). Prints medians, the ratio gofunct/pfunct and peak memory.
#
#   bash bench/pfunct.sh [RUNS]     (default 11 runs each)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
out=${BENCH_OUT:-bench/out}
mkdir -p "$out"

command -v pfunct >/dev/null || { echo "bench: pfunct not found (bash scripts/install-deps.sh)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }

go build -o "$out/gofunct" ./cmd/gofunct
[ -f "$out/gocmd" ] || go build -o "$out/gocmd" cmd/go

one() {
	/usr/bin/time -f '%e %M' -o "$out/time.txt" "$@" >/dev/null 2>&1 || true
	cat "$out/time.txt"
}
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }

: >"$out/funct.ours"
: >"$out/funct.theirs"
for ((i = 0; i < runs; i++)); do
	one "$out/gofunct" "$out/gocmd" >>"$out/funct.ours"
	one pfunct "$out/gocmd" >>"$out/funct.theirs"
done
ot=$(cut -d' ' -f1 "$out/funct.ours" | median)
om=$(cut -d' ' -f2 "$out/funct.ours" | median)
pt=$(cut -d' ' -f1 "$out/funct.theirs" | median)
pm=$(cut -d' ' -f2 "$out/funct.theirs" | median)
echo "median of $runs alternating runs, stdout to /dev/null ($(nproc) cores, pfunct $(pahole --version))"
awk -v ot="$ot" -v om="$om" -v pt="$pt" -v pm="$pm" 'BEGIN {
	printf "go-cmd   gofunct %6.3f s %7.1f MB | pfunct %6.3f s %7.1f MB | time ratio %.2f\n", ot, om/1024, pt, pm/1024, ot/pt
}'
