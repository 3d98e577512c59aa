// Build: gcc -O0 -g -o mark mark.c
// Run: ./mark N: body runs a loop of N iterations, twice; each iteration
// is one "call" that passes the start mark_a, the start mark_b or both,
// and then mark_end, where the call is over (the test puts a per-thread
// mark on the starts and its clear on mark_end). The second iteration of
// the outer body recurses between the two starts, so the frames' marks
// must not mix. The program prints how many calls passed a start.
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;
static long calls;

__attribute__((noinline)) void body(long n, int depth)
{
	for (long i = 0; i < n; i++) {
		int any = 0;
		if (i % 3 != 0) {
			__asm__ volatile(".globl mark_a\nmark_a: nop");
			any = 1;
		}
		sink += i;
		if (depth > 0 && i == 1)
			body(n, depth - 1);
		if (i % 2 == 0) {
			__asm__ volatile(".globl mark_b\nmark_b: nop");
			any = 1;
		}
		sink += 2 * i;
		calls += any;
		__asm__ volatile(".globl mark_end\nmark_end: nop");
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	body(n, 1);
	printf("calls %ld\n", calls);
	return 0;
}
