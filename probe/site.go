package probe

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// probeIn is one probe being resolved in one function: the definition,
// the function (its parameters filled when the probe reads them), the
// arguments expand gave, and the probe its sites go to.
type probeIn struct {
	d    *Def
	fn   *types.Func
	args []Arg
	p    *spec.Probe
	// captures are the chains whose entry values the return sites read
	// (see capture): the capture site saves them at the entry.
	captures []spec.Chain
}

// resolveFunc finds the sites of d in fn.
func (r *Resolver) resolveFunc(d *Def, fn *types.Func) (*spec.Probe, error) {
	var err error
	// Parameters, and so the type index, only for a probe that reads
	// arguments or returns: a count needs neither.
	if len(d.Args) > 0 || d.Return {
		if fn, err = r.t.params(fn); err != nil {
			return nil, err
		}
	}
	args, err := r.t.expand(d, fn)
	if err != nil {
		return nil, err
	}
	b := &probeIn{d: d, fn: fn, args: args, p: &spec.Probe{Def: d.Text, Function: fn.Name, Lang: fn.Lang.String()}}
	switch {
	case d.Return:
		err = r.returnSites(b)
	case d.Line > 0:
		err = r.lineSite(b)
	case d.Offset > 0 || d.Addr != 0:
		err = r.offsetSite(b)
	default:
		err = r.callSites(b)
	}
	if err != nil {
		return nil, err
	}
	if len(b.p.Sites) == 0 {
		return nil, fmt.Errorf("%s: %s has no code to probe (no out-of-line copy, inline site or clone)", d.Text, fn.Name)
	}
	sortSites(b.p.Sites)
	return b.p, nil
}

// siteVars are the variables at pc, for the arguments: a count reads none.
func (t *target) siteVars(b *probeIn, pc uint64) ([]types.Var, error) {
	if len(b.args) == 0 {
		return nil, nil
	}
	return t.varsAt(pc)
}

// addSite adds to b's probe a site of kind at addr, in the function named
// where, with the fetches of b's arguments from vars.
func (r *Resolver) addSite(b *probeIn, kind, where string, addr uint64, vars []types.Var) error {
	off, err := r.t.ef.FileOffset(addr)
	if err != nil {
		return err
	}
	site := spec.Site{Kind: kind, Function: where, Addr: addr, FileOffset: off}
	at := siteAt{kind: kind, pc: b.fn.LowPC, captures: &b.captures}
	if kind != spec.SiteReturn {
		vars = r.frames.inFrame(addr, vars)
		at.pc = addr
	}
	if kind == spec.SiteEntry || kind == spec.SiteLine || kind == spec.SiteOffset {
		site.Guard = r.t.guard(b.fn, addr)
	}
	for _, a := range b.args {
		f, err := r.fetches.fetch(b.fn, a, vars, at)
		if err != nil {
			return fmt.Errorf("%s: %w", b.d.Text, err)
		}
		v := argVar(vars, a)
		for _, c := range f.Chains {
			if why := cmp.Or(r.checks.droppedOp(addr, c.Expr, f.Size), r.checks.contradicted(addr, c.Expr), cancelled(c.Expr), r.checks.stale(addr, a.Base, c.Expr), r.checks.opOnOldCopy(addr, a.Base, c.Expr), r.checks.keptCopy(addr, v, c), r.checks.staleInCopy(addr, v, c.Expr), r.slots.overwritten(addr, c.Expr, f.Size), r.checks.misnamed(addr, c.Expr), r.slots.mixedChain(addr, c, &f), r.checks.doubled(addr, v, c.Expr), r.checks.spilledAfter(addr, v, c, &f), r.checks.aliasedSlot(addr, v, vars, c, f.Size), r.checks.slotOpElsewhere(addr, v, vars, c, f.Size), r.checks.bitsOnly(addr, c, f.Size)); why != "" {
				f.Chains, f.Unavailable = nil, why
				break
			}
		}
		site.Args = append(site.Args, expandStruct(f, len(site.Args))...)
	}
	b.p.Sites = append(b.p.Sites, site)
	return nil
}

// returnSites are a site on each RET of fn and, when they read values of
// the entry, the capture site that saves them.
func (r *Resolver) returnSites(b *probeIn) error {
	fn := b.fn
	if fn.LowPC == 0 {
		return fmt.Errorf("%s: %s has no out-of-line copy to return from (it exists only inlined)", b.d.Text, fn.Name)
	}
	rets, err := r.t.returns(fn)
	if err != nil {
		return err
	}
	for _, a := range rets {
		if err := r.addSite(b, spec.SiteReturn, fn.Name, a, paramVars(fn, fn.LowPC)); err != nil {
			return err
		}
	}
	if len(b.captures) == 0 {
		return nil
	}
	if _, err := r.t.ef.FileOffset(fn.LowPC); err != nil {
		return err
	}
	at := r.t.placement(fn)
	off, err := r.t.ef.FileOffset(at)
	if err != nil {
		return err
	}
	site := spec.Site{Kind: spec.SiteCapture, Function: fn.Name, Addr: at, FileOffset: off, Guard: r.t.guard(fn, at)}
	for k, c := range b.captures {
		site.Args = append(site.Args, spec.Fetch{Name: fmt.Sprintf("@%d", k), Type: "x64", Size: 8, Chains: []spec.Chain{c}})
	}
	b.p.Sites = append(b.p.Sites, site)
	if fn.Lang == types.LangGo {
		b.p.CaptureKey = r.t.arch.GoG
	}
	return nil
}

