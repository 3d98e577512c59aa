// Build: gcc -O2 -g -o uselib uselib.c -L. -ltally -Wl,-rpath,'$ORIGIN'
// Calls libtally.so's lib_fun once a round: ./uselib N [US] (0: for ever).
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int lib_fun(int v);

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	long us = argc > 2 ? atol(argv[2]) : 20000;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (long i = 0; n == 0 || i < n; i++) {
		printf("rec lib_fun v=%ld\n", i);
		lib_fun((int)i);
		usleep(us);
	}
	return 0;
}
