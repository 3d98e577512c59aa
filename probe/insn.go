package probe

import (
	"fmt"

	"github.com/binscope/binscope/types"
	"golang.org/x/arch/x86/x86asm"
)

// decodeInsn decodes one x86-64 instruction at the start of code, where
// x86asm alone gets the length wrong:
//
//   - CET's endbr64/endbr32 (f3 0f 1e fa/fb), which it decodes one byte
//     of: they are 4-byte no-ops.
//   - vzeroupper and vzeroall (VEX.0F 77), which take no ModRM byte but
//     which it decodes one with, swallowing the next instruction's first
//     byte (Zig's ReleaseFast code has one before each call after AVX
//     code): 3 bytes with a two-byte VEX prefix, 4 with a three-byte one.
//
// Neither changes control flow.
func decodeInsn(code []byte) (x86asm.Inst, error) {
	if len(code) >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && (code[3] == 0xfa || code[3] == 0xfb) {
		return x86asm.Inst{Op: x86asm.NOP, Len: 4}, nil
	}
	if len(code) >= 3 && code[0] == 0xc5 && code[2] == 0x77 {
		return x86asm.Inst{Op: x86asm.VZEROUPPER, Len: 3}, nil
	}
	if len(code) >= 4 && code[0] == 0xc4 && code[1]&0x1f == 1 && code[3] == 0x77 {
		return x86asm.Inst{Op: x86asm.VZEROUPPER, Len: 4}, nil
	}
	return x86asm.Decode(code, 64)
}

// decode decodes the instructions of [lo, hi).
func (r *Resolver) decode(fn *types.Func, lo, hi uint64, each func(addr uint64, in x86asm.Inst)) error {
	code, err := r.ef.Code(lo, hi-lo)
	if err != nil {
		return err
	}
	for off := 0; off < len(code); {
		if n := vexLen(code[off:]); n > 0 && !isVzero(code[off:]) { // AVX: an instruction x86asm does not know
			each(lo+uint64(off), x86asm.Inst{Len: n})
			off += n
			continue
		}
		in, err := decodeInsn(code[off:])
		if err != nil {
			return fmt.Errorf("%s: %s+%#x: cannot decode the instruction: %v", r.path, fn.Name, lo+uint64(off)-fn.LowPC, err)
		}
		each(lo+uint64(off), in)
		off += in.Len
	}
	return nil
}

// isVzero reports vzeroupper and vzeroall (VEX.0F 77), which decodeInsn
// names, so that placement sees them as what they are.
func isVzero(code []byte) bool {
	return len(code) >= 3 && code[0] == 0xc5 && code[2] == 0x77 ||
		len(code) >= 4 && code[0] == 0xc4 && code[1]&0x1f == 1 && code[3] == 0x77
}
