#!/usr/bin/env bash
# Times two revisions of gopahole and gofunct side by side on the README's
# benchmark inputs: glibc's debug file, python3.11d, libstdc++'s debug
# file, cmd/go, the C++, Rust and Zig fixtures and the kernel's BTF.
# gopahole prints text, -C, --format=c and --json; gofunct its plain
# listing, prototypes with locations (A's -P or B's --locations, see
# PROTO_A and PROTO_B), --inline and --json; goprobe gen resolves a count
# probe (probe-* rows); ceph-osd's rows (C-AgentTimeoutCB-*,
# funct-ceph-osd-cold: 0.8-1.2 GB a run) run only when named, with its
# debug file installed (bench/ceph.sh). Each revision has its own
# index cache: a cold row empties it before each run, a warm row fills it
# once first. Runs alternate, A then B, then B then A. Prints, and records
# for bench/readme.sh, the medians and B/A, and a sign test over the pairs
# of runs: "slower" when B's CPU time is above A's in so many pairs that
# chance gives it less than 5% of the time, and the medians differ by over
# 3% (likewise "faster"); else "noise"; and whether the two print the same
# bytes (where they do not, a change of output, not of speed, may be what
# the times show). The wall-time pairs are counted too: a step on
# another core shows there, not in CPU time. Rows that fail at A (a flag A does not have) are left
# out with a note.
#
#   bash bench/before.sh [A [B [RUNS [ROW...]]]]
#   nice -n 5 bash bench/before.sh cad3758 main 11
#
# A defaults to cad3758 (where issue 29 was filed), B to main, RUNS to 11.
# ROW names rows (bash bench/before.sh A B 1 list prints them).
set -euo pipefail
cd "$(dirname "$0")/.."
a=${1:-cad3758} b=${2:-main} runs=${3:-11}
picked=" ${*:4} "
. bench/lib.sh
ca=$a cb=$b # the commits
[ "$a" != . ] || ca=HEAD
[ "$b" != . ] || cb=HEAD
ra=$(git rev-parse --short "$ca") rb=$(git rev-parse --short "$cb")
[ "$a" != . ] || ra=$ra+
[ "$b" != . ] || rb=$rb+
dir=$out/before
if [ "$runs" != list ]; then
	rm -rf "$dir"
	tools=(gopahole gofunct)
	# goprobe only for its rows.
	[ "$picked" != "  " ] && [[ "$picked" != *" probe-"* ]] || tools+=(goprobe)
	buildrev "$a" "$dir/a" "${tools[@]}"
	buildrev "$b" "$dir/b" "${tools[@]}"
	gocmd
fi
libc=/lib/x86_64-linux-gnu/libc.so.6
id=$(readelf -n "$libc" | awk '/Build ID/ {print $3}')
glibc=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
stdcxx=$(ls /usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.* | grep -v gdb | head -1)
python=/usr/bin/python3.11d
vmlinux=/sys/kernel/btf/vmlinux
cppreal=$(fixture cpp-real) rustreal=$(fixture rust-real) zigstd=$(fixture zig-std)
# gofunct's prototypes with each parameter's location: -P until 63367ad
# made -P pfunct's prototype lines and moved locations to --locations.
proto_a=${PROTO_A:--P} proto_b=${PROTO_B:---locations}
git merge-base --is-ancestor 63367ad "$ca" 2>/dev/null && proto_a=--locations
git merge-base --is-ancestor 63367ad "$cb" 2>/dev/null || proto_b=-P
flags_m_a="" flags_m_b=-M
git merge-base --is-ancestor ed4dd79 "$ca" 2>/dev/null && flags_m_a=-M
git merge-base --is-ancestor ed4dd79 "$cb" 2>/dev/null || flags_m_b=

# timed CMD...: as bench/lib.sh's one ("seconds maxrss_kb cpu_seconds
# status"), the CPU time to the microsecond from wait4's rusage:
# /usr/bin/time's hundredths are too coarse for runs of a tenth of a
# second of CPU.
timed() {
	python3 -c 'import os, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], "w"))
_, st, ru = os.wait4(p.pid, 0)
t1 = time.perf_counter()
p.returncode = os.waitstatus_to_exitcode(st)
print("%.4f %d %.4f %d" % (t1 - t0, ru.ru_maxrss, ru.ru_utime + ru.ru_stime, p.returncode % 256))' "$out/stderr.txt" "$@"
}

