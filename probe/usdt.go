package probe

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/symtab"
	"github.com/binscope/binscope/types"
	"github.com/binscope/binscope/usdt"
)

// usdtProbes reads the file's USDT probes once.
func (r *Resolver) usdtProbes() ([]usdt.Probe, error) {
	if r.usdt == nil {
		ps, err := usdt.Read(r.ef)
		if errors.Is(err, usdt.ErrNoProbes) {
			return nil, fmt.Errorf("%s: %w: no USDT probes (the file has no .note.stapsdt)", r.path, types.ErrNotFound)
		}
		if err != nil {
			return nil, err
		}
		r.usdt = ps
	}
	return r.usdt, nil
}

// In is the probes of all the point names, in address order.
func (u *USDTPoint) In(all []usdt.Probe) []usdt.Probe {
	provider := u.Provider
	if provider == "" {
		provider = "*"
	}
	return usdt.Named(all, provider, u.Name)
}

// resolveUSDT finds the sites of a usdt:PROVIDER:NAME definition: the
// nop of every probe the point names, each with its semaphore's file
// offset and its arguments read from the note's operands.
func (r *Resolver) resolveUSDT(d *Def) (*spec.Probe, error) {
	all, err := r.usdtProbes()
	if err != nil {
		return nil, err
	}
	ps := d.USDT.In(all)
	if len(ps) == 0 {
		return nil, r.noUSDT(d, all)
	}
	p := &spec.Probe{Def: d.Text, Function: ps[0].String(), Lang: "usdt"}
	for _, up := range ps {
		site, err := r.usdtSite(d, up)
		if err != nil {
			return nil, err
		}
		p.Sites = append(p.Sites, site)
	}
	return p, nil
}

