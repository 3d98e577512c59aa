#!/usr/bin/env bash
# Times gopahole --format=c against bpftool btf dump ... format c, side by
# side and alternating: a C header of every struct and union of the running
# kernel's BTF (bpftool's vmlinux.h; gopahole's also asserts every size and
# member offset). Prints medians, the time ratio and peak memory.
#
#   bash bench/header.sh [RUNS]     (default 11 runs each)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
. bench/lib.sh
need bpftool
go build -o "$out/gopahole" ./cmd/gopahole

echo "median of $runs alternating runs, stdout to /dev/null ($(nproc) cores, $(bpftool version | head -1))"
compare vmlinux.h "$out/gopahole --format=c" "bpftool btf dump file /sys/kernel/btf/vmlinux format c" "$runs"
