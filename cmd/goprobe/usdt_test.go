package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binscope/binscope/internal/testutil"
)

// jsonEvents are the args of trace --json's events of each probe.
func jsonEvents(t *testing.T, out string) map[string][]map[string]any {
	t.Helper()
	by := map[string][]map[string]any{}
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, `{"probe"`) {
			continue
		}
		var e struct {
			Probe string
			Args  map[string]any
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		by[e.Probe] = append(by[e.Probe], e.Args)
	}
	return by
}

var enabledWork = regexp.MustCompile(`(?m)^enabled work\((-?\d+), (-?\d+), (\w+), 7\)$`)

// TestUSDTOwnProgram: a program's own USDT probes (sys/sdt.h), built at
// -O0 (operands in the frame: -4@-4(%rbp)) and -O2 (registers, a 32-bit
// one, a constant, globals relative to %rip, base+index*scale): each
// argument read equals what the program passed, by its own record; the semaphore-guarded branch runs on every
// call while the probe is attached, and the semaphore reads 1 then; a
// probe written at two places fires at both.
func TestUSDTOwnProgram(t *testing.T) {
	needBPF(t)
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			bin := buildC(t, "sdt", opt, "-g")
			const n = 20
			code, out, errs := runGoprobe("trace", "--json", "usdt:demo:work arg0 arg1 arg2:string arg3", "usdt:demo:tick $params", "usdt:demo:sum $params", "--", bin, strconv.Itoa(n))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			said := enabledWork.FindAllStringSubmatch(out, -1)
			ev := jsonEvents(t, out)
			work, tick := ev["usdt:demo:work arg0 arg1 arg2:string arg3"], ev["usdt:demo:tick $params"]
			if len(said) != n || len(work) != n {
				t.Fatalf("the guarded branch ran %d times, the probe fired %d; want %d each\n%s\n%s", len(said), len(work), n, out, errs)
			}
			for i, s := range said {
				got := fmt.Sprintf("%v %v %v %v", work[i]["arg0"], work[i]["arg1"], work[i]["arg2"], work[i]["arg3"])
				if want := fmt.Sprintf("%s %s %s 7", s[1], s[2], s[3]); got != want {
					t.Errorf("call %d: read %s, the program passed %s", i, got, want)
				}
			}
			var ticks []string
			for _, e := range tick {
				ticks = append(ticks, fmt.Sprint(e["arg0"]))
			}
			sort.Slice(ticks, func(i, j int) bool { a, _ := strconv.Atoi(ticks[i]); b, _ := strconv.Atoi(ticks[j]); return a < b })
			if len(ticks) != n+1 || ticks[0] != "0" || ticks[n] != strconv.Itoa(n) {
				t.Errorf("demo:tick read %v; want 0..%d from two places", ticks, n)
			}
			var sums []string
			for _, e := range ev["usdt:demo:sum $params"] {
				sums = append(sums, fmt.Sprintf("sum(%v, %v, %v)", e["arg0"], e["arg1"], e["arg2"]))
			}
			passed := regexp.MustCompile(`(?m)^sum\(.*\)$`).FindAllString(out, -1)
			if len(passed) != n || strings.Join(sums, "\n") != strings.Join(passed, "\n") {
				t.Errorf("demo:sum read:\n%s\nthe program passed:\n%s", strings.Join(sums, "\n"), strings.Join(passed, "\n"))
			}
			if !strings.Contains(out, "semaphore at end: 1\n") {
				t.Errorf("the semaphore did not read 1 while attached:\n%s", out)
			}
		})
	}
}

