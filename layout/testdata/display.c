// Types whose display pahole's own regression tests describe: pointers to
// anonymous types (their members' offsets start at 0), typedef chains,
// bitfields of typedefs, packed and aligned types,
// flexible arrays, multi-dimensional arrays and cacheline-crossing types.
// Built by the tests: gcc -g -O0 -o display display.c
#include <stddef.h>

struct parsed {
	char name[40];
	struct {
		long from;
		long size;
		int flags;
	} *parts;
};

struct pointers_deep {
	long pad[3];
	struct {
		int a;
		struct {
			short x;
			long y;
		} *inner;
		int b;
	} nested;
	struct {
		char c;
		double d;
	} *many[2];
	union {
		int i;
		struct {
			char lo;
			long hi;
		} *p;
	} u;
};

typedef int base_int;
typedef base_int middle_int;
typedef middle_int top_int;
typedef void (*callback_t)(int);
typedef callback_t handler_t;

struct chain_user {
	top_int value;
	handler_t on_event;
	base_int simple;
};

typedef unsigned int uint_t;
typedef uint_t custom_t;

struct bf_typedef {
	uint_t flags:4;
	uint_t mode:3;
	uint_t valid:1;
	custom_t a:5;
	custom_t b:3;
};

struct __attribute__((packed)) packed_s {
	int x;
	char y;
	int z;
};

struct aligned_member {
	int x __attribute__((aligned(16)));
	int y;
};

struct flex {
	int count;
	char data[];
};

struct with_array {
	int matrix[3][4];
	char name[16];
};

struct big_struct {
	int id;
	long counter;
	char name[48];
	double values[8];
	int flags;
	char padding[60];
};

struct leaf {
	int value;
	char tag;
};

struct middle {
	struct leaf *leaf;
	int count;
};

struct top {
	struct middle *mid;
	int flags;
};

struct self_ref {
	struct self_ref *next;
	int data;
};

int main(void)
{
	struct parsed p = {0};
	struct pointers_deep pd = {0};
	struct chain_user cu = {0};
	struct bf_typedef bt = {0};
	struct packed_s ps = {0};
	struct aligned_member am = {0};
	struct flex fl = {0};
	struct with_array wa = {0};
	struct big_struct bs = {0};
	struct top tp = {0};
	struct self_ref sr = {0};
	return (int)(sizeof p + sizeof pd + sizeof cu + sizeof bt + sizeof ps + sizeof am +
		     sizeof fl + sizeof wa + sizeof bs + sizeof tp + sizeof sr + offsetof(struct parsed, parts));
}
