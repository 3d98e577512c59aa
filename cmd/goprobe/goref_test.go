package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/cmd/internal/cmdtest"
	"github.com/binscope/binscope/internal/testutil"
)

// Go binaries built as production images are (-ldflags='-s -w' -trimpath)
// get their types and signatures from a reference build (package goref).

const promPkg = "github.com/prometheus/client_golang/prometheus."

// TestGoRefTraceStripped: return probes on every update method of two
// client_golang versions whose counter and Desc layouts differ, on builds
// without DWARF, report what each program reports.
func TestGoRefTraceStripped(t *testing.T) {
	needBPF(t)
	for _, name := range []string{"go-prom-stripped", "go-prom-v111-stripped"} {
		t.Run(name, func(t *testing.T) {
			traceClientGolang(t, testutil.Fixture(t, name).Path)
		})
	}
}

// TestGoRefUnavailable: the main package, whose source no module cache
// holds, is one line that says what to do (gopahole's TestGoRefUnavailable
// has a dependency that cannot be had).
func TestGoRefUnavailable(t *testing.T) {
	bin := testutil.Fixture(t, "go-prom-stripped").Path
	cmdtest.NoModuleSource(t)
	code, _, errs := runGoprobe("gen", "--format=spec", "-x", bin, "main.main x")
	if code != 1 || !strings.Contains(errs, "package main") || strings.Count(errs, "\n") != 1 {
		t.Errorf("main: exit %d, stderr:\n%s", code, errs)
	}
}

// TestStrippedInlineCounts: every inlined call of go-inline, direct and
// nested, is counted once per call without DWARF (sites from .gopclntab's
// inline tree) as with it, and as the program counts its own calls.
func TestStrippedInlineCounts(t *testing.T) {
	needBPF(t)
	dir := filepath.Join(testutil.Root(t), "testdata", "fixtures", "go-inline")
	tmp := t.TempDir()
	for _, v := range []string{"", "stripped"} {
		bin := filepath.Join(tmp, "inline"+v)
		if out, err := exec.Command("sh", filepath.Join(dir, "build.sh"), bin, v).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", v, err, out)
		}
		code, out, errs := runGoprobe("stat", "main.leaf", "main.mid", "--", bin, "1000")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", v, code, errs)
		}
		want := map[string]string{}
		for _, m := range regexp.MustCompile(`(?m)^calls (\S+) (\d+)$`).FindAllStringSubmatch(out, -1) {
			want[m[1]] = m[2]
		}
		if len(want) != 2 {
			t.Fatalf("%s: the program printed no counts:\n%s", v, out)
		}
		for fn, n := range want {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(fn) + `\s+` + n + `\s+[2-9]\s`).MatchString(errs + out) {
				t.Errorf("%s: %s: want %s calls at its inline sites; goprobe said:\n%s", v, fn, n, errs+out)
			}
		}
	}
}
