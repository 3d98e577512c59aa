package dwarf

import (
	"encoding/binary"
	"testing"

	"github.com/binscope/binscope/types"
)

func TestMemberLocation(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    []byte
		off  int64
		dyn  types.Dynamic
	}{
		{"plus_uconst", []byte{0x23, 0x90, 0x01}, 144, types.DynamicNone},
		{"constu (DWARF 2 producers)", []byte{0x10, 0x0c}, 12, types.DynamicNone},
		{"lit and plus", []byte{0x38, 0x22}, 8, types.DynamicNone},
		{"const2u plus", []byte{0x0a, 0x00, 0x01, 0x22}, 256, types.DynamicNone},
		{"consts minus", []byte{0x11, 0x7c, 0x1c}, 4, types.DynamicNone},
		{"empty: the object itself", nil, 0, types.DynamicNone},
		{"GCC virtual base", []byte{0x12, 0x06, 0x48, 0x1c, 0x06, 0x22}, 0, types.DynamicRuntime},
		{"unknown operation", []byte{0xe0, 0x23, 0x04}, 0, types.DynamicUnknown},
		{"stack underflow", []byte{0x22, 0x22}, 0, types.DynamicUnknown},
		{"truncated constant", []byte{0x0c, 0x01}, 0, types.DynamicUnknown},
	} {
		off, dyn := memberLocation(tc.x, binary.LittleEndian)
		if off != tc.off || dyn != tc.dyn {
			t.Errorf("%s (% x): %d, %v; want %d, %v", tc.name, tc.x, off, dyn, tc.off, tc.dyn)
		}
	}
}
