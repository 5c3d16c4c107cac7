/* The test and demo workload: a training-like loop of CUDA calls over the shim
 * CUDA stack (tests/shim). It counts every traced CUDA API call it causes,
 * including the driver calls the runtime makes for it, and can write them as
 * the exact numbers a tracer must report (--expect). Flags: docs/shim.md. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

/* The ops a tracer sees, in --expect order, under their canonical names. */
#define WL_OPS(X)                                                                                  \
	X(cudaMalloc)                                                                              \
	X(cudaFree)                                                                                \
	X(cudaMallocManaged)                                                                       \
	X(cudaLaunchKernel)                                                                        \
	X(cudaMemcpy)                                                                              \
	X(cudaMemcpyAsync)                                                                         \
	X(cudaStreamSynchronize)                                                                   \
	X(cudaDeviceSynchronize)                                                                   \
	X(cudaStreamBeginCapture)                                                                  \
	X(cudaStreamEndCapture)                                                                    \
	X(cudaGraphInstantiate)                                                                    \
	X(cudaGraphLaunch)                                                                         \
	X(cuLaunchKernel)                                                                          \
	X(cuMemcpy)                                                                                \
	X(cuMemcpyAsync)                                                                           \
	X(cuMemcpyHtoD)                                                                            \
	X(cuMemcpyDtoH)                                                                            \
	X(cuMemAlloc)                                                                              \
	X(cuMemAllocManaged)                                                                       \
	X(cuMemFree)                                                                               \
	X(cuCtxSynchronize)                                                                        \
	X(cuStreamSynchronize)                                                                     \
	X(cuGraphLaunch)

#define WL_OP_ENUM(s) WL_##s,
#define WL_OP_NAME(s) #s,
enum wl_op { WL_OPS(WL_OP_ENUM) WL_NOPS };
static const char *const wl_op_names[WL_NOPS] = { WL_OPS(WL_OP_NAME) };
static _Atomic unsigned long long wl_counts[WL_NOPS];

/* What a forked child sends back through its pipe when it is done. */
struct wl_report {
	unsigned long long counts[WL_NOPS];
	int pid;
};

static struct wl_opts {
	long iters;
	long kernels;
	double kernel_us; /* < 0: the shim's default */
	size_t h2d;
	size_t d2h;
	int async_copy;
	long sync_every;
	int device_sync;
	long malloc_every;
	size_t malloc_bytes;
	long slow_malloc_every;
	double slow_malloc_us;
	int threads;
	int fork;
	int driver;
	int graph;
	double host_us;
	double sleep_us;
	long warmup_slow;
	double warmup_us;
	int wait_signal;
	long start_delay_ms;
	const char *expect;
	int cpu;
	int check_errors;
} wl_opt = {
	.iters = 100,
	.kernels = 4,
	.kernel_us = -1,
	.sync_every = 1,
	.malloc_bytes = 1 << 20,
	.slow_malloc_us = 5000,
	.threads = 1,
	.warmup_us = 2000,
	.cpu = -1,
};

static atomic_long wl_launches; /* cudaLaunchKernel calls so far, for --warmup-slow */
static const char *wl_role = "parent";

struct wl_thread {
	pthread_t tid;
	int idx;
};

static void wl_kernel(void)
{
}

static unsigned long long wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static double wl_cpu_s(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
	       (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
}

static void wl_count(enum wl_op op)
{
	atomic_fetch_add_explicit(&wl_counts[op], 1, memory_order_relaxed);
}

/* Every workload call must succeed: a failed call would make --expect lie. */
static void wl_check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "workload: %s failed: %s (%d)\n", what, cudaGetErrorString(e), e);
		exit(1);
	}
}

static void wl_check_cu(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "workload: %s failed: CUresult %d\n", what, r);
		exit(1);
	}
}

static void wl_spin_us(double us)
{
	unsigned long long end = wl_now() + (unsigned long long)(us * 1000.0);

	while (wl_now() < end)
		;
}

static void wl_sleep_us(double us)
{
	unsigned long long ns = (unsigned long long)(us * 1000.0);
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL),
			       .tv_nsec = (long)(ns % 1000000000ULL) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- counted CUDA calls: each names the runtime op and the driver op the
 * shim runtime makes for it ------------------------------------------------ */

