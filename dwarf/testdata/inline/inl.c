#include <stdio.h>
#include <stdlib.h>
static int sq(int x) { return x * x; }
static inline int add3(int a, int b, int c) { return sq(a) + b + c; }
__attribute__((noinline)) int work(int n) {
	int s = 0;
	for (int i = 0; i < n; i++)
		s += add3(i, n, 1);
	return s + sq(n);
}
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 10;
	printf("%d %d\n", work(n), add3(n, 2, 3));
	return 0;
}
