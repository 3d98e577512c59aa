# Helpers the bench scripts source: paths, tool checks, timing and medians.
out=${BENCH_OUT:-bench/out}
mkdir -p "$out"
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }

# need TOOL: fail with a hint when a peer tool is missing.
need() { command -v "$1" >/dev/null || { echo "bench: $1 not found (bash scripts/install-deps.sh)" >&2; exit 1; }; }

# gocmd: the 20 MB Go binary with DWARF both benches read.
gocmd() { [ -f "$out/gocmd" ] || go build -o "$out/gocmd" cmd/go; }

# one TOOL ARGS...: runs once, prints "seconds maxrss_kb cpu_seconds status":
# wall time to the millisecond from bash's clock (no process started to read
# it; it includes starting /usr/bin/time, which reports the peak memory and
# the CPU time, user and system, on every core), and the tool's exit status,
# so that a tool that failed early is never read as a fast one.
one() {
	local t0=$EPOCHREALTIME st=0
	/usr/bin/time -f '%M %U %S' -o "$out/time.txt" "$@" >/dev/null 2>"$out/stderr.txt" || st=$?
	local t1=$EPOCHREALTIME
	grep -v '^Command exited with non-zero status' "$out/time.txt" | tail -1 |
		awk -v a="$t0" -v b="$t1" -v st="$st" '{ printf "%.4f %s %.2f %d\n", b - a, $1, $2 + $3, st }'
	if [ "$st" != 0 ]; then
		echo "bench: exit status $st: $*" >&2
		tail -3 "$out/stderr.txt" | sed 's/^/bench:   /' >&2
	fi
}

# failed FILE: the first non-zero exit status among the runs in FILE, or 0.
failed() { awk '$4 != 0 { print $4; exit } END { if (!NR) print 1 }' "$1" | head -1; }

# Each script's latest row of each name, for bench/readme.sh: one line per
# row in $out/results/SCRIPT.tsv (a row run again replaces its line).
results="$out/results/$(basename "$0" .sh).tsv"
mkdir -p "$out/results"
touch "$results"

# record NAME FIELDS...: replaces row NAME of the results with NAME, the
# date, the commit, the load average and FIELDS, tab-separated.
record() {
	local name=$1 line
	shift
	line=$(printf '%s\t' "$name" "$(date -u +%F)" "$(git rev-parse --short HEAD 2>/dev/null || echo -)" \
		"$(cut -d' ' -f1 /proc/loadavg)" "$@")
	{ grep -v -P "^\Q$name\E\t" "$results" || true; printf '%s\n' "${line%$'\t'}"; } >"$results.new"
	mv "$results.new" "$results"
}

# buildrev REV DIR TOOL...: builds ./cmd/TOOL of git revision REV ("."
# for the working tree) into DIR.
buildrev() {
	local rev=$1 dst src=. t
	mkdir -p "$2"
	dst=$(cd "$2" && pwd) # BENCH_OUT may be relative or absolute
	shift 2
	if [ "$rev" != . ]; then
		src=$(mktemp -d)
		git archive "$rev" | tar -x -C "$src"
	fi
	for t in "$@"; do
		(cd "$src" && go build -o "$dst/$t" "./cmd/$t")
	done
	[ "$src" = . ] || rm -rf "$src"
}

# fixture NAME: the path of test fixture NAME as the tests built it
# (internal/testutil's cache), else built into $out; "" if it does not
# build.
fixture() {
	local f
	f=$(ls -t "${XDG_CACHE_HOME:-$HOME/.cache}/binscope-fixtures/$1"-*/"$1" 2>/dev/null | head -1 || true)
	if [ -z "$f" ]; then
		f=$out/fixture-$1
		[ -f "$f" ] || sh "testdata/fixtures/$1/build.sh" "$f" >/dev/null 2>&1 || f=
	fi
	echo "$f"
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }

