// Build: gcc -O2 -g [-DVARIANT] -o slow slow.c
// Calls f a few times, slowly, and says with which arguments: a fixture
// for a probed file replaced on disk (VARIANT builds a different binary).
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) long f(long a)
{
#ifdef VARIANT
	if (a == 1000)
		puts("variant");
#endif
	return a * 3;
}

int main(int argc, char **argv)
{
	long base = argc > 1 ? atol(argv[1]) : 0;
	long s = 0;
	for (long i = 0; i < 3; i++) {
		printf("f(%ld)\n", base + i);
		fflush(stdout);
		s += f(base + i);
		usleep(20000);
	}
	return s == 0;
}