static void wl_malloc(void **p, size_t bytes, double slow_us)
{
	wl_count(WL_cudaMalloc);
	wl_count(WL_cuMemAlloc);
	if (slow_us >= 0)
		shimSetThreadMallocTime((unsigned long long)(slow_us * 1000.0));
	wl_check(cudaMalloc(p, bytes), "cudaMalloc");
	if (slow_us >= 0)
		shimSetThreadMallocTime(SHIM_TIME_UNSET);
}

static void wl_free(void *p)
{
	wl_count(WL_cudaFree);
	wl_count(WL_cuMemFree);
	wl_check(cudaFree(p), "cudaFree");
}

static void wl_launch(cudaStream_t stream, void **args)
{
	dim3 grid = { 64, 1, 1 }, block = { 256, 1, 1 };
	int slow = atomic_fetch_add(&wl_launches, 1) < wl_opt.warmup_slow;

	wl_count(WL_cudaLaunchKernel);
	wl_count(WL_cuLaunchKernel);
	if (slow)
		shimSetThreadLaunchTime((unsigned long long)(wl_opt.warmup_us * 1000.0));
	wl_check(cudaLaunchKernel((const void *)(uintptr_t)wl_kernel, grid, block, args, 0, stream),
		 "cudaLaunchKernel");
	if (slow)
		shimSetThreadLaunchTime(SHIM_TIME_UNSET);
}

static void wl_memcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
	wl_count(WL_cudaMemcpy);
	wl_count(kind == cudaMemcpyHostToDevice	  ? WL_cuMemcpyHtoD
		 : kind == cudaMemcpyDeviceToHost ? WL_cuMemcpyDtoH
						  : WL_cuMemcpy);
	wl_check(cudaMemcpy(dst, src, n, kind), "cudaMemcpy");
}

static void wl_memcpy_async(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
			    cudaStream_t stream)
{
	wl_count(WL_cudaMemcpyAsync);
	wl_count(WL_cuMemcpyAsync);
	wl_check(cudaMemcpyAsync(dst, src, n, kind, stream), "cudaMemcpyAsync");
}

static void wl_sync(cudaStream_t stream)
{
	if (wl_opt.device_sync) {
		wl_count(WL_cudaDeviceSynchronize);
		wl_count(WL_cuCtxSynchronize);
		wl_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	} else {
		wl_count(WL_cudaStreamSynchronize);
		wl_count(WL_cuStreamSynchronize);
		wl_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
	}
}

/* --graph: the step's kernels are captured once and replayed as one graph. */
static cudaGraphExec_t wl_capture(cudaStream_t stream, void **args)
{
	cudaGraph_t graph;
	cudaGraphExec_t exec;

	wl_count(WL_cudaStreamBeginCapture);
	wl_check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
		 "cudaStreamBeginCapture");
	for (long k = 0; k < wl_opt.kernels; k++)
		wl_launch(stream, args);
	wl_count(WL_cudaStreamEndCapture);
	wl_check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
	wl_count(WL_cudaGraphInstantiate);
	wl_check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
	/* Not traced, not counted. */
	wl_check(cudaGraphDestroy(graph), "cudaGraphDestroy");
	return exec;
}

static size_t wl_max(size_t a, size_t b)
{
	return a > b ? a : b;
}

