package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/binscope/binscope/internal/testutil"
)

// startAttached runs the goprobe binary bin with args and returns once
// its probes are attached; finish (with interrupt, after a SIGINT) waits
// for it to end and returns its standard output and error.
func startAttached(t *testing.T, bin string, args ...string) (finish func(interrupt bool) (stdout, stderr string)) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errs strings.Builder
	var mu sync.Mutex
	pr, pw := io.Pipe()
	cmd.Stdout = &out
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	attached, done := make(chan bool, 1), make(chan bool)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			mu.Lock()
			errs.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if strings.Contains(sc.Text(), "attached") {
				select {
				case attached <- true:
				default:
				}
			}
		}
	}()
	finish = func(interrupt bool) (string, string) {
		if interrupt {
			cmd.Process.Signal(syscall.SIGINT)
		}
		cmd.Wait()
		pw.Close()
		<-done
		return out.String(), errs.String()
	}
	select {
	case <-attached:
	case <-done:
		_, e := finish(false)
		t.Fatalf("goprobe %v ended before attaching:\n%s", args, e)
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		_, e := finish(false)
		t.Fatalf("goprobe %v: nothing attached after 3 minutes:\n%s", args, e)
	}
	return finish
}

// waiter is a C program that waits for a file to exist (polling with
// nanosleep), then calls work through outer n times, each call followed
// by a call of the C library's usleep, and prints how many calls it made.
const waiter = `#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned long sink;
__attribute__((noinline)) void work(int i) { for (int k = 0; k < 2000; k++) sink += k ^ i; }
__attribute__((noinline)) void outer(int n, int *calls) { for (int i = 0; i < n; i++) { work(i); usleep(0); (*calls)++; } }
int main(int argc, char **argv) {
	int n = atoi(argv[1]), calls = 0;
	struct timespec ts = {0, 5000000};
	while (access(argv[2], F_OK) != 0) nanosleep(&ts, 0);
	outer(n, &calls);
	printf("calls work %d\n", calls);
	return 0;
}
`

// buildWaiter compiles waiter into dir.
func buildWaiter(t *testing.T, dir string) string {
	t.Helper()
	src, bin := filepath.Join(dir, "waiter.c"), filepath.Join(dir, "waiter")
	if err := os.WriteFile(src, []byte(waiter), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O2", "-g", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// namedStack checks that stat --stacks counted want calls of work, all on
// stacks named work <- outer <- main.
func namedStack(t *testing.T, out string, want int) {
	t.Helper()
	if !regexp.MustCompile(`(?m)^work: ` + strconv.Itoa(want) + ` hits`).MatchString(out) {
		t.Errorf("want %d hits of work; goprobe said:\n%s", want, out)
	}
	named := 0 // a stack per process: their libraries lie at other addresses
	for _, m := range regexp.MustCompile(`(?m)^\s+(\d+)\s+work\n\s+outer\n\s+main\n`).FindAllStringSubmatch(out, -1) {
		k, _ := strconv.Atoi(m[1])
		named += k
	}
	if named != want {
		t.Errorf("want all %d on the stack work <- outer <- main; goprobe said:\n%s", want, out)
	}
	if strings.Contains(out, "without an unwind table") {
		t.Errorf("stacks cut short:\n%s", out)
	}
}

// TestContainerPID: a process in its own mount and pid namespaces,
// running a program from a tmpfs mounted only there (the path does not
// exist where goprobe runs), probed by -p: the calls it counts itself,
// on named stacks.
func TestContainerPID(t *testing.T) {
	needBPF(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("unshare (util-linux): %v", err)
	}
	tmp := t.TempDir()
	start := filepath.Join(tmp, "start")
	const n = 300
	ns, nsOut, pid := startContained(t, buildWaiter(t, tmp), strconv.Itoa(n), start)
	gp := buildGoprobe(t, tmp)
	finish := startAttached(t, gp, "stat", "--stacks", "-p", strconv.Itoa(pid), "work")
	// The C library the process maps, opened through its root.
	finishLib := startAttached(t, gp, "stat", "-p", strconv.Itoa(pid), "usleep")
	os.WriteFile(start, nil, 0o644)
	out, errs := finish(false)
	libOut, libErrs := finishLib(false)
	ns.Wait()
	m := regexp.MustCompile(`calls work (\d+)`).FindStringSubmatch(nsOut.String())
	if m == nil || m[1] != strconv.Itoa(n) {
		t.Fatalf("the program said %q", nsOut.String())
	}
	namedStack(t, out+errs, n)
	if !regexp.MustCompile(`(?m)^usleep\s+` + strconv.Itoa(n) + `\s`).MatchString(libOut) {
		t.Errorf("want %d calls of usleep; goprobe said:\n%s%s", n, libOut, libErrs)
	}
}

// startContained runs a copy of app with args in its own mount and pid
// namespaces (unshare -m -p -f), from a tmpfs mounted only there: the
// path does not exist where goprobe runs. It returns the unshare command,
// its output so far and the pid of the program, which the test's end
// kills.
func startContained(t *testing.T, app string, args ...string) (ns *exec.Cmd, out *strings.Builder, pid int) {
	t.Helper()
	mnt := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(mnt, 0o755)
	inside := filepath.Join(mnt, filepath.Base(app))
	script := "mount -t tmpfs none " + mnt + " && cp " + app + " " + inside + " && exec " + inside + " " + strings.Join(args, " ")
	ns = exec.Command("unshare", "-m", "-p", "-f", "--mount-proc", "sh", "-c", script)
	out = &strings.Builder{}
	ns.Stdout, ns.Stderr = out, out
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Process.Kill() })
	for deadline := time.Now().Add(30 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		pid = pidRunning(inside)
	}
	if pid == 0 {
		t.Fatalf("no process runs %s: %s", inside, out.String())
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) }) // killing unshare leaves it waiting
	if _, err := os.Stat(inside); err == nil {
		t.Fatalf("%s exists outside the process's mount namespace", inside)
	}
	return ns, out, pid
}

