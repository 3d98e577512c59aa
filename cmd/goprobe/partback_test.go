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

// selfNested counts, in llvm-dwarfdump's reading of bin, the inline
// expansions of fn nested inside an expansion of fn and called from line
// (fn's declaration): GCC's partial inlining putting fn.part back.
func selfNested(t *testing.T, bin, fn string, line int) int {
	t.Helper()
	out, err := exec.Command("llvm-dwarfdump", "--debug-info", bin).Output()
	if err != nil {
		testutil.Skipf(t, "llvm-dwarfdump: %v", err)
	}
	die := regexp.MustCompile(`^0x[0-9a-f]+:( *)(DW_TAG_\w+|NULL)`)
	type level struct {
		indent int
		inline string // the origin's name of an inlined_subroutine
		line   int
	}
	var stack []level
	n := 0
	done := func() { // the DIE on top is complete: check it
		if len(stack) < 2 {
			return
		}
		top := stack[len(stack)-1]
		if top.inline != fn || top.line != line {
			return
		}
		for _, l := range stack[:len(stack)-1] {
			if l.inline == fn {
				n++
				return
			}
		}
	}
	for _, l := range strings.Split(string(out), "\n") {
		if m := die.FindStringSubmatch(l); m != nil {
			done()
			ind := len(m[1])
			for len(stack) > 0 && stack[len(stack)-1].indent >= ind {
				stack = stack[:len(stack)-1]
			}
			if m[2] != "NULL" {
				stack = append(stack, level{indent: ind})
			}
			continue
		}
		if len(stack) == 0 {
			continue
		}
		top := &stack[len(stack)-1]
		f := strings.Fields(l)
		switch {
		case len(f) >= 2 && f[0] == "DW_AT_abstract_origin":
			if q := strings.Split(l, `"`); len(q) >= 2 {
				top.inline = q[1]
			}
		case len(f) >= 2 && f[0] == "DW_AT_call_line":
			top.line, _ = strconv.Atoi(strings.Trim(f[1], "()"))
		}
	}
	done()
	return n
}

// TestPartBack: GCC -O3 splits f9 (a cheap guard, a heavy tail) and
// inlines the tail back into each expansion of its head, where DWARF
// shows an expansion of f9 inside one of f9 (llvm-dwarfdump says so);
// goprobe stat counts each call once, as the program counts them, at
// -O2 (the tail out of line, f9.part.0) and -O3.
func TestPartBack(t *testing.T) {
	needBPF(t)
	src := filepath.Join(testutil.Root(t), "cmd", "goprobe", "testdata", "partback.c")
	decl := 0
	if b, err := exec.Command("grep", "-n", "^static long f9(", src).Output(); err == nil {
		decl, _ = strconv.Atoi(strings.SplitN(string(b), ":", 2)[0])
	}
	for _, opt := range []string{"-O2", "-O3"} {
		t.Run(opt, func(t *testing.T) {
			bin := buildWith(t, t.TempDir(), "gcc", opt, "-g", "-o", "BIN", src)
			if n := selfNested(t, bin, "f9", decl); opt == "-O3" && n < 2 {
				t.Fatalf("want f9's tail inlined back into expansions of f9 (line %d), llvm-dwarfdump shows %d", decl, n)
			}
			want, got := statVsProgram(t, "f9", bin, "9")
			if want != 36 || got != want {
				t.Errorf("program: %d calls of f9 (want 36), goprobe stat %d", want, got)
			}
		})
	}
}