// TestUSDTSemaphoreRestored: without goprobe the guarded branch never
// runs; attached to a running process for a while, it runs on every call
// the probe sees, in one unbroken stretch of calls, the probe missing
// none inside it (the kernel sets the semaphore before it writes the
// breakpoint, and takes it back some milliseconds after the link is
// closed: the branch may run unprobed at both ends, for as long as the
// machine's load makes that); after the run the branch stays off for a
// hundred calls and the semaphore is 0 again. The program runs until
// told to stop, so a slow start or a loaded machine only shifts the
// stretch.
func TestUSDTSemaphoreRestored(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "sdt", "-O2", "-g")
	plain, err := exec.Command(bin, "50").Output()
	if err != nil || enabledWork.Match(plain) || !strings.Contains(string(plain), "semaphore at end: 0\n") {
		t.Fatalf("unprobed: %v\n%s", err, plain)
	}
	p := startUntil(t, bin)
	code, out, errs := runGoprobe("trace", "--json", "--duration", "1s", "-p", strconv.Itoa(p.cmd.Process.Pid), "usdt:demo:work arg0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	checkGuarded(t, p.end(t), jsonEvents(t, out)["usdt:demo:work arg0"])
}

// untilProgram is sdt running until its stop file exists, its output
// recorded in a file.
type untilProgram struct {
	cmd        *exec.Cmd
	rec, until string
}

// startUntil starts sdt calling work each millisecond until told to stop
// (see end), once it said it started.
func startUntil(t *testing.T, bin string) *untilProgram {
	t.Helper()
	dir := t.TempDir()
	p := &untilProgram{rec: filepath.Join(dir, "rec"), until: filepath.Join(dir, "stop")}
	f, err := os.Create(p.rec)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p.cmd = exec.Command(bin, "0", "1000", p.until)
	p.cmd.Stdout = f
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(p.rec); strings.HasPrefix(string(b), "sdt started\n") {
			return p
		}
	}
	t.Fatalf("%s did not start", bin)
	return nil
}

// end waits until the program made 100 calls after the last one whose
// guarded branch ran (the semaphore stays off once goprobe is gone),
// stops it and returns its record.
func (p *untilProgram) end(t *testing.T) string {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(p.rec)
		after := string(b)
		if i := strings.LastIndex(after, "enabled work("); i >= 0 {
			after = after[i:]
		}
		if strings.Count(after, "sum(") > 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the program made %d calls after its guarded branch last ran, in a minute", strings.Count(after, "sum("))
		}
	}
	if err := os.WriteFile(p.until, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("%s ended with %v", p.cmd.Path, err)
	}
	b, _ := os.ReadFile(p.rec)
	return string(b)
}

// checkGuarded checks demo:work's events (arg0: the call) against the
// program's record: at least 20 seen; each call seen ran the guarded
// branch, once; the branch ran in one unbroken stretch of calls holding
// the calls seen, themselves unbroken (the stretch's ends may be unseen:
// the semaphore is set before the breakpoint and restored after it); the
// semaphore is 0 at the end.
func checkGuarded(t *testing.T, rec string, events []map[string]any) {
	t.Helper()
	var ran, seen []int
	for _, m := range enabledWork.FindAllStringSubmatch(rec, -1) {
		i, _ := strconv.Atoi(m[1])
		ran = append(ran, i)
	}
	for _, e := range events {
		i, err := strconv.Atoi(fmt.Sprint(e["arg0"]))
		if err != nil {
			t.Fatalf("event %v: arg0 is no call number", e)
		}
		seen = append(seen, i)
	}
	sort.Ints(seen)
	unbroken := func(s []int) bool {
		for k := 1; k < len(s); k++ {
			if s[k] != s[k-1]+1 {
				return false
			}
		}
		return true
	}
	switch {
	case len(seen) < 20 || len(ran) == 0:
		t.Fatalf("%d calls seen, want 20 or more; the branch ran %d times", len(seen), len(ran))
	case !unbroken(ran):
		t.Errorf("the guarded branch ran in calls %s: not one stretch", stretches(ran))
	case !unbroken(seen):
		t.Errorf("calls seen %s: some inside the stretch missed", stretches(seen))
	case seen[0] < ran[0] || seen[len(seen)-1] > ran[len(ran)-1]:
		t.Errorf("calls %d..%d seen, the branch ran in %d..%d", seen[0], seen[len(seen)-1], ran[0], ran[len(ran)-1])
	}
	if !strings.Contains(rec, "semaphore at end: 0\n") {
		t.Errorf("the semaphore was not restored:\n%s", rec[max(0, len(rec)-200):])
	}
	t.Logf("calls %d..%d seen; the branch ran in %d..%d", seen[0], seen[len(seen)-1], ran[0], ran[len(ran)-1])
}

