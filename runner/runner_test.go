package runner

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binscope/binscope/bpfprog"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/stack"
)

// shellPid is the pid a shell printed first ("echo $$"): the command's
// own record of which process it is.
func shellPid(t *testing.T, out string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^(\d+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the shell printed no pid:\n%s", out)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// TestReattachOnReplacement: a probed file replaced on disk while the
// command runs is resolved again and attached again, the new attachment
// at the new build's address of the function and named the command's
// process (already running) as its root; the events of both attachments
// are printed, and both are closed at the end.
func TestReattachOnReplacement(t *testing.T) {
	dir := t.TempDir()
	prog := buildC(t, dir, "prog", workC(""))
	next := buildC(t, dir, "next", workC(padC))
	oldAddr, newAddr := symbolAddr(t, prog, "work"), symbolAddr(t, next, "work")
	if oldAddr == newAddr {
		t.Fatalf("work is at %#x in both builds: the test cannot tell them apart", oldAddr)
	}
	k := &fakeKernel{events: [][]*spec.Event{
		{{Pid: 1, Tid: 1}, {Pid: 1, Tid: 2}},
		{{Pid: 2, Tid: 1}, {Pid: 2, Tid: 2}, {Pid: 2, Tid: 3}},
	}}
	go func() {
		time.Sleep(400 * time.Millisecond)
		if err := os.Rename(next, prog); err != nil {
			t.Error(err)
		}
	}()
	var stdout, stderr bytes.Buffer
	// A command other than the probed file: the probes see only it and
	// its descendants, named at its exec.
	o := &TraceOptions{Options: Options{Exe: prog, Defs: []string{"work"}, Kernel: k,
		Run: []string{"sh", "-c", "echo $$; sleep 1.5"}, Stdout: &stdout, Stderr: &stderr}}
	status, err := Trace(o)
	if err != nil || status != 0 {
		t.Fatalf("status %d, %v\n%s", status, err, stderr.String())
	}
	as := k.attachments()
	if len(as) != 2 {
		t.Fatalf("%d attachments, want 2 (the file was replaced once)\n%s", len(as), stderr.String())
	}
	if got := entrySites(k.specs[0]); !slices.Equal(got, []uint64{oldAddr}) {
		t.Errorf("first attachment's sites %#x, want work at %#x", got, oldAddr)
	}
	if got := entrySites(k.specs[1]); !slices.Equal(got, []uint64{newAddr}) {
		t.Errorf("after the replacement, sites %#x, want the new build's work at %#x", got, newAddr)
	}
	if !strings.Contains(stderr.String(), prog+" was replaced on disk: probes re-attached to the new file") {
		t.Errorf("no note of the re-attachment:\n%s", stderr.String())
	}
	pid := shellPid(t, stdout.String())
	for i, a := range as {
		roots, _, closed := a.seen()
		if !slices.Equal(roots, []int{pid}) || !closed || !k.opts[i].Descendants {
			t.Errorf("attachment %d: roots %v (the command is %d), closed %v, descendants only %v", i, roots, pid, closed, k.opts[i].Descendants)
		}
	}
	lines := regexp.MustCompile(`(?m)^\d+/\d+ work site=entry$`).FindAllString(stdout.String(), -1)
	if want := "1/1 1/2 2/1 2/2 2/3"; len(lines) != 5 || !strings.Contains(stdout.String(), "2/3 work") {
		t.Errorf("events %q, want %s\n%s", lines, want, stdout.String())
	}
}

// TestDescendantsUnwound: with stacks, the command's process is the root
// of every attachment and the unwinder gets its mappings at its exec and
// after, and those of each descendant the programs found; each event
// prints its frames innermost first.
func TestDescendantsUnwound(t *testing.T) {
	dir := t.TempDir()
	prog := buildC(t, dir, "prog", workC(""))
	const child = 424242
	k := &fakeKernel{descendants: []int{child}, events: [][]*spec.Event{{{Pid: 7, Tid: 7, Stack: []uint64{1, 2}}}}}
	var stdout, stderr bytes.Buffer
	o := &TraceOptions{Stack: true, Options: Options{Exe: prog, Defs: []string{"work"}, Kernel: k,
		Run: []string{"sh", "-c", "echo $$; sleep 0.3"}, Stdout: &stdout, Stderr: &stderr}}
	if status, err := Trace(o); err != nil || status != 0 {
		t.Fatalf("status %d, %v\n%s", status, err, stderr.String())
	}
	pid := shellPid(t, stdout.String())
	roots, added, _ := k.attachments()[0].seen()
	if !slices.Equal(roots, []int{pid}) || !slices.Contains(added, pid) || !slices.Contains(added, child) {
		t.Errorf("roots %v, processes given to the unwinder %v: want root %d, and %d and its descendant %d", roots, added, pid, pid, child)
	}
	if k.opts[0].Stacks != bpfprog.EventStacks || k.opts[0].Tables == nil {
		t.Errorf("attached with stacks %v, tables %v", k.opts[0].Stacks, k.opts[0].Tables)
	}
	if want := "7/7 work site=entry\n\tfnC [prog]\n\tfnB [prog]\n"; !strings.Contains(stdout.String(), want) {
		t.Errorf("want the event with its frames innermost first %q in\n%s", want, stdout.String())
	}
}

// TestExitStatus: a run ends with the command's status: its exit code,
// 128 plus the signal that killed it, or the status of a command whose
// loader failed under the gate; stat prints each probe's hits, summed.
func TestExitStatus(t *testing.T) {
	dir := t.TempDir()
	prog := buildC(t, dir, "prog", workC(""))
	for _, tc := range []struct {
		script string
		ended  int
		want   int
	}{
		{"exit 7", 0, 7},
		{"kill -TERM $$", 0, 128 + 15},
		{"exit 0", 127, 127},
		{"true", 0, 0},
	} {
		k := &fakeKernel{ended: tc.ended, hits: []uint64{5}}
		var stdout, stderr bytes.Buffer
		o := &TraceOptions{Stat: true, Options: Options{Exe: prog, Defs: []string{"work"}, Kernel: k,
			Run: []string{"sh", "-c", tc.script}, Stdout: &stdout, Stderr: &stderr}}
		status, err := Trace(o)
		if err != nil || status != tc.want {
			t.Errorf("%q (loader status %d): status %d, %v; want %d", tc.script, tc.ended, status, err, tc.want)
			continue
		}
		rows := map[string][]string{}
		for _, l := range strings.Split(stdout.String(), "\n") {
			if fs := strings.Fields(l); len(fs) == 4 {
				rows[fs[0]] = fs
			}
		}
		if r := rows["work"]; rows["PROBE"] == nil || r == nil || r[1] != "5" || r[2] != "1" {
			t.Errorf("%q: stat table %q", tc.script, stdout.String())
		}
	}
}

// TestTargets: the file probed is -x, else the command's binary, else the
// process's executable; nothing named is a usage error, a process that
// is gone one line that says so.
func TestTargets(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	shAbs, _ := filepath.Abs(sh)
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Exe: "/x/prog", Run: []string{"sh"}, PID: os.Getpid()}, "/x/prog"},
		{Options{Run: []string{"sh", "-c", "true"}, PID: os.Getpid()}, shAbs},
		{Options{PID: os.Getpid()}, self},
	} {
		if got, err := tc.o.probeTarget(); err != nil || got != tc.want {
			t.Errorf("%+v: %q, %v; want %q", tc.o, got, err, tc.want)
		}
	}
	if _, err := (&Options{}).probeTarget(); !usage.Is(err) {
		t.Errorf("nothing named: %v, want a usage error", err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Options{PID: gone.Process.Pid}).probeTarget(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("process %d does not exist", gone.Process.Pid)) {
		t.Errorf("a process that is gone: %v", err)
	}
	// With a command, probes see only it and its descendants, whatever
	// file they are on; without one, every process.
	if !onlyCommand([]string{"sh"}) || onlyCommand(nil) {
		t.Errorf("onlyCommand: with a command %v, without %v", onlyCommand([]string{"sh"}), onlyCommand(nil))
	}
}