// lineSite is the site of FUNC:LINE.
func (r *Resolver) lineSite(b *probeIn) error {
	addr, err := r.t.lineAddr(b.fn, b.d.Line)
	if err != nil {
		return fmt.Errorf("%s: %v", b.d.Text, err)
	}
	addr = r.t.lineAt(b.fn, addr, b.args)
	vars, err := r.t.siteVars(b, addr)
	if err != nil {
		return err
	}
	return r.addSite(b, spec.SiteLine, b.fn.Name, addr, vars)
}

// offsetSite is the site of FUNC+OFFSET, which must start an instruction.
func (r *Resolver) offsetSite(b *probeIn) error {
	fn, d := b.fn, b.d
	if fn.LowPC == 0 || d.Offset >= fn.Size {
		return fmt.Errorf("%s: offset %#x is outside %s (%d bytes)", d.Text, d.Offset, fn.Name, fn.Size)
	}
	if ok, err := r.t.boundary(fn, fn.LowPC+d.Offset); err != nil || !ok {
		return fmt.Errorf("%s: %s+%#x is not an instruction boundary", d.Text, fn.Name, d.Offset)
	}
	vars, err := r.t.siteVars(b, fn.LowPC+d.Offset)
	if err != nil {
		return err
	}
	return r.addSite(b, spec.SiteOffset, fn.Name, fn.LowPC+d.Offset, vars)
}

// callSites are every place a call of fn starts: its out-of-line copy's
// entry, each inline expansion, each full clone.
func (r *Resolver) callSites(b *probeIn) error {
	fn := b.fn
	if fn.LowPC != 0 {
		if err := r.entrySite(b); err != nil {
			return err
		}
	}
	for _, in := range fn.Inlined {
		if continuation(fn, in) || r.placer.merged(fn, in) || r.placer.piece(fn, in) || r.placer.lineless(fn, in) {
			continue // code of calls other sites count
		}
		if err := r.inlineSites(b, in); err != nil {
			return err
		}
	}
	for _, c := range fn.Clones {
		if c.Kind == "part" || c.Kind == "cold" {
			continue // a continuation of a call, not a call
		}
		vars, err := r.t.siteVars(b, c.Address)
		if err != nil {
			return err
		}
		if err := r.addSite(b, spec.SiteClone, c.Symbol, c.Address, vars); err != nil {
			return err
		}
	}
	return nil
}

// entrySite is the site of the out-of-line copy's entry: past a prologue
// that fills a frame slot an argument is read from, or where the entry
// costs least (see entryAt), or later where more arguments are readable
// (see later).
func (r *Resolver) entrySite(b *probeIn) error {
	fn := b.fn
	addr := fn.LowPC
	for _, pa := range fn.Params {
		if pa.PC > addr && used(b.d, pa.Name) {
			addr = pa.PC // a frame slot filled by the prologue
		}
	}
	vars := paramVars(fn, addr)
	if addr == fn.LowPC {
		addr = r.t.entryAt(fn, b.d)
	}
	vars, err := r.t.movedEntry(fn, addr, vars)
	if err != nil {
		return err
	}
	note := ""
	if at, lv, n, ok := r.joins.later(fn, b.args, vars); ok {
		addr, vars, note = at, lv, n
	}
	if err := r.addSite(b, spec.SiteEntry, fn.Name, addr, vars); err != nil {
		return err
	}
	b.p.Sites[len(b.p.Sites)-1].Note = note
	return nil
}

// inlineSites are the sites of one inline expansion of fn: one per start
// (see inlineStarts, joinStarts), read where its arguments are (see
// laterInline), and the clear sites of its marks (see Mark).
func (r *Resolver) inlineSites(b *probeIn, in *types.InlineSite) error {
	fn := b.fn
	r.group++
	var copies []copySite // the sites of this expansion that are copies
	starts := r.joins.joinStarts(fn, in, r.placer.inlineStarts(fn, in), b.args)
	addrs := make([]uint64, len(starts))
	for i, st := range starts {
		addrs[i] = st.addr
	}
	for _, st := range starts {
		if st.mark != nil {
			st.mark.Group = r.group
			if !st.mark.Start {
				off, err := r.t.ef.FileOffset(st.addr)
				if err != nil {
					return err
				}
				b.p.Sites = append(b.p.Sites, spec.Site{Kind: spec.SiteClear, Function: in.Caller, Addr: st.addr, FileOffset: off, Mark: st.mark})
				continue
			}
		}
		vars, err := r.t.siteVars(b, st.addr)
		if err != nil {
			return err
		}
		at, params, later := r.joins.laterInline(fn, in, st, addrs, b.args, inlineParams(fn, vars))
		if err := r.addSite(b, spec.SiteInline, in.Caller, at, params); err != nil {
			return err
		}
		s := &b.p.Sites[len(b.p.Sites)-1]
		s.Note = strings.TrimPrefix(st.note+"; "+later, "; ")
		s.Note = strings.TrimSuffix(s.Note, "; ")
		s.Mark = st.mark
		r.copies.foldedConsts(s, in)
		r.checks.loopConsts(s, in, params)
		if st.copies {
			copies = append(copies, copySite{len(b.p.Sites) - 1, wholeConsts(params)})
		}
	}
	r.copies.distrust(b.p.Sites, copies, in)
	return nil
}