// TestUSDTFilePattern: -x with a pattern naming two copies of a program,
// each running: each copy gets its own probe and semaphore, and each
// event and key names its file. trace: each file's events come from its
// own process ($pid) and are its calls (checkGuarded against that
// program's record), both semaphores 0 after. hist keyed by $pid: each
// file's table holds its own process alone.
func TestUSDTFilePattern(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "sdt", "-O2", "-g")
	copies := func() (string, []*untilProgram) {
		dir := t.TempDir()
		var progs []*untilProgram
		for _, n := range []string{"sdt-a", "sdt-b"} {
			copyFile(t, bin, filepath.Join(dir, n))
			progs = append(progs, startUntil(t, filepath.Join(dir, n)))
		}
		return filepath.Join(dir, "sdt-*"), progs
	}
	// hist on copies of their own: trace's see one stretch of probing.
	pattern, progs := copies()
	code, out, errs := runGoprobe("hist", "--json", "--duration", "1s", "--key", "$pid", "-x", pattern, "usdt:demo:work")
	if code != 0 {
		t.Fatalf("hist: exit %d: %s", code, errs)
	}
	var h struct {
		Probes []struct {
			Probe string
			Keys  []struct{ Key, Count int }
		}
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, `{"probes"`):]), &h); err != nil {
		t.Fatalf("hist: %v: %s", err, out)
	}
	for _, p := range progs {
		want := fmt.Sprintf("%s:usdt:demo:work key=$pid [{%d", p.cmd.Path, p.cmd.Process.Pid)
		found := false
		for _, pr := range h.Probes {
			got := fmt.Sprintf("%s %v", pr.Probe, pr.Keys)
			found = found || strings.HasPrefix(got, want) && len(pr.Keys) == 1 && pr.Keys[0].Count > 0
		}
		if !found || len(h.Probes) != 2 {
			t.Errorf("hist: %+v; want for %s its process %d alone", h.Probes, p.cmd.Path, p.cmd.Process.Pid)
		}
	}
	pattern, progs = copies()
	code, out, errs = runGoprobe("trace", "--json", "--duration", "1s", "-x", pattern, "usdt:demo:work arg0 $pid")
	if code != 0 {
		t.Fatalf("trace: exit %d: %s", code, errs)
	}
	evs := jsonEvents(t, out)
	for _, p := range progs {
		es := evs[p.cmd.Path+":usdt:demo:work arg0 $pid"]
		t.Run(filepath.Base(p.cmd.Path), func(t *testing.T) {
			for _, e := range es {
				if fmt.Sprint(e["$pid"]) != fmt.Sprint(p.cmd.Process.Pid) {
					t.Fatalf("an event of %s from process %v, not %d", p.cmd.Path, e["$pid"], p.cmd.Process.Pid)
				}
			}
			checkGuarded(t, p.end(t), es)
		})
	}
	if len(evs) != 2 {
		t.Errorf("events of %v, want the two files'", keysOf(evs))
	}
}

// libstdcxx is the C++ runtime the thrower links, where its USDT probes
// are.
const libstdcxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

var thrown = regexp.MustCompile(`thrown (\d+) rethrown (\d+) caught (\d+)`)

