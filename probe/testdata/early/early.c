// Build: gcc -O2 -g -fomit-frame-pointer -o early early.c
// From main's first instruction on, calls main -> mid -> leaf N times
// (argv[1], default 2000), leaf allocating each time, without frame
// pointers; then prints "leaf N". The calls take well under a
// millisecond: their stacks must be whole from the start.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The memsets after the calls keep them from being tail calls. */
__attribute__((noinline)) char *leaf(size_t n)
{
	char *p = malloc(n);
	memset(p, 1, n);
	return p;
}

__attribute__((noinline)) char *mid(size_t n)
{
	char *p = leaf(n);
	memset(p, 2, 1);
	return p;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	long sum = 0;
	for (int i = 0; i < n; i++) {
		char *p = mid(16 + i % 64);
		sum += p[0];
		free(p);
	}
	printf("leaf %d sum %ld\n", n, sum);
	return 0;
}
