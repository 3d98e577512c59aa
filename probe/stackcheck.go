package probe

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/asm"
	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/types"
)

// Guard makes a site in a Go function's stack check fire only on the pass
// that goes on into the body. The check's branch calls morestack, which
// grows the stack (or lets the scheduler preempt the goroutine: a
// preemption request sets g.stackguard0 to a value above every stack
// pointer) and then starts the function again from its first instruction:
// a call that grows its stack passes every site between the entry and the
// branch twice.
//
// The three shapes the Go compiler emits on amd64 (cmd/internal/obj/x86
// stacksplit), with framesize the frame's size and StackSmall 128:
//
//	cmp 0x10(%r14),%rsp                      framesize <= StackSmall
//	jbe morestack
//
//	lea -0x190(%rsp),%r12                    framesize < StackBig (4096)
//	cmp 0x10(%r14),%r12
//	jbe morestack
//
//	mov %rsp,%r12                            larger frames: the subtraction
//	sub $0x1f98,%r12                         may wrap, and that branches too
//	jb morestack
//	cmp 0x10(%r14),%r12
//	jbe morestack
//
// 0x10 is g.stackguard0's offset in the goroutine, which R14 holds; the
// guard takes register and offset from the CMP, and the subtracted
// amount from the LEA or SUB.
type Guard struct {
	// Flags is set at the JBE itself: the CMP has run, and the branch is
	// taken when the carry or zero flag it left is set (read from the
	// probe's saved registers: exactly what the CPU decides on, even when
	// another thread writes stackguard0 meanwhile).
	Flags bool `json:"flags,omitempty"`
	// Before the CMP, the branch will be taken when RSP < SPSub or
	// RSP - SPSub <= the 8 bytes at G + Off (unsigned). A preemption
	// request that lands between the probe and the CMP can still make
	// this pass differ from the CPU's.
	G     string `json:"g"`
	Off   int64  `json:"off"`
	SPSub int64  `json:"sp_sub,omitempty"`
}

// stackCheck is a decoded Go stack check: the guard's operands and the
// address of the branch to morestack that ends it.
type stackCheck struct {
	g       string
	off     int64
	spSub   int64
	branch  uint64
	scratch string // the register the check computes in before the CMP (R12), or ""
}

// maxMorestack bounds the instructions of the block the check branches
// to: it spills the register arguments, calls morestack, reloads them and
// jumps back to the entry.
const maxMorestack = 64