// sortSites orders sites by address, clear sites (see Mark), which count
// nothing and read no argument, last: a probe's first site has its
// arguments.
func sortSites(sites []spec.Site) {
	sort.SliceStable(sites, func(i, j int) bool {
		ci, cj := sites[i].Kind == spec.SiteClear, sites[j].Kind == spec.SiteClear
		if ci != cj {
			return cj
		}
		return sites[i].Addr < sites[j].Addr
	})
}

func used(d *Def, name string) bool {
	for _, a := range d.Args {
		if a.Base == name || a.Base == "$params" {
			return true
		}
	}
	return false
}

// paramVars are fn's parameters as variables at its entry site.
func paramVars(fn *types.Func, addr uint64) []types.Var {
	var vs []types.Var
	for _, p := range fn.Params {
		if p.Result {
			continue
		}
		v := types.Var{Name: p.Name, Type: p.Type, Param: true, Loc: p.Loc}
		if p.PC > addr {
			v.Loc = types.Loc{} // not there yet
		}
		vs = append(vs, v)
	}
	return vs
}

// movedEntry gives the parameters of an entry site at addr, past fn's
// first instruction, their locations there: a location list says where a
// value is at each address, and the one at the entry (a register the
// prologue then reuses, a stack slot relative to the entry's stack
// pointer) is stale further on. A parameter the list does not place at
// addr is not there.
func (t *target) movedEntry(fn *types.Func, addr uint64, vars []types.Var) ([]types.Var, error) {
	if addr <= fn.LowPC || t.f == nil || len(vars) == 0 {
		return vars, nil
	}
	at, err := t.varsAt(addr)
	if err != nil {
		return nil, err
	}
	locs := map[string]types.Loc{}
	for _, v := range at {
		if v.Param && v.Inline == "" {
			locs[v.Name] = v.Loc
		}
	}
	out := make([]types.Var, len(vars))
	for i, v := range vars {
		v.Loc = locs[v.Name]
		out[i] = v
	}
	return out, nil
}

// inlineParams keeps the parameters of fn's expansion among the variables
// at an inline site (which also holds its caller's, and those of any
// expansion nested at the same address); VarsAt names expansions as
// Functions names functions.
func inlineParams(fn *types.Func, vars []types.Var) []types.Var {
	var out []types.Var
	have := map[string]bool{}
	for _, v := range vars {
		if v.Param && v.Inline == fn.Name {
			out = append(out, v)
			have[v.Name] = true
		}
	}
	if fn.Lang != types.LangRust || fn.Decl.Line == 0 {
		return out
	}
	// rustc's MIR inliner turns an inlined call's arguments into locals:
	// the expansion then holds a variable of the parameter's name, type
	// and declaration line (the function's), with the value (gdb prints
	// it), and no parameter DIE. A variable of the body declared on
	// another line is not one.
	for _, p := range fn.Params {
		if p.Result || have[p.Name] {
			continue
		}
		for i := len(vars) - 1; i >= 0; i-- { // the innermost scope's comes last
			v := vars[i]
			if !v.Param && v.Inline == fn.Name && v.Name == p.Name && v.DeclLine == fn.Decl.Line && sameBase(v.Type, p.Type) {
				v.Param = true
				out = append(out, v)
				have[p.Name] = true
				break
			}
		}
	}
	// Those no parameter DIE names at all (see target.mirArgs).
	named := map[string]bool{}
	for _, p := range fn.Params {
		named[p.Name] = true
	}
	for i := len(vars) - 1; i >= 0; i-- {
		v := vars[i]
		if !v.Param && !named[v.Name] && !have[v.Name] && v.Inline == fn.Name && v.DeclLine == fn.Decl.Line {
			v.Param = true
			out = append(out, v)
			have[v.Name] = true
		}
	}
	return out
}

// sameBase reports whether a and b are the same base type (i32, u64).
func sameBase(a, b types.Type) bool {
	x, ok1 := types.Resolve(a).(*types.Base)
	y, ok2 := types.Resolve(b).(*types.Base)
	return ok1 && ok2 && x.Name == y.Name && x.ByteSize == y.ByteSize && x.Encoding == y.Encoding
}

// argVar is the variable of vars an argument reads as a whole (no path
// into it), or nil.
func argVar(vars []types.Var, a Arg) *types.Var {
	if len(a.Path) > 0 {
		return nil
	}
	var v *types.Var
	for i := range vars {
		if vars[i].Name == a.Base {
			v = &vars[i] // the innermost scope's comes last, as fetch takes it
		}
	}
	return v
}
