package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// whoCall is one call of the who program's hit, as it printed it.
type whoCall struct {
	tid       int
	x, y      int64
	u         uint64
	tag       string
	id, level int
	name      string
}

// whoRecord is the who program's own record: its pid, each thread's name
// (prctl) by its tid (gettid), and every call of hit.
type whoRecord struct {
	pid   int
	names map[int]string
	calls []whoCall
}

var (
	whoThread = regexp.MustCompile(`(?m)^thread (\S+) pid (\d+) tid (\d+)$`)
	whoCalled = regexp.MustCompile(`(?m)^call (\d+) (-?\d+) (-?\d+) (\d+) (\S+) (\d+) (\d+) (\S+)$`)
)

func whoSaid(t *testing.T, out string, n int) whoRecord {
	t.Helper()
	r := whoRecord{names: map[int]string{}}
	for _, m := range whoThread.FindAllStringSubmatch(out, -1) {
		r.pid, _ = strconv.Atoi(m[2])
		tid, _ := strconv.Atoi(m[3])
		r.names[tid] = m[1]
	}
	for _, m := range whoCalled.FindAllStringSubmatch(out, -1) {
		var c whoCall
		c.tid, _ = strconv.Atoi(m[1])
		c.x, _ = strconv.ParseInt(m[2], 10, 64)
		c.y, _ = strconv.ParseInt(m[3], 10, 64)
		c.u, _ = strconv.ParseUint(m[4], 10, 64)
		c.tag = m[5]
		c.id, _ = strconv.Atoi(m[6])
		c.level, _ = strconv.Atoi(m[7])
		c.name = m[8]
		r.calls = append(r.calls, c)
	}
	if len(r.names) != 3 || len(r.calls) != 3*n {
		t.Fatalf("the program reported %d threads and %d calls, want 3 and %d:\n%s", len(r.names), len(r.calls), 3*n, out)
	}
	return r
}

// TestBuiltins: $pid, $tid and $comm read at each call equal the
// program's own getpid, gettid and the name it gave the thread with
// prctl, and each thread's events carry its own calls' x in order; $uid
// is this test's uid, $cpu a CPU of the machine, $ts the monotonic clock
// within the run; and as hist keys, $comm and $tid count each thread's
// calls.
func TestBuiltins(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "who", "-O2", "-g", "-pthread")
	const n = 15
	var before unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &before)
	code, out, errs := runGoprobe("trace", "--json", "hit x $pid $tid $comm $cpu $ts $uid", "--", bin, strconv.Itoa(n))
	var after unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &after)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rec := whoSaid(t, out, n)
	events := jsonEvents(t, out)["hit x $pid $tid $comm $cpu $ts $uid"]
	if len(events) != len(rec.calls) {
		t.Fatalf("%d events for %d calls", len(events), len(rec.calls))
	}
	xs := map[int][]string{}
	for _, c := range rec.calls {
		xs[c.tid] = append(xs[c.tid], fmt.Sprint(c.x))
	}
	seen := map[int][]string{}
	for _, e := range events {
		tid := int(e["$tid"].(float64))
		if pid := int(e["$pid"].(float64)); pid != rec.pid {
			t.Errorf("$pid %d, the program's getpid %d", pid, rec.pid)
		}
		if comm, ok := rec.names[tid]; !ok || e["$comm"] != comm {
			t.Errorf("$tid %d $comm %v; the program's threads: %v", tid, e["$comm"], rec.names)
		}
		if uid := int(e["$uid"].(float64)); uid != os.Getuid() {
			t.Errorf("$uid %d, want %d", uid, os.Getuid())
		}
		if cpu := int(e["$cpu"].(float64)); cpu < 0 || cpu >= runtime.NumCPU() {
			t.Errorf("$cpu %d of %d", cpu, runtime.NumCPU())
		}
		if ts := int64(e["$ts"].(float64)); ts < before.Nano() || ts > after.Nano() {
			t.Errorf("$ts %d outside the run's monotonic clock [%d, %d]", ts, before.Nano(), after.Nano())
		}
		seen[tid] = append(seen[tid], fmt.Sprint(e["x"]))
	}
	for tid, want := range xs {
		if got := strings.Join(seen[tid], " "); got != strings.Join(want, " ") {
			t.Errorf("thread %d (%s): events x=%s, the program passed %s", tid, rec.names[tid], got, strings.Join(want, " "))
		}
	}
	for _, key := range []string{"$comm", "$tid"} {
		code, out, errs := runGoprobe("hist", "--json", "--key", key, "hit", "--", bin, strconv.Itoa(n))
		if code != 0 {
			t.Fatalf("hist --key %s: exit %d: %s", key, code, errs)
		}
		rec := whoSaid(t, out, n)
		want := map[string]uint64{}
		for _, c := range rec.calls {
			k := strconv.Itoa(c.tid)
			if key == "$comm" {
				k = rec.names[c.tid]
			}
			want[k]++
		}
		if got := histCounts(t, out); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("hist --key %s: %v, the program's calls per thread %v", key, got, want)
		}
	}
}

// histCounts are the counts by key of hist --json's first probe.
func histCounts(t *testing.T, out string) map[string]uint64 {
	t.Helper()
	var h histJSON
	if err := json.Unmarshal([]byte(out[strings.LastIndex(out, `{"probes"`):]), &h); err != nil || len(h.Probes) == 0 {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]uint64{}
	for _, k := range h.Probes[0].Keys {
		got[fmt.Sprint(k.Key)] = k.Count
	}
	return got
}
