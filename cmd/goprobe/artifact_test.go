package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// runAsSaid runs a generated bpftrace script the way its header's "Run:"
// line says (bpftrace [--unsafe] FILE -c CMD), unedited.
func runAsSaid(t *testing.T, script, cmd string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^// Run: (bpftrace[^.(]*)`).FindStringSubmatch(script)
	if m == nil {
		t.Fatalf("no Run: line in the header:\n%s", script)
	}
	file := filepath.Join(t.TempDir(), "probe.bt")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, f := range strings.Fields(m[1])[1:] {
		switch f {
		case "FILE":
			f = file
		case "CMD":
			f = cmd
		}
		args = append(args, f)
	}
	out, err := exec.Command("bpftrace", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("bpftrace %v: %v\n%s\n%s", args, err, out, script)
	}
	return string(out)
}

// runPerfScript runs a generated perf script as its header says: sh FILE
// CMD ARGS... adds the probes, counts them while CMD runs and removes them.
// It returns the output and each probe's count (the sum over its sites).
func runPerfScript(t *testing.T, script string, cmd ...string) (string, map[int]int) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "probes.sh")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", append([]string{file}, cmd...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("sh %s: %v\n%s\n%s", file, err, out, script)
	}
	n := map[int]int{}
	for _, m := range regexp.MustCompile(`(?m)^\s*([\d,]+)\s+probe_goprobe:p(\d+)_`).FindAllStringSubmatch(string(out), -1) {
		c, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		i, _ := strconv.Atoi(m[2])
		n[i] += c
	}
	return string(out), n
}

func needPerfTools(t *testing.T) {
	t.Helper()
	needBPF(t)
	for _, tool := range []string{"bpftrace", "perf"} {
		if _, err := exec.LookPath(tool); err != nil {
			testutil.Skipf(t, "%s not installed: %v", tool, err)
		}
	}
	if _, err := os.Stat("/sys/kernel/tracing/uprobe_events"); err != nil {
		if out, err := exec.Command("mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing").CombinedOutput(); err != nil {
			testutil.Skipf(t, "no tracefs: %v %s", err, out)
		}
	}
}

