// The truth for probe's expression compiler (expr_test.go). Build:
// gcc -O1 -g -o expr expr.c; run: ./expr RECORD.
//
// main calls target(a, b, c, m) with each case's values (a, b, c in RDI,
// RSI, RDX and the array m's address in RCX at target's entry), after
// writing to RECORD one line per call: each expression of the test, named,
// as C computes it from the same values ("?" where the expression has no
// value: a division by zero, a read of an unmapped address). The test runs
// the same expressions as stack machine programs in BPF at target's entry
// and compares.
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

long gvar; /* read through a static address, relocated */

__attribute__((noinline, used)) long target(long a, long b, long c, long *m)
{
	__asm__ volatile("" : : "r"(a), "r"(b), "r"(c), "r"(m) : "memory");
	return a + b + c + m[0];
}

typedef unsigned long ul;

#define OUT(name, ok, v) do { if (ok) fprintf(f, " " name "=%ld", (long)(v)); else fprintf(f, " " name "=?"); } while (0)

static long sdiv(long a, long b) { return a == LONG_MIN && b == -1 ? LONG_MIN : a / b; }
static long smod(long a, long b) { return b == -1 ? 0 : a % b; }

int main(int argc, char **argv)
{
	static const long cases[][5] = {
		/* a, b, c, m[0], m[1] */
		{5, 3, 2, 100, 7},
		{-7, 2, 63, -1, 1L << 40},
		{LONG_MIN, -1, 64, LONG_MAX, -5},
		{0, 0, 70, 0x1234567890abcdefL, 0},
		{123456789012L, -98765, 17, -42, 42},
		{-1, 7, 1, 0x80, 0xff},
		{0x7fffffff80000001L, 0x100000001L, 33, -0x80000000L, 0x7fff},
		{-300, -300, 0, 65535, -65536},
	};
	FILE *f = fopen(argc > 1 ? argv[1] : "/dev/null", "w");
	if (!f)
		return 2;
	long r = 0;
	for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		long a = cases[i][0], b = cases[i][1], c = cases[i][2];
		long m[2] = {cases[i][3], cases[i][4]};
		gvar = a ^ 0x5555;
		fprintf(f, "call");
		OUT("mul3", 1, (long)((ul)a * 3 + 1));
		OUT("xor", 1, a ^ b);
		OUT("minus", 1, (long)((ul)a - (ul)b));
		OUT("and_or", 1, (a & b) | c);
		OUT("shl", 1, (long)((ul)a << (c & 63)));
		OUT("shr", 1, (long)((ul)a >> (c & 63)));
		OUT("shra", 1, a >> (c & 63));
		OUT("shl_any", 1, (ul)c >= 64 ? 0 : (long)((ul)a << c));
		OUT("shra_any", 1, (ul)c >= 64 ? (a < 0 ? -1 : 0) : a >> c);
		OUT("div", b != 0, b ? sdiv(a, b) : 0);
		OUT("divu", b != 0, b ? (long)((ul)a / (ul)b) : 0);
		OUT("mod", b != 0, b ? (long)((ul)a % (ul)b) : 0);
		OUT("mods", b != 0, b ? smod(a, b) : 0);
		OUT("lt", 1, a < b);
		OUT("ltu", 1, (ul)a < (ul)b);
		OUT("ge", 1, a >= b);
		OUT("gtu", 1, (ul)a > (ul)b);
		OUT("eq", 1, a == b);
		OUT("ne", 1, a != c);
		OUT("neg", 1, (long)(0 - (ul)a));
		OUT("not", 1, ~a);
		OUT("abs", 1, a < 0 ? (long)(0 - (ul)a) : a);
		OUT("zext4", 1, (long)(unsigned)a);
		OUT("sext4", 1, (long)(int)a);
		OUT("sext1", 1, (long)(signed char)a);
		OUT("zext2", 1, (long)(unsigned short)a);
		OUT("deref", 1, m[0]);
		OUT("deref4", 1, (long)*(unsigned *)m);
		OUT("deref1_next", 1, (long)*(unsigned char *)&m[1]);
		OUT("deref_chain", 1, (long)((ul)m[1] * 2));
		OUT("gvar", 1, gvar);
		OUT("stack", 1, (long)((ul)a - (ul)b));
		OUT("pick", 1, (long)((ul)a + (ul)b + (ul)c + (ul)a));
		OUT("bra_abs", 1, a < 0 ? (long)(0 - (ul)a) : a);
		OUT("fail_zero", a != 0, a);
		OUT("bad_read", 0, 0);
		fprintf(f, "\n");
		fflush(f);
		r += target(a, b, c, m);
	}
	fclose(f);
	return (int)(r & 1);
}
