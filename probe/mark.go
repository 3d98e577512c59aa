package probe

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/cfi"
)

// Mark is the per-thread mark that keeps one call of an inline expansion
// from counting twice where placement found starts one call may pass
// more than once (LLVM interleaves the caller's code with the body, and
// no store of the body marks each call: see anchors).
//
// A start counts only when the thread has no mark for its group in this
// frame, and then sets it; the call's later starts see it and do not
// count. The mark goes at the first instruction after the last start a
// call can pass: where no path leads to a start within the iteration of
// the caller's loops (markStarts). Two calls made in one frame, in two
// iterations of a loop, have the same stack pointer: the exit between them
// is what tells them apart. The frame is its canonical frame address, so
// that a call deeper on the stack (recursion through the host) has a mark
// of its own.
type Mark struct {
	Group uint32 `json:"group"` // the expansion's starts, unique in a spec
	Start bool   `json:"start,omitempty"`
	Clear bool   `json:"clear,omitempty"`
	// The CFA is register CFAReg plus CFAOff at the site (call frame
	// information); without a row, CFAReg is "" and the mark is the
	// thread's.
	CFAReg string `json:"cfa_reg,omitempty"`
	CFAOff int64  `json:"cfa_off,omitempty"`
}

// maxClears bounds the exits of an expansion marked so.
const maxClears = 16

// markStarts places an expansion whose starts one call may pass more than
// once: each start with a mark, and a clear at each exit of the calls'
// region (see markExits). ok is false when the exits are more than
// maxClears.
func (r *Resolver) markStarts(fl *flow, rs [][2]uint64, starts []uint64) ([]start, bool) {
	exits := fl.markExits(rs, starts)
	if len(exits) > maxClears {
		return nil, false
	}
	note := fmt.Sprintf("one call may pass several of the %d starts: a per-thread mark counts it once (cleared at %d exits)", len(starts), len(exits))
	var out []start
	for _, s := range starts {
		m := r.frameMark(s)
		m.Start, m.Clear = true, contains(exits, s)
		out = append(out, start{addr: s, copies: true, mark: m, note: note})
	}
	for _, y := range exits {
		if !contains(starts, y) {
			m := r.frameMark(y)
			m.Clear = true
			out = append(out, start{addr: y, mark: m})
		}
	}
	return out, true
}

// markExits are the exits of the region of calls that enter at starts: the
// instructions from which no start can be reached within an iteration of
// the caller's loops around the starts, entered from one from which a start
// can be, or from a start. Every path from a start to the next call passes
// one (the loop's back edge, or the function's return, is past one), and
// none passes one between two starts of the same call: past an exit, no
// start follows until the next iteration.
func (fl *flow) markExits(rs [][2]uint64, starts []uint64) []uint64 {
	d := fl.dominators()
	var loops []*loop
	seen := map[*loop]bool{}
	isStart := map[uint64]bool{}
	for _, s := range starts {
		isStart[s] = true
		for _, l := range fl.callerLoops(s, rs) {
			if !seen[l] {
				seen[l] = true
				loops = append(loops, l)
			}
		}
	}
	// reach: a start can follow, within the iteration.
	reach := map[uint64]bool{}
	work := append([]uint64(nil), starts...)
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		for _, p := range fl.pred[x] {
			if !reach[p] && !d.backEdge(p, x, loops) {
				reach[p] = true
				work = append(work, p)
			}
		}
	}
	var exits []uint64
	for _, y := range fl.addrs {
		if reach[y] {
			continue
		}
		for _, p := range fl.pred[y] {
			if (reach[p] || isStart[p]) && !d.backEdge(p, y, loops) {
				exits = append(exits, y)
				break
			}
		}
	}
	return exits
}

// frameMark is a mark with the rule of the CFA at pc.
func (r *Resolver) frameMark(pc uint64) *Mark {
	m := &Mark{}
	row, ok := cfi.Lookup(r.frameRows(), pc)
	if !ok || row.CFA.Expr || row.CFA.PLT {
		return m
	}
	if reg := r.arch.RegName(int(row.CFA.Reg)); !reg.Vector {
		m.CFAReg, m.CFAOff = reg.Name, row.CFA.Offset
	}
	return m
}

