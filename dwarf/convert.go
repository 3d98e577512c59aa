package dwarf

import (
	"debug/elf"
	"fmt"

	"github.com/binscope/binscope/types"
)

// Go's vendor attributes (cmd/internal/dwarf).
const (
	attrGoKind     Attr = 0x2900
	attrGoEmbedded Attr = 0x2903
	attrAlignment  Attr = 0x88 // DW_AT_alignment (DWARF 5)
)

// maxTypeSize rejects sizes no real type has: they come from corrupt input
// and would overflow the sums of the layout analysis. Go declares arrays of
// 2^50 bytes to view memory through (runtime's [1<<50]elfSym), so the bound
// is far above that.
const maxTypeSize = 1 << 58

type converter struct {
	f    *File
	ix   *index
	memo map[Offset]types.Type
	void *types.Void
	ptr  int64
	big  bool // big-endian target
	// check rejects the graphs no compiler emits (see types.Checker)
	// before a type leaves the loader.
	check types.Checker
	// keyScan reads dedup keys from DIEs' bytes (see rawAttrs), with
	// the string sections.
	keyScan *scan
	strs    *strSections
	// keyOracle reads the key attributes of an index built over
	// debug/dwarf's Reader (the tests' oracle; nil otherwise).
	keyOracle func(n *node) (keyAttrs, error)
	// opaque converts C and C++ structs, classes and unions without
	// their members (FuncOptions.SpelledParams).
	opaque bool
	// alt converts the types of the dwz alternate file (nil without).
	alt *converter
	// behind is set while the type a pointer points to is converted,
	// through typedefs and qualifiers (Options.Pointees); pointees holds
	// what was converted so, apart from the whole types of memo.
	behind   bool
	pointees map[Offset]types.Type
}

// newConverter converts the types of ix; memo is how many conversions to
// make room for.
func newConverter(f *File, ix *index, memo int) *converter {
	return &converter{
		f:    f,
		ix:   ix,
		memo: make(map[Offset]types.Type, memo),
		void: &types.Void{},
		ptr:  f.ELF.PointerSize(),
		big:  f.ELF.Data == elf.ELFDATA2MSB,
	}
}

// another is a converter of its own over the same index, alike in kind,
// with room for memo conversions.
func (c *converter) another(memo int) *converter {
	o := newConverter(c.f, c.ix, memo)
	o.opaque, o.alt = c.opaque, c.alt
	return o
}

// spec converts the named types of the index (with only, those it
// reports true for, given each one's unqualified name, and what they refer
// to). A type that cannot be
// converted is left out, with the types that need it; the Spec of the rest
// comes back with an error wrapping types.ErrPartial and the first
// *elfx.DecodeError, unless more than maxLeftOut are (then the Spec is nil).
func (c *converter) spec(only func(n *node, name []byte) bool) (*types.Spec, error) {
	s := c.newSpec()
	l := newLister()
	l.left = c.ix.lost // the units the index left out
	for _, n := range c.ix.named {
		if !listedTag(n.tag) {
			continue
		}
		if only != nil {
			var a keyAttrs
			if err := c.keyAttrs(n, &a); err != nil || !only(n, a.name) {
				continue // a record left out is the full conversion's to report
			}
		}
		t, err := l.list(c, n)
		if err != nil {
			return nil, err
		}
		if t != nil {
			s.Add(t)
		}
	}
	if c.f.alt != nil || c.f.altMissing != "" {
		if err := c.addAltTypes(s, l.added); err != nil {
			return nil, err
		}
	}
	return s, l.left.err()
}

// newSpec is a Spec of the file's types, none added yet.
func (c *converter) newSpec() *types.Spec {
	s := &types.Spec{Path: c.f.Path, Format: "dwarf", Arch: c.f.ELF.Arch(), PointerSize: c.ptr}
	s.Lang, s.Producer = mainLang(c.ix.units)
	return s
}

// listedTag reports the tags of the types a spec lists by name.
func listedTag(t Tag) bool {
	switch t {
	case TagStructType, TagUnionType, TagClassType, TagEnumerationType, TagTypedef:
		return true
	}
	return false
}

