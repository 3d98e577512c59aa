//go:build linux

package probe_test

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binscope/binscope/attach"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// op builds a types.Op: a register name, a constant, or an operation with
// an optional operand.
func op(code types.OpCode, v ...int64) types.Op {
	o := types.Op{Code: code}
	if len(v) > 0 {
		o.Value = v[0]
	}
	return o
}

func reg(r string) types.Op        { return types.Op{Code: types.OpReg, Reg: r} }
func cst(v int64) types.Op         { return types.Op{Code: types.OpConst, Value: v} }
func ops(o ...types.Op) []types.Op { return o }

// exprCases are the expressions of testdata/expr/expr.c, by the names it
// records them under, as stack machine programs over target's arguments at
// its entry: a in RDI, b in RSI, c in RDX, the array m at RCX. gvar is
// filled with the variable's address from the symbol table.
func exprCases(gvar uint64) map[string][]types.Op {
	a, b, c, m := reg("RDI"), reg("RSI"), reg("RDX"), reg("RCX")
	return map[string][]types.Op{
		"mul3":        ops(a, cst(3), op(types.OpMul), cst(1), op(types.OpPlus)),
		"xor":         ops(a, b, op(types.OpXor)),
		"minus":       ops(a, b, op(types.OpMinus)),
		"and_or":      ops(a, b, op(types.OpAnd), c, op(types.OpOr)),
		"shl":         ops(a, c, cst(63), op(types.OpAnd), op(types.OpShl)),
		"shr":         ops(a, c, cst(63), op(types.OpAnd), op(types.OpShr)),
		"shra":        ops(a, c, cst(63), op(types.OpAnd), op(types.OpShra)),
		"shl_any":     ops(a, c, op(types.OpShl)),
		"shra_any":    ops(a, c, op(types.OpShra)),
		"div":         ops(a, b, op(types.OpDiv)),
		"divu":        ops(a, b, op(types.OpDivU)),
		"mod":         ops(a, b, op(types.OpMod)),
		"mods":        ops(a, b, op(types.OpModS)),
		"lt":          ops(a, b, op(types.OpLt)),
		"ltu":         ops(a, b, op(types.OpLtU)),
		"ge":          ops(a, b, op(types.OpGe)),
		"gtu":         ops(a, b, op(types.OpGtU)),
		"eq":          ops(a, b, op(types.OpEq)),
		"ne":          ops(a, c, op(types.OpNe)),
		"neg":         ops(a, op(types.OpNeg)),
		"not":         ops(a, op(types.OpNot)),
		"abs":         ops(a, op(types.OpAbs)),
		"zext4":       ops(a, op(types.OpZext, 4)),
		"sext4":       ops(a, op(types.OpSext, 4)),
		"sext1":       ops(a, op(types.OpSext, 1)),
		"zext2":       ops(a, op(types.OpZext, 2)),
		"deref":       ops(m, op(types.OpDeref, 8)),
		"deref4":      ops(m, op(types.OpDeref, 4)),
		"deref1_next": ops(m, cst(8), op(types.OpPlus), op(types.OpDeref, 1)),
		"deref_chain": ops(m, cst(8), op(types.OpPlus), op(types.OpDeref, 8), cst(2), op(types.OpMul)),
		"gvar":        ops(types.Op{Code: types.OpAddr, Value: int64(gvar)}, op(types.OpDeref, 8)),
		// a b c -> rot -> c a b -> minus -> c a-b -> swap -> a-b c -> drop
		"stack": ops(a, b, c, op(types.OpRot), op(types.OpMinus), op(types.OpSwap), op(types.OpDrop)),
		// a + (b + (c + a)), the last a picked from below b and c.
		"pick": ops(a, b, c, op(types.OpPick, 2), op(types.OpPlus), op(types.OpPlus), op(types.OpPlus)),
		// a < 0 ? -a : a, with a branch.
		"bra_abs": ops(a, op(types.OpDup), cst(0), op(types.OpLt), op(types.OpBra, 1), op(types.OpSkip, 1), op(types.OpNeg)),
		// a, or no value when a is 0.
		"fail_zero": ops(a, op(types.OpDup), op(types.OpBra, 1), op(types.OpFail)),
		"bad_read":  ops(cst(8), op(types.OpDeref, 8)),
	}
}

