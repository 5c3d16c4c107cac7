/* A training loop for the demo scenarios (src/demo.c, docs/scenarios.md) over
 * the shim CUDA stack: per step an H2D copy of the batch, K kernel launches
 * and a stream sync. Two things the workload does not do: GPU work that
 * varies from step to step (--long-every: a long batch every N steps, as
 * with bucketed sequence lengths) and checkpoints written from the training
 * thread (--ckpt-every: a D2H copy of the weights, then write + fsync of a
 * file, as torch.save() in the loop does). Runs for --seconds or --iters.
 *
 * The checkpoint's share of the loop's time is made by construction, not
 * left to the disk (docs/scenarios.md, io-stall): the thread times its own
 * file syscalls (write and fsync, minus the time it waited for the CPU in
 * them) and sizes the GPU work of the steps so that they take --ckpt-share
 * of its wall time, whatever the disk's speed; it prints what it measured
 * (file_io_pct=) as the ground truth the tests compare the diagnosis with. */
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
	double ckpt_share; /* target share of the wall time in the checkpoint's file I/O, 0..1 */
	const char *dir;
	int cpu;
	int wait_signal;
} opt = {
	.kernels = 4,
	.kernel_us = 2000,
	.long_x = 5,
	.ckpt_shards = 1,
	.ckpt_share = -1,
	.cpu = -1,
};

/* The sizing's bounds: the kernel time it may give a step, in us; how many
 * times over a checkpoint may write the weights; the file I/O a checkpoint
 * must take, in copy times (the D2H copy of the weights and the cycle's
 * H2D copies: 5x keeps the copies under 10 % of the time at a 40 % share,
 * a LOW copy_dominated chain at most). */
#define SIZE_MIN_KERNEL_US 100.0
#define SIZE_MAX_KERNEL_US 250000.0
#define SIZE_MAX_PASSES 16
#define SIZE_COPIES 5.0

/* What the thread measured of its checkpoints (ns). */
static struct {
	uint64_t file_ns;      /* in write and fsync, not waiting for the CPU */
	uint64_t file_rq_ns;   /* waiting for the CPU inside them */
	uint64_t other_ns;     /* open and close of the shard files */
	uint64_t copy_ns;      /* in cudaMemcpy calls */
	int passes;	       /* times a checkpoint writes the weights (sized) */
	double pass_avg_ns;    /* running averages of one pass's file I/O time */
	double copy_avg_ns;    /* and of a cycle's copies */
	long sized;	       /* checkpoints in those averages */
	double file_avg_ns;    /* running average of one checkpoint's file_ns */
	double rest_avg_ns;    /* of a cycle's time that is neither file I/O nor kernels */
	int schedstat_fd;
} meas = { .schedstat_fd = -1, .passes = 1 };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The thread's run-queue wait so far (field 2 of its schedstat), 0 when the
 * kernel has no schedstat: then preempted time stays in the measure. */
static uint64_t rq_ns(void)
{
	char b[128];
	unsigned long long cpu, rq;

	if (meas.schedstat_fd < 0)
		return 0;
	ssize_t n = pread(meas.schedstat_fd, b, sizeof(b) - 1, 0);
	if (n <= 0)
		return 0;
	b[n] = 0;
	return sscanf(b, "%llu %llu", &cpu, &rq) == 2 ? rq : 0;
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
		"               [--ckpt-every N --ckpt-bytes B [--ckpt-shards N] --dir DIR\n"
		"                [--ckpt-share PCT]]\n"
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
		{ "ckpt-share", required_argument, NULL, 'P' },
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
		case 'P': opt.ckpt_share = atof(optarg) / 100; break;
		case 'd': opt.dir = optarg; break;
		case 'C': opt.cpu = atoi(optarg); break;
		case 'w': opt.wait_signal = 1; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc || (opt.seconds <= 0 && opt.iters <= 0) ||
	    (opt.ckpt_every > 0 && (!opt.dir || !opt.ckpt_bytes)) || opt.ckpt_shards < 1 ||
	    opt.ckpt_shards > 256 || opt.ckpt_share >= 0.9) {
		usage(stderr);
		return -1;
	}
	if (opt.ckpt_share < 0) /* not given: 40 % with checkpoints */
		opt.ckpt_share = opt.ckpt_every > 0 ? 0.4 : 0;
	return 0;
}

/* The checkpoint's files: --ckpt-shards files (one per group of layers, as
 * sharded checkpoint formats write them), each written and fsync'ed before
 * the next, meas.passes times its size (1 unless the disk is so fast that
 * the copies would rival the file I/O: size_passes). A shard is overwritten
 * in place: no truncation, whose cost (7 ms a checkpoint on ext4 here, in
 * open) is neither clearly file I/O nor host work. Only write and fsync
 * count as its file I/O: the kernel's CPU and the disk's waits in them are
 * the cause the tests expect; open and close are timed apart
 * (meas.other_ns). Returns the file I/O time of this checkpoint, run-queue
 * waits left out (ns). */
