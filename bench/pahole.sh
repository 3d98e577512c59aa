#!/usr/bin/env bash
# Times gopahole against pahole, side by side and alternating, dumping every
# struct of (1) a 20 MB Go binary with DWARF (cmd/go built from the local Go
# toolchain), (2) the running kernel's BTF, (3) glibc's and (4) python3.11d's
# DWARF (C), and looking up one type with -C: task_struct in the kernel's
# BTF, link_map and timex in glibc's debug file, _typeobject in
# python3.11d. Prints medians, the ratio gopahole/pahole and peak memory
# (max RSS) of each. Rows J-glibc and J-python3.11d time BTF encoding
# (--btf_encode_detached, types, functions and variables). Rows whose input
# is missing (libc6-dbg, python3.11-dbg) are skipped with a note.
#
#   bash bench/pahole.sh [RUNS] [ROW...]     (default 11 runs each, every row)
#
# ROW names the rows to run (go-cmd vmlinux task_struct glibc link_map timex
# J-glibc python3.11d _typeobject J-python3.11d); none means all.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
shift $(($# > 0 ? 1 : 0))
rows=" $* "
. bench/lib.sh
# row NAME OURS PEER FILE: compare, when NAME is among the rows asked for.
row() {
	[ "$rows" = "  " ] || [[ "$rows" == *" $1 "* ]] || return 0
	compare "$1" "$2" "$3" "$runs" "$4"
}
need pahole
go build -o "$out/gopahole" ./cmd/gopahole
gocmd

echo "median of $runs alternating runs, stdout to /dev/null ($(nproc) cores, pahole $(pahole --version))"
row go-cmd "$out/gopahole" pahole "$out/gocmd"
row vmlinux "$out/gopahole" pahole /sys/kernel/btf/vmlinux
row task_struct "$out/gopahole -C task_struct" "pahole -C task_struct" /sys/kernel/btf/vmlinux

libc=/lib/x86_64-linux-gnu/libc.so.6
id=$(readelf -n "$libc" | awk '/Build ID/ {print $3}')
glibc=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
if [ -f "$glibc" ]; then
	row glibc "$out/gopahole" pahole "$glibc"
	row link_map "$out/gopahole -C link_map" "pahole -C link_map" "$glibc"
	row timex "$out/gopahole -C timex" "pahole -C timex" "$glibc"
	row J-glibc "$out/gopahole --btf_encode_detached=$out/ours.btf" "pahole --btf_encode_detached=$out/theirs.btf" "$glibc"
else
	echo "glibc: no debug file $glibc (apt-get install libc6-dbg)"
fi
if [ -f /usr/bin/python3.11d ]; then
	row python3.11d "$out/gopahole" pahole /usr/bin/python3.11d
	row _typeobject "$out/gopahole -C _typeobject" "pahole -C _typeobject" /usr/bin/python3.11d
	row J-python3.11d "$out/gopahole --btf_encode_detached=$out/ours.btf" "pahole --btf_encode_detached=$out/theirs.btf" /usr/bin/python3.11d
else
	echo "python3.11d: missing (apt-get install python3.11-dbg)"
fi
