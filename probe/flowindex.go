package probe

import (
	"fmt"
	"sort"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/types"
)

// flowIndex is what placement reads of the code, each part once: the
// control flow of each instance of a function (of), the instance whose
// code holds an address (instanceAt) or an inline expansion (hostOf), an
// instance's line rows (rowsOf, neutral), and which units GCC compiled
// (gnuAt).
type flowIndex struct {
	t         *target
	flows     map[*types.Instance]*flow
	hosts     map[*types.InlineSite]*types.Instance
	hostsOf   *code.Model // the model hosts indexes
	producers map[uint64]bool
}

// at is the control flow of the function copy whose code holds pc,
// when it is decoded and holds pc as an instruction (nil otherwise).
func (ix *flowIndex) at(pc uint64) *flow {
	if !ix.t.decodes() {
		return nil
	}
	inst, _ := ix.instanceAt(pc)
	if inst == nil {
		return nil
	}
	fl, err := ix.of(inst)
	if err != nil || !fl.has(pc) {
		return nil
	}
	return fl
}

// of decodes inst's ranges (x86-64 only) and links its instructions.
func (ix *flowIndex) of(inst *types.Instance) (*flow, error) {
	if !ix.t.decodes() {
		return nil, fmt.Errorf("%s: %w: instruction decoding is x86-64 only", ix.t.path, arch.ErrUnsupportedArch)
	}
	if ix.flows == nil {
		ix.flows = map[*types.Instance]*flow{}
	}
	if fl, ok := ix.flows[inst]; ok {
		return fl, nil
	}
	fl := &flow{succ: map[uint64][]uint64{}, pred: map[uint64][]uint64{}, op: map[uint64]x86asm.Inst{}, entry: inst.Entry}
	named := &types.Func{Name: inst.Symbol}
	in := func(a uint64) bool {
		for _, rg := range inst.Ranges {
			if a >= rg[0] && a < rg[1] {
				return true
			}
		}
		return false
	}
	for _, rg := range inst.Ranges {
		if named.LowPC == 0 || rg[0] < named.LowPC {
			named.LowPC = rg[0]
		}
	}
	for _, rg := range inst.Ranges {
		err := ix.t.decode(named, rg[0], rg[1], func(a uint64, ins x86asm.Inst) {
			fl.addrs = append(fl.addrs, a)
			fl.op[a] = ins
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(fl.addrs, func(i, j int) bool { return fl.addrs[i] < fl.addrs[j] })
	for _, a := range fl.addrs {
		ins := fl.op[a]
		next := a + uint64(ins.Len)
		var to []uint64
		target, direct := x86.BranchTarget(a, ins)
		switch {
		case ins.Op == x86asm.RET || ins.Op == x86asm.UD2 || ins.Op == x86asm.HLT:
		case ins.Op == x86asm.JMP && direct:
			to = append(to, target)
		case ins.Op == x86asm.JMP:
			fl.indirect = append(fl.indirect, a)
		case x86.IsCondJump(ins.Op) && direct:
			to = append(to, next, target)
		default: // calls return; other instructions fall through
			to = append(to, next)
		}
		for _, t := range to {
			if in(t) {
				fl.succ[a] = append(fl.succ[a], t)
				fl.pred[t] = append(fl.pred[t], a)
			}
		}
	}
	ix.flows[inst] = fl
	return fl, nil
}

// instanceAt is the concrete copy of a function (an out-of-line copy, a
// clone, a piece) whose code holds pc, and its function.
func (ix *flowIndex) instanceAt(pc uint64) (*types.Instance, *types.Func) {
	m := ix.t.codeModel()
	if m == nil {
		return nil, nil
	}
	fn := m.Func(pc)
	if fn == nil {
		return nil, nil
	}
	for _, inst := range fn.Instances {
		if holds(inst.Ranges, pc) {
			return inst, fn
		}
	}
	return nil, fn
}

// hostOf is the instance whose code holds site, or nil.
func (ix *flowIndex) hostOf(site *types.InlineSite) *types.Instance {
	m := ix.t.codeModel()
	if m == nil {
		return nil
	}
	if ix.hosts == nil || ix.hostsOf != m {
		ix.hosts, ix.hostsOf = map[*types.InlineSite]*types.Instance{}, m
		for _, f := range m.Funcs() {
			for _, inst := range f.Instances {
				for _, s := range inst.Sites {
					ix.hosts[s] = inst
				}
			}
		}
	}
	return ix.hosts[site]
}

// gnuAt reports whether GCC compiled the unit holding addr: its inline
// expansions carry DW_AT_entry_pc, the address where each call enters.
func (ix *flowIndex) gnuAt(addr uint64) bool {
	if ix.t.f == nil {
		return false
	}
	if p, ok := ix.producers[addr]; ok {
		return p
	}
	producer, ok := ix.t.f.Producer(addr)
	gnu := ok && strings.HasPrefix(producer, "GNU")
	if ix.producers == nil {
		ix.producers = map[uint64]bool{}
	}
	ix.producers[addr] = gnu
	return gnu
}

// rowsOf are the line table rows of inst's code, read once.
func (ix *flowIndex) rowsOf(inst *types.Instance, fl *flow) []types.Line {
	if ix.t.f == nil {
		return nil
	}
	if fl.rows == nil {
		rows, err := ix.t.f.Lines(&types.Func{Name: inst.Symbol, LowPC: inst.Entry, Ranges: inst.Ranges})
		if err != nil || rows == nil {
			rows = []types.Line{}
		}
		fl.rows = rows
	}
	return fl.rows
}

// neutral are the instructions of inst that the line table gives line 0
// (no source line).
func (ix *flowIndex) neutral(inst *types.Instance, fl *flow) map[uint64]bool {
	if ix.t.f == nil {
		return nil
	}
	if fl.neutral != nil {
		return fl.neutral
	}
	fl.neutral = map[uint64]bool{}
	rows, err := ix.t.f.Lines(&types.Func{Name: inst.Symbol, LowPC: inst.Entry, Ranges: inst.Ranges})
	if err != nil || len(rows) == 0 {
		return fl.neutral
	}
	i := 0
	for _, a := range fl.addrs {
		for i+1 < len(rows) && rows[i+1].Addr <= a {
			i++
		}
		if rows[i].Addr <= a && rows[i].Line == 0 {
			fl.neutral[a] = true
		}
	}
	return fl.neutral
}