// resolveBuilt builds testdata/expr/SRC with gcc OPT into dir and resolves
// defs against it.
func resolveBuilt(t *testing.T, dir, src, opt string, defs ...string) (string, *spec.Spec) {
	t.Helper()
	if os.Geteuid() != 0 {
		testutil.Skipf(t, "probing needs root")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Skipf(t, "gcc: %v", err)
	}
	bin := filepath.Join(dir, strings.TrimSuffix(src, ".c"))
	if out, err := exec.Command(gcc, opt, "-g", "-o", bin, filepath.Join("testdata", "expr", src)).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	f, err := dwarf.Open(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := probe.NewResolver(f)
	if err != nil {
		t.Fatal(err)
	}
	var ds []*probe.Def
	for _, text := range defs {
		d, err := probe.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	ps, err := r.Spec(ds)
	if err != nil {
		t.Fatal(err)
	}
	return bin, ps
}

// runAttached attaches ps to bin, runs bin with args and returns the
// events, in order.
func runAttached(t *testing.T, ps *spec.Spec, bin string, args ...string) []*spec.Event {
	t.Helper()
	sess, err := attach.Probes(ps, bin, nil)
	if err != nil {
		if errors.Is(err, attach.ErrPermission) {
			testutil.Skipf(t, "%v", err)
		}
		t.Fatal(err)
	}
	defer sess.Close()
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil && !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("%s: %v %s", bin, err, out)
	}
	var evs []*spec.Event
	for {
		ev, err := sess.Read(time.Now().Add(500 * time.Millisecond))
		if err != nil {
			return evs
		}
		evs = append(evs, ev)
	}
}

// TestExprBPF runs every operation of the expression compiler for real:
// stack machine programs at the entry of the fixture's target, in BPF,
// give each call the values the program itself computed in C from the
// same arguments, and no value where C has none (a division by zero, an
// unmapped address, OpFail).
func TestExprBPF(t *testing.T) {
	dir := t.TempDir()
	bin, ps := resolveBuilt(t, dir, "expr.c", "-O1", "target")
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := ef.Symbols()
	ef.Close()
	if err != nil {
		t.Fatal(err)
	}
	var gvar uint64
	for _, s := range syms {
		if s.Name == "gvar" {
			gvar = s.Value
		}
	}
	if gvar == 0 {
		t.Fatal("no symbol gvar")
	}
	if n := len(ps.Probes[0].Sites); n != 1 {
		t.Fatalf("%d sites for target, want its entry", n)
	}
	cases := exprCases(gvar)
	var names []string
	site := &ps.Probes[0].Sites[0]
	for name, o := range cases {
		if len(site.Args) == spec.MaxArgs {
			// A site reads at most MaxArgs values: one more site at
			// the same address takes the rest.
			ps.Probes[0].Sites = append(ps.Probes[0].Sites, spec.Site{Kind: site.Kind, Function: site.Function, Addr: site.Addr, FileOffset: site.FileOffset, Guard: site.Guard})
			site = &ps.Probes[0].Sites[len(ps.Probes[0].Sites)-1]
		}
		names = append(names, name)
		site.Args = append(site.Args, spec.Fetch{Name: name, Type: "s64", Size: 8, Chains: []spec.Chain{{Expr: o}}})
	}
	rec := filepath.Join(dir, "rec")
	evs := runAttached(t, ps, bin, rec)
	text, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var want []map[string]string
	for _, line := range strings.Split(strings.TrimSpace(string(text)), "\n") {
		m := map[string]string{}
		for _, kv := range strings.Fields(line)[1:] {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		want = append(want, m)
	}
	nsites := len(ps.Probes[0].Sites)
	got := make([]map[string]string, len(want))
	for i := range got {
		got[i] = map[string]string{}
	}
	hits := make([]int, nsites)
	for _, ev := range evs {
		call := hits[ev.Site]
		hits[ev.Site]++
		if call >= len(got) {
			t.Fatalf("site %d: more hits than the %d calls", ev.Site, len(want))
		}
		for _, v := range ev.Args {
			got[call][v.Name] = "?"
			if v.OK {
				got[call][v.Name] = strconv.FormatInt(int64(v.Num), 10)
			}
		}
	}
	compared := 0
	for i := range want {
		for _, name := range names {
			w, ok := want[i][name]
			if !ok {
				t.Fatalf("the program records no %s", name)
			}
			if got[i][name] != w {
				t.Errorf("call %d: %s = %s, the program computed %s (%s)", i, name, got[i][name], w, types.OpsString(cases[name]))
			}
			compared++
		}
	}
	if min := 8 * len(cases); compared < min {
		t.Errorf("compared %d values, want at least %d", compared, min)
	}
}

// TestCallerValues: GCC removes work's unused parameter from the clone it
// makes and describes it by DW_OP_GNU_parameter_ref, whose value each
// caller's call site gives in its own frame: the probe at the clone's
// entry reads it through the caller its return address names, and gets,
// call after call, the values the callers recorded passing.
func TestCallerValues(t *testing.T) {
	dir := t.TempDir()
	bin, ps := resolveBuilt(t, dir, "callers.c", "-O2", "work n unused")
	sites := ps.Probes[0].Sites
	if len(sites) != 1 || sites[0].Kind != spec.SiteClone {
		t.Fatalf("sites %+v, want the clone's entry (gcc makes work.constprop or work.isra)", sites)
	}
	if a := sites[0].Args[1]; a.Unavailable != "" || len(a.Chains) != 1 || len(a.Chains[0].Expr) == 0 {
		t.Fatalf("unused: %+v, want an expression over the callers", a)
	}
	rec := filepath.Join(dir, "rec")
	evs := runAttached(t, ps, bin, rec)
	text, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, line := range strings.Split(strings.TrimSpace(string(text)), "\n") {
		want = append(want, strings.TrimPrefix(line, "work "))
	}
	for _, ev := range evs {
		got = append(got, fmt.Sprintf("n=%s unused=%s", ev.Args[0], ev.Args[1]))
	}
	if len(want) < 10 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("goprobe read:\n%s\nthe callers passed:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
