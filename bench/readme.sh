#!/usr/bin/env bash
# Rewrites the README's results (between the "results:" markers) from the
# latest rows bench/pahole.sh, bench/pfunct.sh, bench/header.sh,
# bench/ceph.sh, bench/goprobe.sh, bench/before.sh and bench/exact.sh
# recorded in bench/out/results/: one table per script, one line per row,
# with the date, commit and load average it ran at.
#
#   bash bench/pahole.sh 11 && bash bench/pfunct.sh 11 && bash bench/readme.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=${BENCH_OUT:-bench/out}
begin='<!-- results: begin (bench/readme.sh writes this part) -->'
end='<!-- results: end -->'
grep -qxF "$begin" README.md && grep -qxF "$end" README.md || { echo "readme: README.md has no results markers" >&2; exit 1; }
table=$(mktemp)
# kept SCRIPT: the README's current table of SCRIPT (from its "`bash
# bench/SCRIPT.sh" line to the next script's), for a script with no rows
# here: results are recorded where each script ran.
kept() {
	awk -v b="$begin" -v e="$end" -v s="\`bash bench/$1.sh" '
		$0 == b { in_ = 1; next }
		$0 == e { in_ = 0 }
		!in_ { next }
		/^`bash bench\// { on = index($0, s) == 1 }
		on' README.md
}
# before FILE: bench/before.sh's rows, two revisions of our tools (B
# after, A before) rather than ours and a peer's: a table of the rows
# whose CPU time differs by the sign test, and one line naming the rest.
before() {
	awk -F'\t' '
	# name date commit load runs ours ot om oc peer pt pm pc verdict
	{
		split($6, b, " "); split($10, a, " "); sub(/^.*@/, "", a[1]); sub(/^.*@/, "", b[1])
		if (!(a[1] in ra)) { ra[a[1]] = 1; as = as (as == "" ? "" : ", ") a[1] }
		if (!(b[1] in rb)) { rb[b[1]] = 1; bs = bs (bs == "" ? "" : ", ") b[1] }
		lo = (NR == 1 || $4 < lo ? $4 : lo); hi = (NR == 1 || $4 > hi ? $4 : hi)
		fa = $10; sub(/^[^ ]* ?/, "", fa); fb = $6; sub(/^[^ ]* ?/, "", fb)
		flags = (fa == fb ? fa : "A " fa ", B " fb)
		r = ($13 > 0 ? $9 / $13 : 0)
		if ($14 ~ /^noise/) {
			quiet = quiet (quiet == "" ? "" : ", ") $1
			qlo = (nq == 0 || r < qlo ? r : qlo); qhi = (nq == 0 || r > qhi ? r : qhi); nq++
			next
		}
		rows[++n] = sprintf("| %s%s | %s | %.3f -> %.3f s | %.2f | %.2f | %.0f -> %.0f MB | %s |",
			$1, (flags != "" ? " (" flags ")" : ""), b[1], $13, $9, r, $7 / $11, $12 / 1024, $8 / 1024, $14)
		runs = $5; date = $2
	}
	END {
		printf "\n`bash bench/before.sh` (A: %s; B: %s; %s runs of each, alternating, %s, load %s-%s;\n", as, bs, runs, date, lo, hi
		print "CPU is user and system time; a row is slower or faster when the sign test over its pairs of runs says so, and its"
		print "medians differ by over 3%):\n"
		print "| row | B | CPU A -> B | CPU B/A | wall B/A | max RSS A -> B | pairs, output |"
		print "|-----|---|------------|---------|----------|----------------|---------------|"
		for (i = 1; i <= n; i++) print rows[i]
		if (nq) print "\n" wrap(sprintf("Noise (CPU B/A %.2f-%.2f) in the other %d rows: %s.", qlo, qhi, nq, quiet))
	}
	# wrap: s in lines of at most 116 characters, broken after commas.
	function wrap(s,   out, line, n, i, w) {
		n = split(s, w, " ")
		for (i = 1; i <= n; i++) {
			if (line != "" && length(line) + 1 + length(w[i]) > 116) { out = out line "\n"; line = "" }
			line = line (line == "" ? "" : " ") w[i]
		}
		return out line
	}' "$1"
}
for script in pahole pfunct header goprobe ceph before exact; do
	f=$out/results/$script.tsv
	if [ ! -s "$f" ]; then
		if [ -n "$(kept "$script")" ]; then
			echo "readme: no rows of bench/$script.sh in $f, its table kept as it was" >&2
			printf '\n%s\n' "$(kept "$script")" >>"$table"
		else
			echo "readme: no rows of bench/$script.sh in $f, left out" >&2
		fi
		continue
	fi
	[ "$script" = exact ] && break
	if [ "$script" = before ]; then
		before "$f" >>"$table"
		continue
	fi
	# A script whose rows have goals (bench/lib.sh's limits) gets a
	# column of them.
	goals=$(awk -F'\t' 'NF >= 14 { print "yes"; exit }' "$f")
	awk -F'\t' -v s="$script" -v goals="$goals" '
	BEGIN {
		printf "\n`bash bench/%s.sh`:\n\n", s
		print "| row | ours | peer | time ratio | CPU ratio | runs | measured |" (goals ? " goal |" : "")
		print "|-----|------|------|------------|-----------|------|----------|" (goals ? "------|" : "")
	}
	# name date commit load runs ours ot om oc peer pt pm pc [limits]
	{
		printf "| %s | %s %.3f s, %.0f MB | %s %.3f s, %.0f MB | %.2f | %.2f | %d | %s, %s, load %s |%s\n",
			$1, $6, $7, $8 / 1024, $10, $11, $12 / 1024, $7 / $11, ($13 > 0 ? $9 / $13 : 0), $5, $2, $3, $4,
			(goals ? " " $14 " |" : "")
	}' "$f" >>"$table"
done
f=$out/results/exact.tsv
if [ -s "$f" ]; then
	awk -F'\t' '
	BEGIN {
		print "\n`bash bench/exact.sh SEEDS 20 BUILDS` (generated self-recording programs; gdb at the (site, argument) pairs printed `?` with GDB=all, or K per program):\n"
		print "| build | seeds asked | seeds run | programs failed | functions | calls | counted twice | missed | wrong values | events before an earlier call'"'"'s | `?` | `?` pairs gdb judged | gdb has no value either | gdb prints a value the call did not pass | gdb prints the call'"'"'s value | gdb made no stop | measured |"
		print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	}
	# name date commit load seeds programs funcs calls doubles misses wrong values unread compared none gdbwrong value nostop
	# [reordered failed] [command]: rows written before the two columns have 18 or 19 fields.
	{
		c = 19; reord = "-"; failed = "-"
		if (NF >= 20) { reord = $19; failed = $20; c = 21 }
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s of %s | %s | %s | %s | %s | %s | %s | %s | %s, %s, load %s |\n",
			$1, $5, $6, failed, $7, $8, $9, $10, $11, $12, reord, $13, $14, $15, $16, $17, $18, $2, $3, $4
		if (NF >= c && !($c in cmd)) { cmd[$c] = 1; cmds[++ncmd] = $c }
	}
	END {
		for (i = 1; i <= ncmd; i++) printf "%s`%s`\n", (i == 1 ? "\nRun as: " : "and "), cmds[i]
	}' "$f" >>"$table"
fi
[ -s "$table" ] || { echo "readme: no results to write" >&2; exit 1; }
awk -v b="$begin" -v e="$end" -v t="$table" '
	$0 == b { print; while ((getline l < t) > 0) print l; print ""; skip = 1; next }
	$0 == e { skip = 0 }
	!skip' README.md >README.md.new
mv README.md.new README.md
rm -f "$table"
echo "readme: results rewritten from $out/results"
