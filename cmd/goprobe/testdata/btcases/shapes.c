// Build: gcc -O0 -g -o shapes shapes.c (the tests also build it stripped
// with a separate debug file, with split DWARF (.dwo, .dwp), and with
// symbols only).
// The shapes bpftrace's user-program runtime cases probe (pointers, char,
// structs holding char and int arrays, arrays of pointers, two-level
// arrays, flexible array members, bitfields, unions, nested structs,
// pointers to pointers, a negative return, globals, a call chain), in
// functions of our own. Run: ./shapes N [US]: N rounds (0: for ever), US
// microseconds apart; before each call the program prints its own record
// of what it passes, "rec FUNC EXPR=VALUE ...", EXPR spelled as a goprobe
// argument and VALUE as goprobe prints it, for the tests to compare with.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int g_alpha = 0x13572468;
long g_beta = -77;
char g_gamma = 9;

struct rec {
	int id;
	char tag[10];
	int vals[3];
};

struct shelf {
	int n;
	struct rec *recs[2];
	struct rec inner;
};

struct quad {
	int x[4];
};

struct grid {
	int y[2][2];
};

struct ptrs {
	int *z[4];
};

struct flex {
	int n;
	int y[];
};

struct zero {
	int n;
	int y[0];
};

struct bits {
	unsigned int a : 4, b : 8, c : 3, d : 1, e : 16;
};

struct sbits {
	short a : 4, b : 8, c : 3, d : 1;
	int e : 9, f : 15, g : 1, h : 2, i : 5;
};

struct pair {
	int m;
	int n;
};

struct nest {
	int m;
	struct {
		int x;
		int y;
	} sub;
	int n;
};

union num {
	int i;
	float f;
};

struct tagged {
	int m;
	union num v;
};

struct word {
	char s[5]; /* "hello", no NUL */
};

struct inner2 {
	unsigned int a;
	unsigned int b[2];
};

struct wrap {
	unsigned int a;
	struct inner2 t;
};

struct table {
	unsigned int a;
	void *p;
	struct wrap w[10];
};

struct link {
	struct link *next;
	int v;
};

__attribute__((noinline)) int uf_first(int *n, char c)
{
	asm volatile("" ::: "memory");
	return *n + c;
}

__attribute__((noinline)) struct rec *uf_second(struct rec *r1, struct rec *r2)
{
	asm volatile("" ::: "memory");
	return r1->id > r2->id ? r1 : r2;
}

__attribute__((noinline)) int on_shelf(struct shelf *s)
{
	asm volatile("" ::: "memory");
	return s->n;
}

__attribute__((noinline)) int branchy(int n)
{
	if (n == 1) {
		return 10;
	} else if (n == 2) {
		return 20;
	}
	return 30;
}

__attribute__((noinline)) int arrays(struct quad *q, struct grid *g)
{
	asm volatile("" ::: "memory");
	return q->x[0] + g->y[1][0];
}

__attribute__((noinline)) int elems(int *p)
{
	asm volatile("" ::: "memory");
	return p[0];
}

__attribute__((noinline)) int pointers(struct ptrs *p)
{
	asm volatile("" ::: "memory");
	return *p->z[1];
}

__attribute__((noinline)) int flexible(struct flex *f, struct zero *z)
{
	asm volatile("" ::: "memory");
	return f->y[0] + z->y[0];
}

__attribute__((noinline)) int bitfields(struct bits *b, struct sbits *s)
{
	asm volatile("" ::: "memory");
	return b->a + s->a;
}

__attribute__((noinline)) int structs(struct pair *p, struct nest *ns, struct tagged *t)
{
	asm volatile("" ::: "memory");
	return p->m + ns->sub.x + t->m;
}

__attribute__((noinline)) int deref2(struct rec **pp)
{
	asm volatile("" ::: "memory");
	return (*pp)->id;
}

__attribute__((noinline)) int words(struct word *w)
{
	asm volatile("" ::: "memory");
	return w->s[0];
}

__attribute__((noinline)) unsigned int tables(struct table *t)
{
	asm volatile("" ::: "memory");
	return t->w[0].a;
}

__attribute__((noinline)) int walk(struct link *l)
{
	int n = 0;
	for (; l; l = l->next)
		n += l->v;
	return n;
}

__attribute__((noinline)) int negret(int i)
{
	asm volatile("" ::: "memory");
	return -(i % 7) * 10;
}

__attribute__((noinline)) int faulty(struct pair *p)
{
	asm volatile("" ::: "memory");
	return p != 0;
}

__attribute__((noinline)) int fn$(void)
{
	asm volatile("" ::: "memory");
	return 0;
}

__attribute__((noinline)) int leaf(int i)
{
	asm volatile("" ::: "memory");
	return i + g_alpha;
}

__attribute__((noinline)) int mid(int i)
{
	return leaf(i + 1) + 1;
}

__attribute__((noinline)) int top(int i)
{
	return mid(i + 1) + 1;
}