// stackCheck decodes fn's Go stack check (see Guard); ok is false when fn
// does not start with one (a NOSPLIT function, C code, another
// architecture).
func (r *Resolver) stackCheck(fn *types.Func) (sc stackCheck, ok bool) {
	if r.arch.Name != "x86_64" || fn.LowPC == 0 || fn.Size == 0 || r.arch.GoG == "" {
		return sc, false
	}
	code, err := r.ef.Code(fn.LowPC, min(fn.Size, 64))
	if err != nil {
		return sc, false
	}
	var ins []x86asm.Inst
	var addrs []uint64
	for off := 0; off < len(code) && len(ins) < 5; {
		in, err := x86asm.Decode(code[off:], 64)
		if err != nil {
			break
		}
		ins, addrs = append(ins, in), append(addrs, fn.LowPC+uint64(off))
		off += in.Len
	}
	reg := func(a x86asm.Arg) x86asm.Reg { v, _ := a.(x86asm.Reg); return v }
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
		if !isImm || imm <= 0 || !r.toEntry(fn, ins[2], addrs[2]) {
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
	if !isMem || m.Base.String() != r.arch.GoG || m.Index != 0 || m.Segment != 0 || cmp.MemBytes != 8 {
		return sc, false
	}
	if !r.toEntry(fn, jbe, addrs[i+1]) {
		return sc, false
	}
	sc.g, sc.off, sc.branch = r.arch.GoG, int64(int32(m.Disp)), addrs[i+1]
	if i > 0 {
		sc.scratch = cmpWith.String()
	}
	return sc, true
}

// toEntry reports whether the conditional branch in at addr goes to a
// block of fn that ends in a jump back to fn's entry, with no other
// branch on the way (Go's morestack call).
func (r *Resolver) toEntry(fn *types.Func, in x86asm.Inst, addr uint64) bool {
	rel, ok := in.Args[0].(x86asm.Rel)
	if !ok {
		return false
	}
	t := uint64(int64(addr) + int64(in.Len) + int64(rel))
	if t <= addr || t >= fn.LowPC+fn.Size {
		return false
	}
	code, err := r.ef.Code(t, fn.LowPC+fn.Size-t)
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
			return ok && int64(t)+int64(off)+int64(in.Len)+int64(rel) == int64(fn.LowPC)
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
func (r *Resolver) entryAt(fn *types.Func, d *Def) uint64 {
	at := r.placement(fn)
	if r.readsScratch(fn, d.Args) {
		return fn.LowPC
	}
	return at
}

// lineAt moves a line site inside fn's stack check, before its branch (the
// declaration's line starts at the entry), onto the branch, where the
// guard reads the flags the CPU decides on; the check changes no argument.
func (r *Resolver) lineAt(fn *types.Func, addr uint64, args []Arg) uint64 {
	if sc, ok := r.stackCheck(fn); ok && addr >= fn.LowPC && addr < sc.branch && !r.readsScratch(fn, args) {
		return sc.branch
	}
	return addr
}

// readsScratch reports whether args read by name the register fn's stack
// check computes in.
func (r *Resolver) readsScratch(fn *types.Func, args []Arg) bool {
	sc, ok := r.stackCheck(fn)
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
func (r *Resolver) guard(fn *types.Func, addr uint64) *Guard {
	if addr < fn.LowPC {
		return nil
	}
	sc, ok := r.stackCheck(fn)
	if !ok || addr > sc.branch {
		return nil
	}
	return &Guard{Flags: addr == sc.branch, G: sc.g, Off: sc.off, SPSub: sc.spSub}
}

// eflagsBranch is the JBE's condition: the carry flag (bit 0) or the zero
// flag (bit 6).
const eflagsBranch = 1<<0 | 1<<6

// guardInsns jumps to skip when the site's pass is the one that branches
// to morestack (see Guard); the context is in R6. Without a guard it is
// empty.
func guardInsns(a *arch.Arch, g *Guard, skip string) (asm.Instructions, error) {
	if g == nil {
		return nil, nil
	}
	if g.Flags {
		off, ok := a.PtRegs["EFLAGS"]
		if !ok {
			return nil, fmt.Errorf("guard: %s has no flags register in pt_regs", a.Name)
		}
		return asm.Instructions{
			asm.LoadMem(asm.R1, rCtx, off, asm.DWord),
			asm.And.Imm(asm.R1, eflagsBranch),
			asm.JNE.Imm(asm.R1, 0, skip),
		}, nil
	}
	gOff, ok := a.PtRegs[g.G]
	sp, ok2 := a.PtRegs[a.SP]
	if !ok || !ok2 || g.SPSub < 0 || g.SPSub > 1<<31-1 || g.Off < -1<<31 || g.Off > 1<<31-1 {
		return nil, fmt.Errorf("guard: cannot compare %s+%d with the stack pointer", g.G, g.Off)
	}
	// The guard's value cannot be read (not a goroutine after all): the
	// pass goes on, as without a guard.
	read := skip + "_read"
	in := asm.Instructions{
		asm.LoadMem(asm.R1, rCtx, gOff, asm.DWord),
		storeImm64(asm.RFP, slotTmp, 0),
	}
	in = append(in, readUser(g.Off, 8, asm.RFP, slotTmp, read)...)
	return append(in,
		asm.LoadMem(asm.R2, asm.RFP, slotTmp, asm.DWord),
		asm.LoadMem(asm.R1, rCtx, sp, asm.DWord),
		asm.JLT.Imm(asm.R1, int32(g.SPSub), skip),
		asm.Sub.Imm(asm.R1, int32(g.SPSub)),
		asm.JLE.Reg(asm.R1, asm.R2, skip),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(read),
	), nil
}

// guarded is guardInsns followed by the return of the pass it skips; the
// program goes on after it.
func guarded(a *arch.Arch, g *Guard, label string) (asm.Instructions, error) {
	in, err := guardInsns(a, g, label)
	if err != nil || len(in) == 0 {
		return in, err
	}
	return append(in,
		asm.Ja.Label(label+"_on"),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(label),
		asm.Return(),
		asm.Mov.Reg(rCtx, rCtx).WithSymbol(label+"_on"),
	), nil
}
