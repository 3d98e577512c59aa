#!/usr/bin/env bash
# Checks that two revisions of the tools print the same bytes: gopahole
# (text, --format=c, --json) and gofunct (plain, -P, --inline, --json) on
# glibc's debug file, python3.11d, libstdc++'s debug file, cmd/go and the
# test fixtures. A and B are git revisions, "." for the working tree. Prints
# one line per output that differs and exits 1 if any does; the outputs are
# left in bench/out/same/{a,b}.
#
#   bash bench/same.sh A B          bash bench/same.sh main .
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
. bench/lib.sh
gocmd
# build REV SIDE: gopahole and gofunct at REV in $out/same/SIDE.
build() {
	local dst=$PWD/$out/same/$2 src=.
	mkdir -p "$dst"
	if [ "$1" != . ]; then
		src=$(mktemp -d)
		git archive "$1" | tar -x -C "$src"
	fi
	(cd "$src" && go build -o "$dst/gopahole" ./cmd/gopahole && go build -o "$dst/gofunct" ./cmd/gofunct)
	[ "$src" = . ] || rm -rf "$src"
}
rm -rf "$out/same"
build "$1" a
build "$2" b

inputs=("$out/gocmd" /usr/bin/python3.11d)
libc=/lib/x86_64-linux-gnu/libc.so.6
id=$(readelf -n "$libc" | awk '/Build ID/ {print $3}')
inputs+=("/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug")
inputs+=("$(ls /usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.* | grep -v gdb | head -1)")
# The fixtures, as the tests built them (internal/testutil's cache), else
# built here; go-cmd is cmd/go again.
cache=${XDG_CACHE_HOME:-$HOME/.cache}/binscope-fixtures
for b in testdata/fixtures/*/build.sh; do
	name=$(basename "$(dirname "$b")")
	[ "$name" != go-cmd ] || continue
	f=$(ls -t "$cache/$name"-*/"$name" 2>/dev/null | head -1 || true)
	if [ -z "$f" ]; then
		f=$out/fixture-$name
		[ -f "$f" ] || sh "$b" "$f" >/dev/null 2>&1 || { echo "same: $name did not build, left out" >&2; continue; }
	fi
	inputs+=("$f")
done
export BINSCOPE_INDEX_CACHE=off
modes=("gopahole" "gopahole --format=c" "gopahole --json" "gofunct" "gofunct -P" "gofunct --inline" "gofunct --json")
differ=0 compared=0
for f in "${inputs[@]}"; do
	[ -f "$f" ] || { echo "same: $f missing, left out" >&2; continue; }
	for m in "${modes[@]}"; do
		tag=$(basename "$f")-$(echo "$m" | tr ' =' '__')
		for side in a b; do
			# shellcheck disable=SC2086
			"$out/same/$side/"$m "$f" >"$out/same/$side/$tag.out" 2>"$out/same/$side/$tag.err" || echo "exit $?" >>"$out/same/$side/$tag.err"
		done
		compared=$((compared + 1))
		if ! cmp -s "$out/same/a/$tag.out" "$out/same/b/$tag.out" || ! cmp -s "$out/same/a/$tag.err" "$out/same/b/$tag.err"; then
			echo "differs: $m $f ($out/same/{a,b}/$tag.{out,err})"
			differ=$((differ + 1))
		fi
	done
done
echo "$compared outputs compared, $differ differ"
[ "$compared" -ge 50 ] || { echo "same: fewer than 50 outputs compared" >&2; exit 1; }
[ "$differ" -eq 0 ]
