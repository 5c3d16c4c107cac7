// A C++ program calling the shim runtime from a method and a function
// template inside a namespace, so that the stack tests see mangled symbols
// that must come out demangled: ig_test::Trainer::step(int),
// int ig_test::launch<ig_test::Batch>(ig_test::Batch const&).
//
//   cppchain [STEPS] [SLEEP_MS_AFTER]
#include "shim.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace ig_test {

struct Batch {
	size_t bytes;
};

template <typename T> __attribute__((noinline)) int launch(const T &b)
{
	void *p = nullptr;
	int r = cudaMalloc(&p, b.bytes);
	r |= cudaFree(p);
	asm volatile("" ::: "memory");
	return r;
}

class Trainer {
      public:
	__attribute__((noinline)) int step(int i)
	{
		Batch b{ 512 * static_cast<size_t>(i % 3 + 1) };
		int r = launch(b);
		asm volatile("" ::: "memory");
		return r + 0;
	}
};

} // namespace ig_test

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 10, r = 0;
	int sleep_ms = argc > 2 ? std::atoi(argv[2]) : 0;
	ig_test::Trainer t;
	for (int i = 0; i < n; i++)
		r |= t.step(i);
	if (sleep_ms)
		usleep(static_cast<useconds_t>(sleep_ms) * 1000);
	std::printf("cppchain: %d steps, status %d\n", n, r);
	return r != 0;
}
