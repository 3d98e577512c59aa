package dwarf_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/funcview"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// asmInsn is one instruction of the Go compiler's -S listing.
type asmInsn struct {
	off  uint64
	line int
	op   string
	args string
}

// parseGoAsm splits `go build -gcflags=-S` output by function.
func parseGoAsm(out []byte) (map[string][]asmInsn, map[string]string) {
	head := regexp.MustCompile(`^(\S+) STEXT`)
	insn := regexp.MustCompile(`^\t0x([0-9a-f]+) \d+ \(([^)]*):(\d+)\)\t(\S+)\t?(.*)$`)
	fns := map[string][]asmInsn{}
	text := map[string]string{}
	cur := ""
	for _, l := range strings.Split(string(out), "\n") {
		if m := head.FindStringSubmatch(l); m != nil {
			cur = m[1]
			continue
		}
		if m := insn.FindStringSubmatch(l); m != nil && cur != "" {
			off, _ := strconv.ParseUint(m[1], 16, 64)
			line, _ := strconv.Atoi(m[3])
			fns[cur] = append(fns[cur], asmInsn{off: off, line: line, op: m[4], args: m[5]})
			if m[4] == "TEXT" {
				text[cur] = m[5]
			}
		}
	}
	return fns, text
}

// goAsmReg is a Go assembler register name as the model spells it.
func goAsmReg(r string) string {
	switch r {
	case "AX", "BX", "CX", "DX", "DI", "SI", "BP", "SP":
		return "R" + r
	case "AL", "BL", "CL", "DL":
		return "R" + r[:1] + "X"
	}
	return r // R8..R15, X0..X15
}

