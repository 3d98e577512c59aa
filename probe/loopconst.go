package probe

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// loopConsts turns into ? the constant an inline site s would print for
// a parameter (the debug info's for the whole expansion, or a location
// list's entry that holds here) where the expansion sits in a loop of its
// caller, so that each trip through it is a call and the constant would
// have to hold for every one, and the code of the expansion computes what
// a call does (a store, a call's argument) from a register the caller's
// loop changes and no other parameter's location names (see tripVaries):
// the calls then differ in what they pass. LLVM gives a rolled loop's
// body the first trip's value (rust-O3 seed 4894: fn02's
// `for i in 0..3 { fn05(i as i32) }`, a = DW_OP_consts 0 where the code
// records RAX = i) or another constant (rust-O3 seed 4638: fn07's
// a = DW_OP_lit2 where the code computes 6i from RBX at the site).
func (vc *valueChecks) loopConsts(s *spec.Site, site *types.InlineSite, params []types.Var) {
	why, asked := "", false
	for k := range s.Args {
		f := &s.Args[k]
		if len(f.Chains) != 1 || f.Chains[0].Const == nil {
			continue
		}
		if !asked {
			why, asked = vc.tripVaries(s.Addr, site, params), true
		}
		if why != "" {
			f.Chains, f.Unavailable = nil, why
		}
	}
}

// tripVaries returns why the calls that pass through the expansion's code
// at addr, in a loop of its caller, differ: the effects of the code from
// addr on compute from more registers whose values come from writes in
// the caller's loop (see loopVariant) than the parameters the debug info
// gives no constant here (or no location at all) could hold, none of
// them a register that a location of params reads (rust-O3 seed 2359: fn10(3i+1, 34, 6i)
// stores RDI, a copy of a's slot, beside c's R10; a explains RDI). It
// returns "" when the site is in no caller's loop or no such effects are
// found.
func (vc *valueChecks) tripVaries(addr uint64, site *types.InlineSite, params []types.Var) string {
	inst := vc.flows.hostOf(site)
	if inst == nil || !vc.t.decodes() {
		return ""
	}
	fl, err := vc.flows.of(inst)
	if err != nil || !fl.has(addr) {
		return ""
	}
	loops := fl.callerLoops(addr, site.Ranges)
	if len(loops) == 0 {
		return ""
	}
	var named x86.RegSet
	consts := 0
	for _, p := range params {
		if constantLoc(p.Loc) {
			consts++
			continue
		}
		for i, g := range x86.GPRs {
			if readsReg(p.Loc, g) {
				named |= 1 << i
			}
		}
	}
	others := len(params) - consts // a parameter with no DIE here may hold any value
	others = max(others, vc.argCount(addr, site.Callee)-consts)
	origins := vc.loopVariant(fl, addr, site.Ranges, loops)
	var vary x86.RegSet
	for f, o := range origins {
		if len(o) > 0 && named&(1<<f) == 0 {
			vary |= 1 << f
		}
	}
	if vary == 0 {
		return ""
	}
	goCode := site.Callee != nil && site.Callee.Lang == types.LangGo
	at, srcs := vc.variantEffects(fl, addr, site.Ranges, loops, vary, goCode)
	n, writes := distinctOrigins(srcs, origins)
	if n <= others {
		return ""
	}
	return fmt.Sprintf("the debug info gives a constant here, in a loop of the caller that runs the expansion once per trip, and the code computes what the call does (%#x) from %d values the loop changes (written at %s), more than the other parameters (%d) can be: the calls differ, so it need not be this call's",
		at, n, strings.Join(writes, ", "), others)
}

// distinctOrigins counts the values the registers of srcs hold, by the
// writes they come from (origins, per register): registers that share
// a write hold one value. It also returns the writes' addresses.
func distinctOrigins(srcs x86.RegSet, origins [16][]uint64) (int, []string) {
	group := map[uint64]int{} // a write's group
	n := 0
	var writes []string
	for f := range x86.GPRs {
		if srcs&(1<<f) == 0 {
			continue
		}
		g := -1
		for _, w := range origins[f] {
			if h, ok := group[w]; ok {
				g = h
			}
		}
		if g < 0 {
			g, n = n, n+1
		}
		for _, w := range origins[f] {
			if _, ok := group[w]; !ok {
				writes = append(writes, fmt.Sprintf("%#x", w))
			}
			group[w] = g
		}
	}
	return n, writes
}

