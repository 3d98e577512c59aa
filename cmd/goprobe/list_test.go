package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// listed runs goprobe list with args and returns its lines.
func listed(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, errs := runGoprobe(append([]string{"list"}, args...)...)
	if code != 0 {
		t.Fatalf("goprobe list %v: exit %d: %s", args, code, errs)
	}
	return strings.Split(strings.TrimSpace(out), "\n")
}

// TestListFunctions: every function symbol nm gives is listed, and each
// function's inline count is the number of DW_TAG_inlined_subroutine
// entries llvm-dwarfdump shows for it, its clones the symbols GCC made
// of it (maybe_alloc.part.0); the source file is listed.
func TestListFunctions(t *testing.T) {
	bin := buildCount(t, "c")
	lines := listed(t, bin)
	have := map[string]string{}
	files := 0
	for _, l := range lines {
		if name, ok := strings.CutPrefix(l, "func "); ok {
			n, counts, _ := strings.Cut(name, " (")
			have[n] = counts
		}
		if strings.HasPrefix(l, "file ") && strings.HasSuffix(l, "/part.c") {
			files++
		}
	}
	nm, err := exec.Command("nm", "--defined-only", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	clones := map[string]int{}
	syms := 0
	for _, m := range regexp.MustCompile(`(?m) [Tt] (\S+)$`).FindAllStringSubmatch(string(nm), -1) {
		base, suffix, cloned := strings.Cut(m[1], ".")
		if cloned && suffix != "" {
			clones[base]++
		}
		if _, ok := have[base]; !ok {
			t.Errorf("nm's %s is not listed", m[1])
		}
		syms++
	}
	dd := llvmDwarfdump(t, "--debug-info", bin)
	inlined := map[string]int{}
	for _, m := range regexp.MustCompile(`DW_TAG_inlined_subroutine\s+DW_AT_abstract_origin\s+\(0x[0-9a-f]+ "([^"]+)"\)`).FindAllStringSubmatch(dd, -1) {
		inlined[m[1]]++
	}
	if syms < 8 || inlined["maybe_alloc"] != 3 || clones["maybe_alloc"] != 1 || files != 1 {
		t.Fatalf("%d symbols, %v inlined, %v clones, %d source files: not the fixture's shape\n%s", syms, inlined, clones, files, strings.Join(lines, "\n"))
	}
	for name, n := range inlined {
		if !strings.Contains(have[name], strconv.Itoa(n)+" inline") {
			t.Errorf("%s: listed (%s); llvm-dwarfdump has %d inline expansions", name, have[name], n)
		}
	}
	for name, n := range clones {
		if !strings.Contains(have[name], strconv.Itoa(n)+" clone") {
			t.Errorf("%s: listed (%s); nm has %d clones", name, have[name], n)
		}
	}
	// A pattern: shell wildcards, or a part of the name.
	if got := strings.Join(listed(t, bin, "*ir*"), ","); got != "func first,func third" {
		t.Errorf("list '*ir*': %s", got)
	}
	code, _, errs := runGoprobe("list", bin, "nosuch")
	if code == 0 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "nosuch") {
		t.Errorf("a pattern matching nothing: exit %d, %q", code, errs)
	}
}

func llvmDwarfdump(t *testing.T, args ...string) string {
	t.Helper()
	tool, err := exec.LookPath("llvm-dwarfdump")
	if err != nil {
		testutil.Skipf(t, "llvm-dwarfdump not installed: %v", err)
	}
	out, err := exec.Command(tool, args...).Output()
	if err != nil {
		t.Fatalf("llvm-dwarfdump: %v", err)
	}
	return string(out)
}

// readelfUSDT is readelf -n's probes: for each PROVIDER:NAME, its places
// and the first place's semaphore and operands.
func readelfUSDT(t *testing.T, path string) map[string][3]string {
	t.Helper()
	out, err := exec.Command("readelf", "-n", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`Provider: (\S+)\s+Name: (\S+)\s+Location: \S+, Base: \S+, Semaphore: (0x[0-9a-f]+)\s+Arguments: ?([^\n]*)`)
	by := map[string][3]string{}
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		k := m[1] + ":" + m[2]
		e, seen := by[k]
		n, _ := strconv.Atoi(e[0])
		if !seen {
			e[1], e[2] = m[3], strings.TrimSpace(m[4])
		}
		e[0] = strconv.Itoa(n + 1)
		by[k] = e
	}
	return by
}

// TestListUSDT: list -v prints each USDT probe readelf -n shows, with its
// number of places, whether it has a semaphore and its operands in
// order, for a sys/sdt.h program, python3.11 and, through a running
// process's maps, libstdc++.
func TestListUSDT(t *testing.T) {
	check := func(t *testing.T, path string, lines []string) {
		t.Helper()
		want := readelfUSDT(t, path)
		got := map[string][3]string{}
		re := regexp.MustCompile(`^usdt:(\S+) \((\d+) sites?(, semaphore)?`)
		for i, l := range lines {
			m := re.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			var ops []string
			for _, a := range lines[i+1:] {
				if !strings.HasPrefix(a, "\targ") {
					break
				}
				ops = append(ops, a[strings.LastIndexByte(a, ' ')+1:])
			}
			sem := "0x0000000000000000"
			if m[3] != "" {
				sem = "set"
			}
			got[m[1]] = [3]string{m[2], sem, strings.Join(ops, " ")}
		}
		if len(want) == 0 || len(got) != len(want) {
			t.Errorf("%s: listed %d probes, readelf %d\n%s", path, len(got), len(want), strings.Join(lines, "\n"))
		}
		for k, w := range want {
			if w[1] != "0x0000000000000000" {
				w[1] = "set"
			}
			if got[k] != w {
				t.Errorf("%s: %s listed %v; readelf %v", path, k, got[k], w)
			}
		}
	}
	t.Run("sdt", func(t *testing.T) {
		bin := buildC(t, "sdt", "-O2", "-g")
		lines := listed(t, "-v", bin)
		check(t, bin, lines)
		if !strings.Contains(strings.Join(lines, "\n"), "func void work(long int i)") {
			t.Errorf("no prototype of work:\n%s", strings.Join(lines, "\n"))
		}
	})
	t.Run("python", func(t *testing.T) {
		const py = "/usr/bin/python3.11"
		if _, err := exec.LookPath(py); err != nil {
			testutil.Skipf(t, "no %s", py)
		}
		check(t, py, listed(t, "-v", py, "usdt:python:*"))
	})
	t.Run("process", func(t *testing.T) {
		if _, err := exec.LookPath("g++"); err != nil {
			testutil.Skipf(t, "no g++")
		}
		bin := filepath.Join(t.TempDir(), "thrower")
		src := filepath.Join(testutil.Root(t), "cmd", "goprobe", "testdata", "thrower.cc")
		if out, err := exec.Command("g++", "-O2", "-g", "-o", bin, src).CombinedOutput(); err != nil {
			t.Fatalf("g++: %v\n%s", err, out)
		}
		c, r := startProgram(t, bin, "200", "1000")
		lines := listed(t, "-v", "-p", strconv.Itoa(c.Process.Pid), "libstdcxx")
		if !strings.Contains(lines[0], "libstdc++.so.6") {
			t.Errorf("not the mapped library: %s", lines[0])
		}
		check(t, libstdcxx, lines)
		endProgram(t, c, r)
	})
}
