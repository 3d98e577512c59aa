package dwarf

import (
	"github.com/binscope/binscope/types"
)

func (c *converter) composite(n *node, e *Entry, size int64, depth int) (types.Type, error) {
	t := &types.Struct{
		Name:     c.qualify(n, e.Name()),
		ByteSize: size,
		Lang:     n.lang,
		Decl:     c.decl(n, e),
	}
	switch e.Tag {
	case TagUnionType:
		t.Kind = types.KindUnion
	case TagClassType:
		t.Kind = types.KindClass
	}
	if e.Declaration() {
		t.Incomplete = true
	}
	if a, ok := e.Int(attrAlignment); ok && a > 0 {
		t.Align = a
	}
	if k, ok := e.Int(attrGoKind); ok {
		t.GoKind = types.GoKind(k)
	}
	c.memo[e.Offset] = t
	if c.opaque && !t.Incomplete && (n.lang == types.LangC || n.lang == types.LangCPlusPlus) {
		return t, nil // spelled by its name: its parts are left unread
	}
	var err error
	if t.Tags, err = annotations(n, annotDeclTag); err != nil {
		return nil, err
	}
	for _, k := range n.kids {
		switch k.tag {
		case TagMember, TagInheritance:
			m, ok, err := c.member(k, depth)
			if err != nil {
				return nil, err
			}
			switch {
			case ok && m.Dynamic != types.DynamicNone:
				t.Dynamic = append(t.Dynamic, m)
			case ok:
				t.Members = append(t.Members, m)
			}
		case TagSubprogram:
			m, err := c.method(k, depth)
			if err != nil {
				return nil, err
			}
			t.Methods = append(t.Methods, m)
		case TagVariantPart:
			vp, err := c.variantPart(k, depth)
			if err != nil {
				return nil, err
			}
			t.Variants = vp
		case TagTemplateTypeParameter, TagTemplateValueParameter:
			p, err := c.templateParam(k, depth)
			if err != nil {
				return nil, err
			}
			t.Template = append(t.Template, p)
		}
	}
	return t, nil
}

// templateParam converts a DW_TAG_template_type_parameter or
// DW_TAG_template_value_parameter.
func (c *converter) templateParam(n *node, depth int) (types.TemplateParam, error) {
	e, err := n.entry()
	if err != nil {
		return types.TemplateParam{}, err
	}
	p := types.TemplateParam{Name: e.Name()}
	if off, ok := e.Type(); ok && e.Tag == TagTemplateTypeParameter {
		c.behind = true // spelled by its name (Options.Pointees)
		if p.Type, err = c.typ(off, depth+1); err != nil {
			return types.TemplateParam{}, err
		}
	}
	p.Value, _ = e.Int(AttrConstValue)
	return p, nil
}

// member converts a DW_TAG_member or DW_TAG_inheritance. Static members
// (declarations without a location) take no space and are left out.
func (c *converter) member(n *node, depth int) (types.Member, bool, error) {
	e, err := n.entry()
	if err != nil {
		return types.Member{}, false, err
	}
	if e.Declaration() {
		return types.Member{}, false, nil
	}
	if ext, _ := e.Flag(AttrExternal); ext {
		return types.Member{}, false, nil
	}
	typ, err := c.ref(e, depth)
	if err != nil {
		return types.Member{}, false, err
	}
	m := types.Member{Name: e.Name(), Type: typ}
	if m.Tags, err = annotations(n, annotDeclTag); err != nil {
		return types.Member{}, false, err
	}
	m.Artificial, _ = e.Flag(AttrArtificial)
	if a, ok := e.Int(attrAlignment); ok && a > 0 {
		m.Align = a
	}
	if e.Tag == TagInheritance {
		m.Embedded = true
		m.Name = typ.TypeName()
	} else if emb, ok := e.Flag(attrGoEmbedded); ok && emb {
		m.Embedded = true
	}
	if v, _ := e.Int(AttrVirtuality); v != 0 && e.Tag == TagInheritance {
		m.Virtual = true
	}
	m.Access = access(e)
	loc, dyn, err := c.location(e)
	if err != nil {
		return types.Member{}, false, err
	}
	if dyn != types.DynamicNone {
		// Where this member lies depends on the object: it takes no place
		// in the type's static layout, and the rest of the type stays
		// readable.
		m.Dynamic = dyn
		return m, true, nil
	}
	bitSize, _ := e.Int(AttrBitSize)
	if bitSize < 0 || bitSize > maxTypeSize {
		return types.Member{}, false, c.f.decodeError(e.Offset, "absurd bit size %d", bitSize)
	}
	m.BitSize = types.Bits(bitSize)
	switch {
	case e.Has(AttrDataBitOffset):
		dbo, _ := e.Int(AttrDataBitOffset)
		m.Offset = types.Bits(dbo)
	case e.Has(AttrBitOffset) && bitSize > 0:
		// DWARF 2 and 3: DW_AT_bit_offset counts from the most significant
		// bit of the storage unit that starts at data_member_location.
		bo, _ := e.Int(AttrBitOffset)
		unit, _ := e.ByteSize()
		if unit == 0 {
			unit, _ = types.Sizeof(typ)
		}
		if c.big {
			m.Offset = types.Bits(loc*8 + bo)
		} else {
			m.Offset = types.Bits(loc*8 + unit*8 - bo - bitSize)
		}
	default:
		m.Offset = types.Bits(loc * 8)
	}
	if m.Offset < 0 || int64(m.Offset) > maxTypeSize*8 {
		return types.Member{}, false, c.f.decodeError(e.Offset, "absurd member offset %d bits", m.Offset)
	}
	return m, true, nil
}

