package dwarf

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"strings"
	"testing"

	"github.com/binscope/binscope/types"
)

// The oracles of the scan: the type index and the functions walk built
// over debug/dwarf's Reader, every entry decoded by it, through the same
// indexer and walker the scan feeds.

// readerIndex is the type index one pass of debug/dwarf's Reader builds.
func readerIndex(t *testing.T, f *File) *index {
	t.Helper()
	b := &indexer{f: f, ix: &index{}}
	r := f.entries()
	for {
		e, err := r.next()
		if err != nil {
			t.Fatalf("Reader: %v", err)
		}
		if e == nil {
			return b.ix
		}
		skip, err := b.add(e, false)
		if err != nil {
			t.Fatalf("Reader: %v", err)
		}
		if skip && e.Children {
			r.r.SkipChildren()
		}
	}
}

// readerFunctions is Functions over debug/dwarf's Reader: its entries'
// attributes read by attrsOf and paramOf, their ranges by Data.Ranges.
func readerFunctions(t *testing.T, f *File, o FuncOptions) []*types.Func {
	t.Helper()
	fw := &funcWalker{f: f, o: o, r: f.dieEntries(funcWalk), read: entryFns{f}, rel: f.ELF.Type == elf.ET_REL}
	r := f.entries()
	var stack []funcFrame
	var cur funcFrame
	for {
		e, err := r.next()
		if err != nil {
			t.Fatalf("Reader: %v", err)
		}
		if e == nil {
			break
		}
		if err := fw.step(e, nil, &stack, &cur); err != nil {
			t.Fatalf("Reader: DIE %#x: %v", e.Offset, err)
		}
	}
	fns, err := f.joinWalks(o, []walked{fw.out})
	if err != nil {
		t.Fatal(err)
	}
	return fns
}

// readerLocal indexes the type DIE at off of unit u into ix, every entry
// of it decoded by debug/dwarf's Reader: File.local's oracle.
func readerLocal(t *testing.T, f *File, ix *index, u int, off Offset) *node {
	t.Helper()
	r := f.oracle().Reader()
	r.Seek(dwarf.Offset(off))
	b := &indexer{f: f, ix: ix, unit: int32(u), local: true, cur: frame{lang: ix.units[u].lang}}
	for first := true; first || len(b.stack) > 0; first = false {
		re, err := r.Next()
		if err != nil || re == nil {
			t.Fatalf("Reader at %#x: %v", off, err)
		}
		e := f.fromReader(re)
		skip, err := b.add(e, false)
		if err != nil {
			t.Fatal(err)
		}
		if skip && e.Children {
			r.SkipChildren()
		}
	}
	return ix.nodes.get(off)
}

// TestLocalTypesAgreeWithReader: the types declared inside functions
// (C++ lambdas' closures, C's local structs), which the index passes over
// and File.local indexes from a scan when a type outside refers to one,
// are the nodes the Reader's entries give, each with its children, field
// for field.
func TestLocalTypesAgreeWithReader(t *testing.T) {
	eachScanInput(t, func(t *testing.T, f *File, min int) {
		ix, err := f.index()
		if err != nil {
			t.Fatal(err)
		}
		oracle := &index{units: ix.units}
		r := f.oracle().Reader()
		depth, inFunc, n := 0, []int{}, 0
		u := -1
		for n < 500 {
			e, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if e == nil {
				break
			}
			switch {
			case e.Tag == 0:
				depth--
				if len(inFunc) > 0 && inFunc[len(inFunc)-1] == depth {
					inFunc = inFunc[:len(inFunc)-1]
				}
				continue
			case e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit:
				u++
				depth, inFunc = 0, inFunc[:0]
			case e.Tag == dwarf.TagSubprogram && e.Children:
				inFunc = append(inFunc, depth)
			case len(inFunc) > 0 && isTypeTag(Tag(e.Tag)) && ix.nodes.get(Offset(e.Offset)) == nil:
				got, err := f.local(ix, Offset(e.Offset))
				if err != nil || got == nil {
					t.Fatalf("local %v at %#x: %v, %v", e.Tag, e.Offset, got, err)
				}
				want := readerLocal(t, f, oracle, u, Offset(e.Offset))
				if d := localDiff(got, want); d != "" {
					t.Fatalf("local %v at %#x: %s", e.Tag, e.Offset, d)
				}
				n++
			}
			if e.Children {
				depth++
			}
		}
		t.Logf("%d local types agree", n)
		if strings.HasPrefix(t.Name(), "TestLocalTypesAgreeWithReader/cpp-real") && n < 20 {
			t.Errorf("%d local types compared, want at least 20 in a C++ program", n)
		}
	})
}

