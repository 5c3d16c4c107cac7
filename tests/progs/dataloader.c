/* A PyTorch-DataLoader-like job for the dataloader demo scenario (src/demo.c,
 * docs/scenarios.md). The main process ("dataloader") forks --workers worker
 * processes ("dl-worker-N") after the start signal. Each worker collates
 * batches: CPU work (--collate-ms of CPU time) on freshly allocated and touched memory
 * (--batch-bytes), then sends a small batch record through its pipe. The main
 * thread takes batches in order, worker 0, 1, 2, 0, ... (as the DataLoader
 * does), each with at most --prefetch batches queued per worker, and runs a
 * training step on each through the shim CUDA stack: H2D copy, kernels,
 * stream sync. With more workers than the cores they get, the main thread
 * waits on the pipes most of the time and the GPU sits idle. */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

#define DL_MAX_WORKERS 16

static struct {
	int workers;
	double collate_ms;
	size_t batch_bytes;
	int prefetch;
	double seconds;
	long kernels;
	double kernel_us;
	size_t h2d;
	int cpu, worker_cpu;
	int wait_signal;
} opt = {
	.workers = 3,
	.collate_ms = 30,
	.batch_bytes = 8 << 20,
	.prefetch = 2,
	.seconds = 10,
	.kernels = 4,
	.kernel_us = 1000,
	.h2d = 1 << 20,
	.cpu = -1,
	.worker_cpu = -1,
};

struct batch {
	long seq;
	int worker;
	uint32_t checksum;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of the calling thread: a batch costs CPU work, not wall time, so
 * workers that share a core take longer per batch. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int cpu, const char *who)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "dataloader: cannot pin %s to CPU %d: %s\n", who, cpu,
			strerror(errno));
		exit(2);
	}
}

static int read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
	size_t put = 0;

	while (put < n) {
		ssize_t r = write(fd, (const char *)buf + put, n - put);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		put += (size_t)r;
	}
	return 0;
}

/* One batch: decode/augment/collate is CPU work over fresh memory. The
 * buffer is mmap'ed and unmapped per batch, as large tensors are, so every
 * batch faults its pages in again. */
static uint32_t collate(long seq)
{
	size_t n = opt.batch_bytes;
	uint32_t *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t h = (uint32_t)seq * 2654435761u;
	double end = cpu_s() + opt.collate_ms / 1e3;
	size_t words = n / sizeof(*p), i = 0;

	if (p == MAP_FAILED) {
		fprintf(stderr, "dataloader: worker out of memory\n");
		exit(1);
	}
	/* touch every page first, then mix until the collate time is spent */
	for (size_t k = 0; k < words; k += 1024)
		p[k] = h + (uint32_t)k;
	while (cpu_s() < end)
		for (int k = 0; k < 4096; k++, i = (i + 4099) % words) {
			h = (h ^ p[i]) * 16777619u;
			p[i] = h;
		}
	munmap(p, n);
	return h;
}

static void worker(int idx, int out_fd, int credit_fd)
{
	char name[16];
	struct batch b = { .worker = idx };
	char c;

	snprintf(name, sizeof(name), "dl-worker-%d", idx);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	pin(opt.worker_cpu, name);
	/* batch seq of this worker: idx, idx + W, idx + 2W, ... */
	for (long seq = idx;; seq += opt.workers) {
		if (read_full(credit_fd, &c, 1)) /* main is done */
			_exit(0);
		b.seq = seq;
		b.checksum = collate(seq);
		if (write_full(out_fd, &b, sizeof(b)))
			_exit(0);
	}
}

static void check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "dataloader: %s failed: %s\n", what, cudaGetErrorString(e));
		exit(1);
	}
}

static void kernel(void)
{
}

static void usage(FILE *f)
{
	fprintf(f, "usage: dataloader [--workers N] [--collate-ms MS] [--batch-bytes B]\n"
		   "                  [--prefetch N] [--seconds S] [--kernels K] [--kernel-us U]\n"
		   "                  [--h2d B] [--cpu N] [--worker-cpu N] [--wait-signal]\n");
}

