package btf

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
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
	// Ident maps a name of any language to the identifier BTF records for
	// it (the kernel takes C identifiers only): codegen.CName, the rule
	// gopahole --format=c names types by. nil keeps names as they are.
	Ident func(string) string
	// Vars are global variables to encode as VARs in the DATASECs of
	// Sections, the file's sections that hold them.
	Vars     []types.Global
	Sections []DataSection
	// Features, when not nil, are the only features encoded (pahole's
	// --btf_features); nil encodes floats, tags, enum64, consistent
	// functions and every global variable (legacyFeatures).
	Features *Features
	// Log, when not nil, receives a line for each function left out and
	// why, as pahole --verbose prints them; Warn the warnings pahole
	// prints on its standard error (a name left out, see EncodeForce).
	Log, Warn func(format string, args ...any)
	// Relocatable says the file is an object file (.o), whose code
	// starts at 0 in its sections: a function there is out of line when
	// it has code (Ranges), whatever its LowPC.
	Relocatable bool
	// ArgRegs are the registers that pass integer arguments, in order
	// (System V's RDI, RSI, RDX, RCX, R8, R9): what tells which
	// parameters a clone takes (see OptimizedFunc, TrueSignature).
	ArgRegs []string
}

// legacyFeatures are what Encode writes without EncodeOptions.Features.
const legacyFeatures = Float | DeclTag | TypeTag | Enum64 | ConsistentFunc | GlobalVar

// features are the features opts asks for.
func (opts *EncodeOptions) features() Features {
	if opts.Features == nil {
		return legacyFeatures
	}
	return *opts.Features
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
//
// Go, Rust and Zig types are laid out as gopahole --format=c lays them
// out: strings, slices, interfaces and fat pointers are the structs their
// DWARF describes; a Go func value is a void pointer; a Rust enum with
// data is a union of its variants, each a struct at offset 0 whose fields
// sit at their offsets in the enum, and of an anonymous struct putting the
// tag at its offset as "__tag"; a zero-size base type (Rust's ()) is an
// empty array of unsigned char, an integer of a size C has no type for an
// array of its bytes, an array too big for BTF (Go's *[1 << 40]T) 0
// elements. A struct's members are written in memory order; a member C
// could not hold is bytes (types.Expressible); a union member that does
// not start at 0 is wrapped in an anonymous struct that places it. Names
// of types, members, enumerators, functions and parameters go through
// opts.Ident; base types keep the language's own (the kernel takes
// "long int" and "u8" alike), and a FUNC's unnamed parameters are
// named __argN.
func Encode(spec *types.Spec, opts *EncodeOptions) ([]byte, error) {
	if opts == nil {
		opts = &EncodeOptions{}
	}
	e := newEncoder(spec.PointerSize, opts.Ident)
	e.feat = opts.features()
	b, err := cbtf.NewBuilder(nil, &cbtf.BuilderOptions{Deduplicate: true})
	if err != nil {
		return nil, err
	}
	for _, t := range spec.Types() {
		if _, err := b.Add(e.typ(t)); err != nil {
			return nil, fmt.Errorf("%s: encoding BTF of %s: %v", spec.Path, t.TypeName(), err)
		}
	}
	// The types of the globals too, encoded or not (pahole encodes every
	// type the debug info has: `struct s __tag(t) *p;` is a type tag
	// only p's type holds).
	for _, g := range opts.Vars {
		if g.Type == nil {
			continue
		}
		if _, err := b.Add(e.typ(g.Type)); err != nil {
			return nil, fmt.Errorf("%s: encoding BTF of the type of %s: %v", spec.Path, g.Name, err)
		}
	}
	var clones []*types.Func
	clones, e.raw = e.clones(opts.Funcs, opts)
	for _, fn := range encodable(append(e.changed(opts.Funcs, opts), clones...), e.ident, e.feat.Has(ConsistentFunc), opts.Relocatable) {
		if _, err := b.Add(e.fn(fn)); err != nil {
			return nil, fmt.Errorf("%s: encoding BTF of function %s: %v", spec.Path, fn.Name, err)
		}
	}
	dss, err := e.datasecs(opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", spec.Path, err)
	}
	for _, ds := range dss {
		if _, err := b.Add(ds); err != nil {
			return nil, fmt.Errorf("%s: encoding BTF of section %s: %v", spec.Path, ds.Name, err)
		}
	}
	order := opts.Order
	if order == nil {
		order = binary.LittleEndian
	}
	raw, err := b.Marshal(nil, &cbtf.MarshalOptions{Order: order})
	if err == nil && !e.feat.Has(Enum64) {
		raw, err = enum32(raw)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: encoding BTF: %v", spec.Path, err)
	}
	return raw, nil
}

// encodable are the functions of fns BTF describes: compiled out of line,
// with debug info that states their prototype (not assembly) in types of
// known size (sized), sorted by address. A name that functions with different prototypes share (static
// functions of several compile units) is left out, as pahole leaves out
// inconsistent prototypes: a tool attaching by name could not tell which.
func encodable(fns []*types.Func, ident func(string) string, consistent, rel bool) []*types.Func {
	var out []*types.Func
	protos := make(map[string]string)
	for _, fn := range fns {
		if fn.LowPC == 0 && !(rel && len(fn.Ranges) > 0) || fn.SymbolOnly || fn.Name == "" || fn.Lang == types.LangAsm || !sized(fn) {
			continue
		}
		p, name := prototype(fn), ident(fn.Name)
		if q, seen := protos[name]; seen {
			if q != p {
				protos[name] = "" // inconsistent
			}
			continue
		}
		protos[name] = p
		out = append(out, fn)
	}
	if consistent {
		out = slices.DeleteFunc(out, func(fn *types.Func) bool { return protos[ident(fn.Name)] == "" })
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].LowPC < out[j].LowPC })
	return out
}

