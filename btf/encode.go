package btf

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"

	cbtf "github.com/cilium/ebpf/btf"

	"github.com/binscope/binscope/types"
)

// EncodeOptions tune Encode. A nil *EncodeOptions means the defaults.
type EncodeOptions struct {
	// Order is the byte order of the BTF written; nil means little-endian.
	Order binary.ByteOrder
	// Funcs are the functions to encode as BTF_KIND_FUNC with their
	// prototypes: those with an out-of-line copy (LowPC set) and debug
	// info (not SymbolOnly), once per name, as pahole -J does.
	Funcs []*types.Func
}

// Encode writes the named types of spec, everything they refer to, and the
// functions of opts as raw BTF (magic 0xeb9f, the format of a .BTF
// section and of pahole's --btf_encode_detached), deduplicated by
// cilium/ebpf's btf.Builder.
//
// BTF is C's type system: a C++ class is a struct, references are
// pointers, _Atomic is dropped (pahole drops it too), a flexible array
// member has 0 elements, an enum of 8 bytes is an ENUM64 and complex
// floating-point types, which BTF cannot spell, are integers of their
// size. Members whose offset is not fixed (types.Member.Dynamic) are left
// out.
func Encode(spec *types.Spec, opts *EncodeOptions) ([]byte, error) {
	if opts == nil {
		opts = &EncodeOptions{}
	}
	e := newEncoder(spec.PointerSize)
	b, err := cbtf.NewBuilder(nil, &cbtf.BuilderOptions{Deduplicate: true})
	if err != nil {
		return nil, err
	}
	for _, t := range spec.Types() {
		if _, err := b.Add(e.typ(t)); err != nil {
			return nil, fmt.Errorf("%s: encoding BTF of %s: %v", spec.Path, t.TypeName(), err)
		}
	}
	for _, fn := range encodable(opts.Funcs) {
		if _, err := b.Add(e.fn(fn)); err != nil {
			return nil, fmt.Errorf("%s: encoding BTF of function %s: %v", spec.Path, fn.Name, err)
		}
	}
	order := opts.Order
	if order == nil {
		order = binary.LittleEndian
	}
	raw, err := b.Marshal(nil, &cbtf.MarshalOptions{Order: order})
	if err != nil {
		return nil, fmt.Errorf("%s: encoding BTF: %v", spec.Path, err)
	}
	return raw, nil
}

// encodable are the functions of fns BTF describes: compiled out of line,
// with debug info that states their prototype (not assembly), sorted by
// address. A name that functions with different prototypes share (static
// functions of several compile units) is left out, as pahole leaves out
// inconsistent prototypes: a tool attaching by name could not tell which.
func encodable(fns []*types.Func) []*types.Func {
	var out []*types.Func
	protos := make(map[string]string)
	for _, fn := range fns {
		if fn.LowPC == 0 || fn.SymbolOnly || fn.Name == "" || fn.Lang == types.LangAsm {
			continue
		}
		p := prototype(fn)
		if q, seen := protos[fn.Name]; seen {
			if q != p {
				protos[fn.Name] = "" // inconsistent
			}
			continue
		}
		protos[fn.Name] = p
		out = append(out, fn)
	}
	out = slices.DeleteFunc(out, func(fn *types.Func) bool { return protos[fn.Name] == "" })
	sort.SliceStable(out, func(i, j int) bool { return out[i].LowPC < out[j].LowPC })
	return out
}

// prototype spells fn's return and parameter types, never "".
func prototype(fn *types.Func) string {
	var b strings.Builder
	b.WriteString(types.Declare(voidIfNil(fn.Return), "") + "(")
	for _, p := range fn.Params {
		b.WriteString(types.Declare(p.Type, "") + ",")
	}
	if fn.Variadic {
		b.WriteString("...")
	}
	return b.String() + ")"
}

func voidIfNil(t types.Type) types.Type {
	if t == nil {
		return &types.Void{}
	}
	return t
}

// encoder turns model types into cilium/ebpf types, each once; a value is
// recorded before its parts are converted, so cycles through pointers end.
type encoder struct {
	memo  map[types.Type]cbtf.Type
	void  *cbtf.Void
	index *cbtf.Int // the index type of arrays, as pahole names it
	ptr   int64
}

func newEncoder(ptrSize int64) *encoder {
	if ptrSize == 0 {
		ptrSize = 8
	}
	return &encoder{memo: make(map[types.Type]cbtf.Type), void: &cbtf.Void{}, ptr: ptrSize,
		index: &cbtf.Int{Name: "__ARRAY_SIZE_TYPE__", Size: 4}}
}

