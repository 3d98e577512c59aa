// Build: gcc -O2 -g -o prog main.c -L. -lctor -Wl,-rpath,'$ORIGIN'
// Allocates N times (argv[1], default 5) after its library's constructor
// allocated once, and prints "mallocs N+1".
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int ctor_ran(void);
void *volatile sink;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;
	for (int i = 0; i < n; i++) {
		sink = malloc(100 + i);
		free(sink);
	}
	/* snprintf and write allocate nothing (printf would, its buffer). */
	char buf[64];
	int k = snprintf(buf, sizeof buf, "mallocs %d\n", n + ctor_ran());
	write(1, buf, k);
	return 0;
}