// argCount is how many arguments fn's calls pass, as the debug info at
// addr, in an expansion of fn, gives them: fn's parameters, and the
// variables of the expansion declared on fn's line (rustc's MIR inliner
// makes an argument a local so, with no parameter DIE even in fn's
// abstract entry: rust-O3 seed 4833 fn05's a).
func (vc *valueChecks) argCount(addr uint64, fn *types.Func) int {
	if fn == nil {
		return 0
	}
	names := map[string]bool{}
	if fn, err := vc.t.params(fn); err == nil {
		for _, p := range fn.Params {
			names[p.Name] = !p.Result
		}
	}
	vars, _ := vc.t.varsAt(addr)
	for _, v := range vars {
		if v.Inline == fn.Name && (v.Param || fn.Decl.Line != 0 && v.DeclLine == fn.Decl.Line) {
			names[v.Name] = true
		}
	}
	n := 0
	for _, arg := range names {
		if arg {
			n++
		}
	}
	return n
}

// constantLoc reports whether l is a constant: pieces that read no register
// and no memory.
func constantLoc(l types.Loc) bool {
	for _, p := range l.Pieces {
		switch {
		case p.Kind == types.LocConst:
		case p.Kind == types.LocValue && len(p.Ops) == 1 && p.Ops[0].Code == types.OpConst:
		case p.Kind == types.LocValue:
			if _, ok := constExpr(p.Ops); !ok {
				return false
			}
		default:
			return false
		}
	}
	return len(l.Pieces) > 0
}

// loopVariant are, per general register, the writes of the caller's
// code inside loops (the caller's loops holding addr) that do not set a
// constant (see setsConst) and that its value at addr may come from: on
// some path back from addr, the first instruction writing the register
// lies in a loop's body, outside rs, or inside rs (the expansion's own
// code) and computes from a register that such writes reach; with a
// write of the caller's code come those its own operands come from, so
// that two registers computed from one value share a write (see
// distinctOrigins). A load of
// the expansion's code computes from memory, not from the caller; a call
// of its code, from its arguments (see variantEffects). The stack
// pointer has none. A path that cannot be followed counts as a write at
// addr.
func (vc *valueChecks) loopVariant(fl *flow, addr uint64, rs [][2]uint64, loops []*loop) [16][]uint64 {
	d := fl.dominators()
	inLoop := func(x uint64) bool {
		i, ok := d.idx[x]
		if !ok {
			return false
		}
		for _, l := range loops {
			if l.body[i] {
				return true
			}
		}
		return false
	}
	type at struct {
		a uint64
		f int
	}
	memo := map[at][]uint64{}
	var from func(a uint64, f int) []uint64
	from = func(a uint64, f int) []uint64 {
		k := at{a, f}
		if o, ok := memo[k]; ok {
			return o
		}
		if len(memo) > constWindow {
			return []uint64{a} // too far to follow: it may vary
		}
		memo[k] = nil // a cycle through the expansion's code adds nothing
		reg := x86asm.RAX + x86asm.Reg(f)
		var out []uint64
		ok := fl.walkBack(a, constWindow, func(x uint64) walk {
			in := fl.op[x]
			switch {
			case !inLoop(x):
				return walkStop
			case !writesReg(vc.arch, in, reg):
				return walkOn
			case in.Op == x86asm.CALL:
				if !holds(rs, x) && (f == 0 || f == 2) {
					out = append(out, x) // a call's results; the registers it only clobbers hold nothing
				}
			case zeroIdiom(in):
			case !holds(rs, x) && vc.facts.setsConstReg(x, in, reg) == nil:
				out = append(out, x)
				fallthrough
			case holds(rs, x):
				for g := range x86.GPRs {
					if g != 4 && readsFamily(in, g) {
						out = append(out, from(x, g)...)
					}
				}
			}
			return walkStop
		})
		if !ok {
			out = append(out, a) // paths not known: it may vary
		}
		slices.Sort(out)
		out = slices.Compact(out)
		memo[k] = out
		return out
	}
	var out [16][]uint64
	for f := range x86.GPRs {
		if f != 4 { // the stack pointer
			out[f] = from(addr, f)
		}
	}
	return out
}

// setsConstReg is the constant in, at x, writes to reg (see setsConst),
// or nil: in writes a register of reg's family as its first operand.
func (cf *codeFacts) setsConstReg(x uint64, in x86asm.Inst, reg x86asm.Reg) []byte {
	d, ok := in.Args[0].(x86asm.Reg)
	if !ok || x86.Family(d) != x86.Family(reg) {
		return nil
	}
	if in.Op == x86asm.LEA {
		if m, ok := in.Args[1].(x86asm.Mem); ok && m.Base == x86asm.RIP && m.Index == 0 {
			return []byte{1} // an address in the file: the same every trip
		}
	}
	return cf.setsConst(x, in, d, reg)
}

