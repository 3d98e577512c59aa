// Build: gcc -O2 -g -shared -fPIC -o libctor.so lib.c
// A library whose constructor allocates 777 bytes, before the program's
// entry point.
#include <stdlib.h>

void *kept;

__attribute__((constructor)) static void init(void)
{
	kept = malloc(777);
}

int ctor_ran(void)
{
	return kept != 0;
}