// access reads DW_AT_accessibility (DW_ACCESS_public 1, protected 2,
// private 3), AccessNone when absent or out of range.
func access(e *Entry) types.Access {
	if a, _ := e.Int(AttrAccessibility); a >= 1 && a <= 3 {
		return types.Access(a)
	}
	return types.AccessNone
}

// method converts the declaration of a C++ member function in its class
// (read with Options.Methods). DW_AT_virtuality is 1 for virtual, 2 for
// pure virtual.
func (c *converter) method(n *node, depth int) (types.Method, error) {
	e, err := n.entry()
	if err != nil {
		return types.Method{}, err
	}
	t, err := c.funcProto(n, e, 0, depth+1)
	if err != nil {
		return types.Method{}, err
	}
	m := types.Method{Name: e.Name(), Proto: t.(*types.FuncProto), Access: access(e)}
	switch v, _ := e.Int(AttrVirtuality); v {
	case 1:
		m.Virtual = true
	case 2:
		m.Virtual, m.PureVirtual = true, true
	}
	m.Artificial, _ = e.Flag(AttrArtificial)
	if in, _ := e.Int(AttrInline); in == 1 || in == 3 { // DW_INL_(declared_)inlined
		m.Inline = true
	}
	return m, nil
}

// location reads DW_AT_data_member_location: a constant (DWARF 3+) or a
// location expression (DWARF 2's DW_OP_plus_uconst N, and C++ virtual
// bases). Absent means 0 (union members). An expression whose value does
// not depend on the object is evaluated to its offset; one that reads
// memory (a virtual base's offset comes from the vtable: DW_OP_dup
// DW_OP_deref DW_OP_lit24 DW_OP_minus DW_OP_deref DW_OP_plus) yields
// DynamicRuntime, and one this reader cannot evaluate DynamicUnknown.
func (c *converter) location(e *Entry) (int64, types.Dynamic, error) {
	switch v := e.Val(AttrDataMemberLoc).(type) {
	case nil:
		return 0, types.DynamicNone, nil
	case int64:
		if v < 0 || v > maxTypeSize {
			return 0, types.DynamicNone, c.f.decodeError(e.Offset, "absurd member location %d", v)
		}
		return v, types.DynamicNone, nil
	case []byte:
		off, dyn := memberLocation(v, c.order())
		if dyn == types.DynamicNone && (off < 0 || off > maxTypeSize) {
			return 0, types.DynamicNone, c.f.decodeError(e.Offset, "absurd member location %d", off)
		}
		return off, dyn, nil
	}
	return 0, types.DynamicUnknown, nil
}

// variantPart converts a Rust enum body: DW_AT_discr names the member that
// holds the tag; each DW_TAG_variant has a DW_AT_discr_value (none: the
// default variant) and one member.
func (c *converter) variantPart(n *node, depth int) (*types.VariantPart, error) {
	vp := &types.VariantPart{}
	e, err := n.entry()
	if err != nil {
		return nil, err
	}
	discr, _ := e.Ref(AttrDiscr)
	for _, k := range n.kids {
		switch k.tag {
		case TagMember:
			m, ok, err := c.member(k, depth)
			if err != nil {
				return nil, err
			}
			if ok && (k.off == discr || vp.Tag == nil) {
				mm := m
				vp.Tag = &mm
			}
		case TagVariant:
			ke, err := k.entry()
			if err != nil {
				return nil, err
			}
			v := types.Variant{Default: true}
			if d, ok := ke.Int(AttrDiscrValue); ok {
				v.Discr, v.Default = d, false
			}
			for _, km := range k.kids {
				if km.tag != TagMember {
					continue
				}
				m, ok, err := c.member(km, depth)
				if err != nil {
					return nil, err
				}
				if ok {
					v.Member = m
					vp.Variants = append(vp.Variants, v)
				}
				break
			}
		}
	}
	return vp, nil
}

