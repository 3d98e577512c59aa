#!/usr/bin/env bash
# Times attaching and detaching one probe at many sites, goprobe beside
# bpftrace, alternating runs, as root. A generated C program has SITES
# noinline functions site_K, each inlining hit(); goprobe stat hit probes
# its SITES inline copies, bpftrace 'uprobe:BIN:site_*' the SITES entries.
# The program records when main starts and ends: attach is its start less
# the tool's start (reading the binary, loading, attaching), detach is the
# tool's end less the program's end (detaching, reading the counts,
# exiting). A second row traces hit's argument, a different constant at
# each site: a program per site, tail-called through one link by the
# site's cookie (goprobe only). Every run's count must equal the
# program's own record. Prints medians.
#
#   bash bench/multi.sh [SITES] [RUNS]     (defaults 1000 and 5)
set -euo pipefail
cd "$(dirname "$0")/.."
sites=${1:-1000}
runs=${2:-5}
. bench/lib.sh
need bpftrace
need gcc
[ "$(id -u)" = 0 ] || { echo "bench: probing needs root" >&2; exit 1; }
go build -o "$out/goprobe" ./cmd/goprobe

src=$out/sites.c
{
	echo '#include <stdio.h>'
	echo '#include <time.h>'
	echo 'volatile long sink;'
	echo 'static inline __attribute__((always_inline)) void hit(long k) { sink += k; }'
	for ((i = 0; i < sites; i++)); do echo "__attribute__((noinline)) void site_$i(void) { hit($i); }"; done
	echo 'static double now(void) { struct timespec t; clock_gettime(CLOCK_REALTIME, &t); return t.tv_sec + t.tv_nsec / 1e9; }'
	echo 'int main(int argc, char **argv) {'
	echo '	double t0 = now();'
	echo '	long calls = 0;'
	for ((i = 0; i < sites; i++)); do echo "	site_$i(); calls++;"; done
	echo '	double t1 = now();'
	echo '	FILE *f = fopen(argv[1], "w");'
	echo '	fprintf(f, "%.6f %.6f %ld\n", t0, t1, calls);'
	echo '	return fclose(f);'
	echo '}'
} >"$src"
bin=$out/sites
gcc -O2 -g -o "$bin" "$src"
bin=$(realpath "$bin")
rec=$(realpath "$out")/sites.rec

# timed NAME COUNT-PATTERN CMD...: runs CMD, checks the count it printed
# (the first number COUNT-PATTERN's group matches, or with "lines:" before
# it, the number of lines it matches) against the program's record and
# appends "attach detach" to $out/NAME.
timed() {
	local name=$1 pat=$2
	shift 2
	rm -f "$rec"
	local t0=$EPOCHREALTIME
	"$@" >"$out/multi.out" 2>&1 || { cat "$out/multi.out" >&2; exit 1; }
	local t1=$EPOCHREALTIME
	read -r start end calls <"$rec"
	local got
	case $pat in
	lines:*) got=$(grep -c "${pat#lines:}" "$out/multi.out" || true) ;;
	*) got=$(sed -n "s/$pat/\1/p" "$out/multi.out" | head -1) ;;
	esac
	[ "$got" = "$calls" ] || { echo "bench: $name counted '$got', the program made $calls calls" >&2; cat "$out/multi.out" >&2; exit 1; }
	awk -v a="$t0" -v s="$start" -v e="$end" -v b="$t1" 'BEGIN { printf "%.4f %.4f\n", s - a, b - e }' >>"$out/$name"
}

: >"$out/multi.ours"
: >"$out/multi.theirs"
: >"$out/multi.trace"
for ((r = 0; r < runs; r++)); do
	timed multi.ours '^hit  *\([0-9]*\) .*' "$out/goprobe" stat hit -- "$bin" "$rec"
	timed multi.trace 'lines:^[0-9]*/[0-9]* hit site=inline k=' "$out/goprobe" trace 'hit k' -- "$bin" "$rec"
	BPFTRACE_MAX_PROBES=$((sites + 1)) timed multi.theirs '^@: \([0-9]*\)$' bpftrace -e "uprobe:$bin:site_* { @ = count(); }" -c "$bin $rec"
done
col() { cut -d' ' -f"$1" "$out/$2" | median; }
echo "one probe at $sites sites, median of $runs alternating runs ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), $(bpftrace --version))"
printf 'attach  goprobe %6.3f s | bpftrace %6.3f s\n' "$(col 1 multi.ours)" "$(col 1 multi.theirs)"
printf 'detach  goprobe %6.3f s | bpftrace %6.3f s\n' "$(col 2 multi.ours)" "$(col 2 multi.theirs)"
printf 'a program per site, one link (goprobe trace): attach %.3f s, detach %.3f s\n' "$(col 1 multi.trace)" "$(col 2 multi.trace)"
