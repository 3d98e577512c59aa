package probe

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/types"
)

// entryValues reads a value the function had at its entry: in the
// register that held it, where no instruction since the entry wrote it
// (entryKept), or else from the callers' call sites, which give the
// argument of each call (DW_TAG_call_site_parameter) as an expression in
// the caller's frame (fromCallers, callerOps). The frames between are
// read through the call frame information (regOps).
type entryValues struct {
	t      *target // the DWARF call sites and the code's bytes
	arch   *arch.Arch
	frames *frameTable
	flows  *flowIndex
	slots  *slotStores
	checks *valueChecks // a caller's value checked as the site's are
}

// maxCallers bounds the callers one value is looked up among.
const maxCallers = 32

// maxCallerDepth bounds how many frames up fromCallers looks for a value:
// the callers' own entry values come from their callers (GCC passes a
// caller's parameter on to a clone that removed it: gcc -O2 seed 7001's
// fn07.constprop.0 b, which fn01's call site gives as fn01's entry value
// of RSI, which fn01 changes before the call).
const maxCallerDepth = 2

// maxNestedOps bounds the operations a caller's callers' values take.
const maxNestedOps = 256

// frameView is a frame of the stack at the probe: the probe's own (child
// nil) or the caller of child's function copy, at its call. Its registers
// there, and so its CFA, are computed at the probe's pc (see regOps).
type frameView struct {
	pc     uint64 // the probe's pc, or this frame's call instruction
	ret    uint64 // this frame's return address into its caller's code: 0 for the probe's own
	cfaReg string // the CFA at pc, from this frame's registers
	cfaOff int64
	child  *frameView
	depth  int
}

// regOps are operations at the probe's pc that push the value register
// name of frame f holds at f.pc, plus off: the register itself in the
// probe's frame; in a caller's, its stack pointer at the call is the
// callee's CFA, and another register is still in place where the callee
// has not changed it since its entry, or where the callee's call frame
// information says it saved it.
func (ev *entryValues) regOps(f *frameView, name string, off int64) ([]types.Op, bool) {
	c := f.child
	switch {
	case c == nil:
		return regPlus(name, off), true
	case name == ev.arch.SP:
		return ev.regOps(c, c.cfaReg, c.cfaOff+off)
	}
	if ok, _ := ev.entryKept(name, c.pc); ok {
		return ev.regOps(c, name, off)
	}
	slot, ok := ev.frames.saved(c.pc, name)
	if !ok {
		return nil, false
	}
	ops, ok := ev.regOps(c, c.cfaReg, c.cfaOff+slot)
	ops = append(ops, types.Op{Code: types.OpDeref, Value: 8})
	if off != 0 {
		ops = append(ops, types.Op{Code: types.OpConst, Value: off}, types.Op{Code: types.OpPlus})
	}
	return ops, ok
}

// fromCallers computes, at pc, a value only the callers know: the
// argument their call sites give for the parameter (DW_OP_GNU_parameter_ref:
// a clone GCC removed it from) or for the register (DW_OP_entry_value of a
// register the function changed). The return address (at CFA-8) says
// which call this is; each call site of the unit whose call instruction
// calls the function copy holding pc gives its own expression, evaluated
// in the caller's frame (see regOps), a value it had at its own entry
// from its callers in turn (see maxCallerDepth). A call from elsewhere
// (another unit, a tail call, a call whose site gives no value the probe
// can read) gives no value: fails says so.
func (ev *entryValues) fromCallers(pc uint64, match func(dwarf.CallParam) bool, what string) (ops []types.Op, why, fails string) {
	if ev.t.f == nil || !ev.t.decodes() {
		return nil, what + ", which only the callers' debug info gives", ""
	}
	cfaReg, cfaOff, ok := ev.frames.cfa(pc)
	if !ok {
		return nil, fmt.Sprintf("%s: no call frame information at %#x", what, pc), ""
	}
	return ev.fromFrameCallers(&frameView{pc: pc, cfaReg: cfaReg, cfaOff: cfaOff}, match, what)
}

