/* Passes structs with a char array (text, then other bytes after its NUL),
 * an int array, bitfields, a zero-length and a flexible array member to
 * handle() and prints, before each call, what they hold: "KEY=VALUE ..."
 * per call, the truth of goprobe trace 'handle f->tag f->v g->a[1] ...'.
 * build: gcc -g -O2 -o fields fields.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct rec {
	int id;
	char tag[12];
	int v[4];
	unsigned int flags:3, kind:5;
	int delta:6;
	long long wide:40;
};
struct zero { int n; int a[0]; };
struct flex { short n; long a[]; };
__attribute__((noinline)) void handle(struct rec *f, struct zero *g, struct flex *h) {
	__asm__ volatile("" :: "r"(f), "r"(g), "r"(h) : "memory");
}
int main(void) {
	static const char *tags[] = {"alpha", "be", "gamma-delta"};
	for (int k = 0; k < 3; k++) {
		struct rec r;
		memset(&r, 0x5a, sizeof r); /* bytes after each text's NUL are not NUL */
		r.id = 7 + k;
		strcpy(r.tag, tags[k]);
		for (int i = 0; i < 4; i++)
			r.v[i] = (k + 1) * 100 - 37 * i;
		r.flags = k + 5, r.kind = 30 - k, r.delta = -29 + 20 * k, r.wide = -1000000000000LL * (k + 1);
		struct zero *g = malloc(sizeof *g + 3 * sizeof(int));
		struct flex *h = malloc(sizeof *h + 3 * sizeof(long));
		g->n = h->n = 3;
		for (int i = 0; i < 3; i++)
			g->a[i] = 11 * (i + 1) + k, h->a[i] = -(1L << 40) * (i + 1) - k;
		printf("tag=%s v=%d,%d,%d,%d v[3]=%d flags=%u kind=%u delta=%d wide=%lld g.a[1]=%d h.a[2]=%ld\n",
		       r.tag, r.v[0], r.v[1], r.v[2], r.v[3], r.v[3], r.flags, r.kind, r.delta, (long long)r.wide, g->a[1], h->a[2]);
		handle(&r, g, h);
		free(g);
		free(h);
	}
	return 0;
}
