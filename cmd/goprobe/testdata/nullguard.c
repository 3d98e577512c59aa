// Build: gcc -O3 -g -o nullguard nullguard.c
// Run: ./nullguard N: prints "bump calls C", how many times bump was called.
// pair's loop of two bump calls is unrolled, each copy of the inlined body
// starting with bump's test of p, and the first copy's early return (p is
// NULL: the call does nothing but test) jumps straight to the second
// copy's test: a call that passes no other instruction of its own.
#include <stdio.h>
#include <stdlib.h>

static long calls;

static inline void bump(long *p)
{
	if (!p)
		return;
	*p = *p * 3 + 1;
}

static __attribute__((noinline)) void pair(long *pa, long *pb)
{
	calls += 2;
	for (int i = 0; i < 2; i++)
		bump(i ? pb : pa);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	long a = 0, b = 0;
	for (long i = 0; i < n; i++)
		pair(i % 3 ? &a : NULL, i % 2 ? &b : NULL);
	printf("bump calls %ld (a=%ld b=%ld)\n", calls, a, b);
	return 0;
}
