/* Writes three struct rec records to the file named by argv[1] as they are
 * in memory, and prints what each holds, one "INDEX PATH=VALUE" line per
 * member: the truth gopahole --prettify must print.
 * build: gcc -g -O0 -o rec rec.c */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum color { RED = 1, GREEN = 2, BLUE = 7 };
struct inner { short s; unsigned char u; };
union num { int i; float f; };
struct rec {
	int a;
	char name[12];
	void *p;
	enum color c;
	struct inner in;
	union num un;
	unsigned int bf1:3, bf2:5;
	int sbf:4;
	double d;
	long arr[3];
	bool ok;
	int64_t neg;
	uint64_t big;
	uint8_t bytes[4];
	long double ld;
	float fl;
	struct { int x, y; };
	struct inner ins[2];
};

int main(int argc, char **argv) {
	struct rec r[3];
	memset(r, 0, sizeof r);
	for (int k = 0; k < 3; k++) {
		struct rec *x = &r[k];
		x->a = 42 + k;
		strcpy(x->name, k == 0 ? "alice" : k == 1 ? "bob" : "eve \"q\"");
		x->p = (void *)(uintptr_t)(0x1234 * (k + 1));
		x->c = k == 0 ? GREEN : k == 1 ? BLUE : RED;
		x->in.s = -5 * k; x->in.u = 200 + k;
		x->un.f = 1.5f + k;
		x->bf1 = 5 - k; x->bf2 = 17 + k; x->sbf = -3 + k;
		x->d = 3.25 * (k + 1);
		x->arr[0] = 1; x->arr[1] = -2 - k; x->arr[2] = 3;
		x->ok = k != 1;
		x->neg = -7 - k;
		x->big = UINT64_MAX - k;
		x->bytes[0] = 1; x->bytes[3] = 255 - k;
		x->ld = 2.5L * (k + 1);
		x->fl = 0.1f * (k + 1);
		x->x = k; x->y = -k;
		x->ins[1].s = 9 + k; x->ins[0].u = k;
		printf("%d a=%d\n%d name=%s\n%d p=%p\n%d c=%s\n", k, x->a, k, x->name, k, x->p, k,
		       x->c == GREEN ? "GREEN" : x->c == BLUE ? "BLUE" : "RED");
		printf("%d in.s=%d\n%d in.u=%u\n%d un.i=%d\n%d un.f=%g\n", k, x->in.s, k, x->in.u, k, x->un.i, k, x->un.f);
		printf("%d bf1=%u\n%d bf2=%u\n%d sbf=%d\n%d d=%.17g\n", k, x->bf1, k, x->bf2, k, x->sbf, k, x->d);
		printf("%d arr.0=%ld\n%d arr.1=%ld\n%d arr.2=%ld\n%d ok=%s\n", k, x->arr[0], k, x->arr[1], k, x->arr[2], k, x->ok ? "true" : "false");
		printf("%d neg=%lld\n%d big=%llu\n%d bytes.0=%u\n%d bytes.3=%u\n", k, (long long)x->neg, k, (unsigned long long)x->big, k, x->bytes[0], k, x->bytes[3]);
		printf("%d ld=%.17Lg\n%d fl=%.9g\n%d x=%d\n%d y=%d\n", k, x->ld, k, (double)x->fl, k, x->x, k, x->y);
		printf("%d ins.0.u=%u\n%d ins.1.s=%d\n", k, x->ins[0].u, k, x->ins[1].s);
	}
	FILE *f = fopen(argv[1], "wb");
	if (!f || fwrite(r, sizeof r, 1, f) != 1)
		return 1;
	return fclose(f) != 0;
}