// addMarks adds the "marks" map when a site of s has a mark.
func addMarks(cs *ebpf.CollectionSpec, s *Spec) {
	for _, p := range s.Probes {
		for _, site := range p.Sites {
			if site.Mark != nil {
				cs.Maps["marks"] = &ebpf.MapSpec{Name: "marks", Type: ebpf.LRUHash, KeySize: 24, ValueSize: 8, MaxEntries: MarkMapEntries}
				return
			}
		}
	}
}

// slotMark is the mark's key on the program's stack: the thread, the CFA,
// the group (24 bytes).
const slotMark = -200

// MarkMapEntries bounds the marks the threads hold at once (an LRU map: a
// mark a call left, unwinding through a longjmp, goes in time).
const MarkMapEntries = 1 << 14

// markKey stores the mark's key of the site's frame.
func markKey(a *arch.Arch, m *Mark) (asm.Instructions, error) {
	in := asm.Instructions{
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.RFP, slotMark, asm.R0, asm.DWord),
		asm.Mov.Imm(asm.R1, 0),
	}
	if m.CFAReg != "" {
		off, ok := a.PtRegs[m.CFAReg]
		if !ok || m.CFAOff < -1<<31 || m.CFAOff > 1<<31-1 {
			return nil, fmt.Errorf("mark: the CFA %s%+d is not in pt_regs", m.CFAReg, m.CFAOff)
		}
		in = append(in, asm.LoadMem(asm.R1, rCtx, off, asm.DWord), asm.Add.Imm(asm.R1, int32(m.CFAOff)))
	}
	return append(in,
		asm.StoreMem(asm.RFP, slotMark+8, asm.R1, asm.DWord),
		storeImm64(asm.RFP, slotMark+16, int32(m.Group)),
	), nil
}

// markInsns returns from the program when the site's call was counted
// already (see Mark), and marks it otherwise; with Clear, the mark goes
// either way. The context is in R6; the program goes on after them.
func markInsns(a *arch.Arch, m *Mark, label string) (asm.Instructions, error) {
	if m == nil || !m.Start {
		return nil, nil
	}
	in, err := markKey(a, m)
	if err != nil {
		return nil, err
	}
	in = append(in, lookup("marks", slotMark, "")...)
	if m.Clear {
		in = append(in, asm.JEq.Imm(asm.R0, 0, label+"_count"))
		in = append(in, unmark()...)
		in = append(in, asm.Ja.Label(label+"_seen"))
	} else {
		in = append(in,
			asm.JNE.Imm(asm.R0, 0, label+"_seen"),
			storeImm64(asm.RFP, slotTmp, 1),
		)
		in = append(in, update("marks", slotMark, slotTmp)...)
		in = append(in, asm.Ja.Label(label+"_count"))
	}
	return append(in,
		asm.Mov.Imm(asm.R0, 0).WithSymbol(label+"_seen"),
		asm.Return(),
		asm.Mov.Reg(rCtx, rCtx).WithSymbol(label+"_count"),
	), nil
}

// update sets map m's value for the key in stack slot key to the value in
// stack slot val.
func update(m string, key, val int16) asm.Instructions {
	return asm.Instructions{
		asm.LoadMapPtr(asm.R1, 0).WithReference(m),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, int32(val)),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call(),
	}
}

// unmark deletes the mark whose key is in slotMark.
func unmark() asm.Instructions {
	return asm.Instructions{
		asm.LoadMapPtr(asm.R1, 0).WithReference("marks"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, slotMark),
		asm.FnMapDeleteElem.Call(),
	}
}

// clearProgram is a clear site's program: the call is over, its mark goes.
func clearProgram(a *arch.Arch, m *Mark) (asm.Instructions, error) {
	if m == nil {
		return nil, fmt.Errorf("a clear site without a mark")
	}
	in := asm.Instructions{asm.Mov.Reg(rCtx, asm.R1)}
	k, err := markKey(a, m)
	if err != nil {
		return nil, err
	}
	in = append(in, k...)
	in = append(in, unmark()...)
	return append(in, asm.Mov.Imm(asm.R0, 0), asm.Return()), nil
}
