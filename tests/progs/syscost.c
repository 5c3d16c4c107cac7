/* syscost: the cost of a syscall and of a page fault in this process, as
 * its own clocks see it, for tests/bench/bench_waits.sh (what the wait
 * evidence's tracepoints add to a traced thread). Makes one CUDA call
 * first (so that it is a feeding thread, as in a training loop), then
 *
 *   syscall  N getppid calls: ns per call (best of 5 rounds)
 *   fault    P fresh pages touched (mmap, touch, munmap): ns per fault
 *            (best of 5 rounds)
 *
 * and prints "syscall_ns X fault_ns Y". First, for WARM seconds, it makes
 * syscalls only (a tracer that hooks syscalls when a thread spends kernel
 * time in them has then done so). Usage: syscost [N [P [WARM]]]. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000, pages = argc > 2 ? atol(argv[2]) : 8192;
	double warm = argc > 3 ? atof(argv[3]) : 0;
	long pg = sysconf(_SC_PAGESIZE);
	double best_sys = 1e18, best_flt = 1e18;
	cudaDeviceSynchronize();
	for (uint64_t end = now_ns() + (uint64_t)(warm * 1e9); now_ns() < end;)
		for (int i = 0; i < 1000; i++)
			syscall(SYS_getppid);
	for (int r = 0; r < 5; r++) {
		uint64_t t0 = now_ns();
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
		double d = (double)(now_ns() - t0) / (double)n;
		if (d < best_sys)
			best_sys = d;
		char *m = mmap(NULL, (size_t)(pages * pg), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return 1;
		t0 = now_ns();
		for (long i = 0; i < pages; i++)
			m[i * pg] = 1;
		d = (double)(now_ns() - t0) / (double)pages;
		if (d < best_flt)
			best_flt = d;
		munmap(m, (size_t)(pages * pg));
	}
	printf("syscall_ns %.1f fault_ns %.1f\n", best_sys, best_flt);
	return 0;
}