static void round_of(int i)
{
	int n = 13 + i;
	char c = 'x' + (i % 3);
	printf("rec uf_first n=%p *n=%d c=%d\n", (void *)&n, n, c);
	uf_first(&n, c);

	struct rec r1 = {123 + i, "hello", {1, 2, 3 + i}}, r2 = {456, "world", {4, 5, 6}};
	printf("rec uf_second r1->id=%d r1->tag=\"%s\" r1->vals={%d, %d, %d} r2->tag=\"%s\"\n", r1.id, r1.tag,
	       r1.vals[0], r1.vals[1], r1.vals[2], r2.tag);
	uf_second(&r1, &r2);

	struct shelf s = {2 + i, {&r1, &r2}, {7, "in", {8, 9, 10}}};
	printf("rec on_shelf s->recs[0]->id=%d s->recs[1]->tag=\"%s\" s->inner.vals[2]=%d\n", r1.id, r2.tag,
	       s.inner.vals[2]);
	on_shelf(&s);

	printf("rec branchy n=%d\n", i % 3 + 1);
	branchy(i % 3 + 1);

	struct quad q = {{1 + i, 2, 3, 4}};
	struct grid g = {{{5, 6}, {7 + i, 8}}};
	printf("rec arrays q->x[0]=%d q->x={%d, %d, %d, %d} g->y[1][0]=%d g->y={{%d, %d}, {%d, %d}}\n", q.x[0],
	       q.x[0], q.x[1], q.x[2], q.x[3], g.y[1][0], g.y[0][0], g.y[0][1], g.y[1][0], g.y[1][1]);
	arrays(&q, &g);

	printf("rec elems p[0]=%d p[2]=%d\n", q.x[0], q.x[2]);
	elems(q.x);

	int z0 = 1, z1 = 2 + i, z2 = 3, z3 = 4;
	struct ptrs pz = {{&z0, &z1, &z2, &z3}};
	printf("rec pointers *p->z[1]=%d\n", z1);
	pointers(&pz);

	struct flex *f = malloc(sizeof(*f) + 3 * sizeof(int));
	struct zero *zz = malloc(sizeof(*zz) + 2 * sizeof(int));
	f->n = 3, f->y[0] = 1 + i, f->y[1] = 2, f->y[2] = 3;
	zz->n = 2, zz->y[0] = 40 + i, zz->y[1] = 41;
	printf("rec flexible f->y[0]=%d f->y[2]=%d z->y[0]=%d\n", f->y[0], f->y[2], zz->y[0]);
	flexible(f, zz);
	free(f);
	free(zz);

	struct bits b = {1, 2 + i % 100, 5, 0, 65535};
	struct sbits sb = {1, 217 - 256, 5, 1, 500, 31117 - 32768, 1, 2, 27};
	printf("rec bitfields b->a=%u b->b=%u b->c=%u b->d=%u b->e=%u s->a=%d s->b=%d s->c=%d s->d=%d s->e=%d "
	       "s->f=%d s->g=%d s->h=%d s->i=%d\n",
	       b.a, b.b, b.c, b.d, b.e, sb.a, sb.b, sb.c, sb.d, sb.e, sb.f, sb.g, sb.h, sb.i);
	bitfields(&b, &sb);

	struct pair p = {2 + i, 3};
	struct nest ns = {10, {20 + i, 30}, 40};
	struct tagged t = {2, {.i = 5 + i}};
	printf("rec structs *p={.m = %d, .n = %d} ns->sub.x=%d ns->sub={.x = %d, .y = %d} t->v.i=%d\n", p.m, p.n,
	       ns.sub.x, ns.sub.x, ns.sub.y, t.v.i);
	structs(&p, &ns, &t);

	struct rec *pr = &r2;
	printf("rec deref2 (*pp)->id=%d\n", r2.id);
	deref2(&pr);

	struct word w;
	memcpy(w.s, "hello", 5);
	printf("rec words w->s=\"hello\" w->s[0]=%d w->s[4]=%d\n", w.s[0], w.s[4]);
	words(&w);

	struct table tb = {0};
	for (int k = 0; k < 10; k++) {
		tb.w[k].a = 100 + 2 * k + i;
		tb.w[k].t.a = 1 + k;
		tb.w[k].t.b[1] = 100 - 2 * k;
	}
	printf("rec tables t->w[4].a=%u t->w[5].t.a=%u t->w[3].t.b[1]=%u\n", tb.w[4].a, tb.w[5].t.a,
	       tb.w[3].t.b[1]);
	tables(&tb);

	struct link l3 = {0, 300}, l2 = {&l3, 200 + i}, l1 = {&l2, 100};
	printf("rec walk l->next->v=%d l->next->next->v=%d\n", l2.v, l3.v);
	walk(&l1);

	printf("rec negret $retval=%d\n", -(i % 7) * 10);
	negret(i);
	printf("rec faulty p->m=?\n");
	faulty(0);
	printf("rec fn$\n");
	fn$();
	printf("rec leaf i=%d\n", i + 2);
	top(i);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	long us = argc > 2 ? atol(argv[2]) : 20000;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (long i = 0; n == 0 || i < n; i++) {
		round_of((int)i);
		usleep(us);
	}
	return 0;
}