static int parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "workers", required_argument, NULL, 'W' },
		{ "collate-ms", required_argument, NULL, 'm' },
		{ "batch-bytes", required_argument, NULL, 'b' },
		{ "prefetch", required_argument, NULL, 'p' },
		{ "seconds", required_argument, NULL, 's' },
		{ "kernels", required_argument, NULL, 'k' },
		{ "kernel-us", required_argument, NULL, 'u' },
		{ "h2d", required_argument, NULL, 'H' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "worker-cpu", required_argument, NULL, 'c' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'W': opt.workers = atoi(optarg); break;
		case 'm': opt.collate_ms = atof(optarg); break;
		case 'b': opt.batch_bytes = (size_t)atoll(optarg); break;
		case 'p': opt.prefetch = atoi(optarg); break;
		case 's': opt.seconds = atof(optarg); break;
		case 'k': opt.kernels = atol(optarg); break;
		case 'u': opt.kernel_us = atof(optarg); break;
		case 'H': opt.h2d = (size_t)atoll(optarg); break;
		case 'C': opt.cpu = atoi(optarg); break;
		case 'c': opt.worker_cpu = atoi(optarg); break;
		case 'w': opt.wait_signal = 1; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc || opt.workers < 1 || opt.workers > DL_MAX_WORKERS ||
	    opt.prefetch < 1 || opt.seconds <= 0 || opt.batch_bytes < 4096) {
		usage(stderr);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int data[DL_MAX_WORKERS], credit[DL_MAX_WORKERS];
	pid_t pids[DL_MAX_WORKERS];
	dim3 grid = { 64, 1, 1 }, block = { 256, 1, 1 };
	cudaStream_t stream;
	void *dbuf, *args[1];
	char *hbuf;
	long steps = 0;

	if (parse(argc, argv))
		return 2;
	prctl(PR_SET_NAME, "dataloader", 0, 0, 0);
	pin(opt.cpu, "the main process");
	if (opt.wait_signal) { /* the demo's protocol: say ready, wait for SIGUSR1 */
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (sigwait(&set, &sig))
			;
	}
	signal(SIGPIPE, SIG_IGN);
	/* the iterator starts its workers, as iter(DataLoader(...)) does */
	for (int i = 0; i < opt.workers; i++) {
		int d[2], c[2];

		if (pipe(d) || pipe(c)) {
			fprintf(stderr, "dataloader: pipe: %s\n", strerror(errno));
			return 1;
		}
		fflush(NULL);
		pids[i] = fork();
		if (pids[i] < 0) {
			fprintf(stderr, "dataloader: fork: %s\n", strerror(errno));
			return 1;
		}
		if (!pids[i]) {
			for (int k = 0; k < i; k++) {
				close(data[k]);
				close(credit[k]);
			}
			close(d[0]);
			close(c[1]);
			worker(i, d[1], c[0]);
		}
		close(d[1]);
		close(c[0]);
		data[i] = d[0];
		credit[i] = c[1];
		for (int k = 0; k < opt.prefetch; k++)
			if (write_full(credit[i], "c", 1))
				return 1;
	}

	hbuf = calloc(1, opt.h2d ? opt.h2d : 1);
	if (!hbuf)
		return 1;
	check(cudaStreamCreate(&stream), "cudaStreamCreate");
	check(cudaMalloc(&dbuf, opt.h2d ? opt.h2d : 1), "cudaMalloc");
	args[0] = &dbuf;
	shimSetKernelTime((unsigned long long)(opt.kernel_us * 1000.0));

	double t0 = now_s(), end = t0 + opt.seconds, wait_s = 0;
	while (now_s() < end) {
		int w = (int)(steps % opt.workers);
		struct batch b;
		double a = now_s();

		if (read_full(data[w], &b, sizeof(b))) {
			fprintf(stderr, "dataloader: worker %d died\n", w);
			return 1;
		}
		wait_s += now_s() - a;
		if (b.seq != steps) {
			fprintf(stderr, "dataloader: batch %ld out of order (want %ld)\n", b.seq,
				steps);
			return 1;
		}
		write_full(credit[w], "c", 1);
		memcpy(hbuf, &b, sizeof(b));
		if (opt.h2d)
			check(cudaMemcpy(dbuf, hbuf, opt.h2d, cudaMemcpyHostToDevice),
			      "cudaMemcpy H2D");
		for (long k = 0; k < opt.kernels; k++)
			check(cudaLaunchKernel((const void *)(uintptr_t)kernel, grid, block, args, 0,
					       stream),
			      "cudaLaunchKernel");
		check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
		steps++;
	}
	double wall = now_s() - t0;

	for (int i = 0; i < opt.workers; i++) {
		close(credit[i]);
		close(data[i]);
	}
	for (int i = 0; i < opt.workers; i++) {
		kill(pids[i], SIGTERM);
		waitpid(pids[i], NULL, 0);
	}
	check(cudaFree(dbuf), "cudaFree");
	check(cudaStreamDestroy(stream), "cudaStreamDestroy");
	fprintf(stderr,
		"dataloader: pid=%d workers=%d steps=%ld wall_s=%.3f step_ms=%.3f "
		"waiting_for_batches=%.0f%% wait_pct=%.2f\n",
		(int)getpid(), opt.workers, steps, wall, steps ? wall * 1e3 / (double)steps : 0.0,
		wall > 0 ? 100 * wait_s / wall : 0.0, wall > 0 ? 100 * wait_s / wall : 0.0);
	free(hbuf);
	return 0;
}
