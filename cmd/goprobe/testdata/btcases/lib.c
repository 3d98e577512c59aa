// Build: gcc -O2 -g -shared -fPIC -o libtally.so lib.c, and uselib.c
// against it. A library's own function (lib_fun) and USDT probe
// (tallylib:lib_probe), for the cases that probe a library by path, by
// name and through a process's mappings; it records each call as
// "rec lib_fun v=V" and "rec tallylib:lib_probe arg0=V".
#include <stdio.h>
#include <sys/sdt.h>

__attribute__((noinline)) int lib_fun(int v)
{
	printf("rec tallylib:lib_probe arg0=%d\n", v);
	STAP_PROBE1(tallylib, lib_probe, v);
	return v + 1;
}