// maxLeftOut is how many corrupt records a result may leave out before the
// whole file is an error.
const maxLeftOut = 100

// leftOut counts the records a result leaves out, keeping the first error.
type leftOut struct {
	first error
	n     int
}

// add records err; past maxLeftOut records it returns the error that
// fails the whole file.
func (l *leftOut) add(err error) error {
	if l.n == 0 {
		l.first = err
	}
	l.n++
	if l.n > maxLeftOut {
		return fmt.Errorf("%w; more than %d corrupt records", l.first, maxLeftOut)
	}
	return nil
}

// err is nil when nothing was left out, else a *PartialError.
func (l *leftOut) err() error {
	if l.n == 0 {
		return nil
	}
	return &PartialError{Err: l.first, LeftOut: l.n}
}

// PartialError comes back with a result that leaves out records it could
// not decode: Err is the first one's error (a *elfx.DecodeError, naming
// section and offset), LeftOut how many records were left out. It matches
// types.ErrPartial.
type PartialError struct {
	Err     error
	LeftOut int
}

func (e *PartialError) Error() string {
	if e.LeftOut == 1 {
		return e.Err.Error() + "; that record is left out"
	}
	return fmt.Sprintf("%v; that record and %d more are left out", e.Err, e.LeftOut-1)
}

func (e *PartialError) Unwrap() []error { return []error{e.Err, types.ErrPartial} }

// mainLang picks the language the program was written in: Go, Rust or Zig
// when a unit is (their binaries link C and assembly too), else the most
// common one.
func mainLang(units []unit) (types.Lang, string) {
	count := map[types.Lang]int{}
	first := map[types.Lang]string{}
	for _, u := range units {
		count[u.lang]++
		if _, ok := first[u.lang]; !ok {
			first[u.lang] = u.producer
		}
	}
	for _, l := range []types.Lang{types.LangGo, types.LangRust, types.LangZig} {
		if count[l] > 0 {
			return l, first[l]
		}
	}
	best, n := types.LangUnknown, 0
	for _, l := range []types.Lang{types.LangC, types.LangCPlusPlus, types.LangAsm, types.LangUnknown} {
		if count[l] > n {
			best, n = l, count[l]
		}
	}
	return best, first[best]
}

// root converts the type DIE at off for a caller outside the converter,
// and checks it: a type that contains itself, or whose parts expand beyond
// types.MaxNodes, is an error naming the DIE.
func (c *converter) root(off Offset) (types.Type, error) {
	t, err := c.typ(off, 0)
	if err == nil {
		if err = c.check.Check(t); err != nil {
			err = c.f.infoError(off, err)
		}
	}
	if err != nil {
		// Conversions the failed one left half made (a pointer
		// without its target) are dropped: none is handed out.
		c.memo, c.pointees = make(map[Offset]types.Type), nil
		return nil, err
	}
	return t, nil
}

