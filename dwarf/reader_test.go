package dwarf

import (
	"debug/dwarf"
	"reflect"
	"testing"
)

// TestDIEReaderAgreesWithReader: the package's DIE reader, walked in step
// with debug/dwarf's Reader over every DIE of every scan input (skipping
// the children of every third DIE that has some, in both), returns
// entries with the offsets, tags, fields, values and classes of the
// Reader's (after resolveAlt, as the package reads them), the ranges of
// Data.Ranges, and finds the unit Reader.SeekPC finds for each unit's
// first address (and its producer).
func TestDIEReaderAgreesWithReader(t *testing.T) {
	eachScanInput(t, func(t *testing.T, f *File, min int) {
		mine, theirs := f.dieReader(), f.oracle().Reader()
		n, ranged, skipped := 0, 0, 0
		var pcs []uint64
		for {
			raw, werr := theirs.Next()
			got, gerr := mine.Next()
			if werr != nil || gerr != nil {
				t.Fatalf("after %d DIEs: Reader %v, ours %v", n, werr, gerr)
			}
			if raw == nil || got == nil {
				if raw != nil || got != nil {
					t.Fatalf("after %d DIEs: the Reader ends %v, ours %v", n, raw == nil, got == nil)
				}
				break
			}
			n++
			want := toReader(f.fromReader(raw))
			if g := toReader(got); !reflect.DeepEqual(g, want) {
				t.Fatalf("DIE %#x:\n\tours   %v %v %v\n\tReader %v %v %v", want.Offset, got.Tag, got.Children, got.Field,
					want.Tag, want.Children, want.Field)
			}
			if want.Val(dwarf.AttrLowpc) != nil || want.Val(dwarf.AttrRanges) != nil {
				ranged++
				gr, gerr := f.ranges(got)
				wr, werr := f.oracle().Ranges(raw)
				if (gerr == nil) != (werr == nil) || !reflect.DeepEqual(gr, wr) {
					t.Fatalf("DIE %#x ranges: ours %v %v, Data.Ranges %v %v", want.Offset, gr, gerr, wr, werr)
				}
				if want.Tag == dwarf.TagCompileUnit && len(wr) > 0 && wr[0][0] < wr[0][1] {
					pcs = append(pcs, wr[0][0])
				}
			}
			if want.Children && n%3 == 0 && want.Tag != dwarf.TagCompileUnit {
				skipped++
				theirs.SkipChildren()
				mine.SkipChildren()
			}
		}
		for _, pc := range pcs {
			want, werr := f.oracle().Reader().SeekPC(pc)
			got, gerr := f.dieReader().SeekPC(pc)
			if (werr == nil) != (gerr == nil) || (werr == nil && dwarf.Offset(got.Offset) != want.Offset) {
				t.Fatalf("SeekPC(%#x): ours %v %v, Reader %v %v", pc, got, gerr, want, werr)
			}
			if p, ok := f.Producer(pc); ok != (werr == nil) || werr == nil && p != readerStr(want, AttrProducer) {
				t.Fatalf("Producer(%#x) = %q, %v; the Reader's unit says %v", pc, p, ok, want.Val(dwarf.AttrProducer))
			}
		}
		t.Logf("%d DIEs agree, %d with ranges, %d children skipped, %d units sought by address", n, ranged, skipped, len(pcs))
		if n < min/2 || skipped < n/100 {
			t.Errorf("%d DIEs compared, %d children skipped: want at least %d and 1%% (the skipped children are not compared)", n, skipped, min/2)
		}
	})
}
