package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// oneLine checks that a message is one line starting with goprobe: and
// holding every wanted phrase, and none of the unwanted ones.
func oneLine(t *testing.T, what, msg string, want []string, unwanted ...string) {
	t.Helper()
	if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "goprobe: ") {
		t.Errorf("%s: not one line: %q", what, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: %q does not say %q", what, msg, w)
		}
	}
	for _, u := range unwanted {
		if strings.Contains(msg, u) {
			t.Errorf("%s: %q says %q", what, msg, u)
		}
	}
}

// TestMessageNoProcess: -p with a process that does not exist says so,
// not the /proc path that failed.
func TestMessageNoProcess(t *testing.T) {
	for _, args := range [][]string{{"stat", "-p", "999999", "malloc"}, {"trace", "--stack", "-p", "999999", "malloc"}, {"profile", "-p", "999999"}} {
		code, _, errs := runGoprobe(args...)
		if code != 1 {
			t.Errorf("%v: exit %d", args, code)
		}
		oneLine(t, strings.Join(args, " "), errs, []string{"process 999999 does not exist", "running process"}, "readlink", "/proc/")
	}
}

// TestMessagePermission: goprobe run as user nobody without capabilities
// says what it needs (root, or CAP_BPF with CAP_PERFMON) and the kernel
// settings that decide it, not the BPF library's hint.
func TestMessagePermission(t *testing.T) {
	needBPF(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testutil.Skipf(t, "setpriv not installed: %v", err)
	}
	dir, err := os.MkdirTemp("", "goprobe-perm")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "goprobe")
	build := exec.Command("go", "build", "-o", bin, "./cmd/goprobe")
	build.Dir = testutil.Root(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	libc := cLibrary(t)
	for _, args := range [][]string{{"stat", "-x", libc, "malloc", "--", "/bin/true"}, {"stat", "--stacks", "-x", libc, "malloc", "--", "/bin/true"}, {"profile", "--", "/bin/true"}} {
		cmd := exec.Command(setpriv, append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", bin}, args...)...)
		var errb strings.Builder
		cmd.Stderr = &errb
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Errorf("%v as nobody: %v, want exit status 1", args, err)
		}
		oneLine(t, strings.Join(args, " "), errb.String(),
			[]string{"run as root", "CAP_BPF", "CAP_PERFMON", "kernel.unprivileged_bpf_disabled=", "kernel.perf_event_paranoid=", "has neither"},
			"rlimit", "RemoveMemlock", "MEMLOCK")
	}
}

// TestIFunc: strlen in the C library is an indirect function; a probe on
// it lands on the implementation this CPU runs (the resolver's pick, read
// from the C library's relocated slot), counting the calls, and says so.
func TestIFunc(t *testing.T) {
	needBPF(t)
	libc := cLibrary(t)
	code, out, errs := runGoprobe("stat", "-x", libc, "strlen", "--", "sh", "-c", "ls -la / >/dev/null")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	first := strings.SplitAfter(errs, "\n")[0]
	oneLine(t, "strlen", first, []string{"strlen in libc.so.6 is an indirect function (IFUNC)", "on this CPU it runs __strlen_"})
	impl := strings.Fields(first[strings.Index(first, "runs ")+5:])[0]
	impl = strings.TrimSuffix(impl, ":")
	var n int
	for _, l := range strings.Split(out, "\n") {
		if fs := strings.Fields(l); len(fs) == 4 && fs[0] == impl && fs[1] != "0" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("no calls of %s counted:\n%s", impl, out)
	}
}