// TestParamsGo: the location gofunct gives each parameter of a register-ABI
// Go function at entry is the register (or stack slot) the function's own
// code, as the compiler lists it (-S), reads the argument from; the line
// table addresses are those of the listing.
func TestParamsGo(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "params")
	cmd := exec.Command("go", "build", "-gcflags=-S", "-o", bin, ".")
	cmd.Dir = filepath.Join("testdata", "params", "go")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	asm, textLine := parseGoAsm(out)
	f, fns := withParams(t, bin)
	byName := map[string]*types.Func{}
	for _, fn := range fns {
		byName[fn.Name] = fn
	}
	// Which parameter piece each global is stored from: the fixture's
	// source says so ("sinkN = len(s)" stores piece 1 of s).
	stores := map[string]map[string][2]any{
		"main.mixed":           {"sinkA": {"a", 0}, "sinkF": {"f", 0}, "sinkB": {"b", 0}, "sinkG": {"g", 0}, "sinkC": {"c", 0}},
		"main.aggregates":      {"sinkN": {"s", 1}, "sinkX": {"p", 0}, "sinkY": {"p", 1}, "sinkA": {"n", 0}, "sinkZ": {"q", 2}},
		"main.counter.add":     {"sinkX": {"c", 0}, "sinkY": {"k", 0}, "sinkF": {"d", 0}},
		"main.(*counter).many": {"sinkX": {"a", 0}},
	}
	store := regexp.MustCompile(`^(\w+), main\.(sink\w)\(SB\)$`)
	load := regexp.MustCompile(`^main\.(\w+)\+(\d+)\(SP\), (\w+)$`)
	checked := 0
	for name, want := range stores {
		fn := byName[name]
		if fn == nil || len(asm[name]) == 0 {
			t.Fatalf("%s: not in the binary or the listing", name)
		}
		params := map[string]types.Param{}
		for _, p := range fn.Params {
			params[p.Name] = p
		}
		for _, in := range asm[name] {
			if m := store.FindStringSubmatch(in.args); m != nil && strings.HasPrefix(in.op, "MOV") {
				w, ok := want[m[2]]
				if !ok {
					continue
				}
				p, piece := params[w[0].(string)], w[1].(int)
				if piece >= len(p.Loc.Pieces) || p.Loc.Pieces[piece].Kind != types.LocReg || p.Loc.Pieces[piece].Reg != goAsmReg(m[1]) {
					t.Errorf("%s: %s piece %d: the code reads it from %s; gofunct says %s", name, p.Name, piece, goAsmReg(m[1]), p.Loc)
				}
				// Floats live in XMM registers, which a uprobe cannot read.
				if strings.HasPrefix(m[1], "X") == p.Loc.Readable() {
					t.Errorf("%s: %s at %s: readable %v", name, p.Name, p.Loc, p.Loc.Readable())
				}
				checked++
			}
			// A stack argument of a frameless function, loaded at SP+N.
			if m := load.FindStringSubmatch(in.args); m != nil && strings.Contains(textLine[name], "NOFRAME") {
				p := params[m[1]]
				off, _ := strconv.ParseInt(m[2], 10, 64)
				if len(p.Loc.Pieces) != 1 || p.Loc.Pieces[0].Kind != types.LocMem || p.Loc.Pieces[0].Reg != "RSP" || p.Loc.Pieces[0].Offset != off {
					t.Errorf("%s: %s: the code loads it from SP+%d; gofunct says %s", name, m[1], off, p.Loc)
				}
				checked++
			}
		}
		// Every line the listing has code for starts at the address the
		// line table gives it.
		rows, err := f.Lines(fn)
		if err != nil {
			t.Fatal(err)
		}
		_, lines := code.SourceLines(fn, rows, nil)
		first := map[int]uint64{}
		for _, in := range asm[name] {
			if _, ok := first[in.line]; !ok && in.op != "TEXT" && in.op != "FUNCDATA" && in.op != "PCDATA" {
				first[in.line] = in.off
			}
		}
		for line, off := range first {
			found := false
			for _, l := range lines {
				if l.Line == line && len(l.Addrs) > 0 && l.Addrs[0] == fn.LowPC+off {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: line %d starts at +%#x in the listing; gofunct's lines: %+v", name, line, off, lines)
			}
		}
		// The variables at entry are the parameters, where -P says.
		vars, err := f.VarsAt(fn.LowPC)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vars {
			if p, ok := params[v.Name]; ok && v.Param && !p.Result && v.Loc.String() != p.Loc.String() {
				t.Errorf("%s: %s at entry: VarsAt says %s, Params %s", name, v.Name, v.Loc, p.Loc)
			}
		}
	}
	if checked < 15 {
		t.Fatalf("only %d argument reads checked", checked)
	}
	if got := funcview.Prototype(byName["main.counter.add"]); got != "func (c counter) add(k int64, d float64)" {
		t.Errorf("prototype %q", got)
	}
}

