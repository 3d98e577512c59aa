// Build: gcc -O2 -g -fomit-frame-pointer -o inline inline.c
// Spends its time in main -> work, whose loop runs mix and step inlined.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline __attribute__((always_inline)) unsigned long step(unsigned long x)
{
	return (x * 6364136223846793005UL + 1442695040888963407UL) ^ (x >> 17);
}

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 4000; i++)
		x = step(x);
	return x;
}

__attribute__((noinline)) unsigned long work(unsigned long x)
{
	return mix(x) ^ 1;
}

int main(int argc, char **argv)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double end = ts.tv_sec + ts.tv_nsec / 1e9 + (argc > 1 ? atof(argv[1]) : 1);
	unsigned long x = 1, n = 0;
	for (;;) {
		x = work(x);
		n++;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ts.tv_sec + ts.tv_nsec / 1e9 > end)
			break;
	}
	printf("calls %lu %lu\n", n, x);
	return 0;
}
