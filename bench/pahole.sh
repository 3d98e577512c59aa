#!/usr/bin/env bash
# Times gopahole against pahole, side by side and alternating, dumping every
# struct of (1) a 20 MB Go binary with DWARF (cmd/go built from the local Go
# toolchain) and (2) the running kernel's BTF. Prints medians, the ratio
# gopahole/pahole and peak memory (max RSS) of each.
#
#   bash bench/pahole.sh [RUNS]     (default 11 runs each)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
. bench/lib.sh
need pahole
go build -o "$out/gopahole" ./cmd/gopahole
gocmd

echo "median of $runs alternating runs, stdout to /dev/null ($(nproc) cores, pahole $(pahole --version))"
compare go-cmd "$out/gopahole" pahole "$runs" "$out/gocmd"
compare vmlinux "$out/gopahole" pahole "$runs" /sys/kernel/btf/vmlinux
