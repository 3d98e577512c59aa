package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// copyFixture copies the C fixture to a temporary file -J may rewrite.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(testutil.Fixture(t, "c-layouts").Path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(out, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

func tool(t *testing.T, name string, args ...string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		testutil.Skipf(t, "%s not installed (scripts/install-deps.sh installs it): %v", name, err)
	}
	out, err := exec.Command(p, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestEncodeJ runs gopahole -J on a copy of the C fixture and pahole -J on
// another: bpftool reads our .BTF, pahole -F btf prints the same structs
// from both (up to two spellings of pahole 1.24's own, see
// paholeNormal), and gopahole -F btf prints what gopahole -F dwarf prints.
// -J run twice replaces the section and writes the same bytes.
func TestEncodeJ(t *testing.T) {
	ours, theirs := copyFixture(t, "ours"), copyFixture(t, "theirs")
	if code, _, errs := run("-J", ours); code != 0 {
		t.Fatalf("gopahole -J: %d %s", code, errs)
	}
	tool(t, "pahole", "-J", theirs)
	if dump := tool(t, "bpftool", "btf", "dump", "file", ours); strings.Count(dump, "STRUCT '") < 15 {
		t.Errorf("bpftool dumps only %d structs of our .BTF:\n%s", strings.Count(dump, "STRUCT '"), dump)
	}
	po, pt := paholeNormal(tool(t, "pahole", "-F", "btf", ours)), paholeNormal(tool(t, "pahole", "-F", "btf", theirs))
	if po != pt {
		t.Errorf("pahole -F btf differs on our .BTF and on pahole -J's:\n--- ours:\n%s\n--- pahole's:\n%s", po, pt)
	}
	if n := strings.Count(pt, "\n}"); n < 15 {
		t.Errorf("pahole -F btf prints only %d types", n)
	}
	_, fromBTF, errs := run("-F", "btf", ours)
	_, fromDWARF, errs2 := run("-F", "dwarf", ours)
	if fromBTF != fromDWARF || strings.Count(fromBTF, "\n}") < 15 {
		t.Errorf("gopahole -F btf and -F dwarf differ on our .BTF (%s%s):\n--- btf:\n%s\n--- dwarf:\n%s", errs, errs2, fromBTF, fromDWARF)
	}
	first, err := os.ReadFile(ours)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run("-J", ours); code != 0 {
		t.Fatalf("gopahole -J again: %d %s", code, errs)
	}
	again, err := os.ReadFile(ours)
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(again) || strings.Count(tool(t, "readelf", "-S", ours), ".BTF ") != 1 {
		t.Errorf("-J on a file with .BTF does not give the same file with one .BTF")
	}
}

// TestEncodeDetached: --btf_encode_detached writes raw BTF that gopahole
// reads as the DWARF it came from and leaves the input as it was.
func TestEncodeDetached(t *testing.T) {
	bin := copyFixture(t, "bin")
	before, _ := os.ReadFile(bin)
	out := filepath.Join(t.TempDir(), "bin.btf")
	if code, _, errs := run("--btf_encode_detached", out, bin); code != 0 {
		t.Fatalf("--btf_encode_detached: %d %s", code, errs)
	}
	after, _ := os.ReadFile(bin)
	if string(before) != string(after) {
		t.Errorf("--btf_encode_detached changed its input")
	}
	tool(t, "bpftool", "btf", "dump", "file", out)
	_, fromBTF, _ := run("-F", "btf", out)
	_, fromDWARF, _ := run(bin)
	if fromBTF != fromDWARF || strings.Count(fromBTF, "\n}") < 15 {
		t.Errorf("gopahole on the detached BTF and on the DWARF differ:\n--- btf:\n%s\n--- dwarf:\n%s", fromBTF, fromDWARF)
	}
	if code, _, errs := run("--btf_encode_detached", out, bin, bin); code != 2 || !strings.Contains(errs, "exactly one") {
		t.Errorf("two inputs: exit %d, %q", code, errs)
	}
}

var multiDim = regexp.MustCompile(`((?:\[\d+\]){2,})`)

// paholeNormal undoes what pahole 1.24 does differently to the same C:
// its -J writes floats as INT (we write FLOAT, which its BTF reader prints
// as "single float") and flattens int m[3][2] to int m[6] (we nest arrays,
// as BTF can); the columns are compared as words.
func paholeNormal(s string) string {
	s = strings.ReplaceAll(s, "single ", "")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ") // the columns moved
	}
	return multiDim.ReplaceAllStringFunc(strings.Join(lines, "\n"), func(dims string) string {
		n := 1
		for _, d := range strings.Split(strings.Trim(dims, "[]"), "][") {
			v, _ := strconv.Atoi(d)
			n *= v
		}
		return "[" + strconv.Itoa(n) + "]"
	})
}
