package probe

import (
	"fmt"
	"sort"
	"strings"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// lineAddr is the first address of line in fn's own code, or of the first
// expansion called from it.
func (t *target) lineAddr(fn *types.Func, line int) (uint64, error) {
	if t.f == nil {
		return 0, fmt.Errorf("%s has no debug info: FUNC:LINE needs DWARF", t.path)
	}
	rows, err := t.f.Lines(fn)
	if err != nil {
		return 0, err
	}
	if err := t.all(); err != nil {
		return 0, err
	}
	_, lines := code.SourceLines(fn, rows, code.InlinedInto(t.model.Funcs(), fn.Name))
	var have []string
	for _, l := range lines {
		addrs := append([]uint64{}, l.Addrs...)
		for _, in := range l.Inlines {
			addrs = append(addrs, in.Site.EntryPC)
		}
		if len(addrs) == 0 {
			continue
		}
		have = append(have, fmt.Sprint(l.Line))
		if l.Line == line {
			sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
			return addrs[0], nil
		}
	}
	return 0, fmt.Errorf("line %d has no code in %s (lines with code: %s)", line, fn.Name, strings.Join(have, " "))
}

// resolveFileLine finds every place the code of FILE:LINE starts: one site
// per function that holds it, and per inline expansion when the line is in
// an inlined body (a header's inline function), as perf probe does.
func (r *Resolver) resolveFileLine(d *Def) (*spec.Probe, error) {
	if r.t.f == nil {
		return nil, fmt.Errorf("%s: %s has no debug info: FILE:LINE needs DWARF", d.Text, r.t.path)
	}
	addrs, err := r.t.f.LineAddrs(d.File, d.Line)
	if err != nil {
		return nil, err
	}
	if err := r.t.all(); err != nil {
		return nil, err
	}
	p := &spec.Probe{Def: d.Text, Function: fmt.Sprintf("%s:%d", d.File, d.Line)}
	seen := map[string]bool{}
	for _, a := range addrs {
		fn := r.t.model.Func(a)
		if fn == nil {
			continue // code the linker dropped
		}
		if _, err := r.t.params(fn); err != nil {
			return nil, err
		}
		key := fn.Name
		chain := r.t.model.Expansions(a)
		if len(chain) > 0 {
			key = fmt.Sprintf("%s@%#x", fn.Name, chain[0].EntryPC)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if p.Lang == "" {
			p.Lang = fn.Lang.String()
		}
		if len(chain) == 0 {
			a = r.t.lineAt(fn, a, d.Args)
		}
		off, err := r.t.ef.FileOffset(a)
		if err != nil {
			return nil, err
		}
		vars, err := r.t.varsAt(a)
		if err != nil {
			return nil, err
		}
		vars = r.frames.inFrame(a, vars)
		site := spec.Site{Kind: spec.SiteLine, Function: fn.Name, Addr: a, FileOffset: off}
		if len(chain) == 0 {
			site.Guard = r.t.guard(fn, a)
		}
		for _, arg := range d.Args {
			f, err := r.fetches.fetch(fn, arg, vars, siteAt{kind: spec.SiteLine, pc: a})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", d.Text, err)
			}
			site.Args = append(site.Args, expandStruct(f, len(site.Args))...)
		}
		p.Sites = append(p.Sites, site)
	}
	if len(p.Sites) == 0 {
		return nil, fmt.Errorf("%s: %w: no code for %s:%d in %s", d.Text, types.ErrNotFound, d.File, d.Line, r.t.path)
	}
	return p, nil
}
