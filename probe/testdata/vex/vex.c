// Build: gcc -O2 -mavx2 -g -o vex vex.c
// AVX code before a call: the compiler puts vzeroupper (VEX.0F 77, no
// ModRM byte) before each call, as Zig's ReleaseFast code does.
#include <immintrin.h>
#include <stdio.h>

__attribute__((noinline)) void report(float x) { printf("%g\n", x); }

__attribute__((noinline)) void scale(float *a, int n, float k)
{
	__m256 kk = _mm256_set1_ps(k);
	for (int i = 0; i + 8 <= n; i += 8) {
		__m256 x = _mm256_loadu_ps(a + i);
		_mm256_storeu_ps(a + i, _mm256_mul_ps(x, kk));
		report(a[i]);
	}
}

int main(void)
{
	float a[16];
	for (int i = 0; i < 16; i++)
		a[i] = (float)i;
	scale(a, 16, 2.0f);
	return 0;
}
