package x86

// vexLen is the length of the VEX- or EVEX-encoded instruction (AVX,
// AVX-512, BMI: vzeroupper, vmovdqu, shlx...) at the start of code, which
// x86asm does not decode, or 0 when code does not start with one (in
// 64-bit mode, 0xc4, 0xc5 and 0x62 always start one). None of them
// branches; some write general registers (shlx, andn, vmovd to a
// register), so the decoded instruction says nothing about which.
func vexLen(code []byte) int {
	if len(code) < 2 {
		return 0
	}
	var n int   // bytes before the opcode
	var mm byte // the opcode map: 1 = 0f, 2 = 0f38, 3 = 0f3a
	switch code[0] {
	case 0xc5:
		n, mm = 2, 1
	case 0xc4:
		if len(code) < 3 {
			return 0
		}
		n, mm = 3, code[1]&0x1f
	case 0x62:
		if len(code) < 4 {
			return 0
		}
		n, mm = 4, code[1]&0x07
	default:
		return 0
	}
	if len(code) <= n {
		return 0
	}
	op := code[n]
	n++
	if mm == 1 && op == 0x77 && code[0] != 0x62 { // vzeroupper, vzeroall: no ModRM
		return n
	}
	if len(code) <= n {
		return 0
	}
	modrm := code[n]
	n++
	mod, rm := modrm>>6, modrm&7
	if mod != 3 && rm == 4 { // a SIB byte
		if len(code) <= n {
			return 0
		}
		if mod == 0 && code[n]&7 == 5 {
			n += 4 // no base: disp32
		}
		n++
	}
	switch {
	case mod == 0 && rm == 5:
		n += 4 // RIP-relative
	case mod == 1:
		n++ // disp8 (EVEX scales it, its length stays 1)
	case mod == 2:
		n += 4
	}
	imm := mm == 3
	if mm == 1 {
		switch op {
		case 0x70, 0x71, 0x72, 0x73, 0xc2, 0xc4, 0xc5, 0xc6:
			imm = true
		}
	}
	if imm {
		n++
	}
	if n > len(code) {
		return 0
	}
	return n
}
