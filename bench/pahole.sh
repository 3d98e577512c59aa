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
out=${BENCH_OUT:-bench/out}
mkdir -p "$out"

command -v pahole >/dev/null || { echo "bench: pahole not found (bash scripts/install-deps.sh)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }

go build -o "$out/gopahole" ./cmd/gopahole
[ -f "$out/gocmd" ] || go build -o "$out/gocmd" cmd/go
vmlinux=/sys/kernel/btf/vmlinux

# one TOOL ARGS...: runs once, prints "seconds maxrss_kb".
one() {
	/usr/bin/time -f '%e %M' -o "$out/time.txt" "$@" >/dev/null 2>&1 || true
	cat "$out/time.txt"
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }

bench() { # name, then the two argument lists separated by --
	local name=$1 ours theirs
	shift
	: >"$out/$name.ours" ; : >"$out/$name.theirs"
	for ((i = 0; i < runs; i++)); do
		one "$out/gopahole" "$@" >>"$out/$name.ours"
		one pahole "$@" >>"$out/$name.theirs"
	done
	local ot om pt pm
	ot=$(cut -d' ' -f1 "$out/$name.ours" | median)
	om=$(cut -d' ' -f2 "$out/$name.ours" | median)
	pt=$(cut -d' ' -f1 "$out/$name.theirs" | median)
	pm=$(cut -d' ' -f2 "$out/$name.theirs" | median)
	awk -v n="$name" -v ot="$ot" -v om="$om" -v pt="$pt" -v pm="$pm" 'BEGIN {
		printf "%-8s gopahole %6.3f s %7.1f MB | pahole %6.3f s %7.1f MB | time ratio %.2f\n", n, ot, om/1024, pt, pm/1024, ot/pt
	}'
}

echo "median of $runs alternating runs, stdout to /dev/null ($(nproc) cores, $(pahole --version))"
bench go-cmd "$out/gocmd"
bench vmlinux "$vmlinux"