// fromFrameCallers is fromCallers for the function copy of frame f.
func (ev *entryValues) fromFrameCallers(f *frameView, match func(dwarf.CallParam) bool, what string) (ops []types.Op, why, fails string) {
	inst, _ := ev.flows.instanceAt(f.pc)
	if inst == nil {
		return nil, what + ": no function copy holds the site", ""
	}
	sites, err := ev.t.f.CallSites(inst.Entry)
	if err != nil {
		return nil, what + ": " + err.Error(), ""
	}
	ra, ok := ev.regOps(f, f.cfaReg, f.cfaOff-8)
	if !ok {
		return nil, fmt.Sprintf("%s: the return address of %s's frame is not readable at the probe", what, inst.Symbol), ""
	}
	ra = append(ra, types.Op{Code: types.OpDeref, Value: 8})
	type branch struct {
		ret uint64
		ops []types.Op
	}
	var cases []branch
	var others []string // why each other call gives no value read
	var nested []string // why calls fail that a caller's callers give
	calls, described := 0, 0
	for _, cs := range sites {
		if cs.Tail || !ev.t.calls(cs.ReturnPC, inst.Entry) {
			continue
		}
		calls++
		why := "gives no value"
		for _, p := range cs.Params {
			if !match(p) {
				continue
			}
			described++
			ops, no, fails := ev.callerOps(p.Value, f, cs.ReturnPC)
			if no == "" && p.Reg == "" {
				no = ev.checks.rebound(cs.ReturnPC-5, inst, p.Value)
			}
			if why = "gives it " + no; no == "" {
				cases = append(cases, branch{cs.ReturnPC, ops})
				if fails != "" {
					nested = append(nested, fails)
				}
			}
			break
		}
		if len(cases) == 0 || cases[len(cases)-1].ret != cs.ReturnPC {
			others = append(others, fmt.Sprintf("the call returning to %#x %s", cs.ReturnPC, why))
		}
	}
	switch {
	case len(cases) == 0 && calls == 0:
		return nil, what + ", which only the callers' debug info gives, and no call in the unit calls " + inst.Symbol, ""
	case len(cases) == 0 && described == 0:
		return nil, fmt.Sprintf("%s, which only the callers' debug info gives, and none of the %d calls describes it", what, calls), ""
	case len(cases) == 0:
		return nil, fmt.Sprintf("%s: none of the %d calls that describe it gives it so that the probe can read it; %s", what, described, strings.Join(others[:min(len(others), 3)], "; ")), ""
	case len(cases) > maxCallers:
		return nil, fmt.Sprintf("%s, which %d callers give: more than %d", what, len(cases), maxCallers), ""
	}
	// The dispatch: compare the return address with each call's, branch
	// to its expression; no match fails.
	var dispatch []types.Op
	for range cases {
		dispatch = append(dispatch, ra...)
		dispatch = append(dispatch, types.Op{Code: types.OpAddr}, types.Op{Code: types.OpEq}, types.Op{Code: types.OpBra})
	}
	dispatch = append(dispatch, types.Op{Code: types.OpFail})
	body := []types.Op{}
	starts := make([]int, len(cases))
	for i, c := range cases {
		starts[i] = len(body)
		body = append(body, c.ops...)
		if i < len(cases)-1 {
			body = append(body, types.Op{Code: types.OpSkip}) // to the end, fixed below
		}
	}
	per := len(ra) + 3
	for i, c := range cases {
		dispatch[i*per+len(ra)].Value = int64(c.ret)
		bra := i*per + per - 1
		dispatch[bra].Value = int64(len(dispatch) + starts[i] - bra - 1)
	}
	for i := range cases[:len(cases)-1] {
		skip := starts[i+1] - 1
		body[skip].Value = int64(len(body) - skip - 1)
	}
	fails = fmt.Sprintf("%s, which only the callers' debug info gives: this call comes from none of the %d calls (of %d in the unit that call %s) whose call sites give it so that the probe can read it",
		what, len(cases), calls, inst.Symbol)
	others = append(others, nested...)
	if len(others) > 0 {
		fails += "; " + strings.Join(others[:min(len(others), 3)], "; ")
	}
	return append(dispatch, body...), "", fails
}