/* One thread's training loop. */
static void wl_loop(void)
{
	size_t drv_copy = wl_opt.h2d ? wl_opt.h2d : 4096;
	size_t bytes = wl_max(wl_max(wl_opt.h2d, wl_opt.d2h), drv_copy);
	cudaGraphExec_t exec = NULL;
	cudaStream_t stream;
	long allocs = 0;
	void *dbuf, *hbuf, *args[1];

	hbuf = calloc(1, bytes);
	if (!hbuf) {
		fprintf(stderr, "workload: out of memory\n");
		exit(1);
	}
	/* Stream creation is not traced, so not counted. */
	wl_check(cudaStreamCreate(&stream), "cudaStreamCreate");
	wl_malloc(&dbuf, bytes, -1);
	args[0] = &dbuf;
	if (wl_opt.graph)
		exec = wl_capture(stream, args);

	for (long i = 0; i < wl_opt.iters; i++) {
		if (wl_opt.h2d) {
			if (wl_opt.async_copy)
				wl_memcpy_async(dbuf, hbuf, wl_opt.h2d, cudaMemcpyHostToDevice,
						stream);
			else
				wl_memcpy(dbuf, hbuf, wl_opt.h2d, cudaMemcpyHostToDevice);
		}
		if (wl_opt.driver) {
			wl_count(WL_cuLaunchKernel);
			wl_check_cu(cuLaunchKernel((CUfunction)(uintptr_t)wl_kernel, 64, 1, 1, 256,
						   1, 1, 0, stream, args, NULL),
				    "cuLaunchKernel");
			wl_count(WL_cuMemcpyHtoD);
			wl_check_cu(cuMemcpyHtoD_v2((CUdeviceptr)dbuf, hbuf, drv_copy),
				    "cuMemcpyHtoD_v2");
		}
		if (exec) {
			wl_count(WL_cudaGraphLaunch);
			wl_count(WL_cuGraphLaunch);
			wl_check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
		} else {
			for (long k = 0; k < wl_opt.kernels; k++)
				wl_launch(stream, args);
		}
		if (wl_opt.d2h)
			wl_memcpy(hbuf, dbuf, wl_opt.d2h, cudaMemcpyDeviceToHost);
		if (wl_opt.sync_every > 0 && (i + 1) % wl_opt.sync_every == 0)
			wl_sync(stream);
		if (wl_opt.malloc_every > 0 && (i + 1) % wl_opt.malloc_every == 0) {
			void *p;
			int slow;

			allocs++;
			slow = wl_opt.slow_malloc_every > 0 && allocs % wl_opt.slow_malloc_every == 0;
			wl_malloc(&p, wl_opt.malloc_bytes, slow ? wl_opt.slow_malloc_us : -1);
			wl_free(p);
		}
		if (wl_opt.host_us > 0)
			wl_spin_us(wl_opt.host_us);
		if (wl_opt.sleep_us > 0)
			wl_sleep_us(wl_opt.sleep_us);
	}

	if (exec)
		wl_check(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
	wl_free(dbuf);
	wl_check(cudaStreamDestroy(stream), "cudaStreamDestroy");
	free(hbuf);
}

static void *wl_worker(void *arg)
{
	struct wl_thread *t = arg;
	char name[16];

	snprintf(name, sizeof(name), "wl-worker-%d", t->idx);
	pthread_setname_np(pthread_self(), name);
	wl_loop();
	return NULL;
}

/* Runs the loop in wl_opt.threads threads and prints the summary line. */
static void wl_run_process(void)
{
	struct wl_thread *th = calloc((size_t)wl_opt.threads, sizeof(*th));
	struct rusage ru0, ru1;
	unsigned long long t0;
	double wall;
	int err;

	if (!th) {
		fprintf(stderr, "workload: out of memory\n");
		exit(1);
	}
	if (wl_opt.driver) /* a driver API program initialises the driver; not traced */
		wl_check_cu(cuInit(0), "cuInit");
	t0 = wl_now();
	getrusage(RUSAGE_SELF, &ru0);
	for (int i = 0; i < wl_opt.threads; i++) {
		th[i].idx = i;
		err = pthread_create(&th[i].tid, NULL, wl_worker, &th[i]);
		if (err) {
			fprintf(stderr, "workload: cannot create thread %d: %s\n", i, strerror(err));
			exit(1);
		}
	}
	for (int i = 0; i < wl_opt.threads; i++)
		pthread_join(th[i].tid, NULL);
	wall = (double)(wl_now() - t0) / 1e9;
	getrusage(RUSAGE_SELF, &ru1);
	/* Context switches over the loop, all threads: "nivcsw" counts the
	 * involuntary ones, i.e. preemptions. */
	fprintf(stderr,
		"workload: pid=%d role=%s steps=%ld threads=%d iters=%ld wall_s=%.4f "
		"step_ms=%.4f cpu_s=%.4f nvcsw=%ld nivcsw=%ld\n",
		(int)getpid(), wl_role, wl_opt.iters * wl_opt.threads, wl_opt.threads,
		wl_opt.iters, wall, wl_opt.iters ? wall * 1e3 / (double)wl_opt.iters : 0.0,
		wl_cpu_s(&ru1) - wl_cpu_s(&ru0), ru1.ru_nvcsw - ru0.ru_nvcsw,
		ru1.ru_nivcsw - ru0.ru_nivcsw);
	free(th);
}

/* --check-errors: bad arguments must give CUDA's error codes. Every call made
 * here is counted too, error or not, because a tracer sees it. */
static int wl_check_errors(void)
{
	static char host[64], back[64];
	int bad = 0;
	void *p = NULL, *m = NULL;
	cudaError_t e;
	CUresult r;

#define WL_EXPECT(cond, what)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "workload: check-errors: %s: wrong result\n", what);        \
			bad++;                                                                     \
		}                                                                                  \
	} while (0)

	wl_count(WL_cudaMalloc); /* fails in the runtime: no driver call */
	e = cudaMalloc(NULL, 16);
	WL_EXPECT(e == cudaErrorInvalidValue, "cudaMalloc(NULL)");
	wl_count(WL_cudaMemcpy); /* bad kind: no driver call */
	e = cudaMemcpy(host, host, 16, (enum cudaMemcpyKind)99);
	WL_EXPECT(e == cudaErrorInvalidMemcpyDirection, "cudaMemcpy(kind 99)");
	WL_EXPECT(cudaGetLastError() == cudaErrorInvalidMemcpyDirection, "cudaGetLastError");
	WL_EXPECT(cudaGetLastError() == cudaSuccess, "cudaGetLastError reset");
	WL_EXPECT(!strcmp(cudaGetErrorString(cudaErrorInvalidValue), "cudaErrorInvalidValue"),
		  "cudaGetErrorString(1)");
	WL_EXPECT(!strcmp(cudaGetErrorString(cudaSuccess), "cudaSuccess"),
		  "cudaGetErrorString(0)");
	wl_count(WL_cuMemFree);
	r = cuMemFree_v2(0x1234);
	WL_EXPECT(r == CUDA_ERROR_INVALID_VALUE, "cuMemFree_v2(bogus)");
	wl_count(WL_cuLaunchKernel);
	r = cuLaunchKernel((CUfunction)(uintptr_t)wl_kernel, 0, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	WL_EXPECT(r == CUDA_ERROR_INVALID_VALUE, "cuLaunchKernel(grid 0)");
	wl_count(WL_cuMemcpyHtoD);
	r = cuMemcpyHtoD_v2((CUdeviceptr)(uintptr_t)back, host, 16);
	WL_EXPECT(r == CUDA_ERROR_INVALID_VALUE, "cuMemcpyHtoD_v2(host dst)");

	wl_malloc(&p, 1 << 20, -1);
	wl_free(p);
	wl_count(WL_cudaFree);
	wl_count(WL_cuMemFree);
	e = cudaFree(p);
	WL_EXPECT(e == cudaErrorInvalidValue, "cudaFree twice");

	/* Managed memory is host memory: a D2H copy from it moves real bytes. */
	wl_count(WL_cudaMallocManaged);
	wl_count(WL_cuMemAllocManaged);
	e = cudaMallocManaged(&m, 4096, cudaMemAttachGlobal);
	WL_EXPECT(e == cudaSuccess && m, "cudaMallocManaged");
	if (m) {
		memcpy(m, "managed", 8);
		wl_memcpy(back, m, 8, cudaMemcpyDeviceToHost);
		WL_EXPECT(!strcmp(back, "managed"), "cudaMemcpy from managed memory");
		wl_free(m);
	}
	wl_count(WL_cudaStreamBeginCapture);
	e = cudaStreamBeginCapture(NULL, cudaStreamCaptureModeGlobal);
	WL_EXPECT(e == cudaErrorStreamCaptureUnsupported, "capture of the legacy stream");
	cudaGetLastError();
#undef WL_EXPECT
	fprintf(stderr, "workload: check-errors: %s\n", bad ? "FAILED" : "ok");
	return bad ? -1 : 0;
}

