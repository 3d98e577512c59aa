package probe

import (
	"fmt"
	"sort"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/types"
)

// decode decodes the instructions of [lo, hi).
func (im *image) decode(fn *types.Func, lo, hi uint64, each func(addr uint64, in x86asm.Inst)) error {
	code, err := im.ef.Code(lo, hi-lo)
	if err != nil {
		return err
	}
	for off := 0; off < len(code); {
		in, err := x86.Decode(code[off:])
		if err != nil {
			return fmt.Errorf("%s: %s+%#x: cannot decode the instruction: %v", im.path, fn.Name, lo+uint64(off)-fn.LowPC, err)
		}
		each(lo+uint64(off), in)
		off += in.Len
	}
	return nil
}

// decodes reports whether the binary's instructions can be decoded, for
// returns, instruction boundaries, Go's stack check and the control flow
// that places inline sites: x86asm reads x86-64 only.
func (im *image) decodes() bool { return im.arch.Name == "x86_64" }

// insns decodes fn's out-of-line code: the range holding its entry from
// the entry on, then its other ranges (a split function's cold part) in
// address order.
func (im *image) insns(fn *types.Func, each func(addr uint64, in x86asm.Inst)) error {
	if !im.decodes() {
		return fmt.Errorf("%s: %w: instruction decoding is x86-64 only", im.path, arch.ErrUnsupportedArch)
	}
	ranges := fn.Ranges
	if len(ranges) == 0 && fn.Size > 0 {
		ranges = [][2]uint64{{fn.LowPC, fn.LowPC + fn.Size}}
	}
	var first [][2]uint64
	var rest [][2]uint64
	for _, rg := range ranges {
		if fn.LowPC >= rg[0] && fn.LowPC < rg[1] {
			first = append(first, [2]uint64{fn.LowPC, rg[1]})
		} else {
			rest = append(rest, rg)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i][0] < rest[j][0] })
	for _, rg := range append(first, rest...) {
		if err := im.decode(fn, rg[0], rg[1], each); err != nil {
			return err
		}
	}
	return nil
}

// returns are the addresses of fn's RET instructions: a return probe on
// each is safe where a uretprobe is not (Go moves stacks, and a uretprobe's
// rewritten return address breaks that).
func (im *image) returns(fn *types.Func) ([]uint64, error) {
	var out []uint64
	err := im.insns(fn, func(a uint64, in x86asm.Inst) {
		if in.Op == x86asm.RET {
			out = append(out, a)
		}
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: %s has no RET instruction (it never returns, or ends in a tail call)", im.path, fn.Name)
	}
	return out, err
}

// boundary reports whether addr starts an instruction of fn.
func (im *image) boundary(fn *types.Func, addr uint64) (bool, error) {
	ok := false
	err := im.insns(fn, func(a uint64, _ x86asm.Inst) { ok = ok || a == addr })
	return ok, err
}

// placement is where an entry probe on fn costs least: a uprobe on an
// instruction the kernel emulates (a branch, a call, a push) costs about a
// quarter of one it must single-step. Instructions that change no register
// and no memory (endbr64, nop, cmp, test) may be skipped to reach one:
// every argument is still where it was at the entry, and the skipped
// instructions run once per call as the entry does. A Go function's stack
// check (cmp 0x10(%r14),%rsp; jbe morestack, in any of its shapes: see
// Guard) puts the probe on the jbe; the check's scratch register (R12) is
// no argument register.
func (im *image) placement(fn *types.Func) uint64 {
	if !im.decodes() || fn.Size == 0 {
		return fn.LowPC
	}
	if sc, ok := im.stackCheck(fn); ok {
		return sc.branch
	}
	at := fn.LowPC
	found := false
	n := 0
	_ = im.insns(fn, func(a uint64, in x86asm.Inst) {
		if found || n > 3 {
			return
		}
		n++
		switch in.Op {
		case x86asm.NOP, x86asm.CMP, x86asm.TEST: // endbr64 decodes as a NOP
			return // changes only flags
		case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JNE, x86asm.JG, x86asm.JGE,
			x86asm.JL, x86asm.JLE, x86asm.JMP, x86asm.CALL, x86asm.PUSH:
			at = a
		}
		found = true
	})
	return at
}
