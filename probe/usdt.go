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

// usdtNotes are the file's USDT probes (.note.stapsdt), read once, and
// the function symbols that place them (see syms).
type usdtNotes struct {
	t       *target
	all     []usdt.Probe // nil until read (see probes)
	table   *symtab.Table
	closers []func() error // what close releases
}

// close releases the files the notes opened (a debug file for its
// symbols).
func (u *usdtNotes) close() {
	for _, c := range u.closers {
		c()
	}
	u.closers = nil
}

// probes reads the file's USDT probes once.
func (u *usdtNotes) probes() ([]usdt.Probe, error) {
	if u.all == nil {
		ps, err := usdt.Read(u.t.ef)
		if errors.Is(err, usdt.ErrNoProbes) {
			return nil, fmt.Errorf("%s: %w: no USDT probes (the file has no .note.stapsdt)", u.t.path, types.ErrNotFound)
		}
		if err != nil {
			return nil, err
		}
		u.all = ps
	}
	return u.all, nil
}

// resolve finds the sites of a usdt:PROVIDER:NAME definition: the
// nop of every probe the point names, each with its semaphore's file
// offset and its arguments read from the note's operands.
func (u *usdtNotes) resolve(d *Def) (*spec.Probe, error) {
	all, err := u.probes()
	if err != nil {
		return nil, err
	}
	ps := d.USDT.In(all)
	if len(ps) == 0 {
		return nil, u.missing(d, all)
	}
	p := &spec.Probe{Def: d.Text, Function: ps[0].String(), Lang: "usdt"}
	for _, up := range ps {
		site, err := u.site(d, up)
		if err != nil {
			return nil, err
		}
		p.Sites = append(p.Sites, site)
	}
	return p, nil
}

// expand is a usdt: definition itself, or when its pattern names
// several PROVIDER:NAME, one definition each.
func (u *usdtNotes) expand(d *Def) ([]*Def, int, error) {
	all, err := u.probes()
	if err != nil {
		return nil, 0, err
	}
	ps := d.USDT.In(all)
	if len(ps) == 0 {
		return nil, 0, u.missing(d, all)
	}
	by := map[string]int{}
	var names []string
	for _, p := range ps {
		n := p.String()
		if _, ok := by[n]; !ok {
			names = append(names, n)
		}
		by[n]++
	}
	if len(names) == 1 {
		return []*Def{d}, 0, nil
	}
	sort.Strings(names)
	var out []*Def
	for _, n := range names {
		prov, name, _ := strings.Cut(n, ":")
		e := *d
		e.USDT = &USDTPoint{Provider: prov, Name: name}
		e.Text = strings.Replace(d.Text, d.USDT.String(), e.USDT.String(), 1)
		out = append(out, &e)
	}
	return out, len(ps), nil
}

// missing says which probes the file has, the closest first.
func (u *usdtNotes) missing(d *Def, all []usdt.Probe) error {
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
	return fmt.Errorf("%s: %w: no USDT probe %s (it has: %s)", u.t.path, types.ErrNotFound, d.USDT, strings.Join(near, ", "))
}

// site is one probe's site. The nop must start an instruction of
// the function that holds it, decoded from its first byte, as any other
// site: a note that points elsewhere is refused.
func (u *usdtNotes) site(d *Def, up usdt.Probe) (spec.Site, error) {
	fn, err := u.holder(up)
	if err != nil {
		return spec.Site{}, err
	}
	off, err := u.t.ef.FileOffset(up.Addr)
	if err != nil {
		return spec.Site{}, err
	}
	site := spec.Site{Kind: spec.SiteUSDT, Function: fn.Name, Addr: up.Addr, FileOffset: off, USDT: up.String()}
	if up.Semaphore != 0 {
		if site.RefCtrOffset, err = u.t.ef.FileOffset(up.Semaphore); err != nil {
			return spec.Site{}, fmt.Errorf("%s: the semaphore of USDT probe %s: %v", u.t.path, up.String(), err)
		}
	}
	args, err := usdtArgs(u.t.path, d, up)
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
		f := u.fetch(a.def, a.op)
		f.Operand = &a.index
		site.Args = append(site.Args, f)
	}
	return site, nil
}

// holder is the function whose code holds the probe's nop, proven to
// start an instruction there.
func (u *usdtNotes) holder(up usdt.Probe) (*types.Func, error) {
	sym, ok := u.syms().Covering(up.Addr)
	if !ok {
		return nil, fmt.Errorf("%s: USDT probe %s at %#x is in no function the symbol table knows: nothing proves an instruction starts there", u.t.path, up.String(), up.Addr)
	}
	fn := &types.Func{Name: sym.Name, LowPC: sym.Addr, Size: sym.Size}
	if !u.t.decodes() {
		return nil, fmt.Errorf("%s: USDT probe %s: instruction decoding is x86-64 only: nothing proves an instruction starts at %#x", u.t.path, up.String(), up.Addr)
	}
	nop := false
	err := u.t.insns(fn, func(a uint64, in x86asm.Inst) {
		if a == up.Addr {
			nop = in.Op == x86asm.NOP
		}
	})
	if err != nil {
		return nil, err
	}
	if !nop {
		return nil, fmt.Errorf("%s: USDT probe %s at %#x: no nop starts there when %s is decoded from its first byte: not attaching", u.t.path, up.String(), up.Addr, sym.Name)
	}
	return fn, nil
}

// syms are the function symbols of the file and of its debug file
// (the static functions that hold most probes are often only there).
func (u *usdtNotes) syms() *symtab.Table {
	if u.table != nil {
		return u.table
	}
	files := []*elfx.File{u.t.ef}
	if u.t.f != nil && u.t.f.Debug != nil && u.t.f.Debug != u.t.ef {
		files = append(files, u.t.f.Debug)
	} else if u.t.f == nil {
		if df, _ := u.t.ef.FindDebugFile(); df != nil {
			files = append(files, df)
			u.closers = append(u.closers, df.Close)
		}
	}
	u.table = symtab.Read(files...)
	return u.table
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

// fetch is how a site reads one operand: its size and signedness
// from the note unless the definition gives a type; :string reads a C
// string the operand points to.
func (u *usdtNotes) fetch(a Arg, op usdt.Arg) spec.Fetch {
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
	c, why := u.chain(op)
	if why != "" {
		f.Unavailable = why
		return f
	}
	f.Chains = []spec.Chain{c}
	return f
}

// chain is the fetch chain of an operand.
func (u *usdtNotes) chain(op usdt.Arg) (spec.Chain, string) {
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
		syms := u.syms().Named(op.Symbol)
		if len(syms) == 0 {
			objs := symtab.Objects(u.t.ef)
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
