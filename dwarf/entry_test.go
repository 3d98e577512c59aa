package dwarf

import (
	"debug/dwarf"
	"fmt"
	"sync"
	"testing"

	"github.com/binscope/binscope/internal/dwarftest"
)

// fromReader is e, an entry of debug/dwarf's Reader, as the package's
// decoder gives it: its values of the forms that point into a dwz
// alternate file resolved (resolveField).
// A value of a type the package's entry does not hold comes out as nil.
func (f *File) fromReader(e *dwarf.Entry) *Entry {
	if e == nil {
		return nil
	}
	out := &Entry{Offset: Offset(e.Offset), Tag: Tag(e.Tag), Children: e.Children}
	for _, fl := range e.Field {
		g, _ := fieldOf(Attr(fl.Attr), fl.Val, Class(fl.Class))
		f.resolveField(&g)
		out.Field = append(out.Field, g)
	}
	return out
}

// fieldOf is a field holding v, a value of one of the types debug/dwarf
// gives, of class c; ok is false for any other type.
func fieldOf(a Attr, v any, c Class) (fl Field, ok bool) {
	fl.Attr = a
	switch x := v.(type) {
	case int64:
		fl.setInt(x, c)
	case uint64:
		fl.setUint(x, c)
	case uint32:
		fl.kind, fl.n, fl.class = kindUint32, uint64(x), uint8(c)
	case Offset:
		fl.setRef(x, c)
	case dwarf.Offset:
		fl.setRef(Offset(x), c)
	case bool:
		fl.setFlag(x)
		fl.class = uint8(c)
	case string:
		fl.setString(x, c)
	case []byte:
		fl.setBytes(x, c)
	default:
		return fl, false
	}
	return fl, true
}

// readerStr is the string debug/dwarf's entry e gives attribute a, ""
// for none.
func readerStr(e *dwarf.Entry, a Attr) string {
	s, _ := e.Val(dwarf.Attr(a)).(string)
	return s
}

// toReader is e as debug/dwarf's Reader would give it (after
// fromReader's resolution).
func toReader(e *Entry) *dwarf.Entry {
	if e == nil {
		return nil
	}
	out := &dwarf.Entry{Offset: dwarf.Offset(e.Offset), Tag: dwarf.Tag(e.Tag), Children: e.Children}
	for i := range e.Field {
		fl := &e.Field[i]
		out.Field = append(out.Field, dwarf.Field{Attr: dwarf.Attr(fl.Attr), Val: readerVal(fl.Val()), Class: dwarf.Class(fl.Class())})
	}
	return out
}

// readerVal is v, a value of an Entry's field, as debug/dwarf holds it:
// a reference as its Offset.
func readerVal(v any) any {
	if o, ok := v.(Offset); ok {
		return dwarf.Offset(o)
	}
	return v
}

// TestFieldsHoldReaderValues: every type debug/dwarf gives a value goes
// into a field and comes out as the same value and class, and the typed
// accessors answer as a type assertion on it does.
func TestFieldsHoldReaderValues(t *testing.T) {
	vals := []any{int64(-3), uint64(1 << 40), uint32(7), Offset(0x1234), true, false, "name", []byte{1, 2}}
	show := func(v any) string { return fmt.Sprintf("%T %v", v, v) }
	for _, v := range vals {
		fl, ok := fieldOf(AttrName, v, ClassConstant)
		if !ok {
			t.Fatalf("%T: not held", v)
		}
		if got := fl.Val(); show(got) != show(v) || fl.Class() != ClassConstant {
			t.Errorf("%T %v: back as %T %v, class %v", v, v, got, got, fl.Class())
		}
		e := &Entry{Field: []Field{fl}}
		i, iok := e.Int(AttrName)
		wi, wiok := v.(int64)
		u, uok := e.Uint(AttrName)
		wu, wuok := v.(uint64)
		r, rok := e.Ref(AttrName)
		wr, wrok := v.(Offset)
		b, bok := e.Flag(AttrName)
		wb, wbok := v.(bool)
		s, sok := e.Str(AttrName)
		ws, wsok := v.(string)
		if i != wi || iok != wiok || u != wu || uok != wuok || r != wr || rok != wrok || b != wb || bok != wbok || s != ws || sok != wsok {
			t.Errorf("%T %v: accessors disagree with type assertions", v, v)
		}
		_, wbytes := v.([]byte)
		if _, ok := e.Bytes(AttrName); ok != wbytes {
			t.Errorf("%T %v: Bytes says %v", v, v, ok)
		}
		if !e.Has(AttrName) || e.Has(AttrType) || e.Val(AttrType) != nil {
			t.Errorf("%T %v: Has/Val of a missing attribute", v, v)
		}
	}
	if _, ok := fieldOf(AttrName, 1.5, ClassConstant); ok {
		t.Error("a float64 held")
	}
}

// oracleOf keeps the last File's oracle: one Data at a time, so that the
// tests hold no file's sections longer than the File.
var oracleOf struct {
	sync.Mutex
	f *File
	d *dwarf.Data
}

// oracle is debug/dwarf's Data over the sections f reads (package
// dwarftest): the tests' oracle of the package's reader.
func (f *File) oracle() *dwarf.Data {
	oracleOf.Lock()
	defer oracleOf.Unlock()
	if oracleOf.f != f {
		d, err := dwarftest.Data(f.Debug)
		if err != nil {
			panic(err)
		}
		oracleOf.f, oracleOf.d = f, d
	}
	return oracleOf.d
}
