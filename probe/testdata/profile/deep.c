/* Spins at the bottom of a recursion of a depth given on the command line
 * until the process used 1.5 s of CPU time (as many samples however loaded
 * the machine is), and prints that depth: every sample's stack holds DEPTH+1 frames of down().
 * It prints where main is in the process too, for stacks' raw addresses.
 * build: gcc -g -O2 -o deep deep.c */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
__attribute__((noinline)) void spin(void) {
	struct timespec b;
	do {
		for (volatile int i = 0; i < 100000; i++)
			;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while (b.tv_sec * 1000000000L + b.tv_nsec < 1500000000L);
}
__attribute__((noinline)) int down(int n) {
	if (n == 0) { spin(); return 0; }
	int r = down(n - 1);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}
int main(int argc, char **argv) {
	printf("main=%p\n", (void *)main);
	printf("depth=%d\n", down(argc > 1 ? atoi(argv[1]) : 100));
	return 0;
}
