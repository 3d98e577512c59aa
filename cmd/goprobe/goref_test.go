package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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

// TestGoRefLayouts: gopahole -C and gofunct -P print on a build without
// DWARF exactly what they print on the same program built with it.
func TestGoRefLayouts(t *testing.T) {
	for _, pair := range [][2]string{{"go-prom", "go-prom-stripped"}, {"go-prom-v111", "go-prom-v111-stripped"}} {
		withDWARF, stripped := testutil.Fixture(t, pair[0]).Path, testutil.Fixture(t, pair[1]).Path
		for _, args := range [][]string{
			{"-C", promPkg + "counter," + promPkg + "Desc," + promPkg + "gauge"},
			{"--format=c", "-C", promPkg + "counter"},
		} {
			c1, want, e1 := run(append(args, withDWARF)...)
			c2, got, e2 := run(append(args, stripped)...)
			if c1 != 0 || c2 != 0 {
				t.Fatalf("%s %v: exit %d/%d: %s %s", pair[1], args, c1, c2, e1, e2)
			}
			// The header's first lines name the file and its build-id.
			got = strings.ReplaceAll(got, "_STRIPPED_H", "_H")
			if i, j := strings.Index(got, "#ifndef"), strings.Index(want, "#ifndef"); i >= 0 && j >= 0 {
				got, want = got[i:], want[j:]
			}
			if got != want {
				t.Errorf("%s %v: without DWARF:\n%s\nwith DWARF:\n%s", pair[1], args, got, want)
			}
		}
		for _, fn := range []string{"(*counter).Add", "(*gauge).Set", "(*Desc).String", "(*Registry).Register"} {
			var w1, w2, e1, e2 strings.Builder
			c1 := Gofunct([]string{"-P", "-f", promPkg + fn, withDWARF}, &w1, &e1)
			c2 := Gofunct([]string{"-P", "-f", promPkg + fn, stripped}, &w2, &e2)
			if c1 != 0 || c2 != 0 || w1.String() != w2.String() {
				t.Errorf("%s gofunct -P %s: without DWARF (%d) %q %s, with DWARF (%d) %q %s", pair[1], fn, c2, w2.String(), e2.String(), c1, w1.String(), e1.String())
			}
		}
	}
}

// TestGoRefOffline: with the module cache warm (the fixture's build filled
// it), a reference builds with GOPROXY=off, and a second run takes it from
// the reference cache without the go command.
func TestGoRefOffline(t *testing.T) {
	bin := testutil.Fixture(t, "go-prom-stripped").Path
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("BINSCOPE_GOREF_CACHE", t.TempDir())
	var log strings.Builder
	defer func(w any) { refLog = os.Stderr }(nil)
	refLog = &log
	for i, want := range []string{"built ", "(cached)"} {
		code, out, errs := run("-C", promPkg+"counter", bin)
		if code != 0 || !strings.Contains(out, "valInt") {
			t.Fatalf("run %d: exit %d: %s%s", i, code, errs, log.String())
		}
		if !strings.Contains(log.String(), want) || !strings.Contains(log.String(), "reference build of github.com/prometheus/client_golang@v1.23.2") {
			t.Errorf("run %d: the log does not say %q and where the types came from:\n%s", i, want, log.String())
		}
		log.Reset()
	}
}

// TestGoRefUnavailable: a module that cannot be had (no network, an empty
// module cache) is one line that says what to do; so is the main package.
func TestGoRefUnavailable(t *testing.T) {
	bin := testutil.Fixture(t, "go-prom-stripped").Path
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("BINSCOPE_GOREF_CACHE", t.TempDir())
	defer func() {
		exec.Command("go", "clean", "-modcache").Run() // the read-only tree in the temporary GOMODCACHE
	}()
	code, _, errs := run("-C", promPkg+"counter", bin)
	re := regexp.MustCompile(`^gopahole: .*module source not available: the source of github.com/prometheus/client_golang@v1.23.2 cannot be had \(.*GOPROXY=off.*\): .*BINSCOPE_GOREF_DIRS=MODULE=DIR\n$`)
	if code != 1 || !re.MatchString(errs) {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
	code, _, errs = runGoprobe("gen", "--format=spec", "-x", bin, "main.main x")
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
