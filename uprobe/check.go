package uprobe

import (
	"fmt"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// maxMoves bounds how many refused instructions a site moves past.
const maxMoves = 4

// Check returns s with every uprobe site proven (see the package comment):
// kept where it is, moved to the next instruction (with a Note saying so,
// and the arguments that may read another value there made unavailable),
// or left out and listed in the refusals. Tracepoint sites pass as they
// are. A site's file offset must be the file's own for its address: a spec
// made for another copy of the binary is checked against this one.
func (c *Code) Check(s *spec.Spec) (*spec.Spec, []Refusal) {
	out := *s
	out.Probes = make([]spec.Probe, len(s.Probes))
	var refused []Refusal
	a, aerr := arch.ForName(s.Arch)
	for i, p := range s.Probes {
		q := p
		q.Sites = nil
		for _, site := range p.Sites {
			if site.Kind == spec.SiteTracepoint {
				q.Sites = append(q.Sites, site)
				continue
			}
			var moved spec.Site
			why := ""
			switch {
			case aerr != nil || a.Name != "x86_64":
				why = fmt.Sprintf("instruction boundaries are proven for x86-64 code only, not %q", s.Arch)
			default:
				moved, why = c.site(site, p.Lang == types.LangGo.String(), a)
			}
			if why != "" {
				refused = append(refused, Refusal{Def: p.Def, Site: site, Why: why})
				continue
			}
			q.Sites = append(q.Sites, moved)
		}
		out.Probes[i] = q
	}
	return &out, refused
}

// site proves one site, or says why it cannot carry a uprobe.
func (c *Code) site(s spec.Site, goCode bool, a *arch.Arch) (spec.Site, string) {
	off, err := c.ef.FileOffset(s.Addr)
	if err != nil {
		return s, err.Error()
	}
	if off != s.FileOffset {
		return s, fmt.Sprintf("file offset %#x is not this file's for the address (%#x): the spec was made for another file", s.FileOffset, off)
	}
	p := c.pieceAt(s.Addr)
	if p == nil {
		return s, "no function start is known for the address (no .gopclntab entry, symbol or FDE covers it), so no decoding proves an instruction starts there"
	}
	if p.err != "" {
		return s, p.err
	}
	i, ok := p.index(s.Addr)
	if !ok {
		return s, "not an instruction boundary: " + p.inside(s.Addr)
	}
	first := refusal(c.bytes(p, i))
	if first == "" {
		return s, ""
	}
	moved := s
	var passed []string
	for k := 0; k < maxMoves; k++ {
		in := p.insns[i]
		if why := unmovable(in, moved); why != "" {
			return s, fmt.Sprintf("%s, and %s", first, why)
		}
		moved = readAfter(moved, in, a, goCode, p.starts[i])
		if moved.Kind == spec.SiteCapture && lost(s, moved) {
			return s, first + ", and the values the return sites need may change past it"
		}
		passed = append(passed, fmt.Sprintf("%#x", p.starts[i]))
		i++
		if i >= len(p.starts) {
			return s, first + ", and its piece of code ends after it"
		}
		next := p.starts[i]
		if p.targets[next] || c.enteredFromPieces(s.Addr, next) {
			return s, fmt.Sprintf("%s, and the next instruction (%#x) is a branch target, where a probe would count more than the calls", first, next)
		}
		moved.Addr = next
		moved.FileOffset = s.FileOffset + (next - s.Addr)
		if refusal(c.bytes(p, i)) == "" {
			note := fmt.Sprintf("moved from %#x to %#x: the instruction there is %s", s.Addr, next, strings.TrimSuffix(first, ", which the kernel refuses")+", which the kernel refuses a uprobe on")
			if moved.Note != "" {
				note = moved.Note + "; " + note
			}
			moved.Note = note
			return moved, ""
		}
	}
	return s, fmt.Sprintf("%s, and so are the %d instructions after it", first, maxMoves-1)
}

// refusal is x86.Refusal with a name for what it refuses.
func refusal(b []byte) string {
	if b == nil {
		return "the instruction cannot be read"
	}
	return x86.Refusal(b)
}

// unmovable says why a site cannot move past in: control may leave in
// other than to the next instruction, or the site carries state tied to
// its address (a stack-check guard, an inline mark).
func unmovable(in x86asm.Inst, s spec.Site) string {
	switch {
	case in.Op == x86asm.JMP || in.Op == x86asm.CALL || in.Op == x86asm.RET || in.Op == x86asm.LRET ||
		x86.IsCondJump(in.Op) || in.Op == x86asm.INT || in.Op == x86asm.UD2 || in.Op == x86asm.HLT:
		return "it branches"
	case s.Guard != nil || s.Mark != nil:
		return "the site's stack-check guard or inline mark is tied to its address"
	}
	return ""
}

// readAfter makes unavailable the arguments of s that in may change: a
// register in writes, memory (a locked instruction writes its memory
// operand) that a chain reads, or the stack pointer a frame address comes
// from. What is left reads, past in, the values it read before it.
func readAfter(s spec.Site, in x86asm.Inst, a *arch.Arch, goCode bool, at uint64) spec.Site {
	w := x86.Writes(a, in, goCode)
	mem := writesMemory(in)
	args := make([]spec.Fetch, len(s.Args))
	copy(args, s.Args)
	for k, f := range args {
		if f.Unavailable != "" {
			continue
		}
		for _, ch := range f.Chains {
			if !chainKept(ch, w, mem, a) {
				args[k].Unavailable = fmt.Sprintf("the probe moved past the instruction at %#x (%s), which may change it", at, in)
				break
			}
		}
	}
	s.Args = args
	return s
}

// lost reports whether an argument available at s is not at t.
func lost(s, t spec.Site) bool {
	for k := range s.Args {
		if s.Args[k].Unavailable == "" && t.Args[k].Unavailable != "" {
			return true
		}
	}
	return false
}

// writesMemory reports whether in may write memory: an instruction with a
// memory operand that is not only read, or one x86asm does not name.
func writesMemory(in x86asm.Inst) bool {
	if in.Op == 0 {
		return true
	}
	if _, ok := in.Args[0].(x86asm.Mem); ok {
		switch in.Op {
		case x86asm.CMP, x86asm.TEST, x86asm.NOP, x86asm.PREFETCHT0, x86asm.PREFETCHT1, x86asm.PREFETCHT2, x86asm.PREFETCHNTA:
			return false
		}
		return true
	}
	return in.Op == x86asm.PUSH || in.Op == x86asm.CALL || in.Op == x86asm.XCHG
}

// chainKept reports whether a fetch chain reads the same value after an
// instruction that writes the registers w (and memory, when mem).
func chainKept(ch spec.Chain, w x86.RegSet, mem bool, a *arch.Arch) bool {
	changed := func(reg string) bool {
		return !strings.HasPrefix(reg, "@") && (x86.RegBit(reg) == 0 || x86.RegBit(reg)&w != 0)
	}
	if ch.Reg != "" && changed(ch.Reg) {
		return false
	}
	if len(ch.Derefs) > 0 && mem {
		return false
	}
	for _, op := range ch.Expr {
		switch op.Code {
		case types.OpReg, types.OpEntry:
			if changed(op.Reg) {
				return false
			}
		case types.OpCFA:
			if x86.RegBit(a.SP)&w != 0 {
				return false
			}
		case types.OpDeref:
			if mem {
				return false
			}
		case types.OpParam:
			return false
		}
	}
	return true
}
