package main

import (
	"bytes"
	"debug/dwarf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/binscope/binscope/funcview"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/loader"
	"github.com/binscope/binscope/types"
)

// protoShapes is a C program with the shapes a prototype line spells:
// inline, variadic, no parameters, qualified pointers and pointers to
// pointers, restrict, pointers to functions and to arrays, unions, enums,
// typedefs, _Bool, complex, a function returning a function pointer, a
// K&R definition and a static function taking a struct by value.
const protoShapes = `#include <stdarg.h>
#include <stddef.h>
typedef unsigned long ulong_t;
typedef int (*handler_t)(void *, int);
struct node { struct node *next; int v; };
union val { int i; double d; };
enum mode { M_A, M_B };
static inline __attribute__((always_inline)) int sq(int x) { return x * x; }
int bar(int a, int b) { return sq(a) + b; }
int sum(int n, ...) { va_list ap; va_start(ap, n); int s = 0; while (n--) s += va_arg(ap, int); va_end(ap); return s; }
void noargs(void) {}
struct node *mk(struct node *p, unsigned long n, const volatile int *q, void (*cb)(int, char *)) { p->v = n + *q; cb(1, 0); return p; }
char **arr(int a[10], int (*m)[3], char **restrict out) { return out; }
const char *const *cpc(const char *const *p, char *const q) { return p; }
union val uv(union val v, enum mode m, _Bool f, long double ld, float _Complex z) { return v; }
ulong_t td(ulong_t x, handler_t h, size_t n) { return x + h(0, n); }
int (*retfp(int k))(void *, int) { return 0; }
void *vp(void *p, const void *cp, volatile char c, signed char sc, unsigned short us, long long ll) { return p; }
int old_style(a, b) int a; char *b; { return a; }
static int local_static(struct node n) { return n.v; }
int main(int argc, char **argv) { struct node n = {0, 1}; return bar(argc, 2) + sum(2, 1, 2) + local_static(n); }
`

// pfunctLines runs pfunct -P on path: its lines by function name.
func pfunctLines(t *testing.T, path string) map[string][]string {
	t.Helper()
	pfunct, err := exec.LookPath("pfunct")
	if err != nil {
		testutil.Skipf(t, "pfunct not installed (apt-get install dwarves): %v", err)
	}
	var stdout bytes.Buffer
	cmd := exec.Command(pfunct, "-P", path)
	cmd.Stdout = &stdout // stderr: pfunct's complaints about tags it does not know
	if err := cmd.Run(); err != nil {
		t.Fatalf("pfunct -P %s: %v", path, err)
	}
	byName := map[string][]string{}
	for _, l := range strings.Split(stdout.String(), "\n") {
		if l != "" {
			byName[protoName(l)] = append(byName[protoName(l)], l)
		}
	}
	return byName
}

// protoName is the function's name in a -P line: the identifier before
// the parameter list that ends the line.
func protoName(line string) string {
	end := strings.LastIndexByte(line, ')')
	depth := 0
	for i := end; i >= 0; i-- {
		switch line[i] {
		case ')':
			depth++
		case '(':
			if depth--; depth == 0 {
				f := strings.Fields(line[:i])
				if len(f) == 0 {
					return ""
				}
				return f[len(f)-1]
			}
		}
	}
	return ""
}

