#!/usr/bin/env bash
# test.sh runs the whole test suite the way CI does (.ci/run calls it):
#   1. scripts/install-deps.sh installs the compilers and tools the tests use;
#   2. go test -count=1 ./... runs every test (fixtures are built from source
#      on first use and cached under the user cache directory);
#   3. each Go fuzz target (func FuzzXxx in a _test.go file) runs briefly.
#
# BINSCOPE_REQUIRE_ALL=1 turns every skip for a missing tool, toolchain or
# privilege into a failure. CI (CI=true) always sets it; a developer may set
# it or not (unset, such tests skip with a reason).
# FUZZTIME (default 20s) is how long each fuzz target runs; FUZZTIME=0 skips
# fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH="$PATH:/usr/local/go/bin:${HOME:-/root}/.cargo/bin"
if [ "${CI:-}" = true ]; then
	export BINSCOPE_REQUIRE_ALL=1
fi

bash scripts/install-deps.sh

go test -count=1 -timeout 40m ./...

fuzztime=${FUZZTIME:-20s}
if [ "$fuzztime" != 0 ]; then
	# Fuzz targets, found by name so that this script predates them:
	# every "func FuzzXxx(" in a test file outside testdata.
	mapfile -t files < <(grep -rlE --include='*_test.go' --exclude-dir=testdata --exclude-dir=.git '^func Fuzz[A-Za-z0-9_]*\(' . | sort || true)
	for file in "${files[@]}"; do
		pkg=./$(dirname "${file#./}")
		mapfile -t targets < <(grep -oE '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //')
		for target in "${targets[@]}"; do
			echo "fuzz: $pkg $target ($fuzztime)"
			# When the time runs out while the engine minimizes a new input,
			# Go's fuzzing ends with its own "context deadline exceeded"
			# and no failing input: that is the engine, not the code. A
			# failure of the code writes its input under testdata/fuzz.
			log=$(mktemp)
			if ! go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" -fuzzminimizetime=200x "$pkg" </dev/null >"$log" 2>&1; then
				if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
					tail -n 3 "$log"
					echo "fuzz: $pkg $target: the fuzzing engine stopped at its deadline while minimizing; no failing input"
				else
					cat "$log"
					rm -f "$log"
					exit 1
				fi
			else
				tail -n 2 "$log"
			fi
			rm -f "$log"
		done
	done
fi
