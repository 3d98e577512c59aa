// Build: gcc -O2 -g -fcf-protection=full -o cet cet.c
// Functions start with endbr64, which goprobe steps over to the push.
#include <stdio.h>
__attribute__((noinline)) long f(long a, long b) { if (a > 100) puts("big"); return a * b + 1; }
int main(int c, char **v) { long s = 0; for (int i = 0; i < 5; i++) s += f(i, c); printf("%ld\n", s); return 0; }
