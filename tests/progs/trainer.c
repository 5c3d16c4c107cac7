/* A training loop for the demo scenarios (src/demo.c, docs/scenarios.md) over
 * the shim CUDA stack: per step an H2D copy of the batch, K kernel launches
 * and a stream sync. Two things the workload does not do: GPU work that
 * varies from step to step (--long-every: a long batch every N steps, as
 * with bucketed sequence lengths) and checkpoints written from the training
 * thread (--ckpt-every: a D2H copy of the weights, then write + fsync of a
 * file, as torch.save() in the loop does). Runs for --seconds or --iters. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

static struct {
	double seconds;
	long iters;
	long kernels;
	double kernel_us;
	size_t h2d;
	long long_every;
	double long_x;
	long ckpt_every;
	size_t ckpt_bytes;
	int ckpt_shards;
	const char *dir;
	int cpu;
	int wait_signal;
} opt = {
	.kernels = 4,
	.kernel_us = 2000,
	.long_x = 5,
	.ckpt_shards = 1,
	.cpu = -1,
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "trainer: %s failed: %s\n", what, cudaGetErrorString(e));
		exit(1);
	}
}

static void kernel(void)
{
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: trainer [--seconds S | --iters N] [--kernels K] [--kernel-us U]\n"
		"               [--h2d BYTES] [--long-every N --long-x X]\n"
		"               [--ckpt-every N --ckpt-bytes B [--ckpt-shards N] --dir DIR]\n"
		"               [--cpu N] [--wait-signal]\n");
}

static int parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ "kernels", required_argument, NULL, 'k' },
		{ "kernel-us", required_argument, NULL, 'u' },
		{ "h2d", required_argument, NULL, 'H' },
		{ "long-every", required_argument, NULL, 'l' },
		{ "long-x", required_argument, NULL, 'x' },
		{ "ckpt-every", required_argument, NULL, 'c' },
		{ "ckpt-bytes", required_argument, NULL, 'b' },
		{ "ckpt-shards", required_argument, NULL, 'S' },
		{ "dir", required_argument, NULL, 'd' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "wait-signal", no_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': opt.seconds = atof(optarg); break;
		case 'n': opt.iters = atol(optarg); break;
		case 'k': opt.kernels = atol(optarg); break;
		case 'u': opt.kernel_us = atof(optarg); break;
		case 'H': opt.h2d = (size_t)atoll(optarg); break;
		case 'l': opt.long_every = atol(optarg); break;
		case 'x': opt.long_x = atof(optarg); break;
		case 'c': opt.ckpt_every = atol(optarg); break;
		case 'b': opt.ckpt_bytes = (size_t)atoll(optarg); break;
		case 'S': opt.ckpt_shards = atoi(optarg); break;
		case 'd': opt.dir = optarg; break;
		case 'C': opt.cpu = atoi(optarg); break;
		case 'w': opt.wait_signal = 1; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc || (opt.seconds <= 0 && opt.iters <= 0) ||
	    (opt.ckpt_every > 0 && (!opt.dir || !opt.ckpt_bytes)) || opt.ckpt_shards < 1 ||
	    opt.ckpt_shards > 256) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* torch.save() in the loop: the weights come to the host, then go to disk
 * as --ckpt-shards files (one per group of layers, as sharded checkpoint
 * formats write them), each written and fsync'ed before the next. */
static void checkpoint(void *dweights, char *hweights, long step)
{
	size_t shard = opt.ckpt_bytes / (size_t)opt.ckpt_shards;

	check(cudaMemcpy(hweights, dweights, opt.ckpt_bytes, cudaMemcpyDeviceToHost),
	      "cudaMemcpy D2H (checkpoint)");
	/* the shim moves no bytes from fake device memory: make the pages differ
	 * per checkpoint so that nothing could be deduplicated or skipped */
	for (size_t i = 0; i < opt.ckpt_bytes; i += 4096)
		hweights[i] = (char)(step + (long)i);
	for (int s = 0; s < opt.ckpt_shards; s++) {
		char path[4096];
		const char *p = hweights + (size_t)s * shard;
		size_t off = 0;

		snprintf(path, sizeof(path), "%s/ckpt-%03d.bin", opt.dir, s);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0) {
			fprintf(stderr, "trainer: cannot open %s: %s\n", path, strerror(errno));
			exit(1);
		}
		while (off < shard) {
			ssize_t w = write(fd, p + off, shard - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				fprintf(stderr, "trainer: cannot write %s: %s\n", path,
					strerror(errno));
				exit(1);
			}
			off += (size_t)w;
		}
		if (fsync(fd)) {
			fprintf(stderr, "trainer: fsync %s: %s\n", path, strerror(errno));
			exit(1);
		}
		close(fd);
	}
}

int main(int argc, char **argv)
{
	cudaStream_t stream;
	void *dbuf, *dweights = NULL, *args[1];
	char *hbuf, *hweights = NULL;
	long step = 0, ckpts = 0;
	dim3 grid = { 64, 1, 1 }, block = { 256, 1, 1 };

	if (parse(argc, argv))
		return 2;
	prctl(PR_SET_NAME, "trainer", 0, 0, 0);
	if (opt.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(opt.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "trainer: cannot pin to CPU %d: %s\n", opt.cpu,
				strerror(errno));
			return 2;
		}
	}
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
	hbuf = calloc(1, opt.h2d ? opt.h2d : 1);
	if (!hbuf)
		return 1;
	check(cudaStreamCreate(&stream), "cudaStreamCreate");
	check(cudaMalloc(&dbuf, opt.h2d ? opt.h2d : 1), "cudaMalloc");
	if (opt.ckpt_every > 0) {
		hweights = malloc(opt.ckpt_bytes);
		if (!hweights)
			return 1;
		memset(hweights, 1, opt.ckpt_bytes);
		check(cudaMalloc(&dweights, opt.ckpt_bytes), "cudaMalloc weights");
	}
	args[0] = &dbuf;

	double t0 = now_s(), end = t0 + opt.seconds;
	for (;;) {
		if (opt.iters > 0 ? step >= opt.iters : now_s() >= end)
			break;
		step++;
		int longb = opt.long_every > 0 && step % opt.long_every == 0;
		shimSetKernelTime((unsigned long long)(opt.kernel_us * (longb ? opt.long_x : 1) *
						       1000.0));
		if (opt.h2d)
			check(cudaMemcpy(dbuf, hbuf, opt.h2d, cudaMemcpyHostToDevice),
			      "cudaMemcpy H2D");
		for (long k = 0; k < opt.kernels; k++)
			check(cudaLaunchKernel((const void *)(uintptr_t)kernel, grid, block, args, 0,
					       stream),
			      "cudaLaunchKernel");
		check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
		if (opt.ckpt_every > 0 && step % opt.ckpt_every == 0) {
			checkpoint(dweights, hweights, step);
			ckpts++;
		}
	}
	double wall = now_s() - t0;

	if (dweights)
		check(cudaFree(dweights), "cudaFree");
	check(cudaFree(dbuf), "cudaFree");
	check(cudaStreamDestroy(stream), "cudaStreamDestroy");
	for (int s = 0; opt.dir && s < opt.ckpt_shards; s++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/ckpt-%03d.bin", opt.dir, s);
		unlink(path);
	}
	fprintf(stderr, "trainer: pid=%d steps=%ld checkpoints=%ld wall_s=%.3f step_ms=%.3f\n",
		(int)getpid(), step, ckpts, wall, step ? wall * 1e3 / (double)step : 0.0);
	free(hbuf);
	free(hweights);
	return 0;
}
