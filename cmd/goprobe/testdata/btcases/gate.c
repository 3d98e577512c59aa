// Build: with marks.c. tally:gated has an is-enabled semaphore: its
// branch runs only while a tool that honours the semaphore is attached,
// and records the semaphore's value then.
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <sys/sdt.h>

__extension__ unsigned short tally_gated_semaphore __attribute__((unused)) __attribute__((section(".probes")));

__attribute__((noinline)) void gated(long i)
{
	if (__builtin_expect(tally_gated_semaphore, 0)) {
		printf("rec tally:gated arg0=%ld semaphore=%u\n", i, tally_gated_semaphore);
		STAP_PROBE1(tally, gated, i);
	}
}