// typ converts the type DIE at off. Every value is stored in memo before
// its parts are converted, so cycles (a struct holding a pointer to itself,
// or a corrupt typedef loop) end.
func (c *converter) typ(off Offset, depth int) (types.Type, error) {
	behind := c.behind && c.f.opts.Pointees
	c.behind = false
	if off&altBit != 0 {
		return c.altType(off&^altBit, depth)
	}
	if t, ok := c.memo[off]; ok {
		return t, nil
	}
	memo := c.memo
	if behind {
		if t, ok := c.pointees[off]; ok {
			return t, nil
		}
		if c.pointees == nil {
			c.pointees = map[Offset]types.Type{}
		}
		memo = c.pointees
	}
	n := c.ix.lookup(off)
	if n != nil && n.same != nil {
		return n.same, nil
	}
	if depth > maxTypeDepth {
		return nil, c.f.decodeError(off, "%v", errTooDeep)
	}
	if n == nil && c.ix.saved != nil {
		n = c.ix.saved.node(c.ix, off) // in a unit not indexed yet
	}
	if n == nil {
		var err error
		if n, err = c.local(off); err != nil {
			return nil, err
		}
	}
	if n == nil || !isTypeTag(n.tag) {
		return nil, c.f.decodeError(off, "reference to a DIE that is not a type")
	}
	if n.end != 0 {
		if err := c.f.expand(c.ix, n); err != nil {
			return nil, err
		}
	}
	e, err := n.entry()
	if err != nil {
		return nil, err
	}
	name := e.Name()
	size, err := c.byteSize(e)
	if err != nil {
		return nil, err
	}
	switch e.Tag {
	case TagBaseType, TagUnspecifiedType:
		t := &types.Base{Name: name, ByteSize: size, Encoding: encoding(e)}
		c.memo[off] = t
		return t, nil
	case TagPointerType, TagReferenceType, TagRvalueReferenceType, TagPtrToMemberType:
		return c.pointer(off, n, e, name, size, depth)
	case TagTypedef:
		t := &types.Typedef{Name: c.qualify(n, name), Lang: n.lang, Decl: c.decl(n, e)}
		memo[off] = t
		c.behind = behind
		t.Target, err = c.ref(e, depth)
		c.behind = false
		if err == nil && len(n.kids) > 0 {
			t.Tags, err = annotations(n, annotDeclTag)
		}
		return t, err
	case TagConstType, TagVolatileType, TagRestrictType, TagAtomicType, tagImmutableType:
		t := &types.Qualifier{Kind: qualKind(e.Tag)}
		memo[off] = t
		c.behind = behind
		t.Target, err = c.ref(e, depth)
		c.behind = false
		return t, err
	case TagArrayType:
		return c.array(n, e, depth)
	case TagEnumerationType:
		return c.enum(n, e, size, depth)
	case TagStructType, TagUnionType, TagClassType:
		if behind && n.lang == types.LangCPlusPlus && name != "" {
			if t := c.pointee(n, e, name); t != nil {
				memo[off] = t
				return t, nil
			}
		}
		if def := c.definition(n, e); def != 0 {
			t, err := c.typ(def, depth+1)
			if err == nil {
				c.memo[off] = t
			}
			return t, err
		}
		return c.composite(n, e, size, depth)
	case TagSubroutineType:
		return c.funcProto(n, e, size, depth)
	}
	return nil, c.f.decodeError(off, "unexpected tag %v", e.Tag)
}

// pointer converts e, the DIE at off: a pointer, a reference or a pointer to member, of
// the given name and size (the file's pointer size when it says none).
func (c *converter) pointer(off Offset, n *node, e *Entry, name string, size int64, depth int) (types.Type, error) {
	t := &types.Pointer{Name: name, ByteSize: size}
	if _, ok := e.ByteSize(); !ok {
		t.ByteSize = c.ptr
	}
	switch e.Tag {
	case TagReferenceType:
		t.Ref = 1
	case TagRvalueReferenceType:
		t.Ref = 2
	}
	c.memo[off] = t
	c.behind = true
	var err error
	t.Target, err = c.ref(e, depth)
	c.behind = false
	if err == nil && len(n.kids) > 0 {
		t.Target, err = typeTagged(n, t.Target)
	}
	return t, err
}

// ref converts the type e's DW_AT_type names; none means void.
func (c *converter) ref(e *Entry, depth int) (types.Type, error) {
	off, ok := e.Type()
	if !ok {
		return c.void, nil
	}
	return c.typ(off, depth+1)
}

func (c *converter) byteSize(e *Entry) (int64, error) {
	v, ok := e.ByteSize()
	if !ok {
		return 0, nil
	}
	if v < 0 || v > maxTypeSize {
		return 0, c.f.decodeError(e.Offset, "absurd byte size %d", v)
	}
	return v, nil
}

// qualify prefixes the enclosing namespaces and types to a C++ or Rust name
// (Go and Zig names are already qualified, and have no namespaces).
func (c *converter) qualify(n *node, name string) string {
	if name == "" {
		return ""
	}
	return n.scope + name
}