// sized reports whether every parameter and the result of fn has a type
// whose size is known: the kernel refuses a FUNC that passes a struct
// only declared by value (a Rust fat pointer whose type rustc did not
// describe).
func sized(fn *types.Func) bool {
	byValue := func(t types.Type) bool {
		s, ok := types.Resolve(t).(*types.Struct)
		return !ok || !s.Incomplete
	}
	if fn.Return != nil && !byValue(fn.Return) {
		return false
	}
	for _, p := range fn.Params {
		if !byValue(p.Type) {
			return false
		}
	}
	return true
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
	uchar *cbtf.Int // the element of byte arrays standing for other types
	ptr   int64
	ident func(string) string
	feat  Features
	raw   map[*types.Func]bool // functions whose names are kept as they are
}

func newEncoder(ptrSize int64, ident func(string) string) *encoder {
	if ptrSize == 0 {
		ptrSize = 8
	}
	if ident == nil {
		ident = func(s string) string { return s }
	}
	return &encoder{memo: make(map[types.Type]cbtf.Type), void: &cbtf.Void{}, ptr: ptrSize, ident: ident,
		index: &cbtf.Int{Name: "__ARRAY_SIZE_TYPE__", Size: 4}, uchar: &cbtf.Int{Name: "unsigned char", Size: 1}}
}

// maxName is the longest name the encoder writes: kernels before 6.1 take
// identifiers of at most 127 bytes (KSYM_NAME_LEN 128), later ones 511.
const maxName = 127

// name is the identifier BTF records for a name; "" stays "". One longer
// than maxName (a Go generic instance, a Zig function of comptime
// arguments) keeps its first 117 bytes and ends in "__" and 8 hex digits
// of the FNV-1a hash of the source name, so that two long names stay
// apart.
func (e *encoder) name(s string) string {
	if s == "" {
		return ""
	}
	n := e.ident(s)
	if len(n) > maxName {
		h := fnv.New32a()
		h.Write([]byte(s))
		n = fmt.Sprintf("%s__%08x", n[:maxName-10], h.Sum32())
	}
	return n
}

// bytes is an array of n unsigned chars.
func (e *encoder) bytes(n int64) *cbtf.Array {
	return &cbtf.Array{Index: e.index, Type: e.uchar, Nelems: uint32(max(n, 0))}
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
		c := e.baseType(v)
		e.memo[t] = c
		return c
	case *types.Pointer:
		p := &cbtf.Pointer{}
		e.memo[t] = p
		p.Target = e.typ(v.Target)
		return p
	case *types.Typedef:
		td := &cbtf.Typedef{Name: e.name(v.Name), Tags: e.tags(v.Tags)}
		e.memo[t] = td
		td.Type = e.typ(v.Target)
		return td
	case *types.Qualifier:
		return e.qual(v)
	case *types.Array:
		a := &cbtf.Array{Index: e.index, Nelems: uint32(max(v.Count, 0))}
		if size, err := types.Sizeof(v); err != nil || size > math.MaxUint32 {
			// Go's *[1 << 40]T: an array only ever behind a pointer, too
			// big for BTF, has 0 elements.
			a.Nelems = 0
		}
		e.memo[t] = a
		a.Type = e.typ(v.Elem)
		return a
	case *types.Enum:
		c := &cbtf.Enum{Name: e.name(v.Name), Size: uint32(v.ByteSize), Signed: v.Signed}
		for _, ev := range v.Values {
			c.Values = append(c.Values, cbtf.EnumValue{Name: e.name(ev.Name), Value: uint64(ev.Value)})
		}
		e.memo[t] = c
		return c
	case *types.Struct:
		return e.composite(v)
	case *types.FuncProto:
		if v.ByteSize > 0 {
			// A Go func value: a pointer-sized word pointing at a closure,
			// void * as --format=c spells it.
			p := &cbtf.Pointer{Target: e.void}
			e.memo[t] = p
			return p
		}
		return e.proto(v, v.Return, protoParams(v), v.Variadic)
	}
	panic(fmt.Sprintf("btf: encoding unknown model type %T", t))
}

