package probe

import (
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// stackCheck is a decoded Go stack check: the guard's operands and the
// address of the branch to morestack that ends it.
type stackCheck struct {
	g       string
	off     int64
	spSub   int64
	branch  uint64
	scratch string // the register the check computes in before the CMP (R12), or ""
	// gFrom is where g holds the goroutine: the entry, or past Go 1.16's
	// load of it from thread-local storage.
	gFrom uint64
	// flagsOnly: only the branch's flags tell the passes apart (Go 1.16's
	// check of a huge frame, whose first branch to morestack is taken on
	// a preemption request).
	flagsOnly bool
}

// maxMorestack bounds the instructions of the block the check branches
// to: it spills the register arguments, calls morestack, reloads them and
// jumps back to the entry.
const maxMorestack = 64

// stackCheck decodes fn's Go stack check (see Guard); ok is false when fn
// does not start with one (a NOSPLIT function, C code, another
// architecture).
func (im *image) stackCheck(fn *types.Func) (sc stackCheck, ok bool) {
	if !im.decodes() || fn.LowPC == 0 || fn.Size == 0 || im.arch.GoG == "" {
		return sc, false
	}
	code, err := im.ef.Code(fn.LowPC, min(fn.Size, 64))
	if err != nil {
		return sc, false
	}
	var ins []x86asm.Inst
	var addrs []uint64
	for off := 0; off < len(code) && len(ins) < 8; {
		in, err := x86asm.Decode(code[off:], 64)
		if err != nil {
			break
		}
		ins, addrs = append(ins, in), append(addrs, fn.LowPC+uint64(off))
		off += in.Len
	}
	reg := func(a x86asm.Arg) x86asm.Reg { v, _ := a.(x86asm.Reg); return v }
	g, gFrom := im.arch.GoG, fn.LowPC
	if len(ins) >= 3 && ins[0].Op == x86asm.MOV {
		// Go 1.16 and before: mov %fs:-8,%rcx loads the goroutine first.
		if m, isMem := ins[0].Args[1].(x86asm.Mem); isMem && m.Segment == x86asm.FS && m.Base == 0 && m.Index == 0 &&
			int32(m.Disp) == -8 && reg(ins[0].Args[0]) != 0 {
			g, gFrom = reg(ins[0].Args[0]).String(), addrs[1]
			ins, addrs = ins[1:], addrs[1:]
			if sc, ok := im.hugeCheck116(fn, ins, addrs, g); ok {
				sc.gFrom = gFrom
				return sc, true
			}
		}
	}
	i := 0 // the CMP's index
	cmpWith := x86asm.RSP
	switch {
	case len(ins) >= 2 && ins[0].Op == x86asm.CMP && reg(ins[0].Args[0]) == x86asm.RSP:
	case len(ins) >= 3 && ins[0].Op == x86asm.LEA:
		m, isMem := ins[0].Args[1].(x86asm.Mem)
		// x86asm leaves a 32-bit displacement unsigned: -0x118 reads 0xfffffee8.
		disp := int64(int32(m.Disp))
		if !isMem || m.Base != x86asm.RSP || m.Index != 0 || disp >= 0 || m.Segment != 0 {
			return sc, false
		}
		i, cmpWith, sc.spSub = 1, reg(ins[0].Args[0]), -disp
	case len(ins) >= 5 && ins[0].Op == x86asm.MOV && reg(ins[0].Args[1]) == x86asm.RSP &&
		ins[1].Op == x86asm.SUB && reg(ins[1].Args[0]) == reg(ins[0].Args[0]) && ins[2].Op == x86asm.JB:
		imm, isImm := ins[1].Args[1].(x86asm.Imm)
		if !isImm || imm <= 0 || !im.toEntry(fn, ins[2], addrs[2]) {
			return sc, false
		}
		i, cmpWith, sc.spSub = 3, reg(ins[0].Args[0]), int64(imm)
	default:
		return sc, false
	}
	cmp, jbe := ins[i], ins[i+1]
	if cmpWith == 0 || cmp.Op != x86asm.CMP || reg(cmp.Args[0]) != cmpWith || jbe.Op != x86asm.JBE {
		return sc, false
	}
	m, isMem := cmp.Args[1].(x86asm.Mem)
	if !isMem || m.Base.String() != g || m.Index != 0 || m.Segment != 0 || cmp.MemBytes != 8 {
		return sc, false
	}
	if !im.toEntry(fn, jbe, addrs[i+1]) {
		return sc, false
	}
	sc.g, sc.off, sc.branch, sc.gFrom = g, int64(int32(m.Disp)), addrs[i+1], gFrom
	if i > 0 {
		sc.scratch = cmpWith.String()
	}
	return sc, true
}

// hugeCheck116 decodes Go 1.16's check of a frame larger than StackBig,
// ins and addrs starting past the load of g:
//
//	mov 0x10(%rcx),%rsi
//	cmp $-0x522,%rsi          stackguard0 = StackPreempt
//	je morestack
//	lea 0x3a0(%rsp),%rax
//	sub %rsi,%rax
//	cmp $0x1738,%rax
//	jbe morestack
//
// The site goes on the last branch: a pass that reaches it and goes on
// runs the body; one that branched to morestack first comes back to it.
func (im *image) hugeCheck116(fn *types.Func, ins []x86asm.Inst, addrs []uint64, g string) (sc stackCheck, ok bool) {
	if len(ins) < 7 || ins[0].Op != x86asm.MOV || ins[1].Op != x86asm.CMP || ins[2].Op != x86asm.JE ||
		ins[3].Op != x86asm.LEA || ins[4].Op != x86asm.SUB || ins[5].Op != x86asm.CMP || ins[6].Op != x86asm.JBE {
		return sc, false
	}
	m, isMem := ins[0].Args[1].(x86asm.Mem)
	guard, _ := ins[0].Args[0].(x86asm.Reg)
	if !isMem || m.Base.String() != g || m.Index != 0 || m.Segment != 0 || guard == 0 || ins[1].Args[0] != guard ||
		!im.toEntry(fn, ins[2], addrs[2]) || !im.toEntry(fn, ins[6], addrs[6]) {
		return sc, false
	}
	return stackCheck{g: g, off: int64(int32(m.Disp)), branch: addrs[6], flagsOnly: true}, true
}

// toEntry reports whether the conditional branch in at addr goes to a
// block of fn that ends in a jump back to fn's entry, with no other
// branch on the way (Go's morestack call).
func (im *image) toEntry(fn *types.Func, in x86asm.Inst, addr uint64) bool {
	rel, ok := in.Args[0].(x86asm.Rel)
	if !ok {
		return false
	}
	to := uint64(int64(addr) + int64(in.Len) + int64(rel))
	if to <= addr || to >= fn.LowPC+fn.Size {
		return false
	}
	code, err := im.ef.Code(to, fn.LowPC+fn.Size-to)
	if err != nil {
		return false
	}
	for off, n := 0, 0; off < len(code) && n < maxMorestack; n++ {
		in, err := x86asm.Decode(code[off:], 64)
		if err != nil {
			return false
		}
		switch {
		case in.Op == x86asm.JMP:
			rel, ok := in.Args[0].(x86asm.Rel)
			return ok && int64(to)+int64(off)+int64(in.Len)+int64(rel) == int64(fn.LowPC)
		case in.Op == x86asm.RET || isBranch(in.Op):
			return false
		}
		off += in.Len
	}
	return false
}

// entryAt is where d's entry probe on fn goes: placement's choice, but the
// entry itself when d reads by name the register a Go stack check computes
// in (R12 for a large frame: at the check's branch it no longer holds the
// caller's value).
func (im *image) entryAt(fn *types.Func, d *Def) uint64 {
	at := im.placement(fn)
	if im.readsScratch(fn, d.Args) {
		return fn.LowPC
	}
	return at
}

// lineAt moves a line site inside fn's stack check, before its branch (the
// declaration's line starts at the entry), onto the branch, where the
// guard reads the flags the CPU decides on; the check changes no argument.
func (im *image) lineAt(fn *types.Func, addr uint64, args []Arg) uint64 {
	if sc, ok := im.stackCheck(fn); ok && addr >= fn.LowPC && addr < sc.branch && !im.readsScratch(fn, args) {
		return sc.branch
	}
	return addr
}

// readsScratch reports whether args read by name the register fn's stack
// check computes in.
func (im *image) readsScratch(fn *types.Func, args []Arg) bool {
	sc, ok := im.stackCheck(fn)
	if !ok || sc.scratch == "" {
		return false
	}
	for _, a := range args {
		if strings.EqualFold(a.Base, "%"+sc.scratch) {
			return true
		}
	}
	return false
}

// guard is the Guard of a site at addr in fn's own code: nil unless addr
// is in fn's stack check, before its branch to morestack or on it.
func (im *image) guard(fn *types.Func, addr uint64) *spec.Guard {
	if addr < fn.LowPC {
		return nil
	}
	sc, ok := im.stackCheck(fn)
	if !ok || addr > sc.branch || addr < sc.gFrom || sc.flagsOnly && addr != sc.branch {
		return nil // before Go 1.16's load of g, nothing tells the passes apart
	}
	return &spec.Guard{Flags: addr == sc.branch, G: sc.g, Off: sc.off, SPSub: sc.spSub}
}
