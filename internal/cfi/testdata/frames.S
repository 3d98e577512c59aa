// Fixture of package cfi: the call frame instructions, augmentations and
// pointer encodings compilers seldom emit, for the x86-64 GNU assembler.
// The assembler and the linker resolve every address; the tests compare
// the rows package cfi reads with readelf's (build asm) and
// llvm-dwarfdump's (build asm-llvm, without what version 14 cannot read),
// and the FDEs in encodings those tools do not decode (uleb128,
// textrel, datarel, indirect, aligned: build asm-exotic) with a twin FDE
// in absptr encoding, at function addresses from nm.
//
// build asm: gcc -nostdlib -static -no-pie -o $OUT frames.S
// build asm-llvm: gcc -nostdlib -static -no-pie -DLLVM14 -o $OUT frames.S
// build asm-exotic: gcc -nostdlib -static -no-pie -DEXOTIC -o $OUT frames.S

	.text
text_start:
	.globl	_start
	.type	_start, @function
_start:
	.cfi_startproc
	.cfi_undefined rip
	call	ops
	call	plt10
	call	sigframe
	mov	$60, %eax
	xor	%edi, %edi
	syscall
	.cfi_endproc

// Every rule kind, and the instructions gas has no directive for
// (.cfi_escape): each nop is a new row.
	.type	ops, @function
ops:
	.cfi_startproc
	push	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	mov	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	nop
	.cfi_remember_state
	.cfi_val_offset %rbp, -16
	nop
	.cfi_remember_state
	.cfi_same_value %rbp
	.cfi_def_cfa %rsp, 64
	nop
	.cfi_register %rip, %rax
	nop
	.cfi_restore_state
	nop
	.cfi_restore %rip
	nop
	.cfi_restore_state
	nop
#ifndef LLVM14
	// llvm-dwarfdump 14 stops reading .eh_frame at this one.
	.cfi_escape 0x2f, 0x06, 0x02		// GNU_negative_offset_extended rbp, 2
	nop
#endif
	.cfi_escape 0x12, 0x07, 0x7e		// def_cfa_sf rsp, -2
	nop
	.cfi_escape 0x13, 0x7d			// def_cfa_offset_sf -3
	nop
	.cfi_escape 0x14, 0x06, 0x03		// val_offset rbp, 3
	nop
	.cfi_escape 0x15, 0x06, 0x7f		// val_offset_sf rbp, -1
	nop
	.cfi_escape 0x2e, 0x10			// GNU_args_size 16
	.cfi_escape 0x11, 0x10, 0x7f		// offset_extended_sf rip, -1
	nop
	.cfi_escape 0x05, 0x06, 0x04		// offset_extended rbp, 4
	nop
	.cfi_escape 0x16, 0x06, 0x02, 0x77, 0x00	// val_expression rbp: breg7 0
	nop
	.cfi_escape 0x10, 0x10, 0x02, 0x77, 0x08	// expression rip: breg7 8
	nop
	.cfi_escape 0x06, 0x10			// restore_extended rip
	.cfi_escape 0x08, 0x06			// same_value rbp
	nop
	.cfi_escape 0x0f, 0x02, 0x77, 0x20	// def_cfa_expression breg7 32
	nop
	.cfi_escape 0x09, 0x06, 0x03		// register rbp in rbx
	.cfi_def_cfa %rsp, 8
	nop
#ifndef LLVM14
	.cfi_escape 0x1d, 1, 0, 0, 0, 0, 0, 0, 0	// MIPS_advance_loc8 1
#endif
	.cfi_escape 0x07, 0x06			// undefined rbp
	nop
	.cfi_escape 0x00			// nop
	.cfi_adjust_cfa_offset 8
	.skip	300, 0x90			// an advance_loc2 follows
	.cfi_adjust_cfa_offset 8
	.skip	70000, 0x90			// an advance_loc4 follows
	.cfi_adjust_cfa_offset -16
	pop	%rbp
	ret
	.cfi_endproc

// A PLT-like CFA with DW_OP_lit10 (push at byte 10 of 16).
	.type	plt10, @function
plt10:
	.cfi_startproc
	nop
	.cfi_escape 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3a, 0x2a, 0x33, 0x24, 0x22
	.skip	16, 0x90
	ret
	.cfi_endproc

// A signal frame: augmentation "zRS".
	.type	sigframe, @function
sigframe:
	.cfi_startproc
	.cfi_signal_frame
	nop
	.cfi_def_cfa_offset 16
	nop
	ret
	.cfi_endproc

// Personality routines and LSDAs in several encodings ("zPLR"): the
// augmentation data must be skipped by its exact size.
	.type	pers_routine, @function
pers_routine:
	ret

	.macro personality enc, name, target
	.type	\name, @function
\name:
	.cfi_startproc
	.cfi_personality \enc, \target
	.cfi_lsda 0x1b, lsda
	push	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbx, -16
	nop
	pop	%rbx
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.endm

	personality 0x00, pers_absptr, pers_routine
	personality 0x03, pers_udata4, pers_routine
	personality 0x04, pers_udata8, pers_routine
	personality 0x0b, pers_sdata4, pers_routine
	personality 0x1b, pers_pcrel_sdata4, pers_routine
	personality 0x9b, pers_indirect, pers_slot

