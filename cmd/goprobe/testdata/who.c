// Build: gcc -O2 -g -pthread -o who who.c
// The oracle of builtins and filters: the main thread and two threads it
// names with prctl (who-a, who-b) each call hit(x, y, u, tag, it) N times
// (argv[1]), with signed, unsigned, text and struct arguments that vary
// by call, and print their own record: "thread NAME pid P tid T" (getpid,
// gettid), then "call TID X Y U TAG ID LEVEL NAME" before each call.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct item {
	int id;
	unsigned char level;
	char name[8];
};

static long n = 20;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *tags[] = {"red", "blue", "green"};

__attribute__((noinline)) long hit(long x, int y, unsigned u, const char *tag, struct item *it)
{
	asm volatile("" ::: "memory");
	return x * 2 + y + (long)u + tag[0] + it->id;
}

static void *run(void *arg)
{
	const char *name = arg;
	if (name)
		prctl(PR_SET_NAME, name);
	char self[16] = {0};
	prctl(PR_GET_NAME, self);
	int tid = (int)syscall(SYS_gettid);
	long sum = 0;
	pthread_mutex_lock(&mu);
	printf("thread %s pid %d tid %d\n", self, getpid(), tid);
	pthread_mutex_unlock(&mu);
	for (long i = 0; i < n; i++) {
		long x = (i * 7 + tid) % 23 - 8;
		int y = (int)(i % 5) - 2;
		unsigned u = (i & 1) ? 0xfffffff0u + (unsigned)i : (unsigned)i * 3;
		struct item it = {.id = (int)(i * 13 % 10), .level = (unsigned char)(i * 37), .name = ""};
		snprintf(it.name, sizeof it.name, "n%ld", i % 4);
		const char *tag = tags[(i + tid) % 3];
		pthread_mutex_lock(&mu);
		printf("call %d %ld %d %u %s %d %u %s\n", tid, x, y, u, tag, it.id, it.level, it.name);
		fflush(stdout);
		pthread_mutex_unlock(&mu);
		sum += hit(x, y, u, tag, &it);
	}
	return (void *)sum;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		n = atol(argv[1]);
	pthread_t a, b;
	pthread_create(&a, NULL, run, "who-a");
	pthread_create(&b, NULL, run, "who-b");
	run(NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
