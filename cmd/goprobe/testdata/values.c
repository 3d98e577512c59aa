// Build: gcc -O0 -g -o values values.c (the tests build -O0, -O2 and clang -O2)
// Run: ./values N: each function prints the values it was called with, one
// "rec FUNC V..." line per call, for the tests to compare goprobe's with.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct named {
	char name[8]; /* filled to the end: no NUL */
	int x;
};

/* Negative ints (hist --value sums them, signed). */
__attribute__((noinline)) long neg(int v, short k)
{
	printf("rec neg %d %d\n", v, k);
	return v * 2 + k;
}

/* The parameter after an unsigned __int128. */
__attribute__((noinline)) long f(unsigned __int128 a, long b)
{
	printf("rec f %ld\n", b);
	return (long)(a >> 64) + (long)a + b;
}

/* Three 16-byte parameters take the six argument registers: d and e come
   on the stack, where the entry's stack pointer finds them; at -O0 the
   probe moves past the prologue, which moves the stack pointer. */
__attribute__((noinline)) long h(unsigned __int128 a, unsigned __int128 b, unsigned __int128 c, long d, long e)
{
	printf("rec h %ld %ld\n", d, e);
	return (long)a + (long)b + (long)c + d + e;
}

/* Text: a char * whose bytes go on past its NUL, and a char[8] with none. */
__attribute__((noinline)) long str(const char *a, struct named *n)
{
	printf("rec str %s %.8s\n", a, n->name);
	return (long)strlen(a) + n->x;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	long s = 0;
	char buf[16] = "hello\0\1\2\3after";
	struct named nm;
	memcpy(nm.name, "abcdefgh", 8);
	nm.x = 0x41414141;
	for (int i = 0; i < n; i++) {
		s += neg(i * 37 - 400, (short)(i % 3 - 1));
		s += f(((unsigned __int128)(i + 1) << 64) | (unsigned)(i * 5 + 7), 1000 + i);
		s += h(i, i + 1, i + 2, 3000 + i, -4000 - i);
		buf[0] = 'h' + i % 2;
		s += str(buf, &nm);
	}
	return s == 42;
}
