package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	cbtf "github.com/cilium/ebpf/btf"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
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

// TestBitfieldTypedefBTF: bitfields declared through a typedef, and
// through a typedef of a typedef, keep their widths through -J. gopahole
// prints the DWARF as pahole 1.24 does; pahole reads our .BTF as it reads
// the .BTF its own -J writes; gopahole -F btf prints what pahole prints
// from the DWARF; bpftool names the typedef. Two files with .BTF read as
// one, as pahole reads them.
func TestBitfieldTypedefBTF(t *testing.T) {
	dir := t.TempDir()
	src := `typedef unsigned int uint_t;
typedef uint_t custom_t;
struct bf_typedef { uint_t flags:4; uint_t mode:3; uint_t valid:1; };
struct bf_chained { custom_t a:5; custom_t b:3; long tail; custom_t c:31; };
struct bf_plain { unsigned int x:4; unsigned int y:4; };
struct bf_typedef g_td; struct bf_chained g_ch; struct bf_plain g_pl;
`
	obj := compileObj(t, dir, "bf", src)
	samePahole(t, obj)
	ours, theirs := filepath.Join(dir, "ours.o"), filepath.Join(dir, "theirs.o")
	data, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{ours, theirs} {
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errs := run("-J", ours); code != 0 {
		t.Fatalf("gopahole -J: %d %s", code, errs)
	}
	tool(t, "pahole", "-J", theirs)
	if po, pt := tool(t, "pahole", "-F", "btf", ours), tool(t, "pahole", "-F", "btf", theirs); po != pt {
		t.Errorf("pahole -F btf on our .BTF:\n%s\non pahole -J's:\n%s", po, pt)
	}
	want := paholeOut(t, obj)
	if n := strings.Count(want, ":3;"); n != 2 {
		t.Fatalf("pahole prints %d members of width 3, want mode:3 and b:3:\n%s", n, want)
	}
	if code, got, errs := run("-F", "btf", ours); code != 0 || got != want {
		t.Errorf("gopahole -F btf: exit %d %s\n%s\npahole on the DWARF:\n%s", code, errs, got, want)
	}
	if dump := tool(t, "bpftool", "btf", "dump", "file", ours); !strings.Contains(dump, "TYPEDEF 'uint_t'") {
		t.Errorf("bpftool does not name TYPEDEF 'uint_t':\n%s", dump)
	}
	// Two files, each with its own .BTF, read as one, as pahole reads them.
	other := compileObj(t, dir, "other", otherSrc)
	if code, _, errs := run("-J", other); code != 0 {
		t.Fatalf("gopahole -J %s: %d %s", other, code, errs)
	}
	for _, args := range [][]string{{"-F", "btf", ours, other}, {"-F", "btf", "-s", ours, other}} {
		samePahole(t, args...)
	}
}

// TestEncodeLanguages runs gopahole --btf_encode_detached on the Go, Rust
// and Zig fixtures: bpftool reads the BTF, the kernel loads it
// (BPF_BTF_LOAD), and the structs read back from it, looked up by the C
// identifiers --format=c names them with, have the sizes and member
// offsets the language itself reports (unsafe.Offsetof, offset_of!,
// @offsetOf; the fixture's truth).
func TestEncodeLanguages(t *testing.T) {
	for _, name := range []string{"go-layouts", "rust-layouts", "zig-layouts"} {
		t.Run(name, func(t *testing.T) {
			b, out, dump := encodeFixture(t, name)
			if strings.Count(dump, "STRUCT '") < 20 {
				t.Errorf("bpftool dumps only %d structs", strings.Count(dump, "STRUCT '"))
			}
			loadKernel(t, out)
			spec, err := btf.Load(out, &btf.Options{Standalone: true})
			if err != nil {
				t.Fatal(err)
			}
			truth := b.Truth(t)
			checked := 0
			for _, tt := range truth {
				tt.Name = codegen.CName(tt.Name)
				check := func() []string { _, p := testutil.CheckTruth(spec, tt, false); return p }
				for i := range tt.Members {
					if strings.Contains(tt.Members[i].Name, ".") {
						check = func() []string { return variantTruth(spec, tt) }
						continue // a Rust enum's Variant.field
					}
					tt.Members[i].Name = codegen.CName(tt.Members[i].Name)
				}
				if problems := check(); len(problems) > 0 {
					t.Errorf("%s:\n\t%s", tt.Name, strings.Join(problems, "\n\t"))
					continue
				}
				checked++
			}
			t.Logf("%d of %d types match the language's report", checked, len(truth))
			if checked < 10 {
				t.Errorf("only %d of %d types match the language's report (want at least 10)", checked, len(truth))
			}
		})
	}
}

// variantTruth compares a Rust enum with data, which our BTF spells as a
// union of its tag and its variants, with the truth of its variants'
// fields (Variant.field): the union's size, and each field's offset and
// size inside the union member named after its variant.
func variantTruth(spec *types.Spec, tt testutil.TruthType) []string {
	found := spec.Lookup(tt.Name)
	if len(found) != 1 {
		return []string{fmt.Sprintf("%d types of this name", len(found))}
	}
	u, ok := types.Resolve(found[0]).(*types.Struct)
	if !ok || u.Kind != types.KindUnion || u.ByteSize != tt.Size {
		return []string{fmt.Sprintf("not a union of %d bytes: %s", tt.Size, types.TypeString(found[0]))}
	}
	var p []string
	for _, tm := range tt.Members {
		variant, field, _ := strings.Cut(tm.Name, ".")
		i := slices.IndexFunc(u.Members, func(m types.Member) bool { return m.Name == variant })
		vs, ok := (*types.Struct)(nil), false
		if i >= 0 {
			vs, ok = types.Resolve(u.Members[i].Type).(*types.Struct)
		}
		if !ok {
			p = append(p, "no variant "+variant)
			continue
		}
		j := slices.IndexFunc(vs.Members, func(m types.Member) bool { return m.Name == codegen.CName(field) })
		if j < 0 {
			p = append(p, "member "+tm.Name+" missing")
			continue
		}
		m := vs.Members[j]
		size, _ := types.Sizeof(m.Type)
		if off := (u.Members[i].Offset + m.Offset).Bytes(); off != tm.Offset || size != tm.Size {
			p = append(p, fmt.Sprintf("member %s at %d size %d, want %d size %d", tm.Name, off, size, tm.Offset, tm.Size))
		}
	}
	return p
}

// TestEncodeVars: --btf_encode_detached writes the globals of the C and
// Go fixtures as VARs in DATASECs that bpftool dumps and the kernel loads;
// each VAR whose name is one symbol's (mapped as types are) sits at that
// symbol's address and has its size, as nm -S reports them.
func TestEncodeVars(t *testing.T) {
	for _, tc := range []struct {
		name string
		min  int
	}{{"c-layouts", 15}, {"go-layouts", 100}} {
		t.Run(tc.name, func(t *testing.T) {
			b, out, dump := encodeFixture(t, tc.name)
			if n := strings.Count(dump, "] VAR '"); n < tc.min || !strings.Contains(dump, "] DATASEC '.bss'") {
				t.Errorf("bpftool dumps %d VARs (want %d) and no DATASEC '.bss'", n, tc.min)
			}
			loadKernel(t, out)
			// nm -S: address, size, kind, name of each sized symbol.
			syms := map[string][2]uint64{}
			for _, l := range strings.Split(tool(t, "nm", "-S", b.Path), "\n") {
				f := strings.Fields(l)
				if len(f) != 4 {
					continue
				}
				addr, err1 := strconv.ParseUint(f[0], 16, 64)
				size, err2 := strconv.ParseUint(f[1], 16, 64)
				name := codegen.CName(f[3])
				if _, dup := syms[name]; dup || err1 != nil || err2 != nil {
					syms[name] = [2]uint64{} // ambiguous
					continue
				}
				syms[name] = [2]uint64{addr, size}
			}
			secs := map[string]uint64{}
			for _, l := range strings.Split(tool(t, "readelf", "-SW", b.Path), "\n") {
				if f := strings.Fields(strings.TrimLeft(l, " [0123456789]")); len(f) > 3 {
					if a, err := strconv.ParseUint(f[2], 16, 64); err == nil {
						secs[f[0]] = a
					}
				}
			}
			spec, err := cbtf.LoadSpec(out)
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for typ, err := range spec.All() {
				ds, ok := typ.(*cbtf.Datasec)
				if err != nil || !ok {
					continue
				}
				for _, v := range ds.Vars {
					name := v.Type.TypeName()
					s, ok := syms[name]
					if !ok || s == ([2]uint64{}) {
						continue
					}
					if got := secs[ds.Name] + uint64(v.Offset); got != s[0] || uint64(v.Size) != s[1] {
						t.Errorf("%s in %s: at %#x size %d, nm -S: %#x size %d", name, ds.Name, got, v.Size, s[0], s[1])
					}
					checked++
				}
			}
			t.Logf("%d variables at their symbols' addresses", checked)
			if checked < tc.min {
				t.Errorf("only %d variables checked against nm -S (want %d)", checked, tc.min)
			}
		})
	}
}

// encodeFixture builds fixture name, encodes its BTF with
// --btf_encode_detached and returns the fixture, the BTF file and what
// bpftool btf dump prints of it.
func encodeFixture(t *testing.T, name string) (*testutil.Built, string, string) {
	t.Helper()
	b := testutil.Fixture(t, name)
	out := filepath.Join(t.TempDir(), name+".btf")
	if code, _, errs := run("--btf_encode_detached", out, b.Path); code != 0 {
		t.Fatalf("--btf_encode_detached %s: %d %s", name, code, errs)
	}
	return b, out, tool(t, "bpftool", "btf", "dump", "file", out)
}

// loadKernel hands the raw BTF at path to the kernel (BPF_BTF_LOAD).
func loadKernel(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := cbtf.NewHandleFromRawBTF(raw)
	if errors.Is(err, os.ErrPermission) || errors.Is(err, cbtf.ErrNotSupported) {
		testutil.Skipf(t, "the kernel does not load BTF here: %v", err)
	} else if err != nil {
		t.Fatalf("kernel refuses our BTF: %v", err)
	} else {
		h.Close()
	}
}

// TestEncodeRealKernel: the kernel loads the BTF --btf_encode_detached
// writes for real programs of each language (prometheus, the regex crate's
// program, a C++ program, Zig's std tests), types, functions and
// variables together.
func TestEncodeRealKernel(t *testing.T) {
	for _, name := range []string{"go-prom", "rust-real", "cpp-real", "zig-std"} {
		t.Run(name, func(t *testing.T) {
			_, out, dump := encodeFixture(t, name)
			if strings.Count(dump, "] FUNC '") < 20 {
				t.Errorf("bpftool dumps only %d functions", strings.Count(dump, "] FUNC '"))
			}
			loadKernel(t, out)
		})
	}
}
