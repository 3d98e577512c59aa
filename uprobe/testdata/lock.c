// gcc -O2 -g -fcf-protection=none -o lock lock.c
//
// f starts with a lock-prefixed add (an atomic counter bump), on which the
// kernel refuses a uprobe; the program counts f's calls itself.
#include <stdio.h>
#include <stdlib.h>

long hits;

__attribute__((noinline)) long f(long x) {
	__atomic_fetch_add(&hits, 1, __ATOMIC_RELAXED);
	return x * 3 + 1;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 100;
	long s = 0;
	for (int i = 0; i < n; i++)
		s += f(i);
	printf("calls f=%ld sum=%ld\n", hits, s);
	return 0;
}
