#!/usr/bin/env bash
# Times gopahole against pahole, side by side and alternating, dumping every
# struct of (1) a 20 MB Go binary with DWARF (cmd/go built from the local Go
# toolchain), (2) the running kernel's BTF, (3) glibc's and (4) python3.11d's
# DWARF (C), and looking up one type with -C: task_struct in the kernel's
# BTF, link_map and timex in glibc's debug file, _typeobject in
# python3.11d. Prints medians, the ratio gopahole/pahole and peak memory
# (max RSS) of each. Rows whose input is missing (libc6-dbg,
# python3.11-dbg) are skipped with a note.
#
#   bash bench/pahole.sh [RUNS] [ROW...]     (default 11 runs each, every row)
#
# ROWs name the rows to run (go-cmd vmlinux task_struct glibc link_map timex
# python3.11d _typeobject); without them every row runs.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
shift $(($# > 0 ? 1 : 0))
rows=" $* "
. bench/lib.sh
need pahole
go build -o "$out/gopahole" ./cmd/gopahole

# row NAME: whether the row NAME runs; bench NAME ...: compare NAME ... if it does.
row() { [ "$rows" = "  " ] || [[ $rows == *" $1 "* ]]; }
bench() { if row "$1"; then compare "$@"; fi; }

echo "median of $runs alternating runs, stdout to /dev/null ($(nproc) cores, pahole $(pahole --version))"
if row go-cmd; then
	gocmd
	compare go-cmd "$out/gopahole" pahole "$runs" "$out/gocmd"
fi
bench vmlinux "$out/gopahole" pahole "$runs" /sys/kernel/btf/vmlinux
bench task_struct "$out/gopahole -C task_struct" "pahole -C task_struct" "$runs" /sys/kernel/btf/vmlinux

libc=/lib/x86_64-linux-gnu/libc.so.6
id=$(readelf -n "$libc" | awk '/Build ID/ {print $3}')
glibc=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
if [ -f "$glibc" ]; then
	bench glibc "$out/gopahole" pahole "$runs" "$glibc"
	bench link_map "$out/gopahole -C link_map" "pahole -C link_map" "$runs" "$glibc"
	bench timex "$out/gopahole -C timex" "pahole -C timex" "$runs" "$glibc"
else
	echo "glibc: no debug file $glibc (apt-get install libc6-dbg)"
fi
if [ -f /usr/bin/python3.11d ]; then
	bench python3.11d "$out/gopahole" pahole "$runs" /usr/bin/python3.11d
	bench _typeobject "$out/gopahole -C _typeobject" "pahole -C _typeobject" "$runs" /usr/bin/python3.11d
else
	echo "python3.11d: missing (apt-get install python3.11-dbg)"
fi
