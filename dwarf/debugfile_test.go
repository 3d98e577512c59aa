package dwarf_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
)

// TestSeparateDebugFile splits the C fixture's DWARF into a debug file, as
// distributions do, and requires the loader to find it by .gnu_debuglink
// next to the binary, by build-id under the debug root, and by either in
// a directory of elfx.DebugDirs (--debuginfo).
func TestSeparateDebugFile(t *testing.T) {
	objcopy, err := exec.LookPath("objcopy")
	if err != nil {
		testutil.Skipf(t, "objcopy not installed: %v", err)
	}
	src := testutil.Fixture(t, "c-layouts").Path
	sh := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	split := func(dir string) (bin, debug string) {
		bin = filepath.Join(dir, "prog")
		debug = filepath.Join(dir, "prog.debug")
		sh("cp", src, bin)
		sh(objcopy, "--only-keep-debug", bin, debug)
		sh(objcopy, "--strip-debug", bin)
		return bin, debug
	}
	check := func(bin, wantDebug string) {
		t.Helper()
		f, err := dwarf.Open(bin, nil)
		if err != nil {
			t.Fatalf("Open(%s): %v", bin, err)
		}
		defer f.Close()
		if f.Debug.Path != wantDebug {
			t.Errorf("debug info from %s, want %s", f.Debug.Path, wantDebug)
		}
		spec, err := f.Types()
		if err != nil {
			t.Fatal(err)
		}
		if len(spec.Lookup("holey")) != 1 {
			t.Errorf("struct holey not found through %s", wantDebug)
		}
	}

	t.Run("debuglink", func(t *testing.T) {
		bin, debug := split(t.TempDir())
		sh(objcopy, "--add-gnu-debuglink="+debug, bin)
		check(bin, debug)
	})
	t.Run("build-id", func(t *testing.T) {
		bin, debug := split(t.TempDir())
		ef, err := elfx.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		id := ef.BuildID
		ef.Close()
		if len(id) < 4 {
			testutil.Skipf(t, "gcc did not record a build-id")
		}
		root := t.TempDir()
		old := elfx.DebugRoot
		elfx.DebugRoot = root
		defer func() { elfx.DebugRoot = old }()
		want := filepath.Join(root, ".build-id", id[:2], id[2:]+".debug")
		if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
			t.Fatal(err)
		}
		sh("mv", debug, want)
		check(bin, want)
	})
	t.Run("debuginfo-dir", func(t *testing.T) {
		// --debuginfo DIR: by build-id under DIR/.build-id, and by debug
		// link in DIR itself, before the debug root.
		for _, how := range []string{"build-id", "debuglink"} {
			bin, debug := split(t.TempDir())
			dir := t.TempDir()
			want := filepath.Join(dir, "prog.debug")
			if how == "build-id" {
				ef, err := elfx.Open(bin)
				if err != nil {
					t.Fatal(err)
				}
				id := ef.BuildID
				ef.Close()
				if len(id) < 4 {
					testutil.Skipf(t, "gcc did not record a build-id")
				}
				want = filepath.Join(dir, ".build-id", id[:2], id[2:]+".debug")
				if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
					t.Fatal(err)
				}
			} else {
				sh(objcopy, "--add-gnu-debuglink="+debug, bin)
			}
			sh("mv", debug, want)
			elfx.DebugDirs = []string{dir}
			check(bin, want)
			elfx.DebugDirs = nil
		}
	})
	t.Run("missing", func(t *testing.T) {
		bin, debug := split(t.TempDir())
		sh(objcopy, "--add-gnu-debuglink="+debug, bin)
		os.Remove(debug)
		_, err := dwarf.Load(bin, nil)
		if err == nil {
			t.Fatal("no error without the debug file")
		}
		for _, w := range []string{bin, "no debug info", debug} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not mention %q", err, w)
			}
		}
	})
}
