// Package cmdtest holds the test programs the command packages' tests
// share (gofunct lists what goprobe probes): each is built from source in
// the test's temporary directory and reports its own truth when run.
package cmdtest

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// NeedRoot skips a test that attaches probes when it does not run as
// root (a failure under BINSCOPE_REQUIRE_ALL).
func NeedRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		testutil.Skipf(t, "probing needs root")
	}
}

// BuildCloneC builds a C program whose static noinline function f is
// always called with the same second argument, so that GCC -O2 keeps it
// only as f.constprop.0; it prints how many calls f received ("f calls:
// N"). debug adds -g.
func BuildCloneC(t *testing.T, debug bool) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Skipf(t, "gcc not installed: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "clone.c")
	if err := os.WriteFile(src, []byte(cloneC), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "clone")
	args := []string{"-O2", "-o", bin, src}
	if debug {
		args = append([]string{"-g"}, args...)
	}
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	var names []string
	for _, s := range syms {
		if s.Name == "f" {
			t.Fatalf("gcc kept f itself; the test needs a program where only f.constprop.0 exists")
		}
		names = append(names, s.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "f.constprop.0") {
		t.Fatalf("no f.constprop.0 among %v", names)
	}
	return bin
}

const cloneC = `#include <stdio.h>
#include <stdlib.h>
static int calls;
/* Always called with k = 7: GCC -O2 keeps only f.constprop.0. */
static __attribute__((noinline)) long f(long x, long k) {
	calls++;
	long r = 0;
	for (long i = 0; i < k; i++)
		r += x ^ (i * 5);
	return r;
}
int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 10, s = 0;
	for (long i = 0; i < n; i++)
		s += f(i, 7);
	printf("f calls: %d sum=%ld\n", calls, s);
	return 0;
}
`

// GoCloneNames are the functions of BuildGoCloneNames's program, whose
// names end like GCC's clone suffixes.
var GoCloneNames = []string{"main.clone", "main.(*T).part", "main.cold.isra"}

// goCloneNames is a Go program whose function and method names end like
// GCC's clone suffixes, which only a GCC-style producer's code may carry.
const goCloneNames = `package main

import (
	"fmt"
	"os"
	"strconv"
)

type T struct{ n int }

//go:noinline
func clone(x int) int { return x*3 + 1 }

//go:noinline
func (t *T) part(x int) int { t.n += x; return t.n }

type cold struct{}

//go:noinline
func (cold) isra(x int) int { return x ^ 5 }

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	t := &T{}
	s := 0
	for i := 0; i < n; i++ {
		s += clone(i) + t.part(i) + cold{}.isra(i)
	}
	fmt.Println("calls:", n, "sum:", s)
}
`

// BuildGoCloneNames builds the Go program of GoCloneNames; run with N, it
// calls each N times.
func BuildGoCloneNames(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"main.go": goCloneNames, "go.mod": "module clonenames\n\ngo 1.21\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "clonenames")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// NoModuleSource leaves reference builds (package goref) no way to a
// module's source for the rest of the test: no proxy, an empty module
// cache and an empty reference cache.
func NoModuleSource(t *testing.T) {
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("BINSCOPE_GOREF_CACHE", t.TempDir())
	t.Cleanup(func() {
		exec.Command("go", "clean", "-modcache").Run() // the read-only tree in the temporary GOMODCACHE
	})
}
