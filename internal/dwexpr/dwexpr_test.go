package dwexpr_test

import (
	"encoding/binary"
	"testing"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/dwexpr"
)

// FuzzDecode: any byte string decodes to a location or to an unsupported
// expression, without panicking or looping.
func FuzzDecode(f *testing.F) {
	for _, seed := range [][]byte{
		{0x50},                               // DW_OP_reg0
		{0x50, 0x93, 0x08, 0x53, 0x93, 0x08}, // reg0 piece 8 reg3 piece 8
		{0x91, 0x10},                         // fbreg 16
		{0x77, 0x08},                         // breg7 8
		{0x03, 1, 2, 3, 4, 5, 6, 7, 8},       // addr
		{0xa3, 0x01, 0x55, 0x9f},             // entry_value(reg5) stack_value
		{0x31, 0x9f},                         // lit1 stack_value
		{0x9e, 0x02, 0x01, 0x02},             // implicit_value
	} {
		f.Add(seed)
	}
	a, err := arch.ForMachine(62) // EM_X86_64
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		loc := dwexpr.Decode(b, &dwexpr.Options{Arch: a, AddrSize: 8, Order: binary.LittleEndian, FrameBase: []byte{0x9c}})
		if len(loc.Pieces) > len(b)+1 {
			t.Fatalf("% x: %d pieces", b, len(loc.Pieces))
		}
		_ = loc.String()
	})
}