static int wl_write_expect(const char *path, const int *pids, int npids)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "workload: cannot write %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	for (int i = 0; i < npids; i++)
		fprintf(f, "pid %d\n", pids[i]);
	for (int i = 0; i < WL_NOPS; i++) {
		unsigned long long n = atomic_load(&wl_counts[i]);

		if (n)
			fprintf(f, "%s %llu\n", wl_op_names[i], n);
	}
	/* Readers may poll for the file: it appears complete or not at all. */
	if (fclose(f) || rename(tmp, path)) {
		fprintf(stderr, "workload: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void wl_usage(FILE *f)
{
	fprintf(f,
		"usage: workload [options]   (a training-like loop over the CUDA shim)\n"
		"  --iters N             steps per thread (100)\n"
		"  --kernels K           cudaLaunchKernel per step (4)\n"
		"  --kernel-us U         simulated kernel time (shim default: SHIM_KERNEL_US or 100)\n"
		"  --h2d BYTES           a cudaMemcpy host-to-device per step\n"
		"  --d2h BYTES           a cudaMemcpy device-to-host per step\n"
		"  --async-copy          the h2d copy is a cudaMemcpyAsync on the thread's stream\n"
		"  --sync-every S        cudaStreamSynchronize every S steps (1; 0 = never)\n"
		"  --device-sync         cudaDeviceSynchronize instead of cudaStreamSynchronize\n"
		"  --malloc-every M      cudaMalloc + cudaFree every M steps (0 = never)\n"
		"  --malloc-bytes B      size of those allocations (1048576)\n"
		"  --slow-malloc-every P every P-th of those allocations is slow (implies\n"
		"                        --malloc-every 1 when that is 0)\n"
		"  --slow-malloc-us U    CPU time of a slow allocation (5000)\n"
		"  --threads T           T worker threads, each running the loop (1)\n"
		"  --fork                also fork a child process that runs the same loop\n"
		"  --driver              each step also calls cuLaunchKernel and cuMemcpyHtoD_v2\n"
		"  --graph               capture the step's kernels once; one cudaGraphLaunch per step\n"
		"  --host-us U           busy CPU work after each step\n"
		"  --sleep-us U          sleep after each step\n"
		"  --warmup-slow N       the first N cudaLaunchKernel of the process are slow\n"
		"  --warmup-us U         launch CPU time of those slow launches (2000)\n"
		"  --wait-signal         print \"ready PID\", wait for SIGUSR1, then start\n"
		"  --start-delay-ms MS   sleep before starting\n"
		"  --expect FILE         write the op counts a tracer must see\n"
		"  --cpu N               pin the workload to CPU N\n"
		"  --check-errors        first check the shim's error codes (counted too)\n"
		"  -h, --help\n");
}

static int wl_parse_long(const char *s, long min, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min)
		return -1;
	*out = v;
	return 0;
}

static int wl_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0)
		return -1;
	*out = v;
	return 0;
}

