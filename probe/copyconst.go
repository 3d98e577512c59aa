package probe

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// copyConsts checks the constants copy sites print against the stores
// of the expansion's code (see distrust), from the flow index and what
// instructions compute.
type copyConsts struct {
	flows *flowIndex
	facts *codeFacts
}

// copySite is a site at a start of one of several copies of a body that
// one DIE describes, and the parameters whose constant location the debug
// info gives for the whole expansion (see types.Loc.Whole).
type copySite struct {
	idx   int
	whole map[string]bool
}

// wholeConsts are the names of vars whose location is one constant for
// the whole scope.
func wholeConsts(vars []types.Var) map[string]bool {
	out := map[string]bool{}
	for _, v := range vars {
		if v.Loc.Whole && len(v.Loc.Pieces) == 1 && v.Loc.Pieces[0].Kind == types.LocConst {
			out[v.Name] = true
		}
	}
	return out
}

// distrust turns into ? the constants that copy sites would print
// from a location the debug info gives for the whole expansion site, unless
// the code proves every copy's call passed it (see copyStores.proves), or
// the caller's code stores it before each copy where the body stores none
// (see callerWrites). The
// location holds for one of the copies, or for none (LLVM's DW_OP_lit0 for
// a loop's calls that passed 0, 1, 2: rust-O3 seed 2289), and the other
// calls may have passed other values. A location list's entry, made for
// the copy whose code holds the site (0, 1, 2 for an unrolled loop's
// copies), is that call's.
func (cc *copyConsts) distrust(sites []spec.Site, copies []copySite, site *types.InlineSite) {
	var cs *copyStores
	others := perCopyConsts(sites, copies)
	for _, c := range copies {
		for k := range sites[c.idx].Args {
			f := &sites[c.idx].Args[k]
			for _, ch := range f.Chains {
				if ch.Const == nil || !c.whole[f.Name] {
					continue
				}
				if cs == nil {
					cs = cc.storesOf(site)
				}
				why := cs.proves(*ch.Const, f.Size, len(copies), others)
				if why == whyNoStore && cc.callerWrites(site, copyAddrs(sites, copies), *ch.Const, f.Size) {
					why = ""
				}
				if why != "" {
					f.Chains, f.Unavailable = nil, why
				}
				break
			}
		}
	}
}

// copyConst is a parameter the debug info gives a constant of its own
// at each copy: its size and, in the copies' address order, the values.
type copyConst struct {
	size int64
	vals []int64
}

// perCopyConsts are the parameters whose location at every copy site is
// a constant made for that copy (not one for the whole expansion).
func perCopyConsts(sites []spec.Site, copies []copySite) []copyConst {
	order := slices.Clone(copies)
	slices.SortFunc(order, func(a, b copySite) int { return cmp.Compare(sites[a.idx].Addr, sites[b.idx].Addr) })
	var out []copyConst
	if len(order) == 0 {
		return nil
	}
	for _, f := range sites[order[0].idx].Args {
		cc := copyConst{size: f.Size}
		for _, c := range order {
			if v, ok := copyConstOf(sites[c.idx], c, f.Name); ok {
				cc.vals = append(cc.vals, v)
			}
		}
		if len(cc.vals) == len(order) && cc.size > 0 && cc.size <= 8 {
			out = append(out, cc)
		}
	}
	return out
}

// copyConstOf is the constant the site reads for parameter name, where
// the debug info made it for that copy.
func copyConstOf(s spec.Site, c copySite, name string) (int64, bool) {
	if c.whole[name] {
		return 0, false
	}
	for _, f := range s.Args {
		if f.Name == name && len(f.Chains) == 1 && f.Chains[0].Const != nil {
			return *f.Chains[0].Const, true
		}
	}
	return 0, false
}

// copyStores are the constants the stores of an expansion's code put in
// memory, by kind: the stores of one source line (of the chain of nested
// expansions holding it) to one kind of place, memory by its displacement
// (the copies' base registers differ) or one global, so that one copy's
// 8-byte store and another's 16-byte store of the same record field are
// one kind (clang-O2 seed 3568: movq $184 to a record's v[0] in the first
// copy, movups of (184, 1) to v[0..1] in the second); and the calls of a
// kind of call, whose argument registers are its places.
type copyStores struct {
	kinds [][]storedConst // per kind, its stores; nil when the code is not read
}

// storedConst is what one store writes, or one call passes in its
// argument registers: per place, its width bytes at off (a store's
// displacement, or a global's address; 0 for a call's registers) when
// they are a constant (nil otherwise).
type storedConst struct {
	addr  uint64
	off   int64
	width int
	vals  [][]byte
}

// constWindow bounds how many instructions regConst reads back.
const constWindow = 1024

