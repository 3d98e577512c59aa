// Build: gcc -O2 -g -o marks marks.c gate.c (sys/sdt.h, from systemtap-sdt-dev)
// USDT probes in the shapes bpftrace's runtime cases use, of our own:
// two providers with probes of the same name (tally:hit, tally:hit2,
// tally2:hit2) passing a time and a string; probes written at several
// places (tally:twice at 2, tally:thrice at 3); an is-enabled semaphore
// (tally:gated in gate.c, which records the semaphore's value when its
// branch runs); one probe in an always-inline function expanded
// twice (tally:inl, 999 then 100); a name written in quotes; the same
// 64-bit pattern at every size and signedness as a constant, a register
// and a memory operand (width:NAME_FORM); twelve arguments (wide:args).
// Run: ./marks N [US]: N rounds (0: for ever), US microseconds apart; the
// program prints its own record, "rec PROBE arg0=V ...", before each.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <unistd.h>

void gated(long i);

static volatile char msg1[] = "Hello One";
static volatile char msg2[] = "Hello Two";
static volatile char msg3[] = "Hello Three";

volatile int64_t m_s64 = (int64_t)0xE8E7E6E5E4E3E2E1ULL;
volatile uint64_t m_u64 = 0xE8E7E6E5E4E3E2E1ULL;
volatile uint32_t m_u32 = 0xE4E3E2E1U;
volatile int32_t m_s32 = (int32_t)0xE4E3E2E1U;
volatile uint16_t m_u16 = 0xE2E1;
volatile int16_t m_s16 = (int16_t)0xE2E1;
volatile uint8_t m_u8 = 0xE1;
volatile int8_t m_s8 = (int8_t)0xE1;

__attribute__((noinline)) static void pair(long t)
{
	printf("rec tally:hit arg0=%ld arg1=\"%s\"\n", t, (char *)msg1);
	STAP_PROBE2(tally, hit, t, msg1);
	printf("rec tally:hit2 arg0=%ld arg1=\"%s\"\n", t, (char *)msg2);
	STAP_PROBE2(tally, hit2, t, msg2);
	printf("rec tally2:hit2 arg0=%ld arg1=\"%s\"\n", t, (char *)msg3);
	STAP_PROBE2(tally2, hit2, t, msg3);
}

__attribute__((noinline)) static void places(long t)
{
	printf("rec tally:twice arg0=%ld\n", t);
	STAP_PROBE1(tally, twice, t);
	printf("rec tally:twice arg0=%ld\n", t + 1);
	STAP_PROBE1(tally, twice, t + 1);
	for (int k = 0; k < 3; k++) {
		printf("rec tally:thrice arg0=%ld\n", t + 10 * k);
		if (k == 0)
			STAP_PROBE1(tally, thrice, t);
		else if (k == 1)
			STAP_PROBE1(tally, thrice, t + 10);
		else
			STAP_PROBE1(tally, thrice, t + 20);
	}
}

__attribute__((always_inline)) static inline void inl(int v)
{
	volatile int on_stack = v;
	STAP_PROBE1(tally, inl, on_stack);
}

__attribute__((noinline)) static void inl_twice(void)
{
	printf("rec tally:inl arg0=999\n");
	inl(999);
	printf("rec tally:inl arg0=100\n");
	inl(100);
}

#define SIZES(FORM, s64, u64, u32, s32, u16, s16, u8, s8)                                                       \
	do {                                                                                                    \
		STAP_PROBE1(width, s64_##FORM, s64);                                                            \
		STAP_PROBE1(width, u64_##FORM, u64);                                                            \
		STAP_PROBE1(width, u32_##FORM, u32);                                                            \
		STAP_PROBE1(width, s32_##FORM, s32);                                                            \
		STAP_PROBE1(width, u16_##FORM, u16);                                                            \
		STAP_PROBE1(width, s16_##FORM, s16);                                                            \
		STAP_PROBE1(width, u8_##FORM, u8);                                                              \
		STAP_PROBE1(width, s8_##FORM, s8);                                                              \
	} while (0)

__attribute__((noinline)) static void widths(void)
{
	static const char *forms[] = {"const", "reg", "addr"};
	for (int f = 0; f < 3; f++)
		printf("rec width:s64_%s arg0=%lld\nrec width:u64_%s arg0=%llu\n"
		       "rec width:u32_%s arg0=%u\nrec width:s32_%s arg0=%d\n"
		       "rec width:u16_%s arg0=%u\nrec width:s16_%s arg0=%d\n"
		       "rec width:u8_%s arg0=%u\nrec width:s8_%s arg0=%d\n",
		       forms[f], (long long)m_s64, forms[f], (unsigned long long)m_u64, forms[f], m_u32, forms[f], m_s32,
		       forms[f], m_u16, forms[f], m_s16, forms[f], m_u8, forms[f], m_s8);
	SIZES(const, (int64_t)0xE8E7E6E5E4E3E2E1ULL, (uint64_t)0xE8E7E6E5E4E3E2E1ULL, (uint32_t)0xE4E3E2E1U,
	      (int32_t)0xE4E3E2E1U, (uint16_t)0xE2E1, (int16_t)0xE2E1, (uint8_t)0xE1, (int8_t)0xE1);
	int64_t r_s64 = m_s64;
	uint64_t r_u64 = m_u64;
	uint32_t r_u32 = m_u32;
	int32_t r_s32 = m_s32;
	uint16_t r_u16 = m_u16;
	int16_t r_s16 = m_s16;
	uint8_t r_u8 = m_u8;
	int8_t r_s8 = m_s8;
	SIZES(reg, r_s64, r_u64, r_u32, r_s32, r_u16, r_s16, r_u8, r_s8);
	SIZES(addr, m_s64, m_u64, m_u32, m_s32, m_u16, m_s16, m_u8, m_s8);
}

__attribute__((noinline)) static void wide(void)
{
	uint64_t a[12] = {0xdeadbeef, 1, ~0ULL, 0xcafebabe, 0x8badf00d, 0xfeedface, 0x123456789abcdefULL, 0,
			  0x7fffffffffffffffULL, 0x5555555555555555ULL, 42, 0xaaaaaaaaaaaaaaaaULL};
	printf("rec wide:args");
	for (int k = 0; k < 12; k++)
		printf(" arg%d=%llu", k, (unsigned long long)a[k]);
	printf("\n");
	STAP_PROBE12(wide, args, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	long us = argc > 2 ? atol(argv[2]) : 20000;
	int q = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (long i = 0; n == 0 || i < n; i++) {
		pair(1000 + i);
		places(2000 + i);
		inl_twice();
		gated(i);
		widths();
		wide();
		printf("rec quote:\"probe1\" arg0=%d\n", q);
		STAP_PROBE1(quote, "probe1", q);
		usleep(us);
	}
	return 0;
}
