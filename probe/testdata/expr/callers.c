// Arguments only the callers know (TestCallerValues in expr_test.go). Build: gcc -O2 -g -o
// callers callers.c; run: ./callers RECORD.
//
// work's parameter unused is never used: GCC removes it from the clone it
// makes (work.isra.0 or work.constprop.0) and describes it with
// DW_OP_GNU_parameter_ref, the value each call site's
// DW_AT_call_value gives. Each caller writes to RECORD, before the call,
// the values it passes, as "work n=N unused=U". A tail call (a jmp) would
// leave the return address of first's caller: that value is ?.
#include <stdio.h>

static FILE *rec;
static volatile long sink;

__attribute__((noinline)) static long work(long n, long unused)
{
	sink = n;
	return n * 2;
}

__attribute__((noinline)) long first(long a)
{
	fprintf(rec, "work n=%ld unused=%ld\n", a + 1, a * 3 + 1);
	return work(a + 1, a * 3 + 1) - 1; /* no tail call: the return address names the caller */
}

__attribute__((noinline)) long second(long b)
{
	fprintf(rec, "work n=%ld unused=%ld\n", b ^ 5, b << 2);
	return work(b ^ 5, b << 2) + 1;
}

int main(int argc, char **argv)
{
	rec = fopen(argc > 1 ? argv[1] : "/dev/null", "w");
	if (!rec)
		return 2;
	long r = 0;
	for (long i = 0; i < 5; i++) {
		r += first(i * 7 - 3);
		fflush(rec);
		r += second(i + 100);
		fflush(rec);
	}
	fclose(rec);
	return (int)(r & 1);
}
