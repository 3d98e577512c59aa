package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/runner"
)

// TestLibraryBySoname: -x names a library as the program links it, by
// soname (libc.so.6) or its stem (libc), found through the loader's cache:
// getppid counted equals the program's own count of its calls. With -p the
// library is the one the process maps: ldd's path for it.
func TestLibraryBySoname(t *testing.T) {
	needBPF(t)
	prog := filepath.Join(t.TempDir(), "libccalls")
	if out, err := exec.Command("gcc", "-O2", "-o", prog, filepath.Join("testdata", "libccalls.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, name := range []string{"libc.so.6", "libc"} {
		code, out, errs := runGoprobe("stat", "--json", "-x", name, "getppid", "--", prog, "300")
		if code != 0 {
			t.Fatalf("-x %s: exit %d: %s", name, code, errs)
		}
		if !strings.Contains(out, "getppid calls: 300") || !regexp.MustCompile(`"count":300\b`).MatchString(out) {
			t.Errorf("-x %s: want 300 getppid counted, as the program says:\n%s\n%s", name, out, errs)
		}
	}
	if code, _, errs := runGoprobe("stat", "-x", "libnosuch.so.9", "getppid", "--", prog, "1"); code == 0 || !strings.Contains(errs, "libnosuch.so.9: no such file, and no library of that name") {
		t.Errorf("-x libnosuch.so.9: exit %d, %q", code, errs)
	}
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleep.Process.Kill()
	out, err := exec.Command("ldd", sleep.Path).Output()
	if err != nil {
		testutil.Skipf(t, "ldd: %v", err)
	}
	m := regexp.MustCompile(`libc\.so\.6 => (\S+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("ldd %s names no libc.so.6:\n%s", sleep.Path, out)
	}
	want, _ := filepath.EvalSymlinks(string(m[1]))
	var got string
	for i := 0; i < 100; i++ { // until the loader has mapped libc
		if got, err = runner.FindExe("libc.so.6", sleep.Process.Pid); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := filepath.EvalSymlinks(got); r != want {
		t.Errorf("-p %d -x libc.so.6: %s, ldd says %s", sleep.Process.Pid, got, want)
	}
}
