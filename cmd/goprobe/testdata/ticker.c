// Build: gcc -O2 -g -o ticker ticker.c
// Calls tick(i) N times (argv[1]), sleeping US microseconds (argv[2])
// between calls, then prints how many calls it made and the sum of what
// tick returned: the program's own record, for the stops of goprobe
// trace, stat and hist (-n, --duration) and for a process that must run
// on unharmed once the probes detach.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) long tick(long i)
{
	__asm__ volatile("" ::: "memory");
	return i * 3 + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long us = argc > 2 ? atol(argv[2]) : 1000;
	long sum = 0, calls = 0;
	printf("ticker started\n");
	fflush(stdout);
	for (long i = 0; i < n; i++) {
		sum += tick(i);
		calls++;
		if (us > 0)
			usleep(us);
	}
	printf("tick calls: %ld (sum %ld)\n", calls, sum);
	return 0;
}
