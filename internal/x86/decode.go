// Package x86 holds the x86-64 instruction facts the tree reads: the
// length of an instruction (Decode, which mends x86asm where it is wrong
// or silent), the general registers it may write (Writes), its branch
// target, and whether the kernel accepts a uprobe on it (Refusal).
package x86

import (
	"errors"

	"golang.org/x/arch/x86/x86asm"
)

// Decode decodes one x86-64 instruction at the start of code, where
// x86asm alone gets the length wrong or does not know the instruction:
//
//   - CET's endbr64/endbr32 (f3 0f 1e fa/fb), which it decodes one byte
//     of: they are 4-byte no-ops.
//   - vzeroupper and vzeroall (VEX.0F 77), which take no ModRM byte but
//     which it decodes one with, swallowing the next instruction's first
//     byte (Zig's ReleaseFast code has one before each call after AVX
//     code): 3 bytes with a two-byte VEX prefix, 4 with a three-byte one.
//   - the other VEX- and EVEX-encoded instructions (AVX, AVX-512, BMI),
//     which it does not decode: an Inst with only Len set (Op 0, which
//     Writes takes as writing every register).
//
// None of the first two changes control flow.
func Decode(code []byte) (x86asm.Inst, error) {
	if len(code) >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && (code[3] == 0xfa || code[3] == 0xfb) {
		return x86asm.Inst{Op: x86asm.NOP, Len: 4}, nil
	}
	if isVzero(code) {
		n := 3
		if code[0] == 0xc4 {
			n = 4
		}
		return x86asm.Inst{Op: x86asm.VZEROUPPER, Len: n}, nil
	}
	if n := vexLen(code); n > 0 {
		return x86asm.Inst{Len: n}, nil
	}
	return x86asm.Decode(code, 64)
}

// isVzero reports vzeroupper and vzeroall (VEX.0F 77).
func isVzero(code []byte) bool {
	return len(code) >= 3 && code[0] == 0xc5 && code[2] == 0x77 ||
		len(code) >= 4 && code[0] == 0xc4 && code[1]&0x1f == 1 && code[3] == 0x77
}

// Length is the length of the instruction at the start of code, for
// proving where instructions start: Decode's, but an error where x86asm
// gave up after the prefixes (it returns the first prefix alone as a
// one-byte instruction of Op 0, without an error, for an opcode it does
// not know: adcx, rdsspq).
func Length(code []byte) (int, error) {
	in, err := Decode(code)
	if err != nil {
		return 0, err
	}
	if in.Op == 0 && vexLen(code) == 0 {
		return 0, errUnknown
	}
	return in.Len, nil
}

var errUnknown = errors.New("unknown instruction")