func (c *converter) array(n *node, e *Entry, depth int) (types.Type, error) {
	var dims []int64
	for _, k := range n.kids {
		if k.tag != TagSubrangeType {
			continue
		}
		ke, err := k.entry()
		if err != nil {
			return nil, err
		}
		dims = append(dims, count(ke))
	}
	if len(dims) == 0 {
		dims = []int64{-1}
	}
	outer := &types.Array{Name: e.Name()}
	c.memo[e.Offset] = outer
	elem, err := c.ref(e, depth)
	if err != nil {
		return nil, err
	}
	// Innermost dimension last: int a[2][3] is Array{2, Array{3, int}}.
	inner := elem
	for i := len(dims) - 1; i >= 1; i-- {
		inner = &types.Array{Elem: inner, Count: dims[i]}
	}
	outer.Elem, outer.Count = inner, dims[0]
	if sz, err := types.Sizeof(outer); err != nil || sz > maxTypeSize {
		return nil, c.f.decodeError(e.Offset, "array of absurd size")
	}
	return outer, nil
}

// count reads a subrange's element count: DW_AT_count, or
// DW_AT_upper_bound - DW_AT_lower_bound + 1; -1 when there is no bound (a
// flexible array member); 0 for GCC's zero-length arrays (upper bound -1).
func count(e *Entry) int64 {
	if n, ok := e.Int(AttrCount); ok {
		if n < 0 {
			return 0
		}
		return n
	}
	ub, ok := e.Int(AttrUpperBound)
	if !ok {
		return -1
	}
	lb, _ := e.Int(AttrLowerBound)
	if ub == -1 || uint64(ub) == 0xffffffff || ub < lb {
		return 0
	}
	return ub - lb + 1
}

func (c *converter) enum(n *node, e *Entry, size int64, depth int) (types.Type, error) {
	t := &types.Enum{Name: c.qualify(n, e.Name()), ByteSize: size, Lang: n.lang, Decl: c.decl(n, e)}
	c.memo[e.Offset] = t
	if off, ok := e.Type(); ok {
		u, err := c.typ(off, depth+1)
		if err != nil {
			return nil, err
		}
		if b, ok := types.Resolve(u).(*types.Base); ok {
			t.Signed = b.Encoding == types.Signed || b.Encoding == types.Char
			if t.ByteSize == 0 {
				t.ByteSize = b.ByteSize
			}
		}
	}
	for _, k := range n.kids {
		if k.tag != TagEnumerator {
			continue
		}
		ke, err := k.entry()
		if err != nil {
			return nil, err
		}
		v, _ := ke.Int(AttrConstValue)
		if v < 0 {
			t.Signed = true
		}
		t.Values = append(t.Values, types.EnumValue{Name: ke.Name(), Value: v})
	}
	return t, nil
}

// funcProto converts a function type. Go records its results as formal
// parameters marked DW_AT_variable_parameter; a single result becomes the
// Return type.
func (c *converter) funcProto(n *node, e *Entry, size int64, depth int) (types.Type, error) {
	t := &types.FuncProto{Name: e.Name(), ByteSize: size}
	c.memo[e.Offset] = t
	var err error
	// Parameters and results are spelled by their names: a class among
	// them is read as a pointer's would be (Options.Pointees).
	c.behind = true
	t.Return, err = c.ref(e, depth)
	c.behind = false
	if err != nil {
		return nil, err
	}
	var results []types.Type
	for _, k := range n.kids {
		switch k.tag {
		case TagFormalParameter:
			ke, err := k.entry()
			if err != nil {
				return nil, err
			}
			c.behind = true
			pt, err := c.ref(ke, depth)
			c.behind = false
			if err != nil {
				return nil, err
			}
			if out, _ := ke.Flag(AttrVarParam); out && n.lang == types.LangGo {
				results = append(results, pt)
				continue
			}
			t.Params = append(t.Params, types.FuncParam{Name: ke.Name(), Type: pt})
		case TagUnspecifiedParameters:
			t.Variadic = true
		}
	}
	if len(results) == 1 {
		t.Return = results[0]
	}
	return t, nil
}
