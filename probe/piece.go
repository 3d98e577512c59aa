package probe

import (
	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/types"
)

// piece reports whether site is no call of fn but a piece of the call a
// sibling expansion makes: an expansion of fn from the same call site
// (file, line, column) in the same parent, whose code alone leads into
// site's code and whose code every way out of it goes back to, site's own
// code (nested expansions' too) doing nothing a call is seen by (no store
// outside the frame, no call; see effect). LLVM unrolled the loop of two
// fn08 calls in rust-O3 seed 1413's fn07 and gave part of the second
// call's r = 1+a+b+c (line 109) a DIE of its own, between that call's
// record and its call of fn09: a start there counted every second call
// twice. An alignment pad falling into site's code is no way in. Where
// the flow is not known whole (an indirect jump whose targets are
// unknown, a return out of site's code), site is a call.
func (ip *inlinePlacer) piece(fn *types.Func, site *types.InlineSite) bool {
	inst := ip.flows.hostOf(site)
	if inst == nil {
		return false
	}
	fl, err := ip.flows.of(inst)
	if err != nil || len(fl.indirect) > 0 {
		return false
	}
	rs := site.Ranges
	var in, out []uint64 // the code that enters rs, and that rs leaves to
	for _, a := range fl.addrs {
		if !holds(rs, a) {
			continue
		}
		if a == fl.entry || effect(fl.op[a]) || len(fl.succ[a]) == 0 {
			return false
		}
		for _, p := range fl.pred[a] {
			if !holds(rs, p) && !fl.pad(p) {
				in = append(in, p)
			}
		}
		for _, s := range fl.succ[a] {
			if !holds(rs, s) {
				out = append(out, s)
			}
		}
	}
	if len(in) == 0 || len(out) == 0 {
		return false
	}
	for _, s := range fn.Inlined {
		if !sibling(s, site) {
			continue
		}
		if holdsAll(s.Ranges, in) && holdsAll(s.Ranges, out) {
			return true
		}
	}
	return false
}

// pad reports whether a is an alignment pad: a run of nops that no edge
// enters but at its own nops.
func (fl *flow) pad(a uint64) bool {
	const maxPad = 16
	for i := 0; i < maxPad; i++ {
		if fl.op[a].Op != x86asm.NOP {
			return false
		}
		switch ps := fl.pred[a]; len(ps) {
		case 0:
			return true
		case 1:
			a = ps[0]
		default:
			return false
		}
	}
	return false
}

// holdsAll reports whether rs holds every address of as.
func holdsAll(rs [][2]uint64, as []uint64) bool {
	for _, a := range as {
		if !holds(rs, a) {
			return false
		}
	}
	return true
}

// lineless reports whether site is no call of fn but code LLVM moved or
// merged out of a sibling's call: an expansion whose code (nested
// expansions' too) the line table gives no source line throughout and
// which does nothing a call is seen by (no store outside the frame, no
// call; see effect), beside an expansion of fn from the same call site
// (file, line, column) in the same parent that has code of a line. LLVM
// unrolled the loop of three fn07 calls in rust-O3 seed 1808's fn06 and
// gave the third call's 1+a+b, sunk into main's loop latch, a DIE of its
// own: a start there counted every third call twice. (A piece it gives a
// line is piece's.)
func (ip *inlinePlacer) lineless(fn *types.Func, site *types.InlineSite) bool {
	inst := ip.flows.hostOf(site)
	if inst == nil || ip.t.f == nil {
		return false
	}
	fl, err := ip.flows.of(inst)
	if err != nil {
		return false
	}
	neutral := ip.flows.neutral(inst, fl)
	lined := func(rs [][2]uint64) bool {
		for _, a := range fl.addrs {
			if holds(rs, a) && !neutral[a] {
				return true
			}
		}
		return false
	}
	code := false
	for _, a := range fl.addrs {
		if !holds(site.Ranges, a) {
			continue
		}
		if !neutral[a] || a == fl.entry || effect(fl.op[a]) {
			return false
		}
		code = true
	}
	if !code {
		return false
	}
	for _, s := range fn.Inlined {
		if !sibling(s, site) {
			continue
		}
		if lined(s.Ranges) {
			return true
		}
	}
	return false
}

// sibling reports whether s is another expansion from site's call site
// (file, line, column) in the same parent.
func sibling(s, site *types.InlineSite) bool {
	return s != site && s.Parent == site.Parent && s.Caller == site.Caller && s.CallLine == site.CallLine &&
		s.CallColumn == site.CallColumn && sameFile(s.CallFile, site.CallFile)
}

// merged reports whether site is code LLVM merged from several calls of
// fn (one instruction standing for an instruction of each): an expansion
// called from line 0 beside expansions of fn with a call line, in the
// same caller and parent. Each of those counts its call; the merged code
// is no call. But where site makes a store of its own to a global that
// each of those makes too, of the same kind (see storeKinds), its store
// stands for none of theirs: it is a call of its own, whose call line
// LLVM dropped. rust-O3 seed 3406 inlines fn11(21) into fn09, whose
// fn12(21) under the folded guard comes from line 0, its record whole
// beside the records of the two fn12 calls after it.
func (ip *inlinePlacer) merged(fn *types.Func, site *types.InlineSite) bool {
	if site.CallLine != 0 {
		return false
	}
	var lined []*types.InlineSite
	for _, s := range fn.Inlined {
		if s != site && s.CallLine != 0 && s.Parent == site.Parent && s.Caller == site.Caller {
			lined = append(lined, s)
		}
	}
	if len(lined) == 0 {
		return false
	}
	own := ip.globalStores(site)
	for _, s := range lined {
		theirs := ip.globalStores(s)
		for k := range own {
			if !theirs[k] {
				delete(own, k)
			}
		}
	}
	return len(own) == 0
}

// globalStores are the kinds of store to a global's address that the
// code of site makes (see storeKinds), by key.
func (ip *inlinePlacer) globalStores(site *types.InlineSite) map[string]bool {
	out := map[string]bool{}
	inst := ip.flows.hostOf(site)
	m := ip.t.codeModel()
	if inst == nil || m == nil {
		return out
	}
	fl, err := ip.flows.of(inst)
	if err != nil {
		return out
	}
	rows := ip.flows.rowsOf(inst, fl)
	if rows == nil {
		return out
	}
	kinds, _ := storeKinds(site, m, rows, fl, false, nil)
	for _, k := range kinds {
		if k.rip && !k.lineless {
			out[k.key] = true
		}
	}
	return out
}
