#!/usr/bin/env bash
# Times gofunct against pfunct, side by side and alternating: listing every
# function and every prototype (-P; gofunct also decodes each parameter's
# location at entry) of (1) a 20 MB Go binary with DWARF (cmd/go built from
# the local Go toolchain), (2) a C++ -O2 program over Boost and
# nlohmann::json (testdata/fixtures/cpp-real) and (3) glibc's debug file
# (libc6-dbg). Prints medians, the ratio gofunct/pfunct and peak memory,
# for gofunct without (cold) and with (warm) its index cache entry.
#
#   bash bench/pfunct.sh [RUNS [ROW...]]     (default 11 runs each, every row)
#
# ROW picks rows by name: go-cmd, go-cmd-P, cpp-real, cpp-real-P, libc,
# libc-P (each gives its cold and its warm row).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
picked=" ${*:2} "
. bench/lib.sh
need pfunct
go build -o "$out/gofunct" ./cmd/gofunct
gocmd
[ -f "$out/cpp-real" ] || sh testdata/fixtures/cpp-real/build.sh "$out/cpp-real"
libc=/lib/x86_64-linux-gnu/libc.so.6
id=$(readelf -n "$libc" | awk '/Build ID/ {print $3}')
libcdbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
[ -f "$libcdbg" ] || { echo "bench: $libcdbg not found (apt-get install libc6-dbg)" >&2; exit 1; }

# gofunct keeps each listing in its index cache (internal/cache): a "cold"
# row empties the cache before every gofunct run (the run reads the DWARF
# and writes the entry), a "warm" row times runs that find the entry.
export BINSCOPE_INDEX_CACHE="$out/index-cache"
empty_cache() { rm -rf "$BINSCOPE_INDEX_CACHE"; }
# row NAME FLAGS FILE: the cold and the warm row of one listing.
row() {
	[ "$picked" = "  " ] || [[ "$picked" == *" $1 "* ]] || return 0
	before_ours=empty_cache compare "$1-cold" "$out/gofunct$2" "pfunct$2" "$runs" "$3"
	empty_cache
	# shellcheck disable=SC2086
	"$out/gofunct"$2 "$3" >/dev/null
	before_ours= compare "$1-warm" "$out/gofunct$2" "pfunct$2" "$runs" "$3"
}

echo "median of $runs alternating runs, stdout to /dev/null ($(nproc) cores, pfunct $(pahole --version))"
row go-cmd "" "$out/gocmd"
row go-cmd-P " -P" "$out/gocmd"
row cpp-real "" "$out/cpp-real"
row cpp-real-P " -P" "$out/cpp-real"
row libc "" "$libcdbg"
row libc-P " -P" "$libcdbg"
empty_cache