// variantEffects looks, in the code of rs that control reaches from addr
// without leaving rs or going back to the head of one of loops, for the
// effects (see effect) that compute from the registers of vary as they
// are at addr: stores of values computed from them, calls that read one
// as an argument (see callReads). Values are followed through registers
// only (a spill to the stack is no effect and is not followed). It
// returns the first such effect's address and the registers of vary the
// effects compute from.
func (vc *valueChecks) variantEffects(fl *flow, addr uint64, rs [][2]uint64, loops []*loop, vary x86.RegSet, goCode bool) (uint64, x86.RegSet) {
	d := fl.dominators()
	type taint struct {
		set x86.RegSet
		src [16]int8 // per tainted register, the register of vary it comes from
	}
	in := map[uint64]*taint{addr: {set: vary}}
	for f := range in[addr].src {
		in[addr].src[f] = int8(f)
	}
	var first uint64
	var srcs x86.RegSet
	work := []uint64{addr}
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		t, op := *in[x], fl.op[x]
		for f := range x86.GPRs {
			if vc.effectFrom(x, op, t.set, goCode)&(1<<f) != 0 {
				srcs |= 1 << t.src[f]
				first = cmp.Or(min(first, x), x)
			}
		}
		out := vc.passTaint(op, t.set, &t.src)
		for _, y := range fl.succ[x] {
			if !holds(rs, y) || d.backEdge(x, y, loops) {
				continue
			}
			old, seen := in[y]
			if seen && old.set|out == old.set {
				continue
			}
			nt := &taint{set: out, src: t.src}
			if seen {
				nt.set |= old.set
				for f := range nt.src {
					if old.set&(1<<f) != 0 {
						nt.src[f] = old.src[f]
					}
				}
			}
			in[y] = nt
			work = append(work, y)
		}
	}
	return first, srcs
}

// effectFrom is the registers of set that in, at x, computes an effect
// from: a store (not to the stack) of a register of set, or a call that
// reads registers of set.
func (vc *valueChecks) effectFrom(x uint64, in x86asm.Inst, set x86.RegSet, goCode bool) x86.RegSet {
	var out x86.RegSet
	if in.Op == x86asm.CALL {
		return set & vc.callArgs(x, in, goCode)
	}
	if !effect(in) {
		return 0
	}
	for _, a := range in.Args[1:] {
		if r, ok := a.(x86asm.Reg); ok {
			if f := x86.Family(r); f >= 0 && set&(1<<f) != 0 {
				out |= 1 << f
			}
		}
	}
	return out
}

// callArgs are the general registers the call in at x may read as
// arguments: the C convention's first ones, as many as the callee's
// parameters need where its debug info gives them (fn08(a, b) reads RDI
// and RSI, not RDX), else all of them (Go's, in Go code).
func (vc *valueChecks) callArgs(x uint64, in x86asm.Inst, goCode bool) x86.RegSet {
	regs := vc.arch.CIntRegs
	if goCode {
		regs = vc.arch.GoIntRegs
	}
	to, ok := branchTarget(x, in)
	var fn *types.Func
	if m := vc.t.codeModel(); ok && m != nil {
		fn = m.Func(to)
	}
	if fn != nil && fn.LowPC == to && !fn.Variadic && !fn.SymbolOnly && !goCode && fn.Lang != types.LangGo {
		n := 0
		for _, p := range fn.Params {
			size, err := types.Sizeof(p.Type)
			k := min(int(size+7)/8, 2)
			if err != nil || k <= 0 {
				k = len(regs)
			}
			n += k
		}
		regs = vc.arch.CIntRegs[:min(n, len(vc.arch.CIntRegs))]
	}
	var out x86.RegSet
	for _, r := range regs {
		out |= x86.RegBit(r)
	}
	return out
}

// passTaint is the set of tainted registers after in, from set before
// it: the registers in writes are tainted when it reads a tainted one
// (src then says from which register of vary), and clean otherwise.
func (vc *valueChecks) passTaint(in x86asm.Inst, set x86.RegSet, src *[16]int8) x86.RegSet {
	w := x86.Writes(vc.arch, in, false) &^ x86.RegBit(vc.arch.SP)
	if in.Op == x86asm.CALL {
		return set &^ w
	}
	from := -1
	if !zeroIdiom(in) {
		for f := range x86.GPRs {
			if set&(1<<f) != 0 && readsFamily(in, f) {
				from = int(src[f])
				break
			}
		}
	}
	if from < 0 {
		return set &^ w
	}
	for f := range x86.GPRs {
		if w&(1<<f) != 0 {
			src[f] = int8(from)
		}
	}
	return set | w
}

// zeroIdiom reports whether in clears its register without reading it
// (xor r,r; sub r,r).
func zeroIdiom(in x86asm.Inst) bool {
	if in.Op != x86asm.XOR && in.Op != x86asm.SUB {
		return false
	}
	a, ok1 := in.Args[0].(x86asm.Reg)
	b, ok2 := in.Args[1].(x86asm.Reg)
	return ok1 && ok2 && a == b
}