// TestPfunctPrototypeLines: gofunct -P prints C functions as pfunct 1.24's
// -P does, byte for byte: on a C program with every shape of prototype
// (built -O0, where pfunct lists each function once) the two outputs are
// the same lines; on glibc every line of ours is pfunct's, or, where
// pfunct printed a declaration's DIE (whose parameters have no names),
// ours with the names left out.
func TestPfunctPrototypeLines(t *testing.T) {
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "shapes.c"), filepath.Join(dir, "shapes")
	if err := os.WriteFile(src, []byte(protoShapes), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-g", "-O0", "-o", bin, src).CombinedOutput(); err != nil {
		testutil.Skipf(t, "gcc: %v\n%s", err, out)
	}
	var want []string
	for _, ls := range pfunctLines(t, bin) {
		want = append(want, ls...)
	}
	code, out, errs := runGofunct("--no-cache", "-P", bin)
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	sort.Strings(want)
	sort.Strings(got)
	if code != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) < 14 {
		t.Errorf("exit %d %s\ngofunct -P:\n%s\npfunct -P:\n%s", code, errs, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	if testing.Short() {
		return
	}
	libc := testutil.RealBinary(t, "libc")
	pf := pfunctLines(t, testutil.DebugFile(libc))
	dies, declared := subprogramDIEs(t, testutil.DebugFile(libc))
	c, err := loader.OpenCode(libc, &loader.CodeOptions{Params: true, SpelledParams: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	count := map[string]int{}
	var wrong, order []string
	for _, fn := range c.Funcs() {
		if want, ok := declared[fn.Name]; ok && dies[fn.Name] == 1 && fn.Lang.CLike() && !fn.SymbolOnly {
			// The parameters in the order the one declaring DIE lists
			// them, whichever concrete copy (a clone reorders them)
			// their locations come from.
			var got []string
			for _, p := range fn.Params {
				got = append(got, p.Name)
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				order = append(order, fmt.Sprintf("%s: %v, declared %v", fn.Name, got, want))
			} else if len(want) > 1 {
				count["parameters in declared order (two or more)"]++
			}
		}
		theirs, ok := pf[fn.Name]
		if fn.SymbolOnly || !ok {
			count["not in pfunct's listing"]++
			continue
		}
		line := funcview.PfunctLine(fn)
		unnamed := *fn
		unnamed.Params = append([]types.Param(nil), fn.Params...)
		for i := range unnamed.Params {
			unnamed.Params[i].Name = ""
		}
		switch {
		case slices.Contains(theirs, line):
			count["the same line"]++
		case slices.Contains(theirs, funcview.PfunctLine(&unnamed)):
			count["pfunct printed a declaration, without parameter names"]++
		case dies[fn.Name] > 1:
			// pfunct prints the first DIE of an external name (often a
			// declaration from a header: no parameter names, other
			// typedefs, restrict) and every static one; the model
			// joins them into one function.
			count["the name has several DIEs, pfunct printed another"]++
		default:
			wrong = append(wrong, line+"\n\tpfunct: "+strings.Join(theirs, "\n\tpfunct: "))
		}
	}
	t.Logf("glibc: %v", count)
	if len(order) > 0 {
		t.Errorf("%d functions list their parameters in another order than their DIE:\n%s", len(order), strings.Join(order, "\n"))
	}
	if len(wrong) > 0 {
		t.Errorf("%d lines are not pfunct's:\n%s", len(wrong), strings.Join(wrong, "\n"))
	}
	if count["the same line"] < 3000 || count["pfunct printed a declaration, without parameter names"] < 300 ||
		count["parameters in declared order (two or more)"] < 1500 {
		t.Errorf("too few lines checked: %v", count)
	}
}

// subprogramDIEs counts, by name, the subprogram DIEs at the top of a
// compile unit that are not a concrete copy of another (no abstract
// origin, no specification): definitions, declarations, abstract
// instances; and the names of each one's formal parameters, in their
// order (the declaration's). Read with the standard library.
func subprogramDIEs(t *testing.T, path string) (map[string]int, map[string][]string) {
	t.Helper()
	d := readDWARF(t, path)
	n, params := map[string]int{}, map[string][]string{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return n, params
		}
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit:
			continue // into its children
		case dwarf.TagSubprogram:
			name, _ := e.Val(dwarf.AttrName).(string)
			if e.Val(dwarf.AttrAbstractOrigin) == nil && e.Val(dwarf.AttrSpecification) == nil && name != "" {
				n[name]++
				if e.Children {
					var names []string
					for {
						c, err := r.Next()
						if err != nil {
							t.Fatal(err)
						}
						if c == nil || c.Tag == 0 {
							break
						}
						if c.Tag == dwarf.TagFormalParameter {
							pn, _ := c.Val(dwarf.AttrName).(string)
							names = append(names, pn)
						}
						if c.Children {
							r.SkipChildren()
						}
					}
					params[name] = names
					continue
				}
			}
		}
		if e.Children {
			r.SkipChildren()
		}
	}
}
