// Fixture of package cfi: call frame information as C compilers emit it.
// The tests build it with each line below (OUT is the binary) and compare
// the rows package cfi reads with readelf's and llvm-dwarfdump's.
//
// build c-O2: gcc -O2 -g -fomit-frame-pointer -o $OUT frames.c
// build c-O0: gcc -O0 -g -o $OUT frames.c
// build c-both: gcc -O2 -g -fomit-frame-pointer -DBOTH_SECTIONS -o $OUT frames.c
// build c-debug-frame-v1: gcc -O2 -g -fno-asynchronous-unwind-tables -o $OUT frames.c
// build c-debug-frame-v3: gcc -O2 -g -fno-asynchronous-unwind-tables -Wa,--gdwarf-cie-version=3 -o $OUT frames.c
// build c-debug-frame-v4: gcc -O2 -g -fno-asynchronous-unwind-tables -Wa,--gdwarf-cie-version=4 -o $OUT frames.c
// build clang-debug-frame-64: clang -O2 -g -gdwarf-5 -gdwarf64 -fno-asynchronous-unwind-tables -fno-unwind-tables -o $OUT frames.c
// build clang-O2: clang -O2 -g -fomit-frame-pointer -o $OUT frames.c
// build arm64: zig cc -target aarch64-linux-musl -O2 -g -nostdlib -static -ffreestanding -DFREESTANDING -DBOTH_SECTIONS -mbranch-protection=standard -o $OUT frames.c
// build arm64-fp: zig cc -target aarch64-linux-musl -O2 -g -nostdlib -static -ffreestanding -DFREESTANDING -fno-omit-frame-pointer -o $OUT frames.c
// build riscv64: zig cc -target riscv64-linux-musl -O2 -nostdlib -static -ffreestanding -DFREESTANDING -o $OUT frames.c
// build c-object: gcc -O2 -c -o $OUT frames.c

#ifdef BOTH_SECTIONS
// Both .eh_frame and .debug_frame describe every function.
__asm__(".cfi_sections .eh_frame, .debug_frame");
#endif

// noipa keeps GCC from seeing which registers a callee leaves alone (and so
// from skipping saves); clang has only noinline.
#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noipa))
#endif

volatile long sink;

// A leaf: no frame at -O2.
NOINLINE long inner(long n) {
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i * sink;
	return s;
}

// A variable-length array: the CFA moves to the frame pointer even at
// -fomit-frame-pointer.
NOINLINE long dynamic(long n) {
	char buf[n + 1];
	for (long i = 0; i <= n; i++)
		buf[i] = (char)i;
	return inner(buf[n / 2]);
}

// Many live values across calls: callee-saved registers, rbp among them,
// are pushed and restored.
NOINLINE long saver(long a, long b, long c, long d, long e, long f) {
	long x = inner(a), y = inner(b), z = inner(c), w = inner(d), v = inner(e);
	long u = inner(f);
	return x * a + y * b + z * c + w * d + v * e + u * f + dynamic(a & 15);
}

// A tail call's epilogue in the middle of the function:
// DW_CFA_remember_state and DW_CFA_restore_state.
NOINLINE long branchy(long *p, long n) {
	long a = inner(n);
	if (a > 10)
		return inner(a + p[0]);
	long b = inner(p[1]);
	return a * b + inner(b);
}

NOINLINE long outer(long n) {
	long v[4] = {n, n + 1, n + 2, n + 3};
	return inner(n) + branchy(v, 4) + saver(n, 1, 2, 3, 4, 5);
}

#ifdef FREESTANDING
void _start(void) {
	long r = outer(3);
#if defined(__aarch64__)
	__asm__ volatile("mov x0, %0\n\tmov x8, #93\n\tsvc #0" : : "r"(r) : "x0", "x8");
#endif
	for (;;)
		sink = r;
}
#else
#include <stdio.h>

int main(int argc, char **argv) {
	(void)argv;
	printf("%ld\n", outer(argc));
	return 0;
}
#endif