const whyCopies = "the compiler gives one constant for the whole expansion, which holds several calls (an unrolled loop's copies of the body); it need not be this call's"

const whyNoStore = whyCopies + ", and no store of every copy writes it"

// copyAddrs are the addresses of the copy sites.
func copyAddrs(sites []spec.Site, copies []copySite) []uint64 {
	var out []uint64
	for _, c := range copies {
		out = append(out, sites[c.idx].Addr)
	}
	return out
}

// storesOf reads the stores of the code of site's expansion.
func (cc *copyConsts) storesOf(site *types.InlineSite) *copyStores {
	inst := cc.flows.hostOf(site)
	m := cc.flows.t.codeModel()
	if inst == nil || m == nil || !cc.flows.t.decodes() {
		return &copyStores{}
	}
	fl, err := cc.flows.of(inst)
	if err != nil {
		return &copyStores{}
	}
	kinds, _ := storeKinds(site, m, cc.flows.rowsOf(inst, fl), fl, false, nil)
	out := &copyStores{kinds: [][]storedConst{}}
	byKey := map[string]int{}
	for _, k := range kinds {
		for _, a := range k.addrs {
			in := fl.op[a]
			key, st := k.key, storedConst{addr: a, width: 8, vals: cc.facts.storedBytes(fl, a)}
			if mem, ok := storeTo(in); ok && in.Op != x86asm.CALL {
				key = fmt.Sprintf("%s|%s:%d|%s", chainKey(k.chain), k.file, k.line, mem.Segment)
				st.off, st.width = int64(int32(mem.Disp)), in.MemBytes
				if mem.Base == x86asm.RIP {
					key, st.off = key+"|rip", int64(a)+int64(in.Len)+int64(int32(mem.Disp))
				}
			}
			i, ok := byKey[key]
			if !ok {
				i, byKey[key] = len(out.kinds), len(out.kinds)
				out.kinds = append(out.kinds, nil)
			}
			out.kinds[i] = append(out.kinds[i], st)
		}
	}
	return out
}

// chainKey names a chain of nested expansions by their calls.
func chainKey(chain []*types.InlineSite) string {
	var b strings.Builder
	for _, n := range chain {
		fmt.Fprintf(&b, "/%s:%d:%d", n.CallFile, n.CallLine, n.CallColumn)
	}
	return b.String()
}

// proves returns "" when the code proves that each of the n copies' calls
// passed c, a parameter of size bytes: in some kind of store (one source
// line, one place, so one store in each copy; or a call, whose argument
// registers are its places) the stores that write the size bytes at one
// offset of one place write c, at least n of them (the code materialises
// the constant in every copy, where a call's own value would be), none
// writes another value or only part of those bytes there; and no kind has
// a store that writes c at an offset and another that writes another
// constant there (the copies compute different constants at one source
// line: the calls differ in it, rust-O3 seed 2289 fn06's record of
// a = 0, 1, 2, which the debug info gives as 0 for the three). Otherwise
// it returns why not.
func (cs *copyStores) proves(c int64, size int64, n int, others []copyConst) string {
	if cs.kinds == nil || size <= 0 || size > 8 {
		return whyCopies
	}
	want := binary.LittleEndian.AppendUint64(nil, uint64(c))[:size]
	materialised := false
	for _, st := range cs.kinds {
		for p := range maxPlaces(st) {
			for _, d := range offsets(st, p, len(want)) {
				by, other, nBy, unknown := uint64(0), uint64(0), 0, false
				for _, s := range st {
					v, covers := s.at(p, d, len(want))
					switch {
					case !covers:
					case v == nil:
						unknown = true
					case bytes.Equal(v, want):
						by, nBy = cmp.Or(by, s.addr), nBy+1
					default:
						other = cmp.Or(other, s.addr)
					}
				}
				if by != 0 && other != 0 && !explained(st, p, d, n, others) {
					return fmt.Sprintf("%s: the copies store different constants at one source line (%#x writes it, %#x another), so the calls differ",
						whyCopies, by, other)
				}
				materialised = materialised || nBy >= n && !unknown
			}
		}
	}
	if !materialised {
		return whyNoStore
	}
	return ""
}

// explained reports whether the n stores of st that write at offset d of
// place p, one per copy in address order, write there another
// parameter's constants, the debug info's for each copy, at no other
// offset (clang-O2 seed 7028: fn08(1, i) in an unrolled loop, whose
// records' b slot holds 0, 1, 2, the 1 of the second copy no sign that a
// differs). Where two offsets hold them, one may be the constant's own
// (a call fn(i, i) whose a the debug info gives as 0 for every copy).
func explained(st []storedConst, p int, d int64, n int, others []copyConst) bool {
	for _, o := range others {
		if !holdsEach(st, p, d, n, o) {
			continue
		}
		only := true
		for _, e := range offsets(st, p, int(o.size)) {
			only = only && (e == d || !holdsEach(st, p, e, n, o))
		}
		if only {
			return true
		}
	}
	return false
}

