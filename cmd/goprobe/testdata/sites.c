// Build: gcc -O2 -g -o sites sites.c
// hit is inlined into eight functions, its argument k in the same register
// (the functions' first) at every copy, so that goprobe's programs for the
// eight sites are the same and share one uprobe_multi link. The program
// prints what it passed to each function: the truth for which site an
// event came from.
#include <stdio.h>

volatile long sink;

static inline __attribute__((always_inline)) void hit(long k) { sink += k * 3; }

#define SITE(n) \
	__attribute__((noinline)) void site_##n(long x) { hit(x); }
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)

int main(void)
{
	void (*sites[])(long) = {site_0, site_1, site_2, site_3, site_4, site_5, site_6, site_7};
	for (int i = 0; i < 8; i++) {
		sites[i](100 + 7 * i);
		printf("site_%d %d\n", i, 100 + 7 * i);
	}
	return 0;
}