// TestLibrarySearch: with -p and a function the process's executable does
// not define (malloc in sleep), the probes go to the first library the
// process maps that defines it: the C library, as /proc/PID/maps and its
// dynamic symbols say.
func TestLibrarySearch(t *testing.T) {
	sleep := exec.Command("sleep", "5")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	time.Sleep(100 * time.Millisecond) // exec'd, libraries mapped
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", sleep.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if defines(t, exe, "malloc") {
		t.Skipf("%s defines malloc itself", exe)
	}
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", sleep.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	var libc string
	for _, l := range strings.Split(string(maps), "\n") {
		if fs := strings.Fields(l); len(fs) == 6 && strings.Contains(filepath.Base(fs[5]), "libc.so") && defines(t, fs[5], "malloc") {
			libc, _ = filepath.EvalSymlinks(fs[5])
			break
		}
	}
	if libc == "" {
		t.Skipf("sleep maps no C library that defines malloc:\n%s", maps)
	}
	var stderr bytes.Buffer
	o := &Options{PID: sleep.Process.Pid, Defs: []string{"malloc"}, Kernel: &fakeKernel{}, Stderr: &stderr}
	target, spec, err := o.targetSpec()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if target != libc || len(spec.Probes) != 1 || len(spec.Probes[0].Sites) == 0 {
		t.Errorf("probes %v in %s, want malloc in %s", spec.Probes, target, libc)
	}
}

