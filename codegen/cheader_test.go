package codegen_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// compileBPF compiles src with clang -target bpf, as a BPF program would
// include the header; the header's _Static_asserts run then.
func compileBPF(t *testing.T, dir, src string) {
	t.Helper()
	clang, err := exec.LookPath("clang")
	if err != nil {
		testutil.Skipf(t, "clang not installed: %v", err)
	}
	c := filepath.Join(dir, "test.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(clang, "-target", "bpf", "-O2", "-g", "-c", c, "-o", filepath.Join(dir, "test.o")).CombinedOutput()
	if err != nil {
		t.Fatalf("clang -target bpf: %v\n%s", err, firstLines(out, 30))
	}
}

func firstLines(b []byte, n int) string {
	l := strings.SplitN(string(b), "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}

// TestHeaderTruth: for every fixture, the header of the types whose layout
// the fixture's language reports (reflect, offset_of!, @offsetOf,
// offsetof) compiles with clang -target bpf, its own asserts hold, and so
// do asserts made from the language's report: sizes and member offsets in
// C equal the compiler's.
func TestHeaderTruth(t *testing.T) {
	for _, name := range testutil.FixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			b := testutil.Fixture(t, name)
			truth := b.Truth(t)
			spec, err := dwarf.Load(b.Path, nil)
			if err != nil {
				t.Fatal(err)
			}
			var roots []types.Type
			byTruth := map[string]types.Type{}
			for _, tt := range truth {
				ts := spec.Lookup(tt.Name)
				if len(ts) == 0 {
					continue
				}
				roots = append(roots, ts[0])
				byTruth[tt.Name] = ts[0]
			}
			if len(roots) < 3 {
				t.Fatalf("only %d of %d truth types found", len(roots), len(truth))
			}
			var h bytes.Buffer
			spell, err := codegen.WriteHeader(&h, roots, &codegen.HeaderOptions{Source: b.Path})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "types.h"), h.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var src strings.Builder
			src.WriteString("#include \"types.h\"\n#include \"types.h\" /* the include guard holds */\n")
			checks := 0
			for _, tt := range truth {
				root := byTruth[tt.Name]
				if root == nil {
					continue
				}
				c := spell[root]
				fmt.Fprintf(&src, "_Static_assert(sizeof(%s) == %d, \"%s\");\n", c, tt.Size, tt.Name)
				checks++
				s, ok := types.Resolve(root).(*types.Struct)
				if !ok || s.Variants != nil {
					continue
				}
				direct := map[string]bool{}
				for _, m := range s.Members {
					// A C++ base class is not a C member (its fields are
					// the struct's own when its tail padding is reused).
					direct[m.Name] = m.BitSize == 0 && !(m.Embedded && s.Lang == types.LangCPlusPlus)
				}
				for _, m := range tt.Members {
					if !direct[m.Name] || m.BitSize != 0 {
						continue
					}
					fmt.Fprintf(&src, "_Static_assert(__builtin_offsetof(%s, %s) == %d, \"%s.%s\");\n", c, codegen.CName(m.Name), m.Offset, tt.Name, m.Name)
					checks++
				}
			}
			compileBPF(t, dir, src.String())
			if checks < 10 {
				t.Fatalf("only %d truth asserts", checks)
			}
		})
	}
}

// TestHeaderKernel: the header of every struct and union of the running
// kernel's BTF (what bpftool btf dump format c makes vmlinux.h from)
// compiles, and its tens of thousands of asserts hold.
func TestHeaderKernel(t *testing.T) {
	path := btf.KernelBTF
	if _, err := os.Stat(path); err != nil {
		testutil.Skipf(t, "no kernel BTF: %v", err)
	}
	spec, err := btf.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var roots []types.Type
	for _, ty := range spec.Types() {
		if s, ok := ty.(*types.Struct); ok && s.Name != "" {
			roots = append(roots, ty)
		}
	}
	var h bytes.Buffer
	if _, err := codegen.WriteHeader(&h, roots, &codegen.HeaderOptions{Source: path}); err != nil {
		t.Fatal(err)
	}
	asserts := strings.Count(h.String(), "_Static_assert(")
	if asserts < len(roots) {
		t.Fatalf("%d asserts for %d types", asserts, len(roots))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vmlinux.h"), h.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	compileBPF(t, dir, "#include \"vmlinux.h\"\n")
}