// localDiff is nodeDiff over a node and its children.
func localDiff(got, want *node) string {
	if d := nodeDiff(got, want); d != "" {
		return d
	}
	for i := range got.kids {
		if d := localDiff(got.kids[i], want.kids[i]); d != "" {
			return fmt.Sprintf("kid %#x: %s", got.kids[i].off, d)
		}
	}
	return ""
}

// entryFns reads the functions walk's attributes, ranges and parameters
// from debug/dwarf's entries: the oracle of the scan's (fnReader).
type entryFns struct{ f *File }

func (o entryFns) attrs(e *Entry) (fnAttrs, error) { return attrsOf(e), nil }

func (o entryFns) attrRanges(e *Entry, a fnAttrs, _ [][2]uint64) ([][2]uint64, error) {
	return o.f.oracle().Ranges(toReader(e))
}

func (o entryFns) param(e *Entry) (param, error) { return paramOf(e), nil }

// attrsOf reads a from an entry, with the values debug/dwarf gives.
func attrsOf(e *Entry) fnAttrs {
	a := fnAttrs{declFile: -1, callFile: -1}
	for i := range e.Field {
		fl := struct {
			Attr  Attr
			Val   any
			Class Class
		}{e.Field[i].Attr, e.Field[i].Val(), e.Field[i].Class()}
		switch fl.Attr {
		case AttrName:
			v, _ := fl.Val.(string)
			a.name = lazyStr(v)
		case AttrLinkageName:
			v, _ := fl.Val.(string)
			a.linkage = lazyStr(v)
		case attrMIPSLinkageName:
			v, _ := fl.Val.(string)
			a.mipsLinkage = lazyStr(v)
		case AttrExternal:
			a.external, _ = fl.Val.(bool)
		case AttrDeclaration:
			a.declaration, _ = fl.Val.(bool)
		case AttrInline:
			a.inline, _ = fl.Val.(int64)
		case AttrAbstractOrigin:
			a.origin, _ = fl.Val.(Offset)
		case AttrSpecification:
			a.spec, _ = fl.Val.(Offset)
		case AttrType:
			a.typ, _ = fl.Val.(Offset)
		case AttrDeclFile:
			if v, ok := fl.Val.(int64); ok { // as fileName reads it
				a.declFile = v
			}
		case AttrDeclLine:
			a.declLine = constOr(fl.Val, 0)
		case AttrCallFile:
			if v, ok := fl.Val.(int64); ok {
				a.callFile = v
			}
		case AttrCallLine:
			a.callLine = constOr(fl.Val, 0)
		case AttrCallColumn:
			a.callColumn = constOr(fl.Val, 0)
		case AttrLowpc:
			a.low, a.hasLow = fl.Val.(uint64)
		case AttrHighpc:
			a.high = pcOf(fl.Val)
		case AttrEntrypc:
			a.entry = pcOf(fl.Val)
		case AttrRanges:
			switch v := fl.Val.(type) {
			case int64:
				a.rangesOff, a.hasRanges = v, true
			case uint64:
				a.rangesOff, a.hasRanges = int64(v), fl.Class == ClassRngList
			}
		case AttrFrameBase:
			a.frameBase, a.hasFrameBase = readLocAttr(e, AttrFrameBase)
		}
	}
	return a
}

// constOr is a constant's value (debug/dwarf's int64, or a uint64), else
// none.
func constOr(v any, none int64) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case uint64:
		return int64(x)
	}
	return none
}

func pcOf(v any) attrPC {
	switch x := v.(type) {
	case uint64:
		return attrPC{addr: x, kind: pcAddr}
	case int64:
		return attrPC{offset: x, kind: pcOffset}
	}
	return attrPC{}
}