enum {
	OPT_ITERS = 256,
	OPT_KERNELS,
	OPT_KERNEL_US,
	OPT_H2D,
	OPT_D2H,
	OPT_ASYNC_COPY,
	OPT_SYNC_EVERY,
	OPT_DEVICE_SYNC,
	OPT_MALLOC_EVERY,
	OPT_MALLOC_BYTES,
	OPT_SLOW_MALLOC_EVERY,
	OPT_SLOW_MALLOC_US,
	OPT_THREADS,
	OPT_FORK,
	OPT_DRIVER,
	OPT_GRAPH,
	OPT_HOST_US,
	OPT_SLEEP_US,
	OPT_WARMUP_SLOW,
	OPT_WARMUP_US,
	OPT_WAIT_SIGNAL,
	OPT_START_DELAY_MS,
	OPT_EXPECT,
	OPT_CPU,
	OPT_CHECK_ERRORS,
};

static const struct option wl_longopts[] = {
	{ "iters", required_argument, NULL, OPT_ITERS },
	{ "kernels", required_argument, NULL, OPT_KERNELS },
	{ "kernel-us", required_argument, NULL, OPT_KERNEL_US },
	{ "h2d", required_argument, NULL, OPT_H2D },
	{ "d2h", required_argument, NULL, OPT_D2H },
	{ "async-copy", no_argument, NULL, OPT_ASYNC_COPY },
	{ "sync-every", required_argument, NULL, OPT_SYNC_EVERY },
	{ "device-sync", no_argument, NULL, OPT_DEVICE_SYNC },
	{ "malloc-every", required_argument, NULL, OPT_MALLOC_EVERY },
	{ "malloc-bytes", required_argument, NULL, OPT_MALLOC_BYTES },
	{ "slow-malloc-every", required_argument, NULL, OPT_SLOW_MALLOC_EVERY },
	{ "slow-malloc-us", required_argument, NULL, OPT_SLOW_MALLOC_US },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "fork", no_argument, NULL, OPT_FORK },
	{ "driver", no_argument, NULL, OPT_DRIVER },
	{ "graph", no_argument, NULL, OPT_GRAPH },
	{ "host-us", required_argument, NULL, OPT_HOST_US },
	{ "sleep-us", required_argument, NULL, OPT_SLEEP_US },
	{ "warmup-slow", required_argument, NULL, OPT_WARMUP_SLOW },
	{ "warmup-us", required_argument, NULL, OPT_WARMUP_US },
	{ "wait-signal", no_argument, NULL, OPT_WAIT_SIGNAL },
	{ "start-delay-ms", required_argument, NULL, OPT_START_DELAY_MS },
	{ "expect", required_argument, NULL, OPT_EXPECT },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "check-errors", no_argument, NULL, OPT_CHECK_ERRORS },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int wl_parse(int argc, char **argv)
{
	long v;
	int c;

	while ((c = getopt_long(argc, argv, "h", wl_longopts, NULL)) != -1) {
		int bad = 0;

		switch (c) {
		case OPT_ITERS:
			bad = wl_parse_long(optarg, 0, &wl_opt.iters);
			break;
		case OPT_KERNELS:
			bad = wl_parse_long(optarg, 0, &wl_opt.kernels);
			break;
		case OPT_KERNEL_US:
			bad = wl_parse_double(optarg, &wl_opt.kernel_us);
			break;
		case OPT_H2D:
			bad = wl_parse_long(optarg, 0, &v);
			wl_opt.h2d = (size_t)v;
			break;
		case OPT_D2H:
			bad = wl_parse_long(optarg, 0, &v);
			wl_opt.d2h = (size_t)v;
			break;
		case OPT_ASYNC_COPY:
			wl_opt.async_copy = 1;
			break;
		case OPT_SYNC_EVERY:
			bad = wl_parse_long(optarg, 0, &wl_opt.sync_every);
			break;
		case OPT_DEVICE_SYNC:
			wl_opt.device_sync = 1;
			break;
		case OPT_MALLOC_EVERY:
			bad = wl_parse_long(optarg, 0, &wl_opt.malloc_every);
			break;
		case OPT_MALLOC_BYTES:
			bad = wl_parse_long(optarg, 1, &v);
			wl_opt.malloc_bytes = (size_t)v;
			break;
		case OPT_SLOW_MALLOC_EVERY:
			bad = wl_parse_long(optarg, 0, &wl_opt.slow_malloc_every);
			break;
		case OPT_SLOW_MALLOC_US:
			bad = wl_parse_double(optarg, &wl_opt.slow_malloc_us);
			break;
		case OPT_THREADS:
			bad = wl_parse_long(optarg, 1, &v) || v > 1024;
			wl_opt.threads = (int)v;
			break;
		case OPT_FORK:
			wl_opt.fork = 1;
			break;
		case OPT_DRIVER:
			wl_opt.driver = 1;
			break;
		case OPT_GRAPH:
			wl_opt.graph = 1;
			break;
		case OPT_HOST_US:
			bad = wl_parse_double(optarg, &wl_opt.host_us);
			break;
		case OPT_SLEEP_US:
			bad = wl_parse_double(optarg, &wl_opt.sleep_us);
			break;
		case OPT_WARMUP_SLOW:
			bad = wl_parse_long(optarg, 0, &wl_opt.warmup_slow);
			break;
		case OPT_WARMUP_US:
			bad = wl_parse_double(optarg, &wl_opt.warmup_us);
			break;
		case OPT_WAIT_SIGNAL:
			wl_opt.wait_signal = 1;
			break;
		case OPT_START_DELAY_MS:
			bad = wl_parse_long(optarg, 0, &wl_opt.start_delay_ms);
			break;
		case OPT_EXPECT:
			wl_opt.expect = optarg;
			break;
		case OPT_CPU:
			bad = wl_parse_long(optarg, 0, &v) || v >= CPU_SETSIZE;
			wl_opt.cpu = (int)v;
			break;
		case OPT_CHECK_ERRORS:
			wl_opt.check_errors = 1;
			break;
		case 'h':
			wl_usage(stdout);
			exit(0);
		default:
			wl_usage(stderr);
			return -1;
		}
		if (bad) {
			fprintf(stderr, "workload: bad value for --%s: %s\n",
				wl_longopts[c - OPT_ITERS].name, optarg);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "workload: unexpected argument %s\n", argv[optind]);
		return -1;
	}
	if (wl_opt.slow_malloc_every > 0 && !wl_opt.malloc_every)
		wl_opt.malloc_every = 1;
	return 0;
}