// calls reports whether the instruction that ends at ret is a direct call
// (call rel32) of entry.
func (im *image) calls(ret, entry uint64) bool {
	if ret < 5 {
		return false
	}
	b, err := im.ef.Code(ret-5, 5)
	if err != nil || len(b) != 5 || b[0] != 0xe8 {
		return false
	}
	return uint64(int64(ret)+int64(int32(binary.LittleEndian.Uint32(b[1:])))) == entry
}

// callerOps turns a call site's value, an expression in the caller's
// frame at the call returning to ret, into operations at the probe's pc,
// where callee is the frame of the function called (see regOps); so is a
// value the caller had at its own entry, in a register it has not changed
// before the call, or else from its own callers (see fromFrameCallers).
// fails says for which calls of the caller's the operations fail.
func (ev *entryValues) callerOps(l types.Loc, callee *frameView, ret uint64) (out []types.Op, why, fails string) {
	ops, done, why := callerPiece(l)
	if why != "" || done {
		return ops, why, ""
	}
	if why := cmp.Or(ev.checks.stale(ret-5, "", ops), ev.checks.misnamed(ret-5, ops), ev.slots.overwritten(ret-5, ops, 0), ev.checks.callSlotElsewhere(ret-5, ops)); why != "" {
		// A value the caller's debug info describes by a register that
		// holds another variable at the call (see stale), or by a stack
		// slot another store overwrote (gcc -O3 seed 2700: fn02's a*3+1
		// as [CFA-144]*9+1 read as 4 bytes, where an 8-byte store put
		// something else there after main's 4-byte i; see overwritten).
		return nil, why, ""
	}
	// callerEntry may set caller's CFA; the operations after it keep it.
	caller := &frameView{pc: ret - 5, ret: ret, child: callee, depth: callee.depth + 1}
	for i := range ops {
		more, f, why := ev.callerOp(caller, ops, i)
		if why != "" {
			return nil, why, ""
		}
		out, fails = append(out, more...), cmp.Or(fails, f)
	}
	if err := types.CheckOps(out); err != nil {
		return nil, fmt.Sprintf("as %s: %v", types.OpsString(ops), err), ""
	}
	return out, "", fails
}

// callerPiece is the operations of a call site's value l in the caller's
// frame, done when they need no translation (a constant), or why they
// cannot be read.
func callerPiece(l types.Loc) (ops []types.Op, done bool, why string) {
	if len(l.Pieces) != 1 {
		return nil, false, "in pieces (" + l.String() + ")"
	}
	p := l.Pieces[0]
	switch p.Kind {
	case types.LocConst:
		return []types.Op{{Code: types.OpConst, Value: p.Offset}}, true, ""
	case types.LocReg:
		ops = []types.Op{{Code: types.OpReg, Reg: p.Reg}}
	case types.LocEntry:
		ops = []types.Op{{Code: types.OpEntry, Reg: p.Reg}}
	case types.LocValue:
		ops = p.Ops
	default:
		return nil, false, "at " + l.String() + ", which a uprobe cannot read"
	}
	if p.Vector {
		return nil, false, "in a vector register"
	}
	return ops, false, ""
}

// callerOp is ops[i], an operation in caller's frame, as operations at
// the probe's pc; fails says for which calls of the caller's they fail,
// why why they cannot be read.
func (ev *entryValues) callerOp(caller *frameView, ops []types.Op, i int) (out []types.Op, fails, why string) {
	o := ops[i]
	switch o.Code {
	case types.OpSkip, types.OpBra, types.OpParam, types.OpFail:
		return nil, "", "as " + types.OpsString(ops) + ", which branches or needs its caller's caller"
	case types.OpEntry:
		return ev.callerEntry(caller, ops, i)
	case types.OpReg:
		return ev.callerReg(caller, ops, o.Reg, 0)
	case types.OpCFA: // the caller's, at the call
		creg, coff, ok := ev.frames.cfa(caller.ret - 1)
		if !ok {
			return nil, "", fmt.Sprintf("as %s, and no call frame information gives the caller's frame at %#x", types.OpsString(ops), caller.ret-1)
		}
		return ev.callerReg(caller, ops, creg, coff)
	}
	return []types.Op{o}, "", ""
}

