package btf_test

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	cbtf "github.com/cilium/ebpf/btf"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/testutil"
)

// encodeOurs encodes bin's DWARF (types and functions) with btf.Encode
// into a raw BTF file and returns its path.
func encodeOurs(t testing.TB, bin string) string { return encodeWith(t, bin, true) }

// encodeWith is encodeOurs, leaving the functions out unless funcs.
func encodeWith(t testing.TB, bin string, funcs bool) string {
	t.Helper()
	spec, err := dwarf.Load(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := &btf.EncodeOptions{}
	if funcs {
		m, err := code.Open(bin, &code.Options{Params: true})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		opts.Funcs = m.Funcs()
	}
	raw, err := btf.Encode(spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(bin)+".btf")
	if err := os.WriteFile(out, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEncodeTruth encodes the C fixture's DWARF with btf.Encode and
// requires what the BTF loader reads back to be what the C compiler
// reported (offsetof, sizeof, bitfields).
func TestEncodeTruth(t *testing.T) {
	b := testutil.Fixture(t, "c-layouts")
	checkTruth(t, b, encodeOurs(t, b.Path))
}

// TestEncodeDifferential prints every struct and union of the C fixture
// from its DWARF and from the BTF we encoded from it: the same text,
// multi-dimensional arrays included (we nest them as BTF can).
func TestEncodeDifferential(t *testing.T) {
	b := testutil.Fixture(t, "c-layouts")
	differential(t, b, encodeOurs(t, b.Path), false)
}

var bpftoolKind = regexp.MustCompile(`(?m)^\[\d+\] ([A-Z0-9_]+) '([^']*)'`)

// TestEncodeBpftool has bpftool, an independent reader, dump the BTF we
// encoded and pahole's own: the same named structs, unions, enums,
// typedefs and functions.
func TestEncodeBpftool(t *testing.T) {
	bpftool, err := exec.LookPath("bpftool")
	if err != nil {
		testutil.Skipf(t, "bpftool not installed: %v", err)
	}
	b := testutil.Fixture(t, "c-layouts")
	names := func(path string) map[string]bool {
		out, err := exec.Command(bpftool, "btf", "dump", "file", path).CombinedOutput()
		if err != nil {
			t.Fatalf("bpftool btf dump file %s: %v\n%s", path, err, out)
		}
		set := map[string]bool{}
		for _, m := range bpftoolKind.FindAllStringSubmatch(string(out), -1) {
			switch m[1] {
			case "STRUCT", "UNION", "ENUM", "ENUM64", "TYPEDEF", "FUNC", "FWD":
				if m[2] != "(anon)" {
					set[strings.TrimSuffix(m[1], "64")+" "+m[2]] = true
				}
			}
		}
		return set
	}
	ours, theirs := names(encodeOurs(t, b.Path)), names(encode(t, b.Path))
	sameSet(t, ours, theirs, "we encode", "pahole -J encodes")
	if len(theirs) < 25 {
		t.Errorf("only %d named types and functions compared", len(theirs))
	}
}

// TestEncodeFuncs compares the functions we encode with pahole -J's:
// the same names and prototypes (parameter names and type names), and a
// linkage that is global exactly where the symbol table binds the
// function's symbol globally.
func TestEncodeFuncs(t *testing.T) {
	b := testutil.Fixture(t, "c-layouts")
	ours, theirs := funcSigs(t, encodeOurs(t, b.Path)), funcSigs(t, encode(t, b.Path))
	for name, sig := range theirs {
		if ours[name].sig != sig.sig {
			t.Errorf("%s: we encode %q, pahole -J %q", name, ours[name].sig, sig.sig)
		}
	}
	if len(ours) != len(theirs) || len(theirs) < 5 {
		t.Errorf("%d functions encoded, pahole -J encodes %d (want at least 5)", len(ours), len(theirs))
	}
	ef, err := elf.Open(b.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, s := range syms {
		f, ok := ours[s.Name]
		if !ok || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		if global := elf.ST_BIND(s.Info) == elf.STB_GLOBAL; global != (f.linkage == cbtf.GlobalFunc) {
			t.Errorf("%s: linkage %v, symbol binding %v", s.Name, f.linkage, elf.ST_BIND(s.Info))
		}
		checked++
	}
	if checked != len(ours) {
		t.Errorf("linkage checked for %d of %d functions", checked, len(ours))
	}
}

type funcSig struct {
	sig     string
	linkage cbtf.FuncLinkage
}

func funcSigs(t *testing.T, path string) map[string]funcSig {
	spec, err := cbtf.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]funcSig{}
	for typ, err := range spec.All() {
		if err != nil {
			t.Fatal(err)
		}
		fn, ok := typ.(*cbtf.Func)
		if !ok {
			continue
		}
		fp := fn.Type.(*cbtf.FuncProto)
		var ps []string
		for _, p := range fp.Params {
			ps = append(ps, spellC(p.Type, 0)+" "+p.Name)
		}
		out[fn.Name] = funcSig{sig: fmt.Sprintf("%s %s(%s)", spellC(fp.Return, 0), fn.Name, strings.Join(ps, ", ")), linkage: fn.Linkage}
	}
	return out
}

// spellC names a BTF type for comparison: its name, or what it is built of.
func spellC(t cbtf.Type, depth int) string {
	if depth > 8 {
		return "..."
	}
	switch v := t.(type) {
	case nil, *cbtf.Void:
		return "void"
	case *cbtf.Pointer:
		return spellC(v.Target, depth+1) + "*"
	case *cbtf.Const:
		return "const " + spellC(v.Type, depth+1)
	case *cbtf.Volatile:
		return "volatile " + spellC(v.Type, depth+1)
	case *cbtf.Array:
		return fmt.Sprintf("%s[%d]", spellC(v.Type, depth+1), v.Nelems)
	case *cbtf.Int, *cbtf.Float: // pahole 1.24 writes floats as INT
		return t.TypeName()
	case *cbtf.Struct, *cbtf.Fwd: // libbpf's dedup resolves forward declarations, cilium's keeps some
		return "struct " + t.TypeName()
	}
	return fmt.Sprintf("%T %s", t, t.TypeName())
}

// TestEncodeKernel hands the BTF we encoded to the kernel (BPF_BTF_LOAD),
// whose verifier checks every type.
func TestEncodeKernel(t *testing.T) {
	b := testutil.Fixture(t, "c-layouts")
	raw, err := os.ReadFile(encodeOurs(t, b.Path))
	if err != nil {
		t.Fatal(err)
	}
	h, err := cbtf.NewHandleFromRawBTF(raw)
	if errors.Is(err, os.ErrPermission) || errors.Is(err, cbtf.ErrNotSupported) {
		testutil.Skipf(t, "the kernel does not load BTF here: %v", err)
	}
	if err != nil {
		t.Fatalf("kernel refuses our BTF: %v", err)
	}
	h.Close()
}

// alignNoise is what BTF cannot say and the reader infers (alignment
// attributes, forced alignments and the holes they make): left out of
// both sides of TestEncodeGlibc.
var alignNoise = regexp.MustCompile(` __attribute__\(\(__aligned__\(\d+\)\)\)|(?m)^\s*/\* (forced alignments|XXX \d+ bytes? hole|XXX last struct has).*\*/\n\n?`)

// TestEncodeGlibc encodes glibc's DWARF (types and functions, GCC -O2)
// and requires the kernel to load it; and, of its types alone (functions
// reach definitions of a name the DWARF loader does not list), every
// distinct layout of a struct or union printed from our BTF to be one
// printed from its DWARF and the other way round, up to the alignments
// BTF cannot record.
func TestEncodeGlibc(t *testing.T) {
	dbg := testutil.DebugFile(testutil.RealBinary(t, "libc"))
	raw, err := os.ReadFile(encodeOurs(t, dbg))
	if err != nil {
		t.Fatal(err)
	}
	if h, err := cbtf.NewHandleFromRawBTF(raw); errors.Is(err, os.ErrPermission) || errors.Is(err, cbtf.ErrNotSupported) {
		testutil.Skipf(t, "the kernel does not load BTF here: %v", err)
	} else if err != nil {
		t.Fatalf("kernel refuses our BTF of glibc: %v", err)
	} else {
		h.Close()
	}
	dspec, err := dwarf.Load(dbg, nil)
	if err != nil {
		t.Fatal(err)
	}
	bspec, err := btf.Load(encodeWith(t, dbg, false), &btf.Options{Standalone: true})
	if err != nil {
		t.Fatal(err)
	}
	layouts := func(m map[string]string) map[string]bool {
		set := map[string]bool{}
		for _, text := range m {
			lines := strings.Split(alignNoise.ReplaceAllString(text, ""), "\n")
			for i, l := range lines {
				lines[i] = strings.Join(strings.Fields(l), " ") // the columns moved
			}
			set[strings.Join(lines, "\n")] = true
		}
		return set
	}
	d, b := layouts(renderAll(t, dspec)), layouts(renderAll(t, bspec))
	sameSet(t, b, d, "from our BTF:\n", "from DWARF:\n")
	if len(d) < 400 {
		t.Errorf("only %d layouts compared", len(d))
	}
}

// sameSet reports every element of a or b the other lacks, a's said by
// aSays and b's by bSays.
func sameSet(t *testing.T, a, b map[string]bool, aSays, bSays string) {
	t.Helper()
	for x := range a {
		if !b[x] {
			t.Errorf("%s %s, not the other", aSays, x)
		}
	}
	for x := range b {
		if !a[x] {
			t.Errorf("%s %s, not the other", bSays, x)
		}
	}
}

// TestEncodeGlibcFuncs compares the prototypes of glibc's functions we
// encode with those pahole -J encodes, for the functions both encode,
// variadic ones included. Up to 1% may differ: where GCC's DWARF gives a
// function two descriptions (an extern inline definition in a header and
// the out-of-line one; static functions of one name in several units),
// pahole 1.24 and we pick different ones, and for some (__malloc_info)
// gdb's ptype agrees with ours, not with pahole's.
func TestEncodeGlibcFuncs(t *testing.T) {
	dbg := testutil.DebugFile(testutil.RealBinary(t, "libc"))
	ours, theirs := funcSigs(t, encodeOurs(t, dbg)), funcSigs(t, encode(t, dbg))
	both, differ, variadic := 0, 0, 0
	for name, sig := range theirs {
		o, ok := ours[name]
		if !ok {
			continue
		}
		both++
		if o.sig != sig.sig {
			differ++
			t.Logf("%s: we encode %q, pahole -J %q", name, o.sig, sig.sig)
		} else if strings.HasSuffix(o.sig, ", void )") {
			variadic++
		}
	}
	t.Logf("%d functions both encode, %d prototypes differ, %d variadic ones agree", both, differ, variadic)
	if both < 2800 || differ*100 > both || variadic < 20 {
		t.Errorf("%d functions both encode (want 2800), %d prototypes differ (want at most 1%%), %d variadic ones agree (want 20)",
			both, differ, variadic)
	}
}