static uint64_t ckpt_files(const char *data)
{
	size_t shard = opt.ckpt_bytes / (size_t)opt.ckpt_shards;
	uint64_t file = 0, rq = 0;

	for (int s = 0; s < opt.ckpt_shards; s++) {
		char path[4096];
		const char *p = data + (size_t)s * shard;
		size_t off = 0;

		snprintf(path, sizeof(path), "%s/ckpt-%03d.bin", opt.dir, s);
		uint64_t t0 = now_ns();
		int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			fprintf(stderr, "trainer: cannot open %s: %s\n", path, strerror(errno));
			exit(1);
		}
		uint64_t r1 = rq_ns(), t1 = now_ns();
		size_t len = shard * (size_t)meas.passes;
		while (off < len) {
			size_t o = off % shard;
			ssize_t w = write(fd, p + o, shard - o);
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
		uint64_t t2 = now_ns(), r2 = rq_ns();
		close(fd);
		uint64_t wait = r2 - r1 < t2 - t1 ? r2 - r1 : t2 - t1;
		file += t2 - t1 - wait;
		rq += wait;
		meas.other_ns += t1 - t0 + now_ns() - t2;
	}
	meas.file_ns += file;
	meas.file_rq_ns += rq;
	return file;
}

/* A cudaMemcpy, timed (meas.copy_ns). */
static void copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, const char *what)
{
	uint64_t t = now_ns();

	check(cudaMemcpy(dst, src, n, kind), what);
	meas.copy_ns += now_ns() - t;
}

/* torch.save() in the loop: the weights come to the host, then go to disk. */
static uint64_t checkpoint(void *dweights, char *hweights, long step)
{
	copy(hweights, dweights, opt.ckpt_bytes, cudaMemcpyDeviceToHost,
	     "cudaMemcpy D2H (checkpoint)");
	/* the shim moves no bytes from fake device memory: make the pages differ
	 * per checkpoint so that nothing could be deduplicated or skipped */
	for (size_t i = 0; i < opt.ckpt_bytes; i += 4096)
		hweights[i] = (char)(step + (long)i);
	return ckpt_files(hweights);
}

/* --ckpt-share, on a disk faster than the shim's copies: when a pass of
 * the checkpoint's file I/O takes (on average, over 3 checkpoints at least)
 * less than SIZE_COPIES times the cycle's copies, the weights are written
 * more times over (passes only grow: a file is overwritten in place, never
 * shrunk). */
static void size_passes(uint64_t file_ns, uint64_t copy_ns)
{
	double per = (double)file_ns / meas.passes;

	if (!meas.sized++) {
		meas.pass_avg_ns = per;
		meas.copy_avg_ns = (double)copy_ns;
	} else {
		meas.pass_avg_ns = 0.7 * meas.pass_avg_ns + 0.3 * per;
		meas.copy_avg_ns = 0.7 * meas.copy_avg_ns + 0.3 * (double)copy_ns;
	}
	double want = SIZE_COPIES * meas.copy_avg_ns;
	if (meas.sized < 3 || meas.pass_avg_ns <= 0 || meas.passes * meas.pass_avg_ns >= want ||
	    meas.passes >= SIZE_MAX_PASSES)
		return;
	int p = (int)(want / meas.pass_avg_ns) + 1;

	meas.passes = p > SIZE_MAX_PASSES ? SIZE_MAX_PASSES : p;
	meas.file_avg_ns = 0; /* the kernels' sizing starts again at the new size */
}

/* --ckpt-share: the kernel time of a step such that a cycle of --ckpt-every
 * steps and one checkpoint spends the share in the checkpoint's file I/O.
 * The cycle's wall = file I/O + kernels + the rest (copies, calls, the
 * loop); with running averages of the first and the last, the kernels get
 * file * (1 - share) / share - rest, within bounds. A disk 10x faster or
 * slower changes the step, not the share. */
