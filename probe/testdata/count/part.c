// Build: gcc -O3 -g -o part part.c
// Prints how many times it called maybe_alloc, which GCC splits into an
// inlined head (three inline sites) and maybe_alloc.part.0.
// GCC splits maybe_alloc (ipa-fnsplit): the cheap test is inlined into each
// caller, the rest becomes maybe_alloc.part.0.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *cache[64];

static char *maybe_alloc(int i, size_t n)
{
	if (__builtin_expect(cache[i & 63] != NULL, 1))
		return cache[i & 63];
	char *p = malloc(n);
	if (!p) {
		perror("malloc");
		exit(1);
	}
	memset(p, i, n);
	for (size_t k = 0; k < n; k++)
		p[k] ^= (char)(k * 7 + i);
	fprintf(stderr, "allocated %zu bytes for slot %d\n", n, i & 63);
	cache[i & 63] = p;
	return p;
}

// The callers note each call's arguments; main prints them at the end.
static int logged[256][2], nlogged;
__attribute__((noinline)) static void note(int i, size_t n)
{
	if (nlogged < 256) {
		logged[nlogged][0] = i;
		logged[nlogged][1] = (int)n;
		nlogged++;
	}
}

__attribute__((noinline)) int first(int i) { note(i, 16); return maybe_alloc(i, 16)[0]; }
__attribute__((noinline)) int second(int i) { note(i + 1, 32); return maybe_alloc(i + 1, 32)[1]; }
__attribute__((noinline)) int third(int i) { note(i + 2, 64); return maybe_alloc(i + 2, 64)[2]; }

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	int s = 0;
	for (int i = 0; i < n; i++)
		s += first(i) + second(i) + third(i);
	for (int k = 0; k < nlogged; k++)
		printf("called maybe_alloc(%d, %d)\n", logged[k][0], logged[k][1]);
	printf("maybe_alloc calls: %d (sum %d)\n", 3 * n, s);
	return 0;
}
