package x86

import "fmt"

// Refusal says why the x86-64 kernel refuses a uprobe on the instruction
// at the start of code, or "" when it accepts one. The kernel analyses the
// instruction when it first inserts the breakpoint into a process: a
// refusal then fails the attach for a running process, but for a process
// that starts later it is silent, and the probe never fires. So the check
// has to be ours, before attaching.
//
// What the kernel refuses, as measured on it (kernel_linux_test.go asks
// the running kernel about every one- and two-byte opcode, the group
// opcodes' ModRM forms, each prefix and VEX and EVEX instructions):
//
//   - a lock prefix, or an es, cs, ss or ds segment-override prefix: so
//     also the CET notrack prefix (3e: notrack jmp *%rax of a jump table)
//     and the cs prefix of GCC's long NOPs (2e 66 0f 1f 84 ...);
//   - mov to ss (8e /2), which masks the single-step trap;
//   - the one-byte opcodes of refusedOps: int3, int n, into, iret, int1,
//     in, out, ins, outs, hlt, cli, sti, and the opcodes invalid in 64-bit
//     mode;
//   - a VEX or EVEX instruction whose opcode byte is one of refusedOps:
//     the kernel looks the opcode byte up in its one-byte table whatever
//     the map, so vmovdqa/vmovdqu (6f), vpxor (ef), vpaddq (d4) and
//     vmovd (6e) are refused while vmovdqa stores (7f) are not;
//   - what it cannot decode.
//
// Every two- and three-byte opcode (0f xx, 0f 38 xx, 0f 3a xx) is
// accepted. An instruction x86asm cannot decode is refused here even where
// the kernel would take it (APX's REX2, some system instructions): never
// attach where it is not proven. VEX and EVEX instructions are judged by
// their opcode byte and map without checking that the opcode exists in
// that map: compiled code holds only valid ones.
func Refusal(code []byte) string {
	n, err := Length(code)
	if err != nil {
		return "an instruction that cannot be decoded"
	}
	i := 0
	for ; i < n && isLegacyPrefix(code[i]); i++ {
		switch code[i] {
		case 0xf0:
			return "a lock-prefixed instruction, which the kernel refuses"
		case 0x26, 0x2e, 0x36, 0x3e:
			return fmt.Sprintf("an instruction with a %s segment-override prefix (%#02x), which the kernel refuses", segName[code[i]], code[i])
		}
	}
	if i < n && code[i]&0xf0 == 0x40 { // REX
		i++
	}
	if i >= n {
		return "an instruction that cannot be decoded"
	}
	op, vex := code[i], ""
	switch op {
	case 0x0f:
		return ""
	case 0xc4, 0xc5, 0x62:
		var ok bool
		if op, ok = vexOpcode(code[i:n]); !ok {
			return "a VEX or EVEX instruction of an unknown opcode map"
		}
		vex = map[byte]string{0xc4: "VEX", 0xc5: "VEX", 0x62: "EVEX"}[code[i]] + " "
	case 0x8e:
		if i+1 < n && code[i+1]>>3&7 == 2 {
			return "a mov to ss, which the kernel refuses"
		}
	}
	if name := refusedOps[op]; name != "" {
		return fmt.Sprintf("a %sinstruction of opcode %#02x (%s), which the kernel refuses", vex, op, name)
	}
	return ""
}

// vexOpcode is the opcode byte of the VEX or EVEX instruction code holds,
// or false for an opcode map the kernel does not decode.
func vexOpcode(code []byte) (byte, bool) {
	switch code[0] {
	case 0xc5:
		return code[2], len(code) > 2
	case 0xc4:
		m := code[1] & 0x1f
		return code[3], len(code) > 3 && m >= 1 && m <= 3
	default: // 0x62: P0's map, P1's fixed 1 bit
		m := code[1] & 0x07
		return code[4], len(code) > 4 && m >= 1 && m <= 3 && code[1]&0x08 == 0 && code[2]&0x04 != 0
	}
}

func isLegacyPrefix(b byte) bool {
	switch b {
	case 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0x66, 0x67, 0xf0, 0xf2, 0xf3:
		return true
	}
	return false
}

var segName = map[byte]string{0x26: "es", 0x2e: "cs", 0x36: "ss", 0x3e: "ds (or notrack)"}

// refusedOps are the one-byte opcodes the kernel refuses a uprobe on, by
// what they are outside VEX and EVEX.
var refusedOps = func() [256]string {
	var t [256]string
	for _, op := range []byte{0x06, 0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f, 0x27, 0x2f, 0x37, 0x3f, 0x60, 0x61, 0x62, 0x82, 0x9a, 0xd4, 0xd5, 0xd6, 0xea} {
		t[op] = "invalid in 64-bit mode"
	}
	for _, op := range []byte{0x6c, 0x6d, 0x6e, 0x6f} {
		t[op] = "ins/outs"
	}
	for _, op := range []byte{0xe4, 0xe5, 0xe6, 0xe7, 0xec, 0xed, 0xee, 0xef} {
		t[op] = "in/out"
	}
	t[0xcc], t[0xcd], t[0xce], t[0xcf], t[0xf1] = "int3", "int n", "into", "iret", "int1"
	t[0xf4], t[0xfa], t[0xfb] = "hlt", "cli", "sti"
	return t
}()
