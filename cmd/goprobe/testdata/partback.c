// Build: gcc -O3 -g -o partback partback.c
// Run: ./partback N: prints "f9 calls C", how many times f9 was called.
// GCC's partial inlining splits f9 into an inlined head (the record and
// the guard) and f9.part.0 (the tail), then at -O3 inlines the part back
// into each expansion of the head: DWARF shows an expansion of f9 inside
// one of f9, called from f9's declaration line. It is the rest of the
// call, not a call.
#include <stdio.h>
#include <stdlib.h>

static FILE *out;
static long calls;

__attribute__((noinline)) void note(long a, long b)
{
	calls++;
	__asm__ volatile("" : : "r"(a), "r"(b) : "memory");
}

__attribute__((noinline)) long g(long x)
{
	__asm__ volatile("" : : "r"(x) : "memory");
	return x;
}

static long f9(long a, long b)
{
	note(a, b);
	if ((a & 7) < 3)
		return b;
	long *m = malloc(16 * sizeof(long));
	if (!m)
		abort();
	for (long k = 0; k < 16; k++)
		m[k] = a * k + b;
	long r = 0;
	for (long k = 0; k < 16; k++)
		r += m[k] ^ k;
	fprintf(out, "%ld\n", r);
	free(m);
	return g(r);
}

long h1(long a) { return f9(a, a + 1) + 1; }
long h2(long a) { return f9(a * 2, a) + 2; }
long h3(long a) { return f9(a - 1, 7) + f9(a, 3); }

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 7;
	out = fopen("/dev/null", "w");
	if (!out)
		return 2;
	long s = 0;
	for (int i = 0; i < n; i++)
		s += h1(i) + h2(i) + h3(i);
	printf("f9 calls %ld\n", calls);
	return s == 1;
}
