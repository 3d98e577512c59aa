package probe

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"slices"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

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

// distrustConstants turns into ? the constants that copy sites would print
// from a location the debug info gives for the whole expansion site, unless
// the code proves every copy's call passed it (see copyStores.proves). The
// location holds for one of the copies, or for none (LLVM's DW_OP_lit0 for
// a loop's calls that passed 0, 1, 2: rust-O3 seed 2289), and the other
// calls may have passed other values. A location list's entry, made for
// the copy whose code holds the site (0, 1, 2 for an unrolled loop's
// copies), is that call's.
func (r *Resolver) distrustConstants(sites []spec.Site, copies []copySite, site *types.InlineSite) {
	var cs *copyStores
	for _, c := range copies {
		for k := range sites[c.idx].Args {
			f := &sites[c.idx].Args[k]
			for _, ch := range f.Chains {
				if ch.Const == nil || !c.whole[f.Name] {
					continue
				}
				if cs == nil {
					cs = r.copyStoresOf(site)
				}
				if why := cs.proves(*ch.Const, f.Size, len(copies)); why != "" {
					f.Chains, f.Unavailable = nil, why
				}
				break
			}
		}
	}
}

// copyStores are the constants the stores of an expansion's code put in
// memory, by kind (see storeKinds: one source position, one place, so one
// store per copy of the body).
type copyStores struct {
	kinds [][]storedConst // per kind, its stores; nil when the code is not read
}

// storedConst is what one store writes, or one call passes in its
// argument registers: per place, its bytes when they are a constant (nil
// otherwise).
type storedConst struct {
	addr uint64
	vals [][]byte
}

// constWindow bounds how far back regConst reads straight-line code.
const constWindow = 16

const whyCopies = "the compiler gives one constant for the whole expansion, which holds several calls (an unrolled loop's copies of the body); it need not be this call's"

// copyStoresOf reads the stores of the code of site's expansion.
func (r *Resolver) copyStoresOf(site *types.InlineSite) *copyStores {
	inst := r.hostOf(site)
	m := r.codeModel()
	if inst == nil || m == nil || !r.decodes() {
		return &copyStores{}
	}
	fl, err := r.flowOf(inst)
	if err != nil {
		return &copyStores{}
	}
	kinds, _ := storeKinds(site, m, r.rowsOf(inst, fl), fl, false, nil)
	out := &copyStores{kinds: [][]storedConst{}}
	for _, k := range kinds {
		var st []storedConst
		for _, a := range k.addrs {
			st = append(st, storedConst{a, r.storedBytes(fl, a)})
		}
		out.kinds = append(out.kinds, st)
	}
	return out
}

// proves returns "" when the code proves that each of the n copies' calls
// passed c, a parameter of size bytes: some kind of store (one source
// position, one place, so one store in each copy; or a call, whose
// argument registers are its places) writes c in one slot in every store,
// at least n of them (the code materialises the constant in every copy,
// where a call's own value would be), and no kind has a store that writes
// c in a slot and another that writes another constant there (the copies
// compute different constants at one source position: the calls differ
// in it, rust-O3 seed 2289 fn06's record of a = 0, 1, 2, which the debug
// info gives as 0 for the three). Otherwise it returns why not.
func (cs *copyStores) proves(c int64, size int64, n int) string {
	if cs.kinds == nil || size <= 0 || size > 8 {
		return whyCopies
	}
	want := binary.LittleEndian.AppendUint64(nil, uint64(c))[:size]
	materialised := false
	for _, st := range cs.kinds {
		for p := range maxPlaces(st) {
			for o := 0; o < 16; o += len(want) {
				all, by, other := len(st) >= n, uint64(0), uint64(0)
				for _, s := range st {
					v := s.at(p, o, len(want))
					switch {
					case v == nil:
						all = false
					case bytes.Equal(v, want):
						by = cmp.Or(by, s.addr)
					default:
						all, other = false, cmp.Or(other, s.addr)
					}
				}
				if by != 0 && other != 0 {
					return fmt.Sprintf("%s: the copies store different constants at one source position (%#x writes it, %#x another), so the calls differ",
						whyCopies, by, other)
				}
				materialised = materialised || all
			}
		}
	}
	if !materialised {
		return whyCopies + ", and no store of every copy writes it"
	}
	return ""
}

// maxPlaces is the most places a store of st writes.
func maxPlaces(st []storedConst) int {
	n := 0
	for _, s := range st {
		n = max(n, len(s.vals))
	}
	return n
}

// at are the n bytes s writes at offset o of place p, or nil.
func (s storedConst) at(p, o, n int) []byte {
	if p >= len(s.vals) || o+n > len(s.vals[p]) {
		return nil
	}
	return s.vals[p][o : o+n]
}

// storedBytes are the bytes the instruction at a writes when they are a
// constant: a store of an immediate, or of a register the code before it
// set to one (see regConst), or a direct call's argument registers.
func (r *Resolver) storedBytes(fl *flow, a uint64) [][]byte {
	in := fl.op[a]
	if in.Op == x86asm.CALL {
		var out [][]byte
		for _, name := range r.arch.CIntRegs {
			if i := slices.Index(x86.GPRs[:], name); i >= 0 {
				out = append(out, r.regConst(fl, a, x86asm.RAX+x86asm.Reg(i)))
			}
		}
		return out
	}
	return [][]byte{r.storeConst(fl, a, in)}
}

// storeConst is what the store in at a writes, when a constant.
func (r *Resolver) storeConst(fl *flow, a uint64, in x86asm.Inst) []byte {
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
		v = r.regConst(fl, a, src)
	}
	if n <= 0 || len(v) < n {
		return nil
	}
	return v[:n]
}

// regConst is the constant reg holds at a, when the straight-line code
// before a (each instruction the only predecessor of the next) sets it to
// one (mov $imm; xor r,r; xorps x,x; a vector load from read-only data)
// with no write between; nil otherwise.
func (r *Resolver) regConst(fl *flow, a uint64, reg x86asm.Reg) []byte {
	fam := x86.Family(reg)
	x := a
	for range constWindow {
		ps := fl.pred[x]
		if len(ps) != 1 || len(fl.succ[ps[0]]) != 1 {
			return nil
		}
		x = ps[0]
		in := fl.op[x]
		if in.Op == 0 || in.Op == x86asm.CALL {
			return nil
		}
		d, isReg := in.Args[0].(x86asm.Reg)
		same := isReg && (d == reg || fam >= 0 && x86.Family(d) == fam)
		if fam >= 0 && x86.Writes(r.arch, in, false)&(1<<fam) != 0 && !same {
			return nil // an implicit write
		}
		if !same || readOnlyOp(in.Op) {
			continue
		}
		return r.setsConst(x, in, d, reg)
	}
	return nil
}

// setsConst is the constant the instruction at x writes to d, read as
// reg, or nil.
func (r *Resolver) setsConst(x uint64, in x86asm.Inst, d, reg x86asm.Reg) []byte {
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
			return r.readOnly(uint64(int64(x)+int64(in.Len)+int64(int32(m.Disp))), 16)
		}
	}
	return nil
}

// readOnly are the n bytes at addr when a segment the program cannot
// write holds them, else nil.
func (r *Resolver) readOnly(addr, n uint64) []byte {
	for _, p := range r.ef.Progs {
		if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr+n <= p.Vaddr+p.Filesz {
			if p.Flags&elf.PF_W != 0 {
				return nil
			}
			b, err := r.ef.Code(addr, n)
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