// noUSDT says which probes the file has, the closest first.
func (r *Resolver) noUSDT(d *Def, all []usdt.Probe) error {
	var names []string
	seen := map[string]bool{}
	for _, p := range all {
		if n := p.String(); !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	want := d.USDT.Name
	if d.USDT.Provider != "" {
		want = d.USDT.Provider + ":" + want
	}
	near := types.Closest(names, want, 3)
	if len(near) == 0 {
		sort.Strings(names)
		near = names
	}
	return fmt.Errorf("%s: %w: no USDT probe %s (it has: %s)", r.path, types.ErrNotFound, d.USDT, strings.Join(near, ", "))
}

// usdtSite is one probe's site. The nop must start an instruction of
// the function that holds it, decoded from its first byte, as any other
// site: a note that points elsewhere is refused.
func (r *Resolver) usdtSite(d *Def, up usdt.Probe) (spec.Site, error) {
	fn, err := r.usdtHolder(up)
	if err != nil {
		return spec.Site{}, err
	}
	off, err := r.ef.FileOffset(up.Addr)
	if err != nil {
		return spec.Site{}, err
	}
	site := spec.Site{Kind: spec.SiteUSDT, Function: fn.Name, Addr: up.Addr, FileOffset: off, USDT: up.String()}
	if up.Semaphore != 0 {
		if site.RefCtrOffset, err = r.ef.FileOffset(up.Semaphore); err != nil {
			return spec.Site{}, fmt.Errorf("%s: the semaphore of USDT probe %s: %v", r.path, up.String(), err)
		}
	}
	args, err := usdtArgs(r.path, d, up)
	if err != nil {
		return spec.Site{}, err
	}
	for _, a := range args {
		if a.index < 0 {
			f, err := builtinFetch(a.def)
			if err != nil {
				return spec.Site{}, fmt.Errorf("%s: %w", d.Text, err)
			}
			site.Args = append(site.Args, f)
			continue
		}
		f := r.usdtFetch(a.def, a.op)
		f.Operand = &a.index
		site.Args = append(site.Args, f)
	}
	return site, nil
}

// usdtHolder is the function whose code holds the probe's nop, proven to
// start an instruction there.
func (r *Resolver) usdtHolder(up usdt.Probe) (*types.Func, error) {
	sym, ok := r.usdtSyms().Covering(up.Addr)
	if !ok {
		return nil, fmt.Errorf("%s: USDT probe %s at %#x is in no function the symbol table knows: nothing proves an instruction starts there", r.path, up.String(), up.Addr)
	}
	fn := &types.Func{Name: sym.Name, LowPC: sym.Addr, Size: sym.Size}
	if !r.decodes() {
		return nil, fmt.Errorf("%s: USDT probe %s: instruction decoding is x86-64 only: nothing proves an instruction starts at %#x", r.path, up.String(), up.Addr)
	}
	nop := false
	err := r.insns(fn, func(a uint64, in x86asm.Inst) {
		if a == up.Addr {
			nop = in.Op == x86asm.NOP
		}
	})
	if err != nil {
		return nil, err
	}
	if !nop {
		return nil, fmt.Errorf("%s: USDT probe %s at %#x: no nop starts there when %s is decoded from its first byte: not attaching", r.path, up.String(), up.Addr, sym.Name)
	}
	return fn, nil
}

// usdtSyms are the function symbols of the file and of its debug file
// (the static functions that hold most probes are often only there).
func (r *Resolver) usdtSyms() *symtab.Table {
	if r.usdtTable != nil {
		return r.usdtTable
	}
	files := []*elfx.File{r.ef}
	if r.f != nil && r.f.Debug != nil && r.f.Debug != r.ef {
		files = append(files, r.f.Debug)
	} else if r.f == nil {
		if df, _ := r.ef.FindDebugFile(); df != nil {
			files = append(files, df)
			r.closers = append(r.closers, df.Close)
		}
	}
	r.usdtTable = symtab.Read(files...)
	return r.usdtTable
}

// usdtArg is one argument a definition reads, with the operand it reads
// (index -1: a builtin, no operand).
type usdtArg struct {
	def   Arg
	op    usdt.Arg
	index int
}

// usdtArgs pairs the definition's arguments with the probe's operands:
// argN is operand N, $params every operand.
func usdtArgs(path string, d *Def, up usdt.Probe) ([]usdtArg, error) {
	var out []usdtArg
	for _, a := range d.Args {
		if a.Base == "$params" {
			for i, op := range up.Args {
				n := fmt.Sprintf("arg%d", i)
				out = append(out, usdtArg{Arg{Name: n, Expr: n, Base: n, Type: a.Type}, op, i})
			}
			continue
		}
		if IsBuiltin(a.Base) {
			out = append(out, usdtArg{a, usdt.Arg{}, -1})
			continue
		}
		i, _ := USDTArg(a.Base)
		if i >= len(up.Args) {
			return nil, fmt.Errorf("%s: USDT probe %s at %#x has %d arguments (arg0..arg%d): no %s", path, up.String(), up.Addr, len(up.Args), len(up.Args)-1, a.Base)
		}
		out = append(out, usdtArg{a, up.Args[i], i})
	}
	return out, nil
}

// usdtFetch is how a site reads one operand: its size and signedness
// from the note unless the definition gives a type; :string reads a C
// string the operand points to.
func (r *Resolver) usdtFetch(a Arg, op usdt.Arg) spec.Fetch {
	f := spec.Fetch{Name: a.Name, Type: a.Type}
	switch {
	case f.Type == "":
		f.Type = op.Type()
	case f.Type == "string":
		f.Type = "cstring"
	}
	f.Size = int64(op.Size)
	if f.Type == "cstring" || f.Type == "bytes" {
		f.Size = 8
	} else if a.Type != "" {
		f.Size = typeSize(f.Type)
	}
	if op.Unreadable != "" {
		f.Unavailable = op.Unreadable
		return f
	}
	if (f.Type == "cstring" || f.Type == "bytes") && op.Size != 8 {
		f.Unavailable = fmt.Sprintf("operand %q is %d bytes: not a pointer to text", op.Text, op.Size)
		return f
	}
	c, why := r.usdtChain(op)
	if why != "" {
		f.Unavailable = why
		return f
	}
	f.Chains = []spec.Chain{c}
	return f
}

// usdtChain is the fetch chain of an operand.
func (r *Resolver) usdtChain(op usdt.Arg) (spec.Chain, string) {
	switch op.Kind {
	case usdt.ArgReg:
		return spec.Chain{Reg: op.Reg}, ""
	case usdt.ArgConst:
		v := op.Const
		return spec.Chain{Const: &v}, ""
	}
	// Memory.
	switch {
	case op.Symbol != "":
		syms := r.usdtSyms().Named(op.Symbol)
		if len(syms) == 0 {
			objs := symtab.Objects(r.ef)
			for _, o := range objs {
				if o.Name == op.Symbol {
					syms = append(syms, o)
				}
			}
		}
		if len(syms) != 1 {
			return spec.Chain{}, fmt.Sprintf("operand %q: %d symbols are called %s", op.Text, len(syms), op.Symbol)
		}
		addr := []types.Op{{Code: types.OpAddr, Value: int64(syms[0].Addr) + op.Offset}}
		return spec.Chain{Expr: addr, Derefs: []int64{0}}, ""
	case op.Reg == "RIP" || op.Reg == "":
		return spec.Chain{}, fmt.Sprintf("operand %q: an address without a register or a symbol", op.Text)
	case op.Index == "":
		return spec.Chain{Reg: op.Reg, Derefs: []int64{op.Offset}}, ""
	}
	ops := []types.Op{{Code: types.OpReg, Reg: op.Reg}, {Code: types.OpReg, Reg: op.Index},
		{Code: types.OpConst, Value: op.Scale}, {Code: types.OpMul}, {Code: types.OpPlus}}
	return spec.Chain{Expr: ops, Derefs: []int64{op.Offset}}, ""
}
