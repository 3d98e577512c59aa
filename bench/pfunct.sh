#!/usr/bin/env bash
# Times gofunct against pfunct, side by side and alternating: listing every
# function and every prototype (-P; gofunct also decodes each parameter's
# location at entry) of (1) a 20 MB Go binary with DWARF (cmd/go built from
# the local Go toolchain), (2) a C++ -O2 program over Boost and
# nlohmann::json (testdata/fixtures/cpp-real) and (3) glibc's debug file
# (libc6-dbg). Prints medians, the ratio gofunct/pfunct and peak memory.
#
#   bash bench/pfunct.sh [RUNS]     (default 11 runs each)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
. bench/lib.sh
need pfunct
go build -o "$out/gofunct" ./cmd/gofunct
gocmd
[ -f "$out/cpp-real" ] || sh testdata/fixtures/cpp-real/build.sh "$out/cpp-real"
libc=/lib/x86_64-linux-gnu/libc.so.6
id=$(readelf -n "$libc" | awk '/Build ID/ {print $3}')
libcdbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
[ -f "$libcdbg" ] || { echo "bench: $libcdbg not found (apt-get install libc6-dbg)" >&2; exit 1; }

echo "median of $runs alternating runs, stdout to /dev/null ($(nproc) cores, pfunct $(pahole --version))"
compare go-cmd "$out/gofunct" pfunct "$runs" "$out/gocmd"
compare go-cmd-P "$out/gofunct -P" "pfunct -P" "$runs" "$out/gocmd"
compare cpp-real "$out/gofunct" pfunct "$runs" "$out/cpp-real"
compare cpp-real-P "$out/gofunct -P" "pfunct -P" "$runs" "$out/cpp-real"
compare libc "$out/gofunct" pfunct "$runs" "$libcdbg"
compare libc-P "$out/gofunct -P" "pfunct -P" "$runs" "$libcdbg"
