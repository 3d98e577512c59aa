package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// firstTestJumpsToSecond reports whether objdump's disassembly of sym in
// bin has two tests, the conditional jump right after the first going to
// the second: an early return straight into the next call.
func firstTestJumpsToSecond(t *testing.T, bin, sym string) bool {
	t.Helper()
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", "--disassemble="+sym, bin).Output()
	if err != nil {
		testutil.Skipf(t, "objdump: %v", err)
	}
	insn := regexp.MustCompile(`(?m)^\s+([0-9a-f]+):\t(\S+)\s*(\S*)`)
	var tests []string
	jumpTo := ""
	prev := ""
	for _, m := range insn.FindAllStringSubmatch(string(out), -1) {
		switch {
		case m[2] == "test":
			tests = append(tests, m[1])
		case prev == "test" && len(tests) == 1 && strings.HasPrefix(m[2], "j"):
			jumpTo = m[3]
		}
		prev = m[2]
	}
	return len(tests) == 2 && jumpTo == tests[1]
}

// TestNullGuardUnrolled: bump's `if (!p) return;` inlined twice by an
// unrolled loop, the first copy's test jumping straight to the second
// copy's test when p is NULL (objdump shows it): that call does nothing
// but test, and is a call. goprobe stat and trace count every call, as
// the program counts them, not only those that get past the test.
func TestNullGuardUnrolled(t *testing.T) {
	needBPF(t)
	src := filepath.Join(testutil.Root(t), "cmd", "goprobe", "testdata", "nullguard.c")
	bin := buildWith(t, t.TempDir(), "gcc", "-O3", "-g", "-o", "BIN", src)
	if !firstTestJumpsToSecond(t, bin, "pair") {
		t.Fatalf("gcc -O3 did not make pair's first test jump to the second")
	}
	want, got := statVsProgram(t, "bump", bin, "12")
	if want != 24 || got != want {
		t.Errorf("program: %d calls of bump (want 24), goprobe stat %d", want, got)
	}
	events, _ := traced(t, "bump p", "--", bin, "12")
	if len(events) != want {
		t.Errorf("goprobe trace: %d events for %d calls", len(events), want)
	}
}
