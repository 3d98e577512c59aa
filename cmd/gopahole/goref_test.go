package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/cmd/internal/cmdtest"
	"github.com/binscope/binscope/internal/testutil"
)

// Go binaries built as production images are (-ldflags='-s -w' -trimpath)
// get their types from a reference build (package goref).

const promPkg = "github.com/prometheus/client_golang/prometheus."

// TestGoRefLayouts: gopahole -C prints on a build without DWARF (its types
// from a reference build, package goref) exactly what it prints on the
// same program built with it.
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
	for i, want := range []string{"built ", "(cached)"} {
		code, out, log := run("-C", promPkg+"counter", bin)
		if code != 0 || !strings.Contains(out, "valInt") {
			t.Fatalf("run %d: exit %d: %s", i, code, log)
		}
		if !strings.Contains(log, want) || !strings.Contains(log, "reference build of github.com/prometheus/client_golang@v1.23.2") {
			t.Errorf("run %d: the log does not say %q and where the types came from:\n%s", i, want, log)
		}
	}
}

// TestGoRefUnavailable: a module that cannot be had (no network, an empty
// module cache) is one line that says what to do, after the reference
// build's log of what it tried.
func TestGoRefUnavailable(t *testing.T) {
	bin := testutil.Fixture(t, "go-prom-stripped").Path
	cmdtest.NoModuleSource(t)
	code, _, errs := run("-C", promPkg+"counter", bin)
	re := regexp.MustCompile(`^(goref: .*\n)*gopahole: .*module source not available: the source of github.com/prometheus/client_golang@v1.23.2 cannot be had \(.*GOPROXY=off.*\): .*BINSCOPE_GOREF_DIRS=MODULE=DIR\n$`)
	if code != 1 || !re.MatchString(errs) {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
}
