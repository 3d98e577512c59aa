// Build: g++ -O2 -g -o tmpl tmpl.cc
// The oracle of wildcard probes: calls get of four instances of the class
// template ns::Tmpl (argv[1] = N: N, 2N, 3N and 4N calls), set of one
// instance, get of another template (ns::Other), and two allocators
// (pool_alloc N times, slab_alloc 2N times), then prints its own count of
// each, one "count LABEL CALLS" line per function.
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ns {
template <class T> struct Tmpl {
	static long calls, sets;
	T v;
	__attribute__((noinline)) T get(long x)
	{
		++calls;
		asm volatile("" ::: "memory");
		return v + (T)x;
	}
	__attribute__((noinline)) void set(T x)
	{
		++sets;
		asm volatile("" ::: "memory");
		v = x;
	}
};
template <class T> long Tmpl<T>::calls;
template <class T> long Tmpl<T>::sets;

template <class T> struct Other {
	static long calls;
	__attribute__((noinline)) T get(long x)
	{
		++calls;
		asm volatile("" ::: "memory");
		return (T)x;
	}
};
template <class T> long Other<T>::calls;
} // namespace ns

static long pools, slabs;

extern "C" __attribute__((noinline)) void *pool_alloc(long n)
{
	++pools;
	asm volatile("" ::: "memory");
	return n ? &pools : nullptr;
}

extern "C" __attribute__((noinline)) void *slab_alloc(long n)
{
	++slabs;
	asm volatile("" ::: "memory");
	return n ? &slabs : nullptr;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	ns::Tmpl<int> a{1};
	ns::Tmpl<long> b{2};
	ns::Tmpl<double> c{3};
	ns::Tmpl<unsigned char> d{4};
	ns::Other<int> o;
	double sum = 0;
	for (long i = 0; i < n; i++) {
		sum += a.get(i);
		for (int k = 0; k < 2; k++)
			sum += b.get(i);
		for (int k = 0; k < 3; k++)
			sum += c.get(i);
		for (int k = 0; k < 4; k++)
			sum += d.get(i);
		a.set((int)i);
		sum += o.get(i);
		pool_alloc(i);
		slab_alloc(i);
		slab_alloc(i + 1);
	}
	printf("sum %g\n", sum);
	printf("count int %ld\n", ns::Tmpl<int>::calls);
	printf("count long %ld\n", ns::Tmpl<long>::calls);
	printf("count double %ld\n", ns::Tmpl<double>::calls);
	printf("count uchar %ld\n", ns::Tmpl<unsigned char>::calls);
	printf("count set %ld\n", ns::Tmpl<int>::sets);
	printf("count other %ld\n", ns::Other<int>::calls);
	printf("count pool_alloc %ld\n", pools);
	printf("count slab_alloc %ld\n", slabs);
	return 0;
}
