package dwarf_test

import (
	stddwarf "debug/dwarf"
	"errors"
	"testing"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// TestLostNamespaceChild: a member of ns::epsilon damaged
// (testutil.CorruptNamespaceDIE) costs ns::epsilon alone, not its
// namespace. Types gives every other struct of the namespace whose DIEs
// (testutil.TypeDIEs) are not lost with the layout debug/dwarf reads
// from the whole program, those before the struct and after it, and a
// *PartialError naming the damaged DIE; Functions keeps every function
// of the namespace, a parameter whose type needs ns::epsilon typed `?`.
func TestLostNamespaceChild(t *testing.T) {
	dd := testutil.CorruptNamespaceDIE(t)
	_, _, d := testutil.ReadDWARF(t, dd.Good)
	f, err := dwarf.Open(dd.Bad, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spec, err := f.Types()
	var de *elfx.DecodeError
	if !errors.Is(err, types.ErrPartial) || !errors.As(err, &de) || de.File != dd.Bad || de.Section != ".debug_info" || de.Offset != dd.Off {
		t.Fatalf("Types: %v; want a partial result naming %s, .debug_info, %#x", err, dd.Bad, dd.Off)
	}
	before, after, left := 0, 0, 0
	r := d.Reader()
	for e, err := r.Next(); e != nil && err == nil; e, err = r.Next() {
		name, _ := e.Val(stddwarf.AttrName).(string)
		if e.Tag != stddwarf.TagStructType || name == "" {
			continue
		}
		got := spec.Lookup("ns::" + name)
		lost := false
		for _, off := range testutil.TypeDIEs(t, d, e.Offset) {
			lost = lost || dd.Lost(off)
		}
		switch {
		case lost && len(got) != 0:
			t.Errorf("ns::%s read; it needs a DIE lost", name)
		case lost:
			left++
		case len(got) != 1:
			t.Errorf("ns::%s: %d types; want 1", name, len(got))
		case sameLayout(t, d, e.Offset, got[0]) && uint64(e.Offset) < dd.From:
			before++
		case uint64(e.Offset) >= dd.To:
			after++
		}
	}
	if before < 2 || after < 2 || left != 1 {
		t.Errorf("%d structs read before the lost one, %d after, %d left out: want 2, 2 and 1", before, after, left)
	}
	fns, err := f.Functions(&dwarf.FuncOptions{Params: true})
	if err != nil {
		t.Fatal(err)
	}
	unknown := map[string]bool{}
	for _, fn := range fns {
		for _, p := range fn.Params {
			unknown[fn.Name] = unknown[fn.Name] || p.Type.TypeName() == "?"
		}
	}
	want := map[string]bool{"ns::f_alpha": false, "ns::f_beta": false, "ns::f_eps": true, "ns::f_zeta": false, "ns::f_eta": false}
	for name, u := range want {
		if v, ok := unknown[name]; !ok || v != u {
			t.Errorf("%s: read %v, a parameter's type unknown %v; want read, unknown %v", name, ok, v, u)
		}
	}
	if err := f.Damage(); !errors.As(err, &de) || de.Offset != dd.Off {
		t.Errorf("Damage: %v; want the DIE at %#x", err, dd.Off)
	}
}

// sameLayout checks that the struct got has the size and members (names
// and offsets) debug/dwarf reads at off.
func sameLayout(t *testing.T, d *stddwarf.Data, off stddwarf.Offset, got types.Type) bool {
	t.Helper()
	theirs, err := d.Type(off)
	st, ok := theirs.(*stddwarf.StructType)
	ours, ok2 := got.(*types.Struct)
	if err != nil || !ok || !ok2 {
		t.Fatalf("the struct at %#x: debug/dwarf %T %v, ours %T", off, theirs, err, got)
	}
	same := st.ByteSize == ours.ByteSize && len(st.Field) == len(ours.Members)
	for i := 0; same && i < len(st.Field); i++ {
		same = st.Field[i].Name == ours.Members[i].Name && st.Field[i].ByteOffset*8 == int64(ours.Members[i].Offset)
	}
	if !same {
		t.Errorf("%s: %+v; debug/dwarf reads %s", st.StructName, ours, st.Defn())
	}
	return same
}
