// build: gcc -O2 -g -o OUT float.c
//
// add's v arrives in XMM0, which a uprobe cannot read; GCC keeps it in a
// stack slot across the calls to note and fflush, and its location list says
// so from the first call's return on. The program prints each call's v and
// the count note has reached by then.
#include <stdio.h>
#include <stdlib.h>

struct acc {
	double sum;
	long n;
};

__attribute__((noinline)) void note(struct acc *a)
{
	a->n++;
	if (a->n < 0)
		puts("negative");
}

__attribute__((noinline)) double add(struct acc *a, double v)
{
	note(a);
	fflush(stdout);
	a->sum += v;
	return a->sum;
}

int main(int argc, char **argv)
{
	struct acc a = {0};
	int n = argc > 1 ? atoi(argv[1]) : 5;
	for (int i = 0; i < n; i++) {
		double v = i * 1.5 + 0.25;
		add(&a, v);
		printf("v=%g n=%ld\n", v, a.n);
	}
	return 0;
}
