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
		if fn.LowPC != 0 || opts.Relocatable && len(fn.Ranges) > 0 || fn.SymbolOnly || fn.Name == "" || fn.Lang != types.LangC && fn.Lang != types.LangCPlusPlus {
			continue
		}
		i := slices.IndexFunc(fn.Instances, func(in *types.Instance) bool {
			return (in.Kind == "constprop" || in.Kind == "isra") && in.Params != nil
		})
		if i < 0 {
			continue
		}
		in := fn.Instances[i]
		params, _, ok := trueParams(in.Params, opts.ArgRegs)
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

// changed applies to fns what the compiler's changes to their calling
// say: a function local to its file (not external) whose parameters at
// its entry are not where its declared ones would be (clang drops and
// moves a static function's parameters under its own name: foo(a, b, c)
// called as foo(a, c), a struct passed by one member) is encoded, with
// TrueSignature, with the parameters it takes (see trueParams), else left
// out, said to opts.Log as pahole --verbose says it. The others are as
// they are.
func (e *encoder) changed(fns []*types.Func, opts *EncodeOptions) []*types.Func {
	out := make([]*types.Func, 0, len(fns))
	for _, fn := range fns {
		if fn.External || fn.Variadic || fn.LowPC == 0 && !opts.Relocatable || fn.Lang != types.LangC && fn.Lang != types.LangCPlusPlus {
			out = append(out, fn)
			continue
		}
		params, moved, ok := trueParams(fn.Params, opts.ArgRegs)
		switch {
		case !ok || !moved:
			out = append(out, fn)
		case e.feat.Has(TrueSignature):
			c := *fn
			c.Params, c.Tags = params, nil
			out = append(out, &c)
		default:
			if opts.Log != nil {
				opts.Log("%s : skipping BTF encoding of function due to optimized parameters", fn.Name)
			}
		}
	}
	return out
}

// trueParams are the parameters a function's copy takes, from its own
// parameters located at its entry: those in the integer argument
// registers regs, in their order; one the copy has as a constant, or
// nowhere, it does not take. On System V x86-64 (regs from RDI) a struct
// or union of at most 16 bytes is taken whole in consecutive registers,
// or, when one register holds its first member alone, as that member,
// named PARAM__MEMBER (pahole's name); a larger one on the stack at
// entry is taken in memory. ok is false when the registers cannot tell:
// a parameter elsewhere, out of order, a floating-point one (passed
// otherwise), or no regs. moved reports a parameter taken other than
// where the declared parameters put it (ps's order, each in its slots):
// evidence that the compiler changed how the function is called.
func trueParams(ps []types.Param, regs []string) (out []types.Param, moved, ok bool) {
	if len(regs) == 0 {
		return nil, false, false
	}
	sysV := regs[0] == "RDI"
	type placed struct {
		reg, slots int // reg -1: in memory
		p          types.Param
	}
	var in []placed
	declared := 0 // the register the declared parameters put the next one in
	for _, p := range ps {
		slots, mem, known := argSlots(p.Type, sysV)
		if !known {
			return nil, false, false
		}
		at := declared
		declared += slots
		pieces := p.Loc.Pieces
		switch {
		case len(pieces) == 0 || len(pieces) == 1 && pieces[0].Kind != types.LocReg && pieces[0].Kind != types.LocMem:
			continue // a constant, a value the caller's entry gives, nothing: not passed
		case mem:
			if len(pieces) != 1 || pieces[0].Kind != types.LocMem {
				return nil, false, false
			}
			in = append(in, placed{-1, 0, p})
			continue
		}
		k := slices.Index(regs, pieces[0].Reg)
		if k < 0 {
			return nil, false, false
		}
		for i, pc := range pieces {
			if pc.Kind != types.LocReg || k+i >= len(regs) || pc.Reg != regs[k+i] {
				return nil, false, false
			}
		}
		if slots > 1 && len(pieces) < slots {
			// One register of a struct: its first member alone.
			m, ok := firstMember(p.Type, pieces[0].Size)
			if !ok || len(pieces) != 1 {
				return nil, false, false
			}
			p.Name, p.Type, slots = p.Name+"__"+m.Name, m.Type, 1
			moved = true
		}
		moved = moved || k != at
		in = append(in, placed{k, slots, p})
	}
	byReg := slices.Clone(in)
	slices.SortStableFunc(byReg, func(a, b placed) int {
		ka, kb := a.reg, b.reg
		if ka < 0 {
			ka = len(regs) // in memory: after the registers
		}
		if kb < 0 {
			kb = len(regs)
		}
		return ka - kb
	})
	next := 0
	for _, pl := range byReg {
		if pl.reg < 0 {
			continue
		}
		if pl.reg != next {
			return nil, false, false // a register skipped: a parameter we do not see
		}
		next += pl.slots
	}
	last := -1
	for _, pl := range in {
		if pl.reg >= 0 && pl.reg < last {
			in, moved = byReg, true // reordered: in the order of the registers
			break
		}
		last = max(last, pl.reg)
	}
	for _, pl := range in {
		p := pl.p
		p.Loc, p.PC = types.Loc{}, 0
		out = append(out, p)
	}
	return out, moved, true
}

// argSlots is how the integer argument registers pass a value of type t:
// in slots registers, or in memory; known is false for what they do not
// pass (floating point, a struct holding one, arrays) or, without sysV,
// any struct.
func argSlots(t types.Type, sysV bool) (slots int, mem, known bool) {
	switch v := types.Resolve(t).(type) {
	case *types.Base:
		return int(max(1, (v.ByteSize+7)/8)), false, v.Encoding != types.Float && v.Encoding != types.Complex && v.ByteSize > 0
	case *types.Pointer, *types.Enum:
		return 1, false, true
	case *types.Struct:
		if !sysV || v.Incomplete || hasFloat(v, 0) {
			return 0, false, false
		}
		if v.ByteSize > 16 {
			return 0, true, true
		}
		return int((v.ByteSize + 7) / 8), false, v.ByteSize > 0
	}
	return 0, false, false
}

// hasFloat reports whether s holds a floating-point value at any depth.
func hasFloat(s *types.Struct, depth int) bool {
	if depth > 8 {
		return true
	}
	for _, m := range s.Members {
		t := types.Resolve(m.Type)
		for i := 0; i < 8; i++ {
			a, ok := t.(*types.Array)
			if !ok {
				break
			}
			t = types.Resolve(a.Elem)
		}
		switch v := t.(type) {
		case *types.Base:
			if v.Encoding == types.Float || v.Encoding == types.Complex {
				return true
			}
		case *types.Struct:
			if hasFloat(v, depth+1) {
				return true
			}
		}
	}
	return false
}

// firstMember is the member of struct t at offset 0 whose size is size
// bytes, as a register holding only it passes it.
func firstMember(t types.Type, size int64) (types.Member, bool) {
	s, ok := types.Resolve(t).(*types.Struct)
	if !ok || len(s.Members) == 0 || s.Members[0].Offset != 0 || s.Members[0].BitSize != 0 || s.Members[0].Name == "" {
		return types.Member{}, false
	}
	m := s.Members[0]
	if n, err := types.Sizeof(m.Type); err != nil || n != size && size != 0 || n != 8 {
		return types.Member{}, false
	}
	return m, true
}
