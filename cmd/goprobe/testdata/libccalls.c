// Build: gcc -O2 -o libccalls libccalls.c
// Calls libc's getppid, which libc itself never calls, as many times as its
// argument says, and prints how many calls it made: the truth for probes on
// a library function.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 10, calls = 0;
	volatile long sink = 0;
	for (int i = 0; i < n; i++) {
		sink += getppid();
		calls++;
	}
	printf("getppid calls: %d\n", calls);
	return 0;
}