// TestParamsUnoptimised: in gcc -O0 code each parameter's frame slot is
// written by the prologue before the address gofunct says the location
// holds from, as the compiler's own instructions (objdump) show.
func TestParamsUnoptimised(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Skipf(t, "gcc not installed: %v", err)
	}
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		testutil.Skipf(t, "objdump not installed: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "o0")
	if out, err := exec.Command(gcc, "-O0", "-g", "-o", bin, filepath.Join("testdata", "params", "c", "o0.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	_, fns := withParams(t, bin)
	checked := 0
	for _, fn := range fns {
		if fn.Name != "f" && fn.Name != "main" {
			continue
		}
		out, err := exec.Command(objdump, "-d", "--no-show-raw-insn", fmt.Sprintf("--start-address=%#x", fn.LowPC),
			fmt.Sprintf("--stop-address=%#x", fn.LowPC+fn.Size), bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		insn := regexp.MustCompile(`^\s*([0-9a-f]+):\s+mov\S*\s+%\w+,(-0x[0-9a-f]+)\(%rbp\)`)
		stored := map[int64]uint64{} // rbp offset -> address of the store
		for _, l := range strings.Split(string(out), "\n") {
			if m := insn.FindStringSubmatch(l); m != nil {
				a, _ := strconv.ParseUint(m[1], 16, 64)
				off, _ := strconv.ParseInt(m[2], 0, 64)
				if _, ok := stored[off]; !ok {
					stored[off] = a
				}
			}
		}
		for _, p := range fn.Params {
			if len(p.Loc.Pieces) != 1 || p.Loc.Pieces[0].Kind != types.LocCFA {
				t.Errorf("%s: %s at %s; want a frame slot", fn.Name, p.Name, p.Loc)
				continue
			}
			// After push %rbp; mov %rsp,%rbp the CFA is %rbp+16.
			slot := p.Loc.Pieces[0].Offset + 16
			at, ok := stored[slot]
			if !ok || at >= p.PC || p.PC <= fn.LowPC || p.PC >= fn.LowPC+fn.Size {
				t.Errorf("%s: %s at %s from %#x: the code stores %d(%%rbp) at %#x (found %v)", fn.Name, p.Name, p.Loc, p.PC, slot, at, ok)
			}
			checked++
		}
	}
	if checked != 6 {
		t.Fatalf("%d parameters checked, want 6", checked)
	}
}

// withParams opens bin and reads its functions with their parameters.
func withParams(t *testing.T, bin string) (*dwarf.File, []*types.Func) {
	t.Helper()
	f, err := dwarf.Open(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fns, err := f.Functions(&dwarf.FuncOptions{Params: true})
	if err != nil {
		t.Fatal(err)
	}
	return f, fns
}

// TestFillParamsAnyWalk: deferred parameters fill for a function of any
// walk that recorded them, whatever walks ran after it (a probe's quick
// walk of one function, then the walk of all), and agree with the walk
// that fills every function at once; a function of a walk that did not
// read parameters is an error, not a silent nothing.
func TestFillParamsAnyWalk(t *testing.T) {
	b := testutil.Fixture(t, "c-layouts")
	f, eager := withParams(t, b.Path)
	want := map[uint64]*types.Func{}
	var first *types.Func
	for _, fn := range eager {
		if fn.LowPC != 0 && len(fn.Params) > 0 {
			want[fn.LowPC] = fn
			if first == nil {
				first = fn
			}
		}
	}
	if first == nil {
		t.Fatal("no function with parameters")
	}
	quick, err := f.Functions(&dwarf.FuncOptions{Params: true, DeferParams: true, At: first.LowPC})
	if err != nil {
		t.Fatal(err)
	}
	all, err := f.Functions(&dwarf.FuncOptions{Params: true, DeferParams: true})
	if err != nil {
		t.Fatal(err)
	}
	same := func(got, want *types.Func) {
		t.Helper()
		if err := f.FillParams(got); err != nil {
			t.Fatalf("%s: %v", got.Name, err)
		}
		if g, w := fmt.Sprint(paramStrings(got)), fmt.Sprint(paramStrings(want)); g != w {
			t.Errorf("%s: deferred %s, at once %s", got.Name, g, w)
		}
	}
	compared := 0
	for _, fn := range quick {
		if fn.LowPC == first.LowPC {
			same(fn, first)
			compared++
		}
	}
	for _, fn := range all {
		if w := want[fn.LowPC]; w != nil && w.Name == fn.Name {
			same(fn, w)
			compared++
		}
	}
	if compared < 5 || compared < len(want)/2 {
		t.Errorf("compared %d functions of %d with parameters", compared, len(want))
	}
	plain, err := f.Functions(nil)
	if err != nil || len(plain) == 0 {
		t.Fatal(err)
	}
	if err := f.FillParams(plain[0]); !errors.Is(err, types.ErrNotFound) {
		t.Errorf("FillParams of a walk without parameters = %v, want ErrNotFound", err)
	}
}

// paramStrings spells a function's parameters: name, type, location.
func paramStrings(fn *types.Func) []string {
	out := []string{types.TypeString(fn.Return)}
	for _, p := range fn.Params {
		out = append(out, p.Name+" "+types.TypeString(p.Type)+" "+p.Loc.String())
	}
	return out
}