// decl is where n, whose DIE is e, is declared.
func (c *converter) decl(n *node, e *Entry) types.Decl {
	line, _ := e.DeclLine()
	if line == 0 {
		return types.Decl{}
	}
	return types.Decl{File: c.fileName(n, e), Line: int(line)}
}

// fileName resolves DW_AT_decl_file of e, n's DIE, through the line table
// of the node's compile unit.
func (c *converter) fileName(n *node, e *Entry) string {
	if n.unit < 0 || int(n.unit) >= len(c.ix.units) {
		return ""
	}
	return fileName(c.f.unitFiles(c.ix.units[n.unit].entry), e.Val(AttrDeclFile))
}

func encoding(e *Entry) types.Encoding {
	enc, _ := e.Int(AttrEncoding)
	switch enc {
	case 0x02:
		return types.Bool
	case 0x03:
		return types.Complex
	case 0x04, 0x0f: // float, decimal float
		return types.Float
	case 0x05, 0x0d: // signed, signed fixed
		return types.Signed
	case 0x06:
		return types.Char
	case 0x08:
		return types.UnsignedChar
	case 0x10:
		return types.UTF
	}
	return types.Unsigned
}

func qualKind(t Tag) types.QualKind {
	switch t {
	case TagVolatileType:
		return types.Volatile
	case TagRestrictType:
		return types.Restrict
	case TagAtomicType:
		return types.Atomic
	}
	return types.Const
}

// definition returns the offset of the definition of the C++ struct, class
// or union that n only declares (DW_AT_declaration: GCC declares a class in
// the units that do not instantiate it, libstdc++'s basic_istream<char>
// among them), or 0 when n is a definition, not C++, or defined nowhere in
// the file. The one-definition rule makes any definition of the name the
// right one; C has no such rule, so its declarations stay incomplete.
func (c *converter) definition(n *node, e *Entry) Offset {
	if !e.Declaration() || n.lang != types.LangCPlusPlus || !hasName(e) {
		return 0
	}
	k := defKeyOf(e.Tag, n.scope, e.Name())
	if c.ix.saved != nil {
		return c.ix.saved.definition(c.ix, k)
	}
	return c.ix.defs[k]
}

// pointee is the C++ class n (e, called name) as a pointer to it shows it
// (Options.Pointees): its name, kind and size, from its definition when
// it only declares it; nil for a class defined nowhere (it converts as
// the incomplete type it is).
func (c *converter) pointee(n *node, e *Entry, name string) types.Type {
	tag, size := e.Tag, e.Val(AttrByteSize)
	if e.Declaration() {
		var ok bool
		if tag, size, ok = c.defShape(defKeyOf(e.Tag, n.scope, name)); !ok {
			return nil
		}
	}
	t := &types.Struct{Name: c.qualify(n, name), Lang: n.lang}
	t.ByteSize, _ = size.(int64)
	switch tag {
	case TagUnionType:
		t.Kind = types.KindUnion
	case TagClassType:
		t.Kind = types.KindClass
	}
	return t
}

// defShape is the tag and DW_AT_byte_size of the first definition of the
// class k; false when the file defines none.
func (c *converter) defShape(k classKey) (Tag, any, bool) {
	if si := c.ix.saved; si != nil {
		d, ok := si.defs[k]
		return d.tag, d.size, ok
	}
	off, ok := c.ix.defs[k]
	if !ok {
		return 0, nil, false
	}
	var a keyAttrs
	if d := c.ix.nodes.get(off); d == nil || c.keyAttrs(d, &a) != nil {
		return 0, nil, false
	}
	return a.tag, a.size, true
}

// classKey is the name a declaration and its definition share: struct
// and class are one kind (a class may be declared with either keyword).
type classKey struct {
	union       bool
	scope, name string
}

func defKeyOf(tag Tag, scope, name string) classKey {
	return classKey{union: tag == TagUnionType, scope: scope, name: name}
}

// maxTypeDepth bounds the chain of types a conversion follows at once (a
// struct's member's pointer's target ...): C++ programs chain thousands.
const maxTypeDepth = 1 << 14