// TestUSDTLibstdcxx: libstdc++'s throw, rethrow and catch probes count
// what a C++ program says it threw, rethrew and caught, with -x naming
// the library and, on a running process, found in its maps.
func TestUSDTLibstdcxx(t *testing.T) {
	needBPF(t)
	if _, err := os.Stat(libstdcxx); err != nil {
		testutil.Skipf(t, "no %s: %v", libstdcxx, err)
	}
	bin := filepath.Join(t.TempDir(), "thrower")
	src := filepath.Join(testutil.Root(t), "cmd", "goprobe", "testdata", "thrower.cc")
	if out, err := exec.Command("g++", "-O2", "-g", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	code, out, errs := runGoprobe("stat", "--json", "-x", libstdcxx, "usdt:libstdcxx:throw", "usdt:libstdcxx:rethrow", "usdt:libstdcxx:catch", "--", bin, "300")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m := thrown.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no record:\n%s", out)
	}
	var s struct{ Probes []struct{ Count int } }
	if err := json.Unmarshal([]byte(out[strings.Index(out, `{"probes"`):]), &s); err != nil || len(s.Probes) != 3 {
		t.Fatalf("%v\n%s", err, out)
	}
	got := fmt.Sprintf("thrown %d rethrown %d caught %d", s.Probes[0].Count, s.Probes[1].Count, s.Probes[2].Count)
	if got != m[0] || m[1] != "300" {
		t.Errorf("goprobe: %s; the program: %s", got, m[0])
	}

	// On a running process: the library is found among its mappings.
	c, r := startProgram(t, bin, "3000", "300")
	code, out, errs = runGoprobe("stat", "--json", "-n", "100", "-p", strconv.Itoa(c.Process.Pid), "usdt:libstdcxx:throw")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := statCountOf(t, out)[0]; n < 100 || n >= 3000 {
		t.Errorf("counted %d throws on the process", n)
	}
	if rest := endProgram(t, c, r); !strings.Contains(rest, "thrown 3000 rethrown 1000 caught 4000") {
		t.Errorf("the process did not end unharmed:\n%s", rest)
	}
}

