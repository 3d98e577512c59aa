// Build: gcc -O0 -g -o o0 o0.c
// Unoptimised code: the prologue stores each register argument into a
// frame slot, which DWARF names as the parameter's location.
struct pt { int x, y; };
long f(int a, long b, struct pt *p, char c) { return a + b + p->x + c; }
int main(int argc, char **argv) { struct pt q = {argc, 2}; return (int)f(argc, 2, &q, 'c'); }
