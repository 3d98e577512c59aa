package loader_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/loader"
	"github.com/binscope/binscope/types"
)

// TestTypesByContent: the loader is chosen by what the file holds: DWARF
// in an ELF file, BTF in a raw file; -F forces one; a file that is
// neither says so in one line.
func TestTypesByContent(t *testing.T) {
	c := testutil.Fixture(t, "c-layouts")
	spec, streamed, err := loader.Types(c.Path, nil)
	if err != nil || spec.Format != "dwarf" || streamed || len(spec.Types()) < 10 {
		t.Fatalf("%s: %v, format %q, %d types", c.Path, err, spec.Format, len(spec.Types()))
	}
	if _, _, err := loader.Types(c.Path, &loader.TypesOptions{Format: "btf"}); err == nil {
		t.Errorf("-F btf on a file without .BTF: no error")
	}
	named, _, err := loader.Types(c.Path, &loader.TypesOptions{Names: []string{spec.Types()[0].TypeName()}})
	if err != nil || len(named.Types()) == 0 || len(named.Types()) > len(spec.Types()) {
		t.Errorf("-C: %v, %d types of %d", err, len(named.Types()), len(spec.Types()))
	}
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	for path, want := range map[string]string{empty: "empty file", dir: "is a directory"} {
		if _, _, err := loader.Types(path, nil); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line saying %q", path, err, want)
		}
	}
	if _, err := os.Stat(loader.KernelBTF); err != nil {
		testutil.Skipf(t, "no kernel BTF: %v", err)
	}
	n := 0
	kspec, streamed, err := loader.Types("", &loader.TypesOptions{Each: func(types.Type) { n++ }})
	if err != nil || kspec.Format != "btf" || !streamed || n < 1000 || n != len(kspec.Types()) {
		t.Errorf("kernel: %v, format %q, streamed %v, %d types handed over of %d", err, kspec.Format, streamed, n, len(kspec.Types()))
	}
}

// TestCodeWithoutDWARF: a stripped copy still has its functions (from
// .gopclntab), and a query that needs DWARF says why there is none.
func TestCodeWithoutDWARF(t *testing.T) {
	b := testutil.Fixture(t, "go-inline")
	stripped := filepath.Join(t.TempDir(), "stripped")
	if out, err := exec.Command("strip", "-o", stripped, b.Path).CombinedOutput(); err != nil {
		testutil.Skipf(t, "strip: %v %s", err, out)
	}
	c, err := loader.OpenCode(stripped, &loader.CodeOptions{Params: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.DWARF != nil || c.Ref || len(c.Funcs()) < 100 {
		t.Errorf("DWARF %v, ref %v, %d functions", c.DWARF != nil, c.Ref, len(c.Funcs()))
	}
	if err := loader.NeedDWARF(stripped, "-L"); !errors.Is(err, types.ErrNoDebugInfo) || !strings.HasPrefix(err.Error(), "-L needs DWARF: ") {
		t.Errorf("NeedDWARF: %v", err)
	}
}

// TestBuildID: the build-id is the one readelf -n prints.
func TestBuildID(t *testing.T) {
	b := testutil.Fixture(t, "c-layouts")
	out, err := exec.Command("readelf", "-n", b.Path).Output()
	if err != nil {
		testutil.Skipf(t, "readelf: %v", err)
	}
	m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(out)
	if m == nil {
		t.Skipf("%s has no build-id", b.Path)
	}
	if got := loader.BuildID(b.Path); got != string(m[1]) {
		t.Errorf("build-id %q, readelf says %s", got, m[1])
	}
	if got := loader.BuildID("/nonexistent"); got != "" {
		t.Errorf("no file: %q", got)
	}
}
