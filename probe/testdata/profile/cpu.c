// Build: gcc -O2 -g -fomit-frame-pointer -o cpu cpu.c
// Spends its time in main -> outer -> inner for the seconds of CPU time
// given (default 1: as many samples however loaded the machine is),
// without frame pointers, and prints how many calls it made.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long inner(unsigned long x)
{
	for (int i = 0; i < 4000; i++)
		x = (x * 6364136223846793005UL + 1442695040888963407UL) ^ (x >> 17);
	return x;
}

/* Not a tail call: outer stays on the stack while inner runs. */
__attribute__((noinline)) unsigned long outer(unsigned long x)
{
	return inner(x) ^ 1;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 1);
	unsigned long x = 1, calls = 0;
	while (now() < end)
		for (int i = 0; i < 100; i++, calls++)
			x = outer(x);
	printf("calls %lu x %lu\n", calls, x);
	return 0;
}
