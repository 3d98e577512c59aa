#!/usr/bin/env bash
# Times two builds of one tool side by side, alternating, on one input: to
# judge a change (a speed-only code path kept or removed) end to end. A and
# B are git revisions, "." for the working tree. Prints the medians of each
# (bench/lib.sh's compare: wall time, peak memory, CPU time) and B/A.
#
#   bash bench/ab.sh A B RUNS TOOL FILE [FLAG...]
#   bash bench/ab.sh main . 21 gofunct bench/out/cpp-real -P
#
# TOOL is gopahole or gofunct; gofunct's index cache is off (both builds
# read the DWARF).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 5 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
a=$1 b=$2 runs=$3 tool=$4 file=$5
shift 5
. bench/lib.sh
buildrev "$a" "$out/ab-a" "$tool"
buildrev "$b" "$out/ab-b" "$tool"
export BINSCOPE_INDEX_CACHE=off
echo "median of $runs alternating runs, stdout to /dev/null ($(nproc) cores): a=$a b=$b, $tool $* $file"
# compare times OURS then PEER: B is "ours", A the peer, so the ratio is B/A.
compare ab "$out/ab-b/$tool $*" "$out/ab-a/$tool $*" "$runs" "$file"