// callerReg is the caller's register name plus off at the call (see
// regOps), or why not: the function called changes it and saves it
// nowhere.
func (ev *entryValues) callerReg(caller *frameView, ops []types.Op, name string, off int64) (out []types.Op, fails, why string) {
	out, ok := ev.regOps(caller, name, off)
	if !ok {
		return nil, "", fmt.Sprintf("as %s, in %s, which the function changes by %#x and saves nowhere", types.OpsString(ops), name, caller.child.pc)
	}
	return out, "", ""
}

// callerEntry is ops[i], the caller's own entry value of a register
// (GCC's value of a removed parameter the caller passes on from its
// caller): the register where the caller has not changed it before the
// call (the 5-byte call that returns to caller.ret), or only extended its
// low 32 bits when only those are used; else what the caller's own
// callers' call sites give for it.
func (ev *entryValues) callerEntry(caller *frameView, ops []types.Op, i int) (out []types.Op, fails, why string) {
	o, ret := ops[i], caller.ret
	var allow func(x86asm.Inst) bool
	if low32(ops[i+1:]) {
		allow = extendsSelf(o.Reg)
	}
	ok, host := ev.entryKeptBut(o.Reg, ret-5, allow)
	if ok {
		return ev.callerReg(caller, ops, o.Reg, 0)
	}
	what := fmt.Sprintf("as %s, %s's own entry value of %s, which %s changes before the call", types.OpsString(ops), host, o.Reg, host)
	if caller.depth >= maxCallerDepth {
		return nil, "", what + " (only its caller's debug info gives it)"
	}
	creg, coff, cok := ev.frames.cfa(ret - 1)
	if !cok {
		return nil, "", fmt.Sprintf("%s, and no call frame information gives the caller's frame at %#x", what, ret-1)
	}
	caller.cfaReg, caller.cfaOff = creg, coff
	sw, no, f := ev.fromFrameCallers(caller, func(p dwarf.CallParam) bool { return p.Reg == o.Reg }, what)
	if no == "" && len(sw) > maxNestedOps {
		no = fmt.Sprintf("%s, which its callers' call sites give in %d operations: more than %d", what, len(sw), maxNestedOps)
	}
	if no != "" {
		return nil, "", no
	}
	return sw, f, ""
}

// entryKept reports whether register reg still holds, at pc, the value it
// had at the entry of the function copy whose code holds pc: no
// instruction that runs between that entry and pc, on any path of the
// copy's control flow, may write it (a call may write the registers the
// callee need not keep). An indirect jump on the way, whose targets are
// unknown, proves nothing. host names the copy.
func (ev *entryValues) entryKept(reg string, pc uint64) (ok bool, host string) {
	return ev.entryKeptBut(reg, pc, nil)
}

// entryKeptBut is entryKept, where the instructions allow accepts may
// write reg.
func (ev *entryValues) entryKeptBut(reg string, pc uint64, allow func(x86asm.Inst) bool) (ok bool, host string) {
	inst, fn := ev.flows.instanceAt(pc)
	if inst == nil {
		return false, "the function"
	}
	host = inst.Symbol
	if host == "" {
		host = fn.Name
	}
	bit := x86.RegBit(reg)
	if bit == 0 || !ev.t.decodes() {
		return false, host
	}
	fl, err := ev.flows.of(inst)
	if err != nil || !fl.has(pc) || !fl.has(inst.Entry) {
		return false, host
	}
	// Forward from the entry.
	from := map[uint64]bool{inst.Entry: true}
	work := []uint64{inst.Entry}
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		for _, s := range fl.succ[x] {
			if !from[s] {
				from[s] = true
				work = append(work, s)
			}
		}
	}
	for _, j := range fl.indirect {
		if from[j] {
			return false, host
		}
	}
	// Backward from pc: the instructions that run before it, on a path
	// from the entry.
	goCode := fn.Lang == types.LangGo
	seen := map[uint64]bool{}
	work = append(work[:0], fl.pred[pc]...)
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[x] || !from[x] {
			continue
		}
		seen[x] = true
		if x86.Writes(ev.arch, fl.op[x], goCode)&bit != 0 && (allow == nil || !allow(fl.op[x])) {
			return false, host
		}
		work = append(work, fl.pred[x]...)
	}
	return true, host
}
