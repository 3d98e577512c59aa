// Build: gcc -O2 -g -o sdt sdt.c (and -O0: operands in the frame)
// USDT probes of its own (sys/sdt.h, from systemtap-sdt-dev), the first
// with an is-enabled semaphore: demo:work(i, neg, name, 7) fires only
// inside the branch its semaphore enables, and the program records how
// often that branch ran, the arguments it passed there, and the
// semaphore's value at the end (0 again once every probe detached).
// demo:tick(i) has a semaphore too but no guard, and two places: one
// per call of work, one more at the end with N. Arguments: N calls, US
// microseconds between them, and optionally a FILE: then the calls go on
// until FILE exists (N is ignored), and the program ends with its count. demo:sum(total, table[i & 7], config) reads a
// running sum, a signed short and a volatile global, which GCC -O2 passes
// as a memory operand relative to %rip (8@config(%rip)); the program
// prints each call's values.
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <unistd.h>

__extension__ unsigned short demo_work_semaphore __attribute__((unused)) __attribute__((section(".probes")));
__extension__ unsigned short demo_sum_semaphore __attribute__((unused)) __attribute__((section(".probes")));
__extension__ unsigned short demo_tick_semaphore __attribute__((unused)) __attribute__((section(".probes")));

static const char *names[] = {"alpha", "beta", "gamma"};
static long total;
static short table[8];
volatile long config = 42;

__attribute__((noinline)) static void work(long i)
{
	int neg = -(int)(i * 7) - 1;
	const char *name = names[i % 3];
	if (__builtin_expect(demo_work_semaphore, 0)) {
		printf("enabled work(%ld, %d, %s, 7)\n", i, neg, name);
		DTRACE_PROBE4(demo, work, i, neg, name, 7);
	}
	DTRACE_PROBE1(demo, tick, i);
	total += i;
	table[i & 7] = (short)-i;
	printf("sum(%ld, %d, %ld)\n", total, table[i & 7], config);
	DTRACE_PROBE3(demo, sum, total, table[i & 7], config);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	long us = argc > 2 ? atol(argv[2]) : 0;
	const char *until = argc > 3 ? argv[3] : NULL;
	config = n * 1000 + 5; /* a value of the run, not the file's */
	printf("sdt started\n");
	fflush(stdout);
	for (long i = 0; until ? access(until, F_OK) != 0 : i < n; i++) {
		work(i);
		if (us > 0)
			usleep(us);
		if (until)
			n = i + 1;
	}
	DTRACE_PROBE1(demo, tick, n);
	printf("semaphore at end: %u\n", demo_work_semaphore);
	return 0;
}
