package probe

import (
	"fmt"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/types"
)

// maxLater bounds how far into a function later looks: the instructions
// that move a parameter out of a vector register come first.
const maxLater = 48

// later finds, for an entry probe that reads a parameter arriving in a
// vector register (a float: pt_regs does not hold XMM registers), the
// first address where DWARF's location list puts every parameter the
// probe reads somewhere a uprobe can read it (a frame slot, a general
// register), and that every call passes exactly once: the instructions
// before it do not branch, except to a block that returns to the entry (Go's
// stack growth), and nothing in the function jumps to it or to anything
// before it. It returns that address, the parameters' variables there and
// a note for the user; ok is false when there is no such address, when no
// parameter needs one, or when the probe also reads a register by name
// (%rdi means its value at the entry).
func (jn *joiner) later(fn *types.Func, args []Arg, entry []types.Var) (addr uint64, vars []types.Var, note string, ok bool) {
	need, moved := laterNeeds(args, entry)
	if moved == "" || jn.t.f == nil || !jn.t.decodes() || fn.Size == 0 {
		return 0, nil, "", false
	}
	var c listing
	if jn.t.insns(fn, func(a uint64, in x86asm.Inst) { c.code = append(c.code, insn{a, in}) }) != nil {
		return 0, nil, "", false
	}
	c.at = make(map[uint64]int, len(c.code))
	for i, in := range c.code {
		c.at[in.addr] = i
	}
	earliest := c.earliest(fn)
	for i := 1; i < len(c.code) && i <= maxLater; i++ {
		prev, pc := c.code[i-1], c.code[i].addr
		switch {
		case prev.in.Op == x86asm.RET || prev.in.Op == x86asm.JMP:
			return 0, nil, "", false
		case isBranch(prev.in.Op):
			t, ok := prev.target()
			if !ok || !c.toEntry(fn, t) {
				return 0, nil, "", false
			}
		}
		if pc >= earliest {
			return 0, nil, "", false
		}
		own, all, err := jn.paramsReadable(pc, need)
		if err != nil {
			return 0, nil, "", false
		}
		if all {
			return pc, own, fmt.Sprintf("%s arrives in a vector register; read at %s+%#x, where it is at %s (every argument is read there), once per call",
				moved, fn.Name, pc-fn.LowPC, locOf(own, moved)), true
		}
	}
	return 0, nil, "", false
}

// laterNeeds returns the parameters the arguments read (need) and one of
// them that arrives in a vector register the probe cannot read (moved);
// moved is "" when none does, or when an argument names a register (its
// value at the entry).
func laterNeeds(args []Arg, entry []types.Var) (need map[string]bool, moved string) {
	need = map[string]bool{}
	for _, a := range args {
		if strings.HasPrefix(a.Base, "%") {
			return nil, ""
		}
		for _, v := range entry {
			if v.Name != a.Base {
				continue
			}
			need[v.Name] = true
			if !v.Loc.Readable() && vectorLoc(v.Loc) {
				moved = v.Name
			}
		}
	}
	return need, moved
}

// paramsReadable returns the function's own parameters at pc (with their
// frame locations), and whether every one in need is readable there.
func (jn *joiner) paramsReadable(pc uint64, need map[string]bool) (own []types.Var, all bool, err error) {
	vars, err := jn.t.varsAt(pc)
	if err != nil {
		return nil, false, err
	}
	for _, v := range vars {
		if v.Param && v.Inline == "" {
			own = append(own, v)
		}
	}
	own = jn.frames.inFrame(pc, own)
	readable := 0
	for _, v := range own {
		if need[v.Name] && v.Loc.Readable() {
			readable++
		}
	}
	return own, readable == len(need), nil
}

// insn is a decoded instruction at its address.
type insn struct {
	addr uint64
	in   x86asm.Inst
}

// target is where a direct branch goes; false for an indirect one.
func (c insn) target() (uint64, bool) {
	rel, ok := c.in.Args[0].(x86asm.Rel)
	return uint64(int64(c.addr) + int64(c.in.Len) + int64(rel)), ok
}

// listing is a function's instructions in address order, and the index
// of each by its address.
type listing struct {
	code []insn
	at   map[uint64]int
}

// earliest is the lowest address, after the entry, that a direct branch
// of fn reaches: a site must come before it. (A jump table's targets are
// case bodies, past any prefix that moves parameters.)
func (c *listing) earliest(fn *types.Func) uint64 {
	earliest := fn.LowPC + fn.Size
	for _, in := range c.code {
		if isBranch(in.in.Op) {
			if t, ok := in.target(); ok && t > fn.LowPC && t < earliest {
				earliest = t
			}
		}
	}
	return earliest
}

// toEntry reports whether the block at t ends in a jump back to fn's
// entry, with no other branch on the way (Go's morestack call).
func (c *listing) toEntry(fn *types.Func, t uint64) bool {
	i, ok := c.at[t]
	for ; ok && i < len(c.code); i++ {
		switch in := c.code[i]; {
		case in.in.Op == x86asm.JMP:
			t, ok := in.target()
			return ok && t == fn.LowPC
		case in.in.Op == x86asm.RET || isBranch(in.in.Op):
			return false
		}
	}
	return false
}

// isBranch reports the jumps: conditional ones and JMP.
func isBranch(op x86asm.Op) bool {
	switch op {
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JNE, x86asm.JG, x86asm.JGE,
		x86asm.JL, x86asm.JLE, x86asm.JO, x86asm.JNO, x86asm.JP, x86asm.JNP, x86asm.JS, x86asm.JNS,
		x86asm.JCXZ, x86asm.JECXZ, x86asm.JRCXZ, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE, x86asm.JMP:
		return true
	}
	return false
}

func vectorLoc(l types.Loc) bool {
	for _, p := range l.Pieces {
		if p.Vector {
			return true
		}
	}
	return false
}

func locOf(vars []types.Var, name string) string {
	for _, v := range vars {
		if v.Name == name {
			return v.Loc.String()
		}
	}
	return ""
}
