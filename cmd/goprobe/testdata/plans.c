// Build: gcc -O2 -g -o plans plans.c
// hit is inlined into twelve functions whose copies find its argument k in
// different places: the first register (reg_*), the second (second_*), a
// constant (const_*, a different one at each copy). goprobe builds a
// program per place but attaches the probe with one link. The program
// prints what it passed at each function: the truth for the events.
#include <stdio.h>
#include <unistd.h>

volatile long sink;

static inline __attribute__((always_inline)) void hit(long k) { sink += k * 3; }

#define REG(n) \
	__attribute__((noinline)) void reg_##n(long x) { hit(x); }
#define SECOND(n) \
	__attribute__((noinline)) void second_##n(long y, long x) { sink += y; hit(x); }
#define CONST(n) \
	__attribute__((noinline)) void const_##n(void) { hit(300 + n); }
REG(0) REG(1) REG(2) REG(3)
SECOND(0) SECOND(1) SECOND(2) SECOND(3)
CONST(0) CONST(1) CONST(2) CONST(3)

int main(void)
{
	void (*regs[])(long) = {reg_0, reg_1, reg_2, reg_3};
	void (*seconds[])(long, long) = {second_0, second_1, second_2, second_3};
	void (*consts[])(void) = {const_0, const_1, const_2, const_3};
	usleep(300000); // time for the test to count the probe's links
	for (int i = 0; i < 4; i++) {
		regs[i](100 + i);
		printf("reg_%d %d\n", i, 100 + i);
		seconds[i](1, 200 + i);
		printf("second_%d %d\n", i, 200 + i);
		consts[i]();
		printf("const_%d %d\n", i, 300 + i);
	}
	return 0;
}
