/* Writes a file as perf.data is laid out: a header whose data section
 * (offset, size) spans variable-sized records, each starting with a
 * struct ev_header whose type (enum ev_type) says which struct it is and
 * whose size is the record's length. Prints "INDEX PATH=VALUE" for each
 * EV_BAR record: the truth of gopahole --header file_header --range data
 * -C 'ev_header(sizeof,type,type_enum=ev_type,filter=type==EV_BAR)'.
 * build: gcc -g -O0 -o events events.c */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum ev_type { EV_FOO = 1, EV_BAR = 2 };
struct section { uint64_t offset, size; };
struct file_header { uint64_t magic; struct section data; uint64_t pad[3]; };
struct ev_header { uint32_t type; uint16_t misc; uint16_t size; };
struct ev_foo { struct ev_header header; int32_t x; };
struct ev_bar { struct ev_header header; char name[8]; int64_t y; };

int main(int argc, char **argv) {
	static unsigned char buf[4096];
	struct file_header h = { .magic = 0x4556454e54530a00 };
	size_t off = sizeof h + 16; /* a gap the range skips */
	h.data.offset = off;
	int bars = 0;
	for (int k = 0; k < 9; k++) {
		if (k % 3 == 1) {
			struct ev_bar b = { { EV_BAR, (uint16_t)k, sizeof b }, "", -1000 * k };
			snprintf(b.name, sizeof b.name, "bar%d", k);
			memcpy(buf + off, &b, sizeof b);
			off += sizeof b;
			printf("%d header.type=EV_BAR\n%d header.misc=%d\n%d header.size=%zu\n%d name=%s\n%d y=%lld\n",
			       bars, bars, k, bars, sizeof b, bars, b.name, bars, (long long)b.y);
			bars++;
		} else {
			struct ev_foo f = { { EV_FOO, (uint16_t)k, sizeof f }, k * 11 };
			memcpy(buf + off, &f, sizeof f);
			off += sizeof f;
		}
	}
	h.data.size = off - h.data.offset;
	memset(buf + off, 0xff, 64); /* bytes past the range */
	memcpy(buf, &h, sizeof h);
	FILE *fp = fopen(argv[1], "wb");
	if (!fp || fwrite(buf, off + 64, 1, fp) != 1)
		return 1;
	return fclose(fp) != 0;
}