// TestUSDTPython: python3.11's function__entry (a probe with a
// semaphore, file, function and line as arguments), counted per file in
// the kernel, equals the script's own sys.setprofile count of its 'call'
// events in the same run; its line argument is the def's line.
func TestUSDTPython(t *testing.T) {
	needBPF(t)
	const py = "/usr/bin/python3.11"
	if _, err := os.Stat(py); err != nil {
		testutil.Skipf(t, "no %s: %v", py, err)
	}
	script := filepath.Join(t.TempDir(), "calls.py")
	src := `import sys
calls = {}
def prof(frame, event, arg):
    if event == 'call' and frame.f_code.co_filename == __file__:
        k = frame.f_code.co_name
        calls[k] = calls.get(k, 0) + 1
def leaf(x):
    return x + 1
def twice(x):
    return leaf(x) + leaf(x * 2)
class Box:
    def __init__(self, v):
        self.v = v
sys.setprofile(prof)
for i in range(700):
    twice(i)
    if i % 7 == 0:
        Box(i)
sys.setprofile(None)
print("profiled", sorted(calls.items()))
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runGoprobe("hist", "--json", "--key", "arg0:string", "usdt:python:function__entry", "--", py, "-S", script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m := regexp.MustCompile(`profiled \[(.*)\]`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no record:\n%s", out)
	}
	want := 0
	for _, n := range regexp.MustCompile(`, (\d+)\)`).FindAllStringSubmatch(m[1], -1) {
		k, _ := strconv.Atoi(n[1])
		want += k
	}
	var h struct {
		Probes []struct {
			Keys []struct {
				Key   string
				Count int
			}
		}
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, `{"probes"`):]), &h); err != nil || len(h.Probes) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	got := -1
	for _, k := range h.Probes[0].Keys {
		if k.Key == script {
			got = k.Count
		}
	}
	// prof itself is not profiled, and the module's own code is no call:
	// 700 twice, 1400 leaf, 100 Box.__init__.
	if got != want || want != 2200 {
		t.Errorf("function__entry in %s: %d; sys.setprofile counted %d (%s)", script, got, want, m[1])
	}

	// The line argument: trace the first calls with file, function and line.
	code, out, errs = runGoprobe("trace", "--json", "-n", "400", "usdt:python:function__entry file=arg0:string fn=arg1:string line=arg2", "--", py, "-S", script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := map[string]string{}
	for _, e := range jsonEvents(t, out)["usdt:python:function__entry file=arg0:string fn=arg1:string line=arg2"] {
		if e["file"] == script {
			lines[fmt.Sprint(e["fn"])] = fmt.Sprint(e["line"])
		}
	}
	if fmt.Sprint(lines) != "map[__init__:12 leaf:7 twice:9]" {
		t.Errorf("functions and lines read: %v", lines)
	}
}

// TestUSDTGen: the artifacts gen writes for a USDT probe with a semaphore
// run in the peers' tools: perf's script (the event written to tracefs
// with the semaphore's ref_ctr_offset) counts every call of the guarded
// branch under perf stat, and bpftrace's script (its own usdt probe)
// prints the arguments the program passed.
func TestUSDTGen(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "sdt", "-O2", "-g")
	def := "usdt:demo:work arg0 arg1 arg2:string arg3"
	t.Run("perf", func(t *testing.T) {
		if _, err := exec.LookPath("perf"); err != nil {
			testutil.Skipf(t, "perf not installed: %v", err)
		}
		code, script, errs := runGoprobe("gen", "--format=perf", "-x", bin, def)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		sh := filepath.Join(t.TempDir(), "probe.sh")
		if err := os.WriteFile(sh, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("sh", sh, bin, "30").CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s\n%s", err, out, script)
		}
		m := regexp.MustCompile(`(\d+)\s+probe_goprobe:p0_usdt_0`).FindSubmatch(out)
		ran := len(enabledWork.FindAll(out, -1))
		if m == nil || string(m[1]) != "30" || ran != 30 {
			t.Errorf("perf counted %s, the guarded branch ran %d times, want 30 each\n%s", m, ran, out)
		}
	})
	t.Run("bpftrace", func(t *testing.T) {
		if _, err := exec.LookPath("bpftrace"); err != nil {
			testutil.Skipf(t, "bpftrace not installed: %v", err)
		}
		code, script, errs := runGoprobe("gen", "--format=bpftrace", "-x", bin, def)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		bt := filepath.Join(t.TempDir(), "probe.bt")
		if err := os.WriteFile(bt, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("bpftrace", bt, "-c", bin+" 30 2000").CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		// bpftrace may set the semaphore after the first calls: every
		// call the branch ran for is printed with the program's values.
		said := enabledWork.FindAllSubmatch(out, -1)
		printed := regexp.MustCompile(`demo:work usdt arg0=(-?\d+) arg1=(-?\d+) arg2="(\w+)" arg3=7`).FindAllSubmatch(out, -1)
		if len(said) < 20 || len(printed) != len(said) {
			t.Fatalf("the branch ran %d times, bpftrace printed %d\n%s", len(said), len(printed), out)
		}
		for i := range said {
			if string(said[i][1])+string(said[i][2])+string(said[i][3]) != string(printed[i][1])+string(printed[i][2])+string(printed[i][3]) {
				t.Errorf("call %d: bpftrace read %s, the program passed %s", i, printed[i][0], said[i][0])
			}
		}
	})
}

// TestUSDTSemaphoreEveryProcess: probes on a binary with neither -p nor a
// command see every process running it, and the kernel sets the
// semaphore in each: two running copies each pass checkGuarded against
// their own record, their events told apart by pid, and end with it 0.
func TestUSDTSemaphoreEveryProcess(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "sdt", "-O2", "-g")
	progs := []*untilProgram{startUntil(t, bin), startUntil(t, bin)}
	code, out, errs := runGoprobe("trace", "--json", "--duration", "1s", "-x", bin, "usdt:demo:work arg0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	byPid := map[int][]map[string]any{}
	for _, l := range strings.Split(out, "\n") {
		var e struct {
			Pid  int
			Args map[string]any
		}
		if strings.HasPrefix(l, `{"probe"`) && json.Unmarshal([]byte(l), &e) == nil {
			byPid[e.Pid] = append(byPid[e.Pid], e.Args)
		}
	}
	for i, p := range progs {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkGuarded(t, p.end(t), byPid[p.cmd.Process.Pid]) })
	}
	if len(byPid) != 2 {
		t.Errorf("events of %d processes, want the two", len(byPid))
	}
}

// copyFile copies the executable from to a new file to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// stretches spells sorted call numbers as their unbroken runs, "3-9 12-40".
func stretches(s []int) string {
	var out []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		out = append(out, fmt.Sprintf("%d-%d", s[i], s[j]))
		i = j + 1
	}
	return strings.Join(out, " ")
}
