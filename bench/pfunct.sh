#!/usr/bin/env bash
# Times gofunct against pfunct, side by side and alternating, on a 20 MB Go
# binary with DWARF (cmd/go built from the local Go toolchain): listing every
# function, and every prototype (-P; gofunct also decodes each parameter's
# location at entry). Prints medians, the ratio gofunct/pfunct and peak
# memory.
#
#   bash bench/pfunct.sh [RUNS]     (default 11 runs each)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
. bench/lib.sh
need pfunct
go build -o "$out/gofunct" ./cmd/gofunct
gocmd

echo "median of $runs alternating runs, stdout to /dev/null ($(nproc) cores, pfunct $(pahole --version))"
compare go-cmd "$out/gofunct" pfunct "$runs" "$out/gocmd"
compare go-cmd-P "$out/gofunct -P" "pfunct -P" "$runs" "$out/gocmd"
