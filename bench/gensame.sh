#!/usr/bin/env bash
# Compares what two revisions of goprobe resolve on bench/exact's programs,
# without running them (a static diff): the programs of SEEDS for each of
# BUILDS are built as bench/exact builds them (its -build-only), and
# goprobe gen --format=spec of each revision reads every function's
# parameters ("FN $params") at every site. Prints one line per (program,
# function, site, argument) whose reading differs, the revision A's then
# B's (a location as JSON, or "? reason"), then a count per build; exits 1
# if any differs. A and B are git revisions, "." for the working tree; the
# programs and outputs are left in bench/out/gensame.
#
#   bash bench/gensame.sh A B SEEDS BUILDS
#   bash bench/gensame.sh main . 12000-12059 gcc-O2,gcc-O3,clang-O2,rust-O3
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 4 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
export PATH="$PATH:/usr/local/go/bin:${HOME:-/root}/.cargo/bin"
. bench/lib.sh
need jq
dir=$out/gensame
rm -rf "$dir/a" "$dir/b" "$dir/diff"
buildrev "$1" "$dir/a" goprobe
buildrev "$2" "$dir/b" goprobe
go build -o "$dir/exact" ./bench/exact
"$dir/exact" -build-only -seeds "$3" -builds "$4" -dir "$dir/progs" >"$dir/progs.tsv"
export BINSCOPE_INDEX_CACHE=off LC_ALL=C
# flat: one line per site and argument, "FN SITE ARG<TAB>READING".
flat='def hex: [recurse(if . >= 16 then (. / 16 | floor) else empty end) | . % 16 | "0123456789abcdef"[.:.+1]] | reverse | join("");
	.probes[] | .function as $f | .sites[] |
	"\(.kind)@0x\(.addr | hex)\(if .kind == "inline" then "(in \(.function))" else "" end)" as $s |
	(.args // [])[] | "\($f) \($s) \(.name)\t\(if .unavailable then "? " + .unavailable else (.chains | tojson) end)"'
mkdir -p "$dir/diff"
while IFS=$'\t' read -r build seed bin fns; do
	defs=()
	for f in $fns; do defs+=("$f \$params"); done
	# A function goprobe finds no code of (inlined everywhere, or
	# removed) is left out, as bench/exact leaves it out.
	while [ ${#defs[@]} -gt 0 ] && ! "$dir/a/goprobe" gen --format=spec -x "$bin" "${defs[@]}" >/dev/null 2>"$dir/a.err"; do
		gone=$(sed -n 's/.*no function \([^ ]*\).*/\1/p' "$dir/a.err" | head -1)
		[ -n "$gone" ] || break
		kept=()
		for d in "${defs[@]}"; do [ "$d" = "$gone \$params" ] || kept+=("$d"); done
		defs=("${kept[@]}")
	done
	for side in a b; do
		if "$dir/$side/goprobe" gen --format=spec -x "$bin" "${defs[@]}" >"$dir/$side.json" 2>"$dir/$side.err"; then
			jq -r "$flat" "$dir/$side.json" | sort >"$dir/$side.flat"
		else
			echo "* * *	goprobe failed: $(tail -1 "$dir/$side.err")" >"$dir/$side.flat"
		fi
	done
	# Each key with its reading on both sides ("-" where a side has none).
	join -t $'\t' -a1 -a2 -e - -o 0,1.2,2.2 "$dir/a.flat" "$dir/b.flat" |
		awk -F'\t' -v p="$build $seed" '$2 != $3 { printf "%s %s: %s -> %s\n", p, $1, $2, $3 }' >"$dir/diff/$build-$seed"
	cat "$dir/diff/$build-$seed"
done <"$dir/progs.tsv"
echo

while IFS=$'\t' read -r build _; do echo "$build"; done <"$dir/progs.tsv" | sort -u | while read -r build; do
	n=$(cat "$dir/diff/$build"-* | wc -l)
	progs=$(ls "$dir/diff/$build"-* | wc -l)
	echo "gensame $build: $n (site, argument) readings differ over $progs programs"
done
total=$(cat "$dir/diff/"* | wc -l)
[ "$total" -eq 0 ]
