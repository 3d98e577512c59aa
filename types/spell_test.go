package types_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// declarators are the C declarations whose spelling takes care: pointers
// to arrays and functions, arrays of them, qualifiers on pointers and on
// what they point at, a typedef of a vector behind a const pointer (x86's
// _mm_load_si128(const __m128i *)), variadic function pointers.
const declarators = `
typedef long long v2di __attribute__((vector_size(16)));
typedef int (*cb_t)(void *, int);
struct decls {
	int (*pa)[3];
	int *ap[3];
	int (*fp)(const char *, ...);
	int (*afp[2])(void);
	int (*(*frp)(int))[4];
	char *const cp;
	const char *const ccp;
	const volatile int *volatile cvp;
	const v2di *vp;
	int m[2][3];
	const int (*pca)[3];
	cb_t cbs[2];
	void (*release)(struct decls *const);
	int **pp;
	void (*(*signal_like)(int, void (*)(int)))(int);
	int (*const cfp)(void);
	char *restrict rp;
	const struct decls *(*const *next)[2];
};
struct decls d;
`

// TestDeclareCompiles: every member of a struct that gcc describes in DWARF,
// declared again by types.Declare, has the type gcc gave the original (gcc
// checks __builtin_types_compatible_p on pointers to both members, so that
// qualifiers count at every level).
func TestDeclareCompiles(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Skipf(t, "gcc not installed: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "decls.c")
	if err := os.WriteFile(src, []byte(declarators), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "decls.so")
	if out, err := exec.Command(gcc, "-g", "-shared", "-o", so, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	spec, err := dwarf.Load(so, nil)
	if err != nil {
		t.Fatal(err)
	}
	found, err := spec.Find("decls")
	if err != nil {
		t.Fatal(err)
	}
	s, ok := found[0].(*types.Struct)
	if !ok || len(s.Members) < 18 {
		t.Fatalf("struct decls: %#v", found[0])
	}
	var b strings.Builder
	b.WriteString(declarators + "struct copy {\n")
	for _, m := range s.Members {
		fmt.Fprintf(&b, "\t%s;\n", types.Declare(m.Type, m.Name))
	}
	b.WriteString("};\n")
	for _, m := range s.Members {
		fmt.Fprintf(&b, "_Static_assert(__builtin_types_compatible_p(__typeof__(&((struct decls *)0)->%s), __typeof__(&((struct copy *)0)->%[1]s)), \"%[1]s\");\n", m.Name)
	}
	check := filepath.Join(dir, "check.c")
	if err := os.WriteFile(check, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-fsyntax-only", check).CombinedOutput(); err != nil {
		t.Fatalf("gcc rejects the declarations again:\n%s\n%s", out, b.String())
	}
}

// TestSpellCycle: a type graph no loader hands out (a pointer to itself)
// is spelled with a cycle mark, in every syntax, instead of recursing.
func TestSpellCycle(t *testing.T) {
	p := &types.Pointer{ByteSize: 8}
	p.Target = p
	fp := &types.FuncProto{}
	fp.Params = []types.FuncParam{{Type: &types.Pointer{ByteSize: 8, Target: fp}}}
	for _, ty := range []types.Type{p, fp} {
		for _, lang := range []types.Lang{types.LangC, types.LangGo, types.LangRust} {
			for _, s := range []types.Syntax{types.SyntaxC, types.SyntaxNative, types.SyntaxPahole} {
				if got := types.Spell(ty, lang, s); !strings.Contains(got, "/* cycle */") {
					t.Errorf("Spell(%T, %s, %d) = %q, want a cycle mark", ty, lang, s, got)
				}
			}
		}
	}
}
