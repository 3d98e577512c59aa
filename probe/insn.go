package probe

import "golang.org/x/arch/x86/x86asm"

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