// Functions the hand-written .debug_frame below describes (no gas CFI):
// the same code, the same rules, in different FDE encodings.
	.macro twin name
	.globl	\name
	.type	\name, @function
\name:
	push	%rax
	nop
	nop
	nop
	pop	%rcx
	ret
\name\()_end:
	.endm

	twin	h_absptr
	twin	h_udata4
	twin	h_udata8
	twin	h_sdata4
	twin	h_sdata8
	twin	h_signed
#ifdef EXOTIC
	twin	h_uleb_textrel
	twin	h_sleb_textrel
	twin	h_datarel
	twin	h_indirect
	twin	h_aligned
#endif

	.data
	.balign	8
pers_slot:
	.quad	pers_routine
#ifdef EXOTIC
slot_begin:
	.quad	h_indirect
slot_set:
	.quad	h_indirect + 4
#endif
	.quad	_GLOBAL_OFFSET_TABLE_

	.section .gcc_except_table, "a", @progbits
lsda:
	.byte	0xff, 0xff, 0x01, 0x00

#ifndef LLVM14
// .debug_frame (whose augmentations llvm-dwarfdump 14 does not read),
// version 1 CIEs with a "zR" augmentation naming each
// encoding. Every FDE runs the same program: at +1 (push) CFA rsp+16, at
// +4 (DW_CFA_set_loc, in the FDE's encoding) CFA rsp+24, at +5 (pop) CFA
// rsp+8.
	.section .debug_frame, "", @progbits
debug_frame_start:

	// cie NAME, ENCODING
	.macro cie name, enc
\name:
	.4byte	\name\()_end - \name\()_id
\name\()_id:
	.4byte	0xffffffff
	.byte	1		// version
	.asciz	"zR"
	.uleb128 1		// code alignment
	.sleb128 -8		// data alignment
	.byte	16		// return address column: rip
	.uleb128 1		// augmentation data
	.byte	\enc
	.byte	0x0c, 7, 8	// def_cfa rsp, 8
	.byte	0x90, 1		// offset rip, cfa-8
	.balign	4, 0
\name\()_end:
	.endm

	// fde CIE, FUNCTION, POINTER-DIRECTIVE, BEGIN, SET_LOC, RANGE-DIRECTIVE
	.macro fde cie, fn, ptr, begin, setloc, rptr, align=0
\fn\()_fde:
	.4byte	\fn\()_fde_end - \fn\()_fde_id
\fn\()_fde_id:
	.4byte	\cie - debug_frame_start
	.if \align
	.balign	8, 0
	.endif
	\ptr	\begin
	\rptr	\fn\()_end - \fn
	.uleb128 0		// augmentation data
	.byte	0x41		// advance_loc 1
	.byte	0x0e, 16	// def_cfa_offset 16
	.byte	0x01		// set_loc
	.if \align
	.balign	8, 0
	.endif
	\ptr	\setloc
	.byte	0x0e, 24	// def_cfa_offset 24
	.byte	0x02, 1		// advance_loc1 1
	.byte	0x0e, 8		// def_cfa_offset 8
	.balign	4, 0
\fn\()_fde_end:
	.endm

	cie	cie_absptr, 0x00
	fde	cie_absptr, h_absptr, .8byte, h_absptr, h_absptr+4, .8byte
	cie	cie_udata4, 0x03
	fde	cie_udata4, h_udata4, .4byte, h_udata4, h_udata4+4, .4byte
	cie	cie_udata8, 0x04
	fde	cie_udata8, h_udata8, .8byte, h_udata8, h_udata8+4, .8byte
	cie	cie_sdata4, 0x0b
	fde	cie_sdata4, h_sdata4, .4byte, h_sdata4, h_sdata4+4, .4byte
	cie	cie_sdata8, 0x0c
	fde	cie_sdata8, h_sdata8, .8byte, h_sdata8, h_sdata8+4, .8byte
	cie	cie_signed, 0x08
	fde	cie_signed, h_signed, .8byte, h_signed, h_signed+4, .8byte
#ifdef EXOTIC
	cie	cie_uleb_textrel, 0x21
	fde	cie_uleb_textrel, h_uleb_textrel, .uleb128, h_uleb_textrel-text_start, h_uleb_textrel+4-text_start, .uleb128
	cie	cie_sleb_textrel, 0x29
	fde	cie_sleb_textrel, h_sleb_textrel, .sleb128, h_sleb_textrel-text_start, h_sleb_textrel+4-text_start, .sleb128
	cie	cie_datarel, 0x3c
	fde	cie_datarel, h_datarel, .8byte, h_datarel-_GLOBAL_OFFSET_TABLE_, h_datarel+4-_GLOBAL_OFFSET_TABLE_, .8byte
	cie	cie_indirect, 0x84
	fde	cie_indirect, h_indirect, .8byte, slot_begin, slot_set, .8byte
	cie	cie_aligned, 0x50
	fde	cie_aligned, h_aligned, .8byte, h_aligned, h_aligned+4, .8byte, 1
#endif
#endif