// pidRunning is the process whose command line starts with path.
func pidRunning(path string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.HasPrefix(string(b), path+"\x00") {
			return pid
		}
	}
	return 0
}

// TestExeStartedElsewhere: with -x and no command, processes of the
// binary that goprobe did not start, and that start after it attached,
// unwind with their tables: each call on a named stack.
func TestExeStartedElsewhere(t *testing.T) {
	needBPF(t)
	tmp := t.TempDir()
	app, start := buildWaiter(t, tmp), filepath.Join(tmp, "start")
	finish := startAttached(t, buildGoprobe(t, tmp), "stat", "--stacks", "-x", app, "work")
	var procs []*exec.Cmd
	var outs []*strings.Builder
	for i := 1; i <= 3; i++ {
		c := exec.Command(app, strconv.Itoa(100*i), start)
		var b strings.Builder
		c.Stdout = &b
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		procs, outs = append(procs, c), append(outs, &b)
	}
	time.Sleep(300 * time.Millisecond) // found by the 20 ms scan
	os.WriteFile(start, nil, 0o644)
	total := 0
	for i, c := range procs {
		c.Wait()
		m := regexp.MustCompile(`calls work (\d+)`).FindStringSubmatch(outs[i].String())
		if m == nil {
			t.Fatalf("process %d said %q", i, outs[i].String())
		}
		k, _ := strconv.Atoi(m[1])
		total += k
	}
	time.Sleep(100 * time.Millisecond)
	out, errs := finish(true)
	namedStack(t, out+errs, total)
}

// TestContainerProfile: a Go program built with -s -w (only .gopclntab
// names its functions), run from a tmpfs mounted only in its own mount
// namespace and as pid 1 of its own pid namespace, profiled by -p: the
// samples name its stack main.main <- main.outer <- main.inner, as the
// program's own code nests them.
func TestContainerProfile(t *testing.T) {
	needBPF(t)
	tmp := t.TempDir()
	app := filepath.Join(tmp, "cpu")
	build := exec.Command("go", "build", "-ldflags=-s -w", "-o", app, ".")
	build.Dir = filepath.Join(testutil.Root(t), "probe", "testdata", "profile", "go")
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ns, nsOut, pid := startContained(t, app, "4")
	folded := filepath.Join(tmp, "folded")
	code, _, errs := runGoprobe("profile", "-F", "499", "-p", strconv.Itoa(pid), "--folded", folded, "--top", "0")
	ns.Wait()
	if code != 0 {
		t.Fatalf("goprobe profile: exit %d: %s", code, errs)
	}
	if !strings.Contains(nsOut.String(), "calls") {
		t.Fatalf("the program said %q", nsOut.String())
	}
	stacks, counts := readFolded(t, folded)
	var total, named uint64
	for i, s := range stacks {
		total += counts[i]
		if len(s) >= 3 && strings.Join(s[len(s)-3:], ";") == "main.main;main.outer;main.inner" {
			named += counts[i]
		}
	}
	// 4 s of CPU time at 499 Hz, less the time goprobe takes to attach.
	if total < 300 || named*100 < total*80 {
		t.Errorf("%d of %d samples on main.main <- main.outer <- main.inner (want 80%% of at least 300): %s", named, total, errs)
	}
}