# side A|B MODE TOOL FLAGS FILE: one run of one side; a cold run empties
# the side's index cache first.
side() {
	local s=$1 mode=$2 tool=$3 flags=$4 file=$5
	[ "$mode" = warm ] || rm -rf "$dir/cache-$s"
	# shellcheck disable=SC2086
	BINSCOPE_CACHE=$dir/cache-$s BINSCOPE_INDEX_CACHE=$dir/cache-$s timed "$dir/$s/$tool" $flags "$file" >>"$dir/$name.$s"
}

# row NAME MODE TOOL FLAGS_A FLAGS_B FILE: RUNS pairs of runs.
row() {
	local name=$1 mode=$2 tool=$3 fa=$4 fb=$5 file=$6 i sa sb flags same
	if [ "$runs" = list ]; then
		echo "$name"
		return
	fi
	[ "$picked" = "  " ] || [[ "$picked" == *" $name "* ]] || return 0
	[ -n "$file" ] && [ -e "$file" ] || { echo "before: $name: no input, left out" >&2; return 0; }
	: >"$dir/$name.a"
	: >"$dir/$name.b"
	# One untimed run of each side, from an empty cache, which it fills
	# for a warm row: their outputs compared.
	for i in a b; do
		rm -rf "$dir/cache-$i"
		[ $i = a ] && flags=$fa || flags=$fb
		# shellcheck disable=SC2086
		BINSCOPE_CACHE=$dir/cache-$i BINSCOPE_INDEX_CACHE=$dir/cache-$i "$dir/$i/$tool" $flags "$file" >"$dir/$name.out.$i" 2>/dev/null || true
	done
	same="same output"
	cmp -s "$dir/$name.out.a" "$dir/$name.out.b" ||
		same="output differs: A $(wc -c <"$dir/$name.out.a") bytes, B $(wc -c <"$dir/$name.out.b")"
	rm -f "$dir/$name.out.a" "$dir/$name.out.b"
	for ((i = 0; i < runs; i++)); do
		if ((i % 2 == 0)); then
			side a "$mode" "$tool" "$fa" "$file"
			side b "$mode" "$tool" "$fb" "$file"
		else
			side b "$mode" "$tool" "$fb" "$file"
			side a "$mode" "$tool" "$fa" "$file"
		fi
		sa=$(failed "$dir/$name.a") sb=$(failed "$dir/$name.b")
		if [ "${sa:-0}" != 0 ] || [ "${sb:-0}" != 0 ]; then
			echo "before: $name: a run failed (A: exit ${sa:-0}, B: exit ${sb:-0}), left out" >&2
			return 0
		fi
	done
	local at am ac bt bm bc verdict
	at=$(cut -d' ' -f1 "$dir/$name.a" | median) am=$(cut -d' ' -f2 "$dir/$name.a" | median)
	ac=$(cut -d' ' -f3 "$dir/$name.a" | median)
	bt=$(cut -d' ' -f1 "$dir/$name.b" | median) bm=$(cut -d' ' -f2 "$dir/$name.b" | median)
	bc=$(cut -d' ' -f3 "$dir/$name.b" | median)
	verdict=$(paste -d' ' "$dir/$name.a" "$dir/$name.b" | awk -v ac="$ac" -v bc="$bc" '
		# A pair counts when its CPU times differ; k of n pairs have B above.
		$3 != $7 { n++; if ($7 > $3) k++ }
		$1 != $5 { wn++; if ($5 > $1) wk++ }
		function tail(k, n,   p, i, c) { # P(X >= k), X ~ Binomial(n, 1/2)
			p = 0; c = 1
			for (i = 0; i <= n; i++) { if (i >= k) p += c; c = c * (n - i) / (i + 1) }
			return p / 2 ^ n
		}
		END {
			r = (ac > 0 ? bc / ac : 1)
			if (n && tail(k, n) < 0.05 && r > 1.03) v = "slower"
			else if (n && tail(n - k, n) < 0.05 && r < 1 / 1.03) v = "faster"
			else v = "noise"
			printf "%s: B above A in %d of %d pairs (wall: %d of %d)", v, k, n, wk, wn
		}')
	verdict="$verdict; $same"
	record "$name" "$runs" "$tool@$rb${fb:+ $fb}" "$bt" "$bm" "$bc" "$tool@$ra${fa:+ $fa}" "$at" "$am" "$ac" "$verdict"
	awk -v n="$name" -v at="$at" -v bt="$bt" -v ac="$ac" -v bc="$bc" -v am="$am" -v bm="$bm" -v v="$verdict" 'BEGIN {
		printf "%-22s wall %6.3f -> %6.3f s (%.2f)  cpu %6.3f -> %6.3f s (%.2f)  rss %5.0f -> %5.0f MB  %s\n",
			n, at, bt, bt / at, ac, bc, (ac > 0 ? bc / ac : 0), am / 1024, bm / 1024, v
	}'
}

