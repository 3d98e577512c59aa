#!/usr/bin/env bash
# Times the tools on a large C++ service, Debian's ceph-osd (its debug file
# holds 230 MB of compressed DWARF: about 60,000 types and 178,000
# functions), installed here with apt, beside pahole and pfunct,
# alternating runs: medians of wall time, peak memory (max RSS) and CPU
# time, and the load average each row ran at.
#
#   C-cold   gopahole -C AgentTimeoutCB, the index cache emptied before each
#            run (the whole file indexed, the cache entries written); issue
#            32's goal: at most half of pahole's time, wall and CPU
#   C-warm   the same lookup from the index cache; issue 32's goal: 0.5 s
#   dump     every type (gopahole, pahole); issue 32's limit: 1 GB max RSS
#   funct    every function (gofunct, its listing cache emptied; pfunct,
#            stopped after PEER_TIMEOUT seconds, 600 by default); issue
#            32's limits: 1.5 GB max RSS, half of 18.5 s
#
# A row with limits prints them, met or over, and records them for
# bench/readme.sh. Max RSS (/usr/bin/time's %M) counts every page the
# process has resident: its heap, and the pages of files it maps (the
# index cache's inflated sections) while mapped in; not the page cache.
#   probe-cold  goprobe stat on a method by its C++ name (PrimaryLogPG::do_op)
#            for 1 ms, the index cache emptied before each run; bpftrace on
#            its mangled symbol, from resolving to detaching
#   probe-warm  the same, the inflated sections from the index cache
#   multi    bench/multi.sh 1000 RUNS: attaching and detaching 1,000 sites
#
#   bash bench/ceph.sh [RUNS [ROW...]]     (default 3 runs, every row; PEER_TIMEOUT=S)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
picked=" ${*:2} "
. bench/lib.sh
need pahole
if ! dpkg -s ceph-osd-dbg >/dev/null 2>&1; then
	echo "bench: installing ceph-osd and ceph-osd-dbg (about 512 MB to download)" >&2
	apt-get install -y ceph-osd ceph-osd-dbg >/dev/null
fi
bin=/usr/bin/ceph-osd
[ -x "$bin" ] || { echo "bench: $bin not found (apt-get install ceph-osd ceph-osd-dbg)" >&2; exit 1; }
for t in gopahole gofunct goprobe; do go build -o "$out/$t" ./cmd/$t; done
export BINSCOPE_INDEX_CACHE="$out/index-cache"
empty_cache() { rm -rf "$BINSCOPE_INDEX_CACHE"; }
want() { [ "$picked" = "  " ] || [[ "$picked" == *" $1 "* ]]; }
peer_timeout=${PEER_TIMEOUT:-600}

echo "median of $runs alternating runs, stdout to /dev/null ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), pahole $(pahole --version))"
if want C-cold; then
	# Issue 32's goal: at most half of pahole's time.
	before_ours=empty_cache limit_ratio=0.5 compare C-cold "$out/gopahole -C AgentTimeoutCB" "pahole -C AgentTimeoutCB" "$runs" "$bin"
fi
if want C-warm; then
	"$out/gopahole" -C AgentTimeoutCB "$bin" >/dev/null
	before_ours= limit_s=0.5 compare C-warm "$out/gopahole -C AgentTimeoutCB" "pahole -C AgentTimeoutCB" "$runs" "$bin"
fi
if want dump; then
	before_ours= limit_mb=1024 compare dump "$out/gopahole" "timeout $peer_timeout pahole" "$runs" "$bin"
fi
if want funct; then
	# Half of the 18.5 s issue 32 measured (wall time: the load counts).
	before_ours=empty_cache limit_mb=1536 limit_s=9.25 compare funct "$out/gofunct" "timeout $peer_timeout pfunct" "$runs" "$bin"
fi
if want probe-cold || want probe-warm; then
	need bpftrace
	[ "$(id -u)" = 0 ] || { echo "bench: probing needs root" >&2; exit 1; }
	method=PrimaryLogPG::do_op
	sym=$(bpftrace -l "uprobe:$bin:_ZN12PrimaryLogPG5do_op*" | grep -v '\.' | head -1)
	[ -n "$sym" ] || { echo "bench: no symbol of $method in $bin" >&2; exit 1; }
	echo "$sym { @ = count(); } interval:ms:1 { exit(); }" >"$out/do_op.bt"
	# The binary comes last: -x's value for goprobe, an unused
	# positional parameter for bpftrace.
	ours="$out/goprobe stat --duration 1ms $method -x"
	if want probe-cold; then
		before_ours=empty_cache compare probe-cold "$ours" "bpftrace $out/do_op.bt" "$runs" "$bin"
	fi
	if want probe-warm; then
		$ours "$bin" >/dev/null 2>&1
		before_ours= compare probe-warm "$ours" "bpftrace $out/do_op.bt" "$runs" "$bin"
	fi
fi
if want multi; then
	bash bench/multi.sh 1000 "$runs"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
