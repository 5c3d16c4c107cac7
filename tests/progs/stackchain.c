/* Calls the shim runtime through a known chain of functions, for the stack
 * tests: main -> chain_outer -> chain_middle -> chain_inner -> cudaMalloc
 * and cudaFree, and main -> side_path -> cudaMalloc from another call site.
 * Built with frame pointers (CFLAGS). Each function uses the result of its
 * callee, so no call is a tail call that would drop a frame.
 *
 *   stackchain [ITERATIONS] [SLEEP_MS_AFTER] */
#include "shim.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) int chain_inner(size_t bytes)
{
	void *p = NULL;
	int r = cudaMalloc(&p, bytes);
	r |= cudaFree(p);
	asm volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) int chain_middle(size_t bytes)
{
	int r = chain_inner(bytes * 2);
	asm volatile("" ::: "memory");
	return r + 0;
}

__attribute__((noinline)) int chain_outer(size_t bytes)
{
	int r = chain_middle(bytes + 64);
	asm volatile("" ::: "memory");
	return r + 0;
}

__attribute__((noinline)) int side_path(void)
{
	void *p = NULL;
	int r = cudaMalloc(&p, 4096);
	asm volatile("" ::: "memory");
	return r | cudaFree(p);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20, r = 0;
	int sleep_ms = argc > 2 ? atoi(argv[2]) : 0;

	for (int i = 0; i < n; i++)
		r |= chain_outer(1024 * (size_t)(i % 4 + 1));
	r |= side_path();
	if (sleep_ms)
		usleep((useconds_t)sleep_ms * 1000);
	printf("stackchain: %d chains, 1 side path, status %d\n", n, r);
	return r != 0;
}