// holdsEach reports whether the n stores of st that write at offset d of
// place p, one per copy in address order, write o's value for the copy.
func holdsEach(st []storedConst, p int, d int64, n int, o copyConst) bool {
	var vs [][]byte
	for _, s := range st {
		if v, covers := s.at(p, d, 1); covers {
			if v == nil || p >= len(s.vals) {
				return false
			}
			vs = append(vs, s.vals[p][d-s.off:])
		}
	}
	if len(vs) != n {
		return false
	}
	for i, v := range vs {
		want := binary.LittleEndian.AppendUint64(nil, uint64(o.vals[i]))[:o.size]
		if len(v) < len(want) || !bytes.Equal(v[:len(want)], want) {
			return false
		}
	}
	return true
}

// maxPlaces is the most places a store of st writes.
func maxPlaces(st []storedConst) int {
	n := 0
	for _, s := range st {
		n = max(n, len(s.vals))
	}
	return n
}

// offsets are the offsets at which a store of st writes n constant
// bytes of place p: each n-byte part of its value.
func offsets(st []storedConst, p, n int) []int64 {
	var out []int64
	for _, s := range st {
		if p < len(s.vals) && s.vals[p] != nil {
			for o := 0; o+n <= len(s.vals[p]); o += n {
				if !slices.Contains(out, s.off+int64(o)) {
					out = append(out, s.off+int64(o))
				}
			}
		}
	}
	return out
}

// at are the n bytes s writes at offset d of place p (nil when not a
// constant), and whether s writes any of them: covers with a nil value
// when s writes them but not as a constant, or writes only some.
func (s storedConst) at(p int, d int64, n int) (v []byte, covers bool) {
	if p < len(s.vals) && s.width <= 0 {
		return nil, true // a store of no known width
	}
	if p >= len(s.vals) || s.off+int64(s.width) <= d || d+int64(n) <= s.off {
		return nil, false
	}
	if s.vals[p] == nil || s.off > d || d+int64(n) > s.off+int64(len(s.vals[p])) {
		return nil, true
	}
	return s.vals[p][d-s.off : d-s.off+int64(n)], true
}

// storedBytes are the bytes the instruction at a writes when they are a
// constant: a store of an immediate, or of a register the code before it
// set to one (see regConst), or a direct call's argument registers.
func (cf *codeFacts) storedBytes(fl *flow, a uint64) [][]byte {
	in := fl.op[a]
	if in.Op == x86asm.CALL {
		var out [][]byte
		for _, name := range cf.arch.CIntRegs {
			if i := slices.Index(x86.GPRs[:], name); i >= 0 {
				out = append(out, cf.regConst(fl, a, x86asm.RAX+x86asm.Reg(i)))
			}
		}
		return out
	}
	return [][]byte{cf.storeConst(fl, a, in)}
}

// storeConst is what the store in at a writes, when a constant.
func (cf *codeFacts) storeConst(fl *flow, a uint64, in x86asm.Inst) []byte {
	n := in.MemBytes
	switch in.Op {
	case x86asm.MOV, x86asm.MOVUPS, x86asm.MOVAPS, x86asm.MOVDQU, x86asm.MOVDQA, x86asm.MOVQ:
	default:
		return nil
	}
	var v []byte
	switch src := in.Args[1].(type) {
	case x86asm.Imm:
		v = binary.LittleEndian.AppendUint64(nil, uint64(int64(src)))
	case x86asm.Reg:
		v = cf.regConst(fl, a, src)
	}
	if n <= 0 || len(v) < n {
		return nil
	}
	return v[:n]
}

// regConst is the constant reg holds at a: every instruction that may
// last write reg before a, on every path that reaches a (back to the
// first write on each, never to the copy's entry), sets it to the same
// constant (mov $imm; xor r,r; xorps x,x; a vector load from read-only
// data). clang-O2 seed 3599: an unrolled loop's copies store a vector of
// constants that the code loads once above the loop and again after the
// calls in it, which change vector registers. nil otherwise.
func (cf *codeFacts) regConst(fl *flow, a uint64, reg x86asm.Reg) []byte {
	defs, ok := cf.reachingWrites(fl, a, reg)
	if !ok {
		return nil
	}
	var val []byte
	for _, x := range defs {
		in := fl.op[x]
		d, isReg := in.Args[0].(x86asm.Reg)
		if !isReg || readOnlyOp(in.Op) || d != reg && (x86.Family(reg) < 0 || x86.Family(d) != x86.Family(reg)) {
			return nil // an implicit write, or a part of it
		}
		v := cf.setsConst(x, in, d, reg)
		n := min(len(v), len(val))
		switch {
		case v == nil:
			return nil
		case val == nil:
			val = v
		case !bytes.Equal(v[:n], val[:n]):
			return nil
		default:
			val = val[:n]
		}
	}
	return val
}