// defines reports whether the ELF file at path defines the function name
// in its dynamic symbol table.
func defines(t *testing.T, path, name string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	syms, _ := f.DynamicSymbols()
	for _, s := range syms {
		if s.Name == name && s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return true
		}
	}
	return false
}

// TestProfileFollowsCommand: a profile of a command names the command's
// process to the sampler (its descendants, its mappings) as it starts,
// writes the stacks the sampler counted, and ends with the command's
// status.
func TestProfileFollowsCommand(t *testing.T) {
	p := &fakeProfiler{stacks: []stack.Stack{
		{Frames: []stack.Frame{{Name: "main"}, {Name: "work"}}, Count: 3},
		{Frames: []stack.Frame{{Name: "main"}}, Count: 2},
	}}
	k := &fakeKernel{profile: p}
	folded := filepath.Join(t.TempDir(), "out.folded")
	var stdout, stderr bytes.Buffer
	status, err := Profile(&ProfileOptions{Hz: 49, Run: []string{"sh", "-c", "exit 5"}, Folded: folded, Color: "lang",
		Kernel: k, Stdout: &stdout, Stderr: &stderr})
	if err != nil || status != 5 {
		t.Fatalf("status %d, %v; want 5 (%s)", status, err, stderr.String())
	}
	if len(k.started) != 1 || len(p.roots) != 1 || p.roots[0] != k.started[0] || !slices.Contains(p.added, k.started[0]) {
		t.Errorf("started %v; the sampler's root %v, processes %v", k.started, p.roots, p.added)
	}
	if len(k.profileOpts) != 1 || k.profileOpts[0].Hz != 49 || k.profileOpts[0].Descendants == nil || k.profileOpts[0].All {
		t.Errorf("profile options %+v: want 49 Hz, the command's descendants", k.profileOpts)
	}
	if !p.stopped || !p.closed {
		t.Errorf("sampler stopped %v, closed %v", p.stopped, p.closed)
	}
	b, err := os.ReadFile(folded)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != "main 2\nmain;work 3\n" {
		t.Errorf("folded: %q", got)
	}
}
