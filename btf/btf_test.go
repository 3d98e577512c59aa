package btf_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/types"
)

// encode writes the BTF pahole -J encodes from bin's DWARF to a raw BTF
// file and returns its path.
func encode(t testing.TB, bin string) string {
	t.Helper()
	pahole, err := exec.LookPath("pahole")
	if err != nil {
		testutil.Skipf(t, "pahole not installed (scripts/install-deps.sh installs dwarves): %v", err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(bin)+".btf")
	if msg, err := exec.Command(pahole, "--btf_encode_detached="+out, bin).CombinedOutput(); err != nil {
		t.Fatalf("pahole -J %s: %v\n%s", bin, err, msg)
	}
	return out
}

// TestKernel loads the running kernel's BTF and compares every uniquely
// named struct and union with what bpftool, an independent reader, says of
// its size and member count.
func TestKernel(t *testing.T) {
	if _, err := os.Stat(btf.KernelBTF); err != nil {
		testutil.Skipf(t, "no kernel BTF: %v", err)
	}
	bpftool, err := exec.LookPath("bpftool")
	if err != nil {
		testutil.Skipf(t, "bpftool not installed: %v", err)
	}
	spec, err := btf.Load(btf.KernelBTF, nil)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Format != "btf" || spec.Lang != types.LangC || spec.PointerSize != 8 {
		t.Errorf("spec: format %q lang %v pointer size %d", spec.Format, spec.Lang, spec.PointerSize)
	}
	out, err := exec.Command(bpftool, "btf", "dump", "file", btf.KernelBTF).Output()
	if err != nil {
		t.Fatalf("bpftool: %v", err)
	}
	type want struct{ size, members int64 }
	wants := map[string][]want{}
	re := regexp.MustCompile(`^\[\d+\] (STRUCT|UNION) '([^']+)' size=(\d+) vlen=(\d+)`)
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		size, _ := strconv.ParseInt(m[3], 10, 64)
		n, _ := strconv.ParseInt(m[4], 10, 64)
		wants[m[2]] = append(wants[m[2]], want{size, n})
	}
	checked := 0
	for name, ws := range wants {
		if len(ws) != 1 {
			continue
		}
		var got *types.Struct
		for _, ty := range spec.Lookup(name) {
			if s, ok := ty.(*types.Struct); ok {
				got = s
			}
		}
		if got == nil {
			t.Errorf("%s: not loaded", name)
			continue
		}
		if got.ByteSize != ws[0].size || int64(len(got.Members)) != ws[0].members {
			t.Errorf("%s: size %d, %d members; bpftool says %d, %d", name, got.ByteSize, len(got.Members), ws[0].size, ws[0].members)
		}
		checked++
	}
	if checked < 1000 {
		t.Errorf("only %d structs and unions checked", checked)
	}
	for _, name := range []string{"task_struct", "sk_buff", "bpf_attr"} {
		ts, err := spec.Find(name)
		if err != nil || len(ts) != 1 {
			t.Errorf("Find(%s) = %v, %v", name, ts, err)
		}
	}
	t.Logf("%d types checked against bpftool", checked)
}

// TestEncodedTruth encodes the C fixture's DWARF as BTF with pahole -J and
// requires the BTF loader to give what the C compiler reported: sizes,
// alignments (inferred, since BTF does not record them), member offsets and
// bitfields.
func TestEncodedTruth(t *testing.T) {
	b := testutil.Fixture(t, "c-layouts")
	checkTruth(t, b, encode(t, b.Path))
}

// checkTruth loads the BTF at path, encoded from fixture b, and requires
// what the C compiler reported of b's types.
func checkTruth(t *testing.T, b *testutil.Built, path string) {
	spec, err := btf.Load(path, &btf.Options{Standalone: true})
	if err != nil {
		t.Fatal(err)
	}
	truth := b.Truth(t)
	for _, tt := range truth {
		if _, problems := testutil.CheckTruth(spec, tt, true); len(problems) > 0 {
			t.Errorf("%s:\n\t%s", tt.Name, strings.Join(problems, "\n\t"))
		}
	}
	if len(truth) < 10 {
		t.Errorf("only %d truth types", len(truth))
	}
}