// reachingWrites are the instructions that may last write reg before a:
// on every path that reaches a, back to the first instruction that writes
// reg (see writesReg); ok is false when a path comes from before the
// function copy (its entry, or code only a jump from outside reaches),
// or when the paths are not known (a jump table's) or too many
// (constWindow).
func (cf *codeFacts) reachingWrites(fl *flow, a uint64, reg x86asm.Reg) (defs []uint64, ok bool) {
	if len(fl.pred[a]) == 0 {
		return nil, false
	}
	ok = fl.walkBack(a, constWindow, func(x uint64) walk {
		switch {
		case writesReg(cf.arch, fl.op[x], reg):
			defs = append(defs, x)
			return walkStop
		case fl.fromBefore(x):
			return walkFail // the value comes from before the copy
		}
		return walkOn
	})
	if !ok {
		return nil, false
	}
	return defs, true
}

// writesReg reports whether in may write reg: a general register by
// x86.Writes, a vector register where it is the destination (as itself
// or the YMM register holding it), or a call, or an instruction that
// writes vector registers implicitly.
func writesReg(a *arch.Arch, in x86asm.Inst, reg x86asm.Reg) bool {
	if fam := x86.Family(reg); fam >= 0 {
		return x86.Writes(a, in, false)&(1<<fam) != 0
	}
	switch in.Op {
	case 0, x86asm.CALL, x86asm.VZEROALL, x86asm.PCMPISTRM, x86asm.PCMPESTRM, x86asm.XRSTOR, x86asm.XRSTOR64, x86asm.FXRSTOR, x86asm.FXRSTOR64:
		return true
	}
	d, ok := in.Args[0].(x86asm.Reg)
	if !ok || readOnlyOp(in.Op) {
		return false
	}
	if d == reg {
		return true
	}
	if reg >= x86asm.X0 && reg <= x86asm.X15 {
		return d == x86asm.Y0+(reg-x86asm.X0)
	}
	return d >= x86asm.X0 && d <= x86asm.Y15 // not a register known here
}

// setsConst is the constant the instruction at x writes to d, read as
// reg, or nil.
func (cf *codeFacts) setsConst(x uint64, in x86asm.Inst, d, reg x86asm.Reg) []byte {
	switch in.Op {
	case x86asm.MOV:
		imm, ok := in.Args[1].(x86asm.Imm)
		switch {
		case !ok:
		case d == reg || d >= x86asm.RAX && d <= x86asm.R15:
			return binary.LittleEndian.AppendUint64(nil, uint64(int64(imm)))
		case d >= x86asm.EAX && d <= x86asm.R15L:
			return binary.LittleEndian.AppendUint64(nil, uint64(uint32(imm))) // zero-extended
		}
	case x86asm.XOR, x86asm.XORPS, x86asm.XORPD, x86asm.PXOR:
		if s, ok := in.Args[1].(x86asm.Reg); ok && s == d && (d == reg || d >= x86asm.EAX && d <= x86asm.R15) {
			return make([]byte, 16)
		}
	case x86asm.MOVAPS, x86asm.MOVUPS, x86asm.MOVDQA, x86asm.MOVDQU:
		if m, ok := in.Args[1].(x86asm.Mem); ok && m.Base == x86asm.RIP && m.Index == 0 && d == reg {
			return cf.readOnly(uint64(int64(x)+int64(in.Len)+int64(int32(m.Disp))), 16)
		}
	}
	return nil
}

// readOnly are the n bytes at addr when a segment the program cannot
// write holds them, else nil.
func (cf *codeFacts) readOnly(addr, n uint64) []byte {
	for _, p := range cf.ef.Progs {
		if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr+n <= p.Vaddr+p.Filesz {
			if p.Flags&elf.PF_W != 0 {
				return nil
			}
			b, err := cf.ef.Code(addr, n)
			if err != nil {
				return nil
			}
			return b
		}
	}
	return nil
}

// readOnlyOp reports whether op only reads its first operand.
func readOnlyOp(op x86asm.Op) bool {
	switch op {
	case x86asm.CMP, x86asm.TEST, x86asm.BT, x86asm.PUSH, x86asm.UCOMISS, x86asm.UCOMISD, x86asm.COMISS, x86asm.COMISD, x86asm.PTEST:
		return true
	}
	return false
}
