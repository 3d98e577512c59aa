package dwarf

import (
	"debug/dwarf"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestBaseTypeOracle: the scanner's reading of every base type of glibc's
// and a Rust program's DWARF (what typed DWARF operations convert to) is
// debug/dwarf's: the size, and the signedness and float kind the
// encoding gives.
func TestBaseTypeOracle(t *testing.T) {
	for path, least := range map[string]int{testutil.RealBinary(t, "libc"): 20_000, testutil.Fixture(t, "rust-real").Path: 500} {
		f, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		n, header := 0, uint64(0)
		for r := f.oracle().Reader(); ; {
			e, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if e == nil {
				break
			}
			if Tag(e.Tag) == TagCompileUnit || Tag(e.Tag) == TagPartialUnit {
				o, ok := f.headerOf(Offset(e.Offset))
				if !ok {
					t.Fatalf("%s: no header for the unit at %#x", path, e.Offset)
				}
				header = uint64(o)
			}
			if Tag(e.Tag) != TagBaseType {
				continue
			}
			size, signed, float, ok := f.baseType(header, uint64(e.Offset))
			wantSize, _ := e.Val(dwarf.AttrByteSize).(int64)
			enc, _ := e.Val(dwarf.AttrEncoding).(int64)
			wantSigned := enc == 0x05 || enc == 0x06 || enc == 0x0d
			wantFloat := enc == 0x03 || enc == 0x04 || enc == 0x09 || enc == 0x0f
			if !ok || size != wantSize || signed != wantSigned || float != wantFloat {
				t.Fatalf("%s: base type at %#x: size %d signed %v float %v (%v), want %d %v %v", path, e.Offset,
					size, signed, float, ok, wantSize, wantSigned, wantFloat)
			}
			n++
		}
		f.Close()
		if n < least {
			t.Errorf("%s: %d base types compared, want at least %d", path, n, least)
		}
		t.Logf("%s: %d base types", path, n)
	}
}