static double size_kernel_us(uint64_t file_ns, uint64_t cycle_ns, double kernels_ns)
{
	double rest = (double)cycle_ns - (double)file_ns - kernels_ns;

	if (rest < 0)
		rest = 0;
	if (meas.file_avg_ns <= 0) {
		meas.file_avg_ns = (double)file_ns;
		meas.rest_avg_ns = rest;
	} else {
		meas.file_avg_ns = 0.7 * meas.file_avg_ns + 0.3 * (double)file_ns;
		meas.rest_avg_ns = 0.7 * meas.rest_avg_ns + 0.3 * rest;
	}
	double k = meas.file_avg_ns * (1 - opt.ckpt_share) / opt.ckpt_share - meas.rest_avg_ns;
	double us = k / 1e3 / (double)(opt.ckpt_every * (opt.kernels > 0 ? opt.kernels : 1));

	return us < SIZE_MIN_KERNEL_US ? SIZE_MIN_KERNEL_US
	       : us > SIZE_MAX_KERNEL_US ? SIZE_MAX_KERNEL_US
					 : us;
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
	meas.schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (opt.ckpt_every > 0) {
		hweights = malloc(opt.ckpt_bytes);
		if (!hweights)
			return 1;
		memset(hweights, 1, opt.ckpt_bytes);
	}
	if (opt.ckpt_every > 0 && opt.ckpt_share > 0) {
		/* one checkpoint's files before the loop (and before the tracer
		 * is let in: --wait-signal) sizes the first steps */
		uint64_t f = ckpt_files(hweights);

		opt.kernel_us = size_kernel_us(f, f, 0);
		meas.file_ns = meas.file_rq_ns = meas.other_ns = 0;
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
	if (opt.ckpt_every > 0)
		check(cudaMalloc(&dweights, opt.ckpt_bytes), "cudaMalloc weights");
	args[0] = &dbuf;

	double t0 = now_s(), end = t0 + opt.seconds;
	uint64_t rq0 = rq_ns(), cycle0 = now_ns(), copy0 = 0;
	double cycle_kernels_ns = 0; /* kernel time asked for since the last checkpoint */
	for (;;) {
		if (opt.iters > 0 ? step >= opt.iters : now_s() >= end)
			break;
		step++;
		int longb = opt.long_every > 0 && step % opt.long_every == 0;
		double kns = opt.kernel_us * (longb ? opt.long_x : 1) * 1000.0;

		shimSetKernelTime((unsigned long long)kns);
		cycle_kernels_ns += kns * (double)opt.kernels;
		if (opt.h2d)
			copy(dbuf, hbuf, opt.h2d, cudaMemcpyHostToDevice, "cudaMemcpy H2D");
		for (long k = 0; k < opt.kernels; k++)
			check(cudaLaunchKernel((const void *)(uintptr_t)kernel, grid, block, args, 0,
					       stream),
			      "cudaLaunchKernel");
		check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
		if (opt.ckpt_every > 0 && step % opt.ckpt_every == 0) {
			uint64_t f = checkpoint(dweights, hweights, step), t = now_ns();

			ckpts++;
			if (opt.ckpt_share > 0) {
				opt.kernel_us = size_kernel_us(f, t - cycle0, cycle_kernels_ns);
				size_passes(f, meas.copy_ns - copy0);
			}
			cycle0 = t;
			copy0 = meas.copy_ns;
			cycle_kernels_ns = 0;
		}
	}
	double wall = now_s() - t0;
	double rq = (double)(rq_ns() - rq0);

	if (dweights)
		check(cudaFree(dweights), "cudaFree");
	check(cudaFree(dbuf), "cudaFree");
	check(cudaStreamDestroy(stream), "cudaStreamDestroy");
	for (int s = 0; opt.dir && s < opt.ckpt_shards; s++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/ckpt-%03d.bin", opt.dir, s);
		unlink(path);
	}
	/* the ground truth of the scenario: shares of the loop's wall time */
	fprintf(stderr,
		"trainer: pid=%d steps=%ld checkpoints=%ld wall_s=%.3f step_ms=%.3f"
		" file_io_pct=%.2f ckpt_share_pct=%.0f ckpt_ms=%.3f ckpt_passes=%d kernel_us=%.0f"
		" copy_pct=%.2f open_close_pct=%.2f preempted_pct=%.2f file_preempted_pct=%.2f\n",
		(int)getpid(), step, ckpts, wall, step ? wall * 1e3 / (double)step : 0.0,
		100.0 * (double)meas.file_ns / 1e9 / wall, 100 * opt.ckpt_share,
		ckpts ? (double)meas.file_ns / 1e6 / (double)ckpts : 0.0, meas.passes,
		opt.kernel_us, 100.0 * (double)meas.copy_ns / 1e9 / wall,
		100.0 * (double)meas.other_ns / 1e9 / wall, 100.0 * rq / 1e9 / wall,
		100.0 * (double)meas.file_rq_ns / 1e9 / wall);
	free(hbuf);
	free(hweights);
	if (meas.schedstat_fd >= 0)
		close(meas.schedstat_fd);
	return 0;
}
