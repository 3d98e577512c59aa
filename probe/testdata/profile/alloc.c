// Build: gcc -O2 -g -fomit-frame-pointer -o alloc alloc.c
// Allocates N times from here() and 2N times from there(), without frame
// pointers, and prints both counts; with a second argument, it sleeps
// that many milliseconds after each allocation.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The memset after the call keeps malloc from being a tail call. */
__attribute__((noinline)) char *here(size_t n)
{
	char *p = malloc(n);
	memset(p, 1, n);
	return p;
}

__attribute__((noinline)) char *there(size_t n)
{
	char *p = malloc(n);
	memset(p, 2, n);
	return p;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	int ms = argc > 2 ? atoi(argv[2]) : 0;
	long sum = 0;
	for (int i = 0; i < n; i++) {
		char *p = here(16 + i);
		sum += p[0];
		free(p);
		if (ms > 0)
			usleep(ms * 1000);
	}
	for (int i = 0; i < 2 * n; i++) {
		char *p = there(32 + i);
		sum += p[0];
		free(p);
	}
	printf("here %d there %d sum %ld\n", n, 2 * n, sum);
	return 0;
}