/* The child's half of --fork: the same loop, then its counts to the parent. */
static void wl_child(int wfd)
{
	struct wl_report rep = { .pid = (int)getpid() };

	wl_role = "child";
	/* Counts made before the fork (--check-errors) belong to the parent. */
	for (int i = 0; i < WL_NOPS; i++)
		atomic_store(&wl_counts[i], 0);
	wl_run_process();
	for (int i = 0; i < WL_NOPS; i++)
		rep.counts[i] = atomic_load(&wl_counts[i]);
	if (write(wfd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep)) {
		fprintf(stderr, "workload: child cannot report its counts: %s\n", strerror(errno));
		exit(1);
	}
	close(wfd);
	exit(0); /* exit(), not _exit(): the shim writes SHIM_STATS at exit */
}

/* Waits for the child and adds its counts; -1 when it failed. */
static int wl_reap(pid_t child, int rfd)
{
	struct wl_report rep;
	ssize_t n;
	int status;

	do
		n = read(rfd, &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	close(rfd);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(rep) || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "workload: child %d failed\n", (int)child);
		return -1;
	}
	for (int i = 0; i < WL_NOPS; i++)
		atomic_fetch_add(&wl_counts[i], rep.counts[i]);
	return 0;
}

int main(int argc, char **argv)
{
	int pids[2] = { (int)getpid(), 0 }, npids = 1, ret = 0, pfd[2];
	pid_t child = 0;

	if (wl_parse(argc, argv))
		return 2;
	if (wl_opt.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(wl_opt.cpu, &set);
		/* Before any thread or child exists, so that all inherit it. */
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "workload: cannot pin to CPU %d: %s\n", wl_opt.cpu,
				strerror(errno));
			return 2;
		}
	}
	if (wl_opt.kernel_us >= 0)
		shimSetKernelTime((unsigned long long)(wl_opt.kernel_us * 1000.0));
	if (wl_opt.wait_signal) {
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
	if (wl_opt.start_delay_ms > 0)
		wl_sleep_us((double)wl_opt.start_delay_ms * 1000.0);
	if (wl_opt.check_errors && wl_check_errors())
		ret = 1;

	if (wl_opt.fork) {
		if (pipe(pfd)) {
			fprintf(stderr, "workload: pipe: %s\n", strerror(errno));
			return 1;
		}
		fflush(NULL);
		child = fork();
		if (child < 0) {
			fprintf(stderr, "workload: fork: %s\n", strerror(errno));
			return 1;
		}
		if (!child) {
			close(pfd[0]);
			wl_child(pfd[1]);
		}
		close(pfd[1]);
		pids[npids++] = (int)child;
	}
	wl_run_process();
	if (child && wl_reap(child, pfd[0]))
		ret = 1;
	if (wl_opt.expect && wl_write_expect(wl_opt.expect, pids, npids))
		ret = 1;
	return ret;
}