// paramOf is what a walk keeps of a formal parameter's entry.
func paramOf(e *Entry) param {
	p := param{off: e.Offset, name: str(e, AttrName)}
	p.typ, _ = e.Ref(AttrType)
	p.origin, _ = e.Ref(AttrAbstractOrigin)
	p.result, _ = e.Flag(AttrVarParam)
	p.loc, p.hasLoc = readLocAttr(e, AttrLocation)
	if v, ok := e.Int(AttrConstValue); ok && !p.hasLoc {
		p.konst = &v
	}
	return p
}

// ranges is e's address ranges as debug/dwarf's Data.Ranges gives them;
// for an entry not decoded quickly, debug/dwarf's.
func (de *dieEntries) ranges(e *Entry) ([][2]uint64, error) {
	if e != &de.quickE {
		return de.f.oracle().Ranges(toReader(e))
	}
	var ret [][2]uint64
	low, lowOK := e.Uint(AttrLowpc)
	if hf := e.AttrField(AttrHighpc); hf != nil && lowOK {
		switch v := hf.Val().(type) {
		case uint64:
			ret = append(ret, [2]uint64{low, v})
		case int64:
			ret = append(ret, [2]uint64{low, low + uint64(v)})
		}
	}
	rf := e.AttrField(AttrRanges)
	if rf == nil {
		return ret, nil
	}
	off, ok := int64(0), false
	switch v := rf.Val().(type) {
	case int64:
		off, ok = v, true
	case uint64:
		off, ok = int64(v), rf.Class() == ClassRngList
	}
	if !ok {
		return ret, nil
	}
	var out [][2]uint64
	if de.sc.u.version >= 5 {
		out, ok = de.rnglist(off, ret)
	} else {
		out, ok = de.rangeList(off, ret)
	}
	if !ok {
		return de.f.oracle().Ranges(toReader(e)) // and the error it says
	}
	return out, nil
}

// entryKeyAttrs reads n's key attributes from its debug/dwarf entry: the
// oracle of rawAttrs.
func entryKeyAttrs(n *node) (keyAttrs, error) {
	e, err := n.entry()
	if err != nil {
		return keyAttrs{}, err
	}
	return keyAttrs{
		tag: e.Tag, name: []byte(str(e, AttrName)), size: e.Val(AttrByteSize), decl: e.Val(AttrDeclaration),
		typ: e.Val(AttrType), loc: e.Val(AttrDataMemberLoc), dbo: e.Val(AttrDataBitOffset),
		bo: e.Val(AttrBitOffset), cvalue: e.Val(AttrConstValue),
	}, nil
}

// infoBytes is the size of the DWARF entry sections (uncompressed).
func (f *File) infoBytes() uint64 {
	var n uint64
	for _, name := range []string{".debug_info", ".debug_types", ".zdebug_info"} {
		if sec := f.Debug.Section(name); sec != nil {
			n += sec.Size
		}
	}
	if n == 0 {
		n = 1 << 40
	}
	return n
}

// entryReader is debug/dwarf's Reader for the oracle walks, guarded
// against corrupt input, which can make it hand out the same entry,
// entries that go backwards, or null entries, forever.
type entryReader struct {
	f      *File
	r      *dwarf.Reader
	n      uint64
	budget uint64
	last   Offset
	seen   bool
}

// entries starts reading the file's DIEs.
func (f *File) entries() *entryReader {
	// Every entry takes at least one byte of .debug_info, so more entries
	// than bytes means the reader is not advancing.
	return &entryReader{f: f, r: f.oracle().Reader(), budget: f.infoBytes() + 1}
}

// next returns the next entry, nil at the end, or an error naming the
// file, section and offset.
func (er *entryReader) next() (*Entry, error) {
	re, err := er.r.Next()
	if err != nil {
		return nil, er.f.infoError(er.last, err)
	}
	if re == nil {
		return nil, nil
	}
	e := er.f.fromReader(re)
	er.n++
	if er.n > er.budget {
		return nil, er.f.decodeError(e.Offset, "entries do not advance (corrupt unit header)")
	}
	if e.Tag != 0 { // null entries carry no offset
		if er.seen && e.Offset <= er.last {
			return nil, er.f.decodeError(e.Offset, "entries do not advance (corrupt unit or abbreviation table)")
		}
		er.last, er.seen = e.Offset, true
	}
	return e, nil
}
