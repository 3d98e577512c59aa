#!/usr/bin/env bash
# Checks that two revisions of the tools print the same bytes: gopahole
# (text, --format=c, --json) and gofunct (plain, -P, --inline, --json) on
# glibc's debug file, python3.11d, libstdc++'s debug file, cmd/go, the
# test fixtures and three relocatable objects; gopahole -C on some of them
# and gopahole on the kernel's BTF; goprobe's resolved sites (gen
# --format=spec) of a few functions. A and B are git revisions, "." for
# the working tree. Prints one line per output that differs and exits 1
# if any does; the outputs are left in bench/out/same/{a,b}.
#
#   bash bench/same.sh A B          bash bench/same.sh main .
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
. bench/lib.sh
gocmd
rm -rf "$out/same"
buildrev "$1" "$out/same/a" gopahole gofunct goprobe
buildrev "$2" "$out/same/b" gopahole gofunct goprobe

inputs=("$out/gocmd" /usr/bin/python3.11d)
libc=/lib/x86_64-linux-gnu/libc.so.6
id=$(readelf -n "$libc" | awk '/Build ID/ {print $3}')
libcdbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
inputs+=("$libcdbg")
inputs+=("$(ls /usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.* | grep -v gdb | head -1)")
# The fixtures, as the tests built them, else built here; go-cmd is cmd/go
# again.
for b in testdata/fixtures/*/build.sh; do
	name=$(basename "$(dirname "$b")")
	[ "$name" != go-cmd ] || continue
	f=$(fixture "$name")
	[ -n "$f" ] || { echo "same: $name did not build, left out" >&2; continue; }
	inputs+=("$f")
done
# Relocatable objects: C at -O1, C and C++ at -O2 (built once).
obj=$out/layouts.o
[ -f "$obj" ] || gcc -g -O1 -c -o "$obj" testdata/fixtures/c-layouts/layouts.c
[ -f "$out/inl.o" ] || gcc -g -O2 -c -o "$out/inl.o" dwarf/testdata/inline/inl.c
[ -f "$out/real.o" ] || g++ -g -O2 -std=c++17 -c -o "$out/real.o" testdata/fixtures/cpp-real/real.cc
inputs+=("$obj" "$out/inl.o" "$out/real.o")
export BINSCOPE_INDEX_CACHE=off
modes=("gopahole" "gopahole --format=c" "gopahole --json" "gofunct" "gofunct -P" "gofunct --inline" "gofunct --json")
differ=0 compared=0
# run TAG TOOL ARGS...: TOOL of each side on ARGS, outputs compared.
run() {
	local tag=$1 tool=$2 side
	shift 2
	for side in a b; do
		"$out/same/$side/$tool" "$@" >"$out/same/$side/$tag.out" 2>"$out/same/$side/$tag.err" || echo "exit $?" >>"$out/same/$side/$tag.err"
	done
	compared=$((compared + 1))
	if ! cmp -s "$out/same/a/$tag.out" "$out/same/b/$tag.out" || ! cmp -s "$out/same/a/$tag.err" "$out/same/b/$tag.err"; then
		echo "differs: $tool $* ($out/same/{a,b}/$tag.{out,err})"
		differ=$((differ + 1))
	fi
}
for f in "${inputs[@]}"; do
	[ -f "$f" ] || { echo "same: $f missing, left out" >&2; continue; }
	for m in "${modes[@]}"; do
		# shellcheck disable=SC2086
		run "$(basename "$f")-$(echo "$m" | tr ' =' '__')" $m "$f"
	done
done
# The kernel's BTF: gopahole with no file.
if [ -f /sys/kernel/btf/vmlinux ]; then
	for m in "" --format=c --json; do
		# shellcheck disable=SC2086
		run "vmlinux-btf-gopahole$m" gopahole $m
	done
fi
# gopahole -C: the path that reads only the named types, on linked files
# and a relocatable object (a name in no unit reads every type).
named=(
	"$libcdbg|malloc_state|FILE|nosuchtype"
	"/usr/bin/python3.11d|PyObject|PyTypeObject"
	"$out/gocmd|runtime.g"
	"$(fixture c-layouts)|holey"
	"$(fixture c-layouts-dwarf2)|holey"
	"$obj|holey"
	"$(fixture cpp-layouts)|ns::Dog"
	"$(fixture rust-layouts)|layouts::Holey"
	"$(fixture zig-layouts)|layouts.Ext"
	"$(fixture go-layouts)|main.Holey"
)
for p in "${named[@]}"; do
	IFS='|' read -r -a defs <<<"$p"
	f=${defs[0]}
	[ -f "$f" ] || { echo "same: $f missing, left out" >&2; continue; }
	for d in "${defs[@]:1}"; do
		for m in "" --format=c --json; do
			# shellcheck disable=SC2086
			run "$(basename "$f")-C-$(echo "$d$m" | tr ' :/=' '____')" gopahole $m -C "$d" "$f"
		done
	done
done
# goprobe's resolved sites: entries, inline sites and arguments' locations.
probes=(
	"$libc|malloc bytes|fopen filename mode|qsort"
	"/usr/bin/python3.11d|PyObject_GetAttr v name|PyDict_SetItem op key value"
	"/usr/bin/python3.11|PyObject_GetAttr v name|_PyObject_GC_TRACK"
	"$out/gocmd|main.main"
	"$(fixture go-inline)|main.leaf x|main.work n"
	"$(fixture cpp-real)|real::scale_by|main argc argv"
	"$(fixture rust-real)|real::parse_line line"
	"$(fixture zig-std)|real.byValue a"
)
for p in "${probes[@]}"; do
	IFS='|' read -r -a defs <<<"$p"
	f=${defs[0]}
	[ -f "$f" ] || { echo "same: $f missing, left out" >&2; continue; }
	for d in "${defs[@]:1}"; do
		run "$(basename "$f")-gen-$(echo "$d" | tr ' :/' '___')" goprobe gen --format=spec -x "$f" "$d"
	done
done
echo "$compared outputs compared, $differ differ"
[ "$compared" -ge 50 ] || { echo "same: fewer than 50 outputs compared" >&2; exit 1; }
[ "$differ" -eq 0 ]
