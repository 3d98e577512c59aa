#!/usr/bin/env bash
# exact.sh (as root): the truth machine. Generated self-recording programs
# (internal/gen), SEEDS of them per build (gcc -O2, gcc -O3, clang -O2, Go,
# Rust -C opt-level=3, Zig ReleaseFast), each function probed with goprobe
# stat and trace, perf probe and bpftrace, compared with the program's own
# record of its calls and arguments. Prints a table per build (exact-count
# share per tool, goprobe's wrong values and ? share), then each function
# goprobe counted wrongly, with its shape and goprobe's sites. The first
# lines sum each build up: seeds, functions, calls, calls counted twice,
# calls missed, wrong values, ? (and gdb's verdict on them). Three in
# four static C functions are guarded (an early return, a heavy tail: GCC
# splits them); GDB=all compares every argument goprobe printed as ?
# (GDB=K: up to K per program) with gdb reading it at the same site at
# every pass of one run of the program under gdb, each pass judged against
# the call it was by the program's record of that run; PEERS=false leaves out
# perf probe and bpftrace; FOR=50m starts no program after 50 minutes
# (seeds run in order, every build of each; JOBS=2 runs two seeds at a
# time).
#
#   bash bench/exact.sh [SEEDS] [N] [BUILDS]     # defaults: 1-6, 20, all six
#   GDB=all PEERS=false nice bash bench/exact.sh 1000-1299 20 gcc-O2,gcc-O3,clang-O2,go,rust-O3
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin:${HOME:-/root}/.cargo/bin"
seeds=${1:-1-6}
n=${2:-20}
builds=${3:-gcc-O2,gcc-O3,clang-O2,go,rust-O3,zig-fast}
out=${BENCH_OUT:-bench/out}
mkdir -p "$out"
[ "$(id -u)" = 0 ] || { echo "bench: probing needs root" >&2; exit 1; }
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
for tool in perf bpftrace gcc clang rustc zig; do
	command -v "$tool" >/dev/null || { echo "bench: $tool not found (bash scripts/install-deps.sh)" >&2; exit 1; }
done
gdb=${GDB:-0}
[ "$gdb" = all ] && gdb=-1
[ "$gdb" = 0 ] || command -v gdb >/dev/null || { echo "bench: gdb not found (bash scripts/install-deps.sh)" >&2; exit 1; }
go build -o "$out/goprobe" ./cmd/goprobe
go build -o "$out/exact" ./bench/exact
rows="$out/exact-rows.tsv"
rm -f "$rows"
# It exits non-zero when a program failed to build or run (its row counts
# them), after writing the rows: they are recorded, then this exits so.
st=0
"$out/exact" -goprobe "$out/goprobe" -seeds "$seeds" -n "$n" -builds "$builds" -dir "$out/exact-progs" \
	-gdb "$gdb" -peers="${PEERS:-true}" -for "${FOR:-0}" -j "${JOBS:-1}" -rows "$rows" || st=$?
[ -f "$rows" ] || exit "$st"
# Each build's summary, a row of bench/readme.sh's table (the seeds asked
# for, then what the run reached: see WriteRows).
# shellcheck source=bench/lib.sh
source bench/lib.sh
# The last field is the command that made the row.
cmd="GDB=${GDB:-0} PEERS=${PEERS:-true} JOBS=${JOBS:-1} FOR=${FOR:-0} bash bench/exact.sh $seeds $n $builds"
while IFS=$'\t' read -r build fields; do
	# shellcheck disable=SC2086
	record "$build" "$seeds" $fields "$cmd"
done <"$rows"
exit "$st"
