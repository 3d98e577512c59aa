/* Passes three struct items (a union, bitfields, a string pointer, a char
 * array, a nested struct) to handle() and prints, before each call, what
 * the item holds: "KEY=VALUE ..." per call, the truth of goprobe trace
 * 'handle *it'.
 * build: gcc -g -O2 -o item item.c */
#include <stdio.h>
#include <string.h>
union num { int i; float f; };
struct item {
	int id;
	const char *name;
	union num val;
	unsigned int flags:3, kind:5;
	int delta:6;
	double weight;
	char tag[8];
	struct { short x, y; } pos;
};
__attribute__((noinline)) void handle(struct item *it) { __asm__ volatile("" :: "r"(it) : "memory"); }
int main(void) {
	static const char *names[] = {"alpha", "beta", "gamma"};
	for (int k = 0; k < 3; k++) {
		struct item it = { .id = 100 + k, .name = names[k], .flags = k + 1, .kind = 17 - k, .delta = -5 + 4 * k, .weight = 0.5 * k };
		it.val.f = 1.25f * k;
		snprintf(it.tag, sizeof it.tag, "t%d", k);
		it.pos.x = -k; it.pos.y = k * 10;
		printf("id=%d name=%s val.f=%g flags=%u kind=%u delta=%d weight=%g tag=%s pos.x=%d pos.y=%d\n", it.id, it.name, it.val.f, it.flags, it.kind, it.delta, it.weight, it.tag, it.pos.x, it.pos.y);
		handle(&it);
	}
	return 0;
}