func (e *encoder) baseType(v *types.Base) cbtf.Type {
	switch v.ByteSize {
	case 1, 2, 4, 8, 16:
	case 0: // Rust's (), !: takes no room
		return e.bytes(0)
	default: // no C type of this size
		return e.bytes(v.ByteSize)
	}
	if v.Encoding == types.Float && e.feat.Has(Float) {
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
		if !e.feat.Has(TypeTag) {
			q = e.typ(v.Target)
			e.memo[v] = q
			return q
		}
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
		f := &cbtf.Fwd{Name: e.name(v.Name), Kind: cbtf.FwdStruct}
		if v.Kind == types.KindUnion || v.Variants != nil {
			f.Kind = cbtf.FwdUnion
		}
		e.memo[v] = f
		return f
	}
	ms := v.Members
	if v.Variants != nil {
		ms = e.variants(v)
	}
	byOffset := func(a, b types.Member) int { return cmp.Compare(a.Offset, b.Offset) }
	if !slices.IsSortedFunc(ms, byOffset) {
		// Rust reorders fields; BTF wants a struct's members in memory order.
		ms = slices.Clone(ms)
		slices.SortStableFunc(ms, byOffset)
	}
	members := make([]cbtf.Member, 0, len(ms))
	var c cbtf.Type
	if v.Kind == types.KindUnion || v.Variants != nil {
		u := &cbtf.Union{Name: e.name(v.Name), Size: uint32(v.ByteSize), Tags: e.tags(v.Tags)}
		e.memo[v] = u
		defer func() { u.Members = members }()
		c = u
	} else {
		s := &cbtf.Struct{Name: e.name(v.Name), Size: uint32(v.ByteSize), Tags: e.tags(v.Tags)}
		e.memo[v] = s
		defer func() { s.Members = members }()
		c = s
	}
	union := v.Kind == types.KindUnion || v.Variants != nil
	for i, m := range ms {
		if m.Dynamic != types.DynamicNone {
			continue
		}
		if union && m.Offset != 0 {
			m = types.Member{Type: placed(m, m.Name)}
		} else if !union {
			m.Type = types.Expressible(m, ms[i+1:], v.ByteSize)
		}
		members = append(members, cbtf.Member{Name: e.name(m.Name), Type: e.typ(m.Type),
			Offset: cbtf.Bits(m.Offset), BitfieldSize: cbtf.Bits(m.BitSize), Tags: e.tags(m.Tags)})
	}
	return c
}

// tags are the decl tags encoded of tags: none without DeclTag.
func (e *encoder) tags(tags []string) []string {
	if !e.feat.Has(DeclTag) {
		return nil
	}
	return tags
}

// variants are the members of the union a Rust enum with data becomes:
// its own members, its tag at its offset in an anonymous struct, and each
// variant.
func (e *encoder) variants(v *types.Struct) []types.Member {
	ms := slices.Clone(v.Members)
	if tg := v.Variants.Tag; tg != nil {
		ms = append(ms, types.Member{Name: "__tag", Type: placed(*tg, "value")})
	}
	for _, vr := range v.Variants.Variants {
		ms = append(ms, vr.Member)
	}
	return ms
}

// placed is an anonymous struct holding m, named name, at m's offset: a
// union member that does not start at 0, which BTF cannot say otherwise.
func placed(m types.Member, name string) *types.Struct {
	size, _ := types.Sizeof(m.Type)
	end := m.Offset.Bytes() + size
	if m.BitSize > 0 {
		end = (m.Offset + m.BitSize + 7).Bytes()
	}
	m.Name = name
	return &types.Struct{Kind: types.KindStruct, ByteSize: end, Members: []types.Member{m}}
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
		fp.Params = append(fp.Params, cbtf.FuncParam{Name: e.name(p.Name), Type: e.typ(p.Type)})
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
	// The kernel wants every argument of a FUNC named (Zig leaves some
	// unnamed): __argN, N counting from 0.
	params := fn.Params
	if slices.ContainsFunc(params, func(p types.Param) bool { return p.Name == "" }) {
		params = slices.Clone(params)
		for i := range params {
			if params[i].Name == "" {
				params[i].Name = fmt.Sprintf("__arg%d", i)
			}
		}
	}
	name := e.name(fn.Name)
	if e.raw[fn] {
		name = fn.Name
	}
	f := &cbtf.Func{Name: name, Linkage: linkage, Type: e.proto(nil, fn.Return, params, fn.Variadic)}
	if fn.Tags != nil && e.feat.Has(DeclTag) {
		f.Tags = fn.Tags.Func
		for i := range params {
			if t := fn.Tags.Param(i); t != nil {
				f.ParamTags = append(f.ParamTags, make([][]string, i+1-len(f.ParamTags))...)
				f.ParamTags[i] = t
			}
		}
	}
	return f
}