// bpftraceCounts reads @["DEF"]: N lines.
func bpftraceCounts(out string) map[string]int {
	n := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^@\[(.*)\]: (-?\d+)$`).FindAllStringSubmatch(out, -1) {
		n[m[1]], _ = strconv.Atoi(m[2])
	}
	return n
}

// TestArtifactsGoStackCheck: the bpftrace script and the perf commands
// generated for Go functions with the three shapes of stack check, run
// unedited on the installed bpftrace 0.17 and perf 6.1 against the binary
// itself (symbols, no stripped copy), count each call once, although deep
// recursion grows the stacks and restarts the functions through morestack.
func TestArtifactsGoStackCheck(t *testing.T) {
	needPerfTools(t)
	bin, _ := buildReenter(t)
	defs := []string{"main.big", "main.(*acc).add", "main.huge", "main.deep"}
	names := []string{"big", "add", "huge", "deep"}
	for _, run := range [][]string{{"grow", "8", "2000"}, {"loop", "100000"}} {
		t.Run(run[0], func(t *testing.T) {
			code, script, errs := runGoprobe(append([]string{"gen", "--format=bpftrace", "-x", bin}, defs...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if strings.Contains(script, "--unsafe") || !strings.Contains(script, `uprobe:`+bin+`:"main.big"`) {
				t.Errorf("want probes on symbols without --unsafe:\n%s", script)
			}
			out := runAsSaid(t, script, bin+" "+strings.Join(run, " "))
			want, got := said(t, out), bpftraceCounts(out)
			for i, d := range defs {
				if got[d] != want[names[i]] || (run[0] == "grow" && want[names[i]] == 0) {
					t.Errorf("bpftrace counted %d calls of %s; the program made %d", got[d], d, want[names[i]])
				}
			}

			code, perf, errs := runGoprobe(append([]string{"gen", "--format=perf", "-x", bin}, defs...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			out, n := runPerfScript(t, perf, append([]string{bin}, run...)...)
			want = said(t, out)
			for i, d := range defs {
				if n[i] != want[names[i]] {
					t.Errorf("perf counted %d calls of %s; the program made %d\n%s", n[i], d, want[names[i]], out)
				}
			}
		})
	}
}

// TestArtifactsGoReturn: a Go function's %return sites are RET
// instructions inside it: perf takes their file offsets in the binary
// itself; bpftrace 0.17 only in a stripped copy (the header says --unsafe),
// and for the binary with symbols gen says so in one line.
func TestArtifactsGoReturn(t *testing.T) {
	needPerfTools(t)
	bin, _ := buildReenter(t)
	code, _, errs := runGoprobe("gen", "--format=bpftrace", "-x", bin, "main.big%return")
	if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "--target") {
		t.Errorf("gen for a Go RET in a binary with symbols: exit %d, %q; want one line naming --target", code, errs)
	}
	stripped := bin + ".stripped"
	if out, err := exec.Command("strip", "-o", stripped, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v %s", err, out)
	}
	code, script, errs := runGoprobe("gen", "--format=bpftrace", "-x", bin, "--target", stripped, "main.big%return", "main.big")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	out := runAsSaid(t, script, stripped+" grow 8 2000")
	want, got := said(t, out)["big"], bpftraceCounts(out)
	if got["main.big%return"] != want || got["main.big"] != want || want == 0 {
		t.Errorf("bpftrace counted %v; the program made %d calls of big\n%s", got, want, script)
	}

	code, perf, errs := runGoprobe("gen", "--format=perf", "-x", bin, "main.big%return")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	out, n := runPerfScript(t, perf, bin, "grow", "8", "2000")
	if want := said(t, out)["big"]; n[0] != want {
		t.Errorf("perf counted %d returns of big; the program made %d calls\n%s", n[0], want, out)
	}
}

// TestArtifactsLibc: probes on a libc function and its %return, run
// unedited, count exactly the calls a program says it made, although
// every process on the machine maps libc: the bpftrace script counts only
// its command's (pid == cpid), perf stat only the command's.
func TestArtifactsLibc(t *testing.T) {
	needPerfTools(t)
	libc := testutil.RealBinary(t, "libc")
	prog := filepath.Join(t.TempDir(), "libccalls")
	if out, err := exec.Command("gcc", "-O2", "-o", prog, filepath.Join("testdata", "libccalls.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	defs := []string{"getppid", "getppid%return $retval"}
	code, script, errs := runGoprobe(append([]string{"gen", "--format=bpftrace", "-x", libc}, defs...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(script, "uretprobe:") || !strings.Contains(script, "pid == cpid") {
		t.Errorf("want a uretprobe and the command's calls only:\n%s", script)
	}
	out := runAsSaid(t, script, prog+" 1000")
	if n := bpftraceCounts(out)["getppid"]; n != 1000 {
		t.Errorf("bpftrace counted %d calls of getppid; the program made 1000\n%s", n, out)
	}
	if n := len(regexp.MustCompile(`(?m)return \$retval=\d+$`).FindAllString(out, -1)); n != 1000 {
		t.Errorf("bpftrace printed %d returns of getppid; the program made 1000 calls", n)
	}

	code, perf, errs := runGoprobe(append([]string{"gen", "--format=perf", "-x", libc}, defs...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	out, n := runPerfScript(t, perf, prog, "1000")
	if n[0] != 1000 || n[1] != 1000 || !strings.Contains(out, "getppid calls: 1000") {
		t.Errorf("perf counted %v; the program made 1000 calls\n%s", n, out)
	}
}

// TestArtifactsPerfStringArgs: a C string argument, as a parameter and as
// a struct member's pointer, is written for perf probe as the text at its
// pointer (+0(...):string; the kernel refuses :string on a register, and
// on a member it would read the pointer's own bytes): perf takes the
// probes, and perf stat counts every call the program's record holds.
func TestArtifactsPerfStringArgs(t *testing.T) {
	needPerfTools(t)
	bin := buildC(t, "who", "-O2", "-g", "-pthread")
	code, script, errs := runGoprobe("gen", "--format=perf", "-x", bin, "hit tag it->name x")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !regexp.MustCompile(`tag=\+0\(%[a-z0-9]+\):string`).MatchString(script) {
		t.Errorf("the C string parameter is not read through its pointer:\n%s", script)
	}
	const n = 7
	out, got := runPerfScript(t, script, bin, strconv.Itoa(n))
	if rec := whoSaid(t, out, n); got[0] != len(rec.calls) || len(rec.calls) != 3*n {
		t.Errorf("perf counted %d; the program's record holds %d calls (want %d)\n%s", got[0], len(rec.calls), 3*n, out)
	}
}