[ "$runs" = list ] || echo "A=$a ($ra) B=$b ($rb): medians of $runs alternating pairs ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
for f in gocmd:"$out/gocmd" vmlinux:"$vmlinux" glibc:"$glibc" python3.11d:"$python" libstdc++:"$stdcxx" \
	cpp-real:"$cppreal" rust-real:"$rustreal" zig-std:"$zigstd"; do
	row "pahole-${f%%:*}" cold gopahole "" "" "${f#*:}"
done
# C++ classes print their member functions since ed4dd79, as pahole does;
# -M leaves them out, as A did.
for f in libstdc++:"$stdcxx" cpp-real:"$cppreal"; do
	row "pahole-M-${f%%:*}" cold gopahole "$flags_m_a" "$flags_m_b" "${f#*:}"
done
for f in vmlinux:"$vmlinux" glibc:"$glibc" python3.11d:"$python"; do
	row "pahole-c-${f%%:*}" cold gopahole --format=c --format=c "${f#*:}"
	row "pahole-json-${f%%:*}" cold gopahole --json --json "${f#*:}"
done
# ceph-osd (bench/ceph.sh installs its debug file; 0.8 GB a run): rows
# only when named, and then when its debug file is installed.
ceph=
[[ "$picked" != *" C-AgentTimeoutCB-"* && "$picked" != *" funct-ceph-osd-"* ]] || ! dpkg -s ceph-osd-dbg >/dev/null 2>&1 || ceph=/usr/bin/ceph-osd
for c in task_struct:"$vmlinux" link_map:"$glibc" timex:"$glibc" _typeobject:"$python" runtime.g:"$out/gocmd" \
	AgentTimeoutCB:"$ceph"; do
	for mode in cold warm; do
		row "C-${c%%:*}-$mode" "$mode" gopahole "-C ${c%%:*}" "-C ${c%%:*}" "${c#*:}"
	done
done
for f in gocmd:"$out/gocmd" glibc:"$glibc" cpp-real:"$cppreal" python3.11d:"$python" libstdc++:"$stdcxx" \
	rust-real:"$rustreal" zig-std:"$zigstd"; do
	row "funct-${f%%:*}-cold" cold gofunct "" "" "${f#*:}"
done
# ceph-osd's functions (1.2 GB a run): only when named, as its -C rows.
if [ -n "$ceph" ] || [ "$runs" = list ]; then row funct-ceph-osd-cold cold gofunct "" "" "$ceph"; fi
for f in gocmd:"$out/gocmd" glibc:"$glibc" cpp-real:"$cppreal"; do
	row "funct-${f%%:*}-warm" warm gofunct "" "" "${f#*:}"
	row "funct-loc-${f%%:*}-cold" cold gofunct "$proto_a" "$proto_b" "${f#*:}"
	row "funct-loc-${f%%:*}-warm" warm gofunct "$proto_a" "$proto_b" "${f#*:}"
	row "funct-inline-${f%%:*}" cold gofunct --inline --inline "${f#*:}"
	row "funct-json-${f%%:*}" cold gofunct --json --json "${f#*:}"
done
# goprobe resolving a count probe on a function by its name (gen: the
# sites written, nothing attached), its caches emptied before each run.
for p in "glibc|malloc|$libc" "python3.11d|PyDict_SetItem|$python" "cpp-real|real::scale_by|$cppreal"; do
	IFS='|' read -r f def file <<<"$p"
	row "probe-$f" cold goprobe "gen --format=spec $def -x" "gen --format=spec $def -x" "$file"
done