// TestDifferential prints every struct and union of the C fixture from its
// DWARF and from BTF that pahole -J encoded from that DWARF: the two
// loaders must give the same model, so the same text.
func TestDifferential(t *testing.T) {
	b := testutil.Fixture(t, "c-layouts")
	differential(t, b, encode(t, b.Path), true)
}

// differential requires the structs and unions of the BTF at path,
// encoded from fixture b, to print as those of b's DWARF; flat when the
// encoder flattened multi-dimensional arrays.
func differential(t *testing.T, b *testutil.Built, path string, flat bool) {
	dspec, err := dwarf.Load(b.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	bspec, err := btf.Load(path, &btf.Options{Standalone: true})
	if err != nil {
		t.Fatal(err)
	}
	if flat {
		flattenArrays(dspec)
	}
	dtext, btext := render(t, dspec), render(t, bspec)
	n := 0
	for name, d := range dtext {
		bt, ok := btext[name]
		if !ok {
			t.Errorf("%s: in DWARF, not in BTF", name)
			continue
		}
		if d != bt {
			t.Errorf("%s differs:\n--- DWARF:\n%s--- BTF:\n%s", name, d, bt)
		}
		n++
	}
	for name := range btext {
		if _, ok := dtext[name]; !ok {
			t.Errorf("%s: in BTF, not in DWARF", name)
		}
	}
	if n < 15 {
		t.Errorf("only %d types compared", n)
	}
}

// flattenArrays rewrites int m[2][3] members as int m[6]: pahole 1.24's
// BTF encoder flattens multi-dimensional arrays (BTF itself could nest
// them), so the BTF it writes says no more than that.
func flattenArrays(spec *types.Spec) {
	seen := map[*types.Struct]bool{}
	var walk func(s *types.Struct)
	walk = func(s *types.Struct) {
		if seen[s] {
			return
		}
		seen[s] = true
		for i := range s.Members {
			m := &s.Members[i]
			if a, ok := m.Type.(*types.Array); ok {
				flat := &types.Array{Elem: a.Elem, Count: a.Count}
				for inner, ok := flat.Elem.(*types.Array); ok; inner, ok = flat.Elem.(*types.Array) {
					flat.Elem, flat.Count = inner.Elem, flat.Count*inner.Count
				}
				m.Type = flat
			}
			if in, ok := m.Type.(*types.Struct); ok && in.Name == "" {
				walk(in)
			}
		}
	}
	for _, ty := range spec.Types() {
		if s, ok := ty.(*types.Struct); ok {
			walk(s)
		}
	}
}

// render prints each named struct and union of spec (C only: the fixture
// links nothing else with types) in pahole's text.
func render(t *testing.T, spec *types.Spec) map[string]string {
	return renderEach(t, spec, func(s *types.Struct, _ int) string { return s.Kind.String() + " " + s.Name })
}

// renderAll is render keeping every definition of a name.
func renderAll(t *testing.T, spec *types.Spec) map[string]string {
	return renderEach(t, spec, func(s *types.Struct, i int) string { return fmt.Sprintf("%s %s #%d", s.Kind, s.Name, i) })
}

func renderEach(t *testing.T, spec *types.Spec, key func(*types.Struct, int) string) map[string]string {
	out := map[string]string{}
	for i, ty := range spec.Types() {
		s, ok := ty.(*types.Struct)
		if !ok || s.Incomplete || s.Name == "" {
			continue
		}
		l, err := layout.Analyze(s, nil)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		var buf bytes.Buffer
		if err := layout.WriteText(&buf, l, nil); err != nil {
			t.Fatal(err)
		}
		out[key(s, i)] = buf.String()
	}
	return out
}

// TestTags compiles a BPF object with clang, whose BTF carries type tags
// (TYPE_TAG) and declaration tags (DECL_TAG), and requires both in the
// model.
func TestTags(t *testing.T) {
	clang, err := exec.LookPath("clang")
	if err != nil {
		testutil.Skipf(t, "clang not installed: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "tags.c")
	code := `#define __user __attribute__((btf_type_tag("user")))
#define __tag(x) __attribute__((btf_decl_tag(x)))
struct tagged {
	int __user *uptr;
	long plain __tag("field");
	unsigned int bits:3, more:5;
} __tag("type");
struct tagged g;
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "tags.o")
	if msg, err := exec.Command(clang, "-target", "bpf", "-g", "-O2", "-c", "-o", obj, src).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, msg)
	}
	spec, err := btf.Load(obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := spec.Lookup("tagged")
	if len(ts) != 1 {
		t.Fatalf("tagged: %d definitions", len(ts))
	}
	s := ts[0].(*types.Struct)
	if strings.Join(s.Tags, ",") != "type" {
		t.Errorf("struct tags %q, want [type]", s.Tags)
	}
	p, ok := s.Members[0].Type.(*types.Pointer)
	if !ok {
		t.Fatalf("uptr is %T", s.Members[0].Type)
	}
	if q, ok := p.Target.(*types.Qualifier); !ok || q.Kind != types.TypeTag || q.Tag != "user" {
		t.Errorf("uptr target is %#v, want a user type tag", p.Target)
	}
	if strings.Join(s.Members[1].Tags, ",") != "field" {
		t.Errorf("plain tags %q, want [field]", s.Members[1].Tags)
	}
	if m := s.Members[3]; m.Offset != 131 || m.BitSize != 5 {
		t.Errorf("more: bits %d+%d, want 131+5", m.Offset, m.BitSize)
	}
}

// TestBadInput requires one line naming the file, and the sentinel error
// where one applies, for input that is not usable BTF.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	raw := rawSeed(t)
	noBTF := testutil.Fixture(t, "c-layouts").Path
	cases := []struct {
		name, path, want string
		sentinel         error
	}{
		{"missing", filepath.Join(dir, "nope"), "no such file", nil},
		{"directory", dir, "directory", nil},
		{"empty", write("empty", nil), "not BTF", nil},
		{"text", write("text", []byte("hello world\n")), "not BTF", nil},
		{"truncated", write("trunc", raw[:len(raw)/2]), "raw BTF", nil},
		{"bad header", write("hdr", append([]byte{0x9f, 0xeb, 1, 0, 200, 0, 0, 0}, raw[8:]...)), "raw BTF", nil},
		{"ELF without .BTF", noBTF, "pahole -J", types.ErrNoDebugInfo},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := btf.Load(tc.path, &btf.Options{Standalone: true})
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, tc.path) || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q: want one line naming %s and saying %q", msg, tc.path, tc.want)
			}
			if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
				t.Errorf("error %q does not wrap %v", msg, tc.sentinel)
			}
		})
	}
}

// rawSeed is small raw BTF: a C object with a few types, encoded by pahole.
func rawSeed(t testing.TB) []byte {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "seed.c")
	code := "struct s { char a; int b:3, c:5; long d[2][3]; struct s *next; union { int x; float y; } u; };\n" +
		"enum e { A = -1, B = 7 }; typedef struct { enum e e; void (*fn)(int, ...); const volatile int *p; } t; struct s v; t w;\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "seed.o")
	if msg, err := exec.Command("gcc", "-g", "-c", "-o", obj, src).CombinedOutput(); err != nil {
		testutil.Skipf(t, "gcc: %v %s", err, msg)
	}
	b, err := os.ReadFile(encode(t, obj))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func FuzzLoad(f *testing.F) {
	f.Add(rawSeed(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		spec, err := btf.LoadBytes(b, "fuzz", &btf.Options{Standalone: true})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error has several lines: %q", err)
			}
			return
		}
		// Whatever loads must be printable.
		names := make([]string, 0, spec.Len())
		for _, ty := range spec.Types() {
			names = append(names, ty.TypeName())
			if s, ok := ty.(*types.Struct); ok && !s.Incomplete {
				if l, err := layout.Analyze(s, nil); err == nil {
					_ = layout.WriteText(&bytes.Buffer{}, l, nil)
				}
			}
		}
		sort.Strings(names)
	})
}
