// gcc -o moves main.c moves.S (main.c calls the functions: see uprobe_test.go)
//
// Three functions whose first instruction is a lock-prefixed add, on
// which the kernel refuses a uprobe. Only f_ok's entry may move to the
// next instruction: f_loop branches back to that instruction, and
// f_cold's cold piece jumps back to it, so a probe there would count more
// than the calls.
	.text
	.globl	f_ok
	.type	f_ok, @function
f_ok:
	lock addq $1, hits(%rip)
	leaq	1(%rdi), %rax
	ret
	.size	f_ok, .-f_ok

	.globl	f_loop
	.type	f_loop, @function
f_loop:
	lock addq $1, hits(%rip)
1:	decq	%rdi
	jg	1b
	movq	%rdi, %rax
	ret
	.size	f_loop, .-f_loop

	.globl	f_cold
	.type	f_cold, @function
f_cold:
	lock addq $1, hits(%rip)
2:	testq	%rdi, %rdi
	js	f_cold.cold
	movq	%rdi, %rax
	ret
	.size	f_cold, .-f_cold
	.type	f_cold.cold, @function
f_cold.cold:
	negq	%rdi
	jmp	2b
	.size	f_cold.cold, .-f_cold.cold

// f_table keeps its jump table in its own code: data the sweep cannot
// decode, so no site of f_table is proven (not even its entry).
	.globl	f_table
	.type	f_table, @function
f_table:
	leaq	table(%rip), %rax
	movslq	(%rax,%rdi,4), %rdx
	addq	%rdx, %rax
	jmp	*%rax
table:
	.long	3f - table, 4f - table
3:	movl	$1, %eax
	ret
4:	movl	$2, %eax
	ret
	.size	f_table, .-f_table

	.bss
	.align	8
hits:
	.quad	0
	.section	.note.GNU-stack,"",@progbits