func (e *encoder) typ(t types.Type) cbtf.Type {
	if t == nil {
		return e.void
	}
	if c, ok := e.memo[t]; ok {
		return c
	}
	switch v := t.(type) {
	case *types.Void:
		return e.void
	case *types.Base:
		if v.ByteSize == 0 && v.Name == "" {
			// DW_TAG_unspecified_type: BTF spells it void, as pahole does.
			return e.void
		}
		c := baseType(v)
		e.memo[t] = c
		return c
	case *types.Pointer:
		p := &cbtf.Pointer{}
		e.memo[t] = p
		p.Target = e.typ(v.Target)
		return p
	case *types.Typedef:
		td := &cbtf.Typedef{Name: v.Name}
		e.memo[t] = td
		td.Type = e.typ(v.Target)
		return td
	case *types.Qualifier:
		return e.qual(v)
	case *types.Array:
		a := &cbtf.Array{Index: e.index, Nelems: uint32(max(v.Count, 0))}
		e.memo[t] = a
		a.Type = e.typ(v.Elem)
		return a
	case *types.Enum:
		c := &cbtf.Enum{Name: v.Name, Size: uint32(v.ByteSize), Signed: v.Signed}
		for _, ev := range v.Values {
			c.Values = append(c.Values, cbtf.EnumValue{Name: ev.Name, Value: uint64(ev.Value)})
		}
		e.memo[t] = c
		return c
	case *types.Struct:
		return e.composite(v)
	case *types.FuncProto:
		return e.proto(v, v.Return, protoParams(v), v.Variadic)
	}
	panic(fmt.Sprintf("btf: encoding unknown model type %T", t))
}

func baseType(v *types.Base) cbtf.Type {
	if v.Encoding == types.Float {
		return &cbtf.Float{Name: v.Name, Size: uint32(v.ByteSize)}
	}
	var enc cbtf.IntEncoding
	switch v.Encoding {
	case types.Signed, types.Char:
		enc = cbtf.Signed
	case types.Bool:
		enc = cbtf.Bool
	}
	return &cbtf.Int{Name: v.Name, Size: uint32(v.ByteSize), Encoding: enc}
}

func (e *encoder) qual(v *types.Qualifier) cbtf.Type {
	var (
		q   cbtf.Type
		set func(cbtf.Type)
	)
	switch v.Kind {
	case types.Const:
		c := &cbtf.Const{}
		q, set = c, func(t cbtf.Type) { c.Type = t }
	case types.Volatile:
		c := &cbtf.Volatile{}
		q, set = c, func(t cbtf.Type) { c.Type = t }
	case types.Restrict:
		c := &cbtf.Restrict{}
		q, set = c, func(t cbtf.Type) { c.Type = t }
	case types.TypeTag:
		c := &cbtf.TypeTag{Value: v.Tag}
		q, set = c, func(t cbtf.Type) { c.Type = t }
	default: // _Atomic: BTF has no such qualifier
		q = e.typ(v.Target)
		e.memo[v] = q
		return q
	}
	e.memo[v] = q
	set(e.typ(v.Target))
	return q
}

func (e *encoder) composite(v *types.Struct) cbtf.Type {
	if v.Incomplete {
		f := &cbtf.Fwd{Name: v.Name, Kind: cbtf.FwdStruct}
		if v.Kind == types.KindUnion {
			f.Kind = cbtf.FwdUnion
		}
		e.memo[v] = f
		return f
	}
	members := make([]cbtf.Member, 0, len(v.Members))
	var c cbtf.Type
	if v.Kind == types.KindUnion {
		u := &cbtf.Union{Name: v.Name, Size: uint32(v.ByteSize), Tags: v.Tags}
		e.memo[v] = u
		defer func() { u.Members = members }()
		c = u
	} else {
		s := &cbtf.Struct{Name: v.Name, Size: uint32(v.ByteSize), Tags: v.Tags}
		e.memo[v] = s
		defer func() { s.Members = members }()
		c = s
	}
	for _, m := range v.Members {
		if m.Dynamic != types.DynamicNone {
			continue
		}
		members = append(members, cbtf.Member{Name: m.Name, Type: e.typ(m.Type),
			Offset: cbtf.Bits(m.Offset), BitfieldSize: cbtf.Bits(m.BitSize), Tags: m.Tags})
	}
	return c
}

func protoParams(v *types.FuncProto) []types.Param {
	ps := make([]types.Param, len(v.Params))
	for i, p := range v.Params {
		ps[i] = types.Param{Name: p.Name, Type: p.Type}
	}
	return ps
}

// proto is a FUNC_PROTO; a variadic one ends with an unnamed void
// parameter, as BTF spells "...".
func (e *encoder) proto(key types.Type, ret types.Type, params []types.Param, variadic bool) *cbtf.FuncProto {
	fp := &cbtf.FuncProto{}
	if key != nil {
		e.memo[key] = fp
	}
	fp.Return = e.typ(ret)
	for _, p := range params {
		fp.Params = append(fp.Params, cbtf.FuncParam{Name: p.Name, Type: e.typ(p.Type)})
	}
	if variadic {
		fp.Params = append(fp.Params, cbtf.FuncParam{Type: e.void})
	}
	return fp
}

// fn is a FUNC: the function's name, its prototype from its parameters in
// declaration order, global linkage for an external function.
func (e *encoder) fn(fn *types.Func) *cbtf.Func {
	linkage := cbtf.StaticFunc
	if fn.External {
		linkage = cbtf.GlobalFunc
	}
	return &cbtf.Func{Name: fn.Name, Linkage: linkage, Type: e.proto(nil, fn.Return, fn.Params, fn.Variadic)}
}