# compare NAME OURS PEER RUNS ARGS...: runs OURS and PEER on ARGS, alternating,
# and prints medians of time, max RSS and CPU time, and the ratios of the
# times (wall, and CPU: the one a loaded machine changes least); the command in
# $before_ours, when set, runs before each run of OURS. OURS and PEER
# may carry flags ("bench/out/gofunct -P"): they are split on spaces.
compare() {
	local name=$1 ours=$2 peer=$3 runs=$4
	shift 4
	: >"$out/$name.ours"
	: >"$out/$name.theirs"
	for ((i = 0; i < runs; i++)); do
		${before_ours:-:} # a hook: bench/pfunct.sh empties the index cache here
		# shellcheck disable=SC2086
		one $ours "$@" >>"$out/$name.ours"
		# shellcheck disable=SC2086
		one $peer "$@" >>"$out/$name.theirs"
	done
	local ot om oc pt pm pc st note=
	st=$(failed "$out/$name.ours")
	if [ "${st:-0}" != 0 ]; then
		echo "bench: $name: $(basename "${ours%% *}") exited with status $st; no row recorded" >&2
		return 1
	fi
	st=$(failed "$out/$name.theirs")
	# A peer stopped by timeout(1) (status 124) is recorded at its limit.
	[ "${st:-0}" = 0 ] || note=" (peer exit $st)"
	ot=$(cut -d' ' -f1 "$out/$name.ours" | median)
	om=$(cut -d' ' -f2 "$out/$name.ours" | median)
	oc=$(cut -d' ' -f3 "$out/$name.ours" | median)
	pt=$(cut -d' ' -f1 "$out/$name.theirs" | median)
	pm=$(cut -d' ' -f2 "$out/$name.theirs" | median)
	pc=$(cut -d' ' -f3 "$out/$name.theirs" | median)
	local limits
	limits=$(limits "$ot" "$om" "$pt" "$oc" "$pc")
	record "$name" "$runs" "$(basename "$ours")" "$ot" "$om" "$oc" "$peer" "$pt" "$pm" "$pc" ${limits:+"$limits"}
	awk -v n="$name" -v o="$(basename "$ours")" -v p="$peer" -v ot="$ot" -v om="$om" -v oc="$oc" -v pt="$pt" -v pm="$pm" -v pc="$pc" 'BEGIN {
		printf "%-15s %s %6.3f s %7.1f MB cpu %5.2f s | %s %6.3f s %7.1f MB cpu %5.2f s | time ratio %.2f, cpu %.2f\n",
			n, o, ot, om/1024, oc, p, pt, pm/1024, pc, ot/pt, (pc > 0 ? oc/pc : 0)
	}'
	[ -z "$note" ] || echo "bench: $name:$note" >&2
	[ -z "$limits" ] || echo "$name: limits: $limits"
}

# limits SECONDS MAXRSS_KB PEER_SECONDS CPU PEER_CPU: our median time and
# max RSS against the limits $limit_s and $limit_mb, and our times over
# the peer's (wall and CPU) against $limit_ratio, when set (a row's goal):
# "max RSS 2810 MB of at most 1024: over; ...", or nothing.
limits() {
	local out=() mb=$(($2 / 1024))
	if [ -n "${limit_ratio:-}" ]; then
		out+=("$(awk -v t="$1" -v p="$3" -v c="$4" -v pc="$5" -v l="$limit_ratio" 'BEGIN {
			rt = t / p; rc = (pc > 0 ? c / pc : 0)
			printf "time ratio %.2f and CPU ratio %.2f of at most %s: %s", rt, rc, l,
				(rt <= l && rc <= l ? "met" : rt <= l ? "met in time, over in CPU" : rc <= l ? "met in CPU, over in time" : "over")
		}')")
	fi
	if [ -n "${limit_mb:-}" ]; then
		out+=("max RSS $mb MB of at most $limit_mb: $( ((mb <= limit_mb)) && echo met || echo over)")
	fi
	if [ -n "${limit_s:-}" ]; then
		out+=("$(awk -v t="$1" -v l="$limit_s" 'BEGIN { printf "%.1f s of at most %s: %s", t, l, (t <= l ? "met" : "over") }')")
	fi
	local IFS=';'
	echo "${out[*]}" | sed 's/;/; /g'
}
