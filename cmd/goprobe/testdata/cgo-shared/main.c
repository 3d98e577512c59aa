/* Build: gcc -o prog main.c ./libstep.so -Wl,-rpath,DIR
   Run: ./prog N: calls the Go library's Step N times, prints the total. */
#include <stdio.h>
#include <stdlib.h>

int Step(int);

int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	long t = 0;
	for (int i = 0; i < n; i++)
		t += Step(i);
	printf("total %ld calls %d\n", t, n);
	return 0;
}
