// Build: g++ -O2 -g -o thrower thrower.cc
// Throws N exceptions (argv[1], US microseconds apart: argv[2]) of three types through two frames, catches
// each, rethrows every third from its handler and catches that too, and
// prints its own count of what it threw, rethrew and caught: the oracle
// for libstdc++'s USDT probes libstdcxx:throw, rethrow and catch.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <unistd.h>

static long thrown, rethrown, caught;

__attribute__((noinline)) static void deep(long i)
{
	++thrown;
	switch (i % 3) {
	case 0:
		throw std::runtime_error("r" + std::to_string(i));
	case 1:
		throw i;
	default:
		throw std::string("s");
	}
}

__attribute__((noinline)) static void middle(long i)
{
	try {
		deep(i);
	} catch (...) {
		++caught;
		if (i % 3 == 0) {
			++rethrown;
			throw;
		}
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	long us = argc > 2 ? atol(argv[2]) : 0;
	printf("thrower started\n");
	fflush(stdout);
	for (long i = 0; i < n; i++) {
		if (us > 0)
			usleep(us);
		try {
			middle(i);
		} catch (const std::exception &) {
			++caught;
		}
	}
	printf("thrown %ld rethrown %ld caught %ld\n", thrown, rethrown, caught);
	return 0;
}
