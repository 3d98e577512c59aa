package btf

import (
	"slices"

	"github.com/binscope/binscope/types"
)

// clones are the functions the compiler kept only as clones (GCC's
// .constprop.N, .isra.N: LowPC 0, an instance of that kind), as the
// features encode them: with OptimizedFunc, under the function's own name
// when the clone takes the parameters the source declares, in their
// registers; with TrueSignature, a clone that takes others under its
// symbol's name, with the parameters it takes (a constant or unused one
// dropped). A clone whose parameters the registers cannot tell (one in
// memory, a float, a struct by value), or neither feature, is left out,
// said to opts.Log as pahole --verbose says it. The names of the second
// kind are raw (not through EncodeOptions.Ident): foo.constprop.0, as
// pahole writes them.
func (e *encoder) clones(fns []*types.Func, opts *EncodeOptions) (out []*types.Func, raw map[*types.Func]bool) {
	raw = map[*types.Func]bool{}
	for _, fn := range fns {
		if fn.LowPC != 0 || fn.SymbolOnly || fn.Name == "" || fn.Lang != types.LangC && fn.Lang != types.LangCPlusPlus {
			continue
		}
		i := slices.IndexFunc(fn.Instances, func(in *types.Instance) bool {
			return (in.Kind == "constprop" || in.Kind == "isra") && in.Params != nil
		})
		if i < 0 {
			continue
		}
		in := fn.Instances[i]
		params, ok := trueParams(in.Params, opts.ArgRegs)
		same := ok && len(params) == len(fn.Params) && slices.EqualFunc(params, fn.Params, func(a, b types.Param) bool { return a.Name == b.Name })
		c := *fn
		c.LowPC = in.Entry
		switch {
		case same && e.feat.Has(OptimizedFunc):
		case ok && !same && e.feat.Has(TrueSignature):
			c.Name, c.Params, c.External = in.Symbol, params, false
			raw[&c] = true
		default:
			if opts.Log != nil {
				opts.Log("%s : skipping BTF encoding of function due to optimized parameters", fn.Name)
			}
			continue
		}
		out = append(out, &c)
	}
	return out, raw
}

// trueParams are the parameters a clone takes, from its own parameters
// located at its entry: those in the integer argument registers regs, in
// their order; one the clone has as a constant, or nowhere, it does not
// take. ok is false when the registers cannot tell: a parameter
// elsewhere (memory, another register, out of order), a floating-point or
// struct one (passed otherwise), or no regs.
func trueParams(ps []types.Param, regs []string) (out []types.Param, ok bool) {
	if len(regs) == 0 {
		return nil, false
	}
	type placed struct {
		reg int
		p   types.Param
	}
	var in []placed
	for _, p := range ps {
		switch t := types.Resolve(p.Type).(type) {
		case *types.Struct:
			return nil, false
		case *types.Base:
			if t.Encoding == types.Float {
				return nil, false
			}
		}
		pieces := p.Loc.Pieces
		switch {
		case len(pieces) == 0 || len(pieces) == 1 && pieces[0].Kind != types.LocReg && pieces[0].Kind != types.LocMem:
			continue // a constant, a value the caller's entry gives, nothing: not passed
		case len(pieces) != 1 || pieces[0].Kind != types.LocReg:
			return nil, false
		}
		k := slices.Index(regs, pieces[0].Reg)
		if k < 0 {
			return nil, false
		}
		in = append(in, placed{k, p})
	}
	slices.SortStableFunc(in, func(a, b placed) int { return a.reg - b.reg })
	for i, pl := range in {
		if pl.reg != i {
			return nil, false // a register skipped: a parameter we do not see
		}
		p := pl.p
		p.Loc, p.PC = types.Loc{}, 0
		out = append(out, p)
	}
	return out, true
}
