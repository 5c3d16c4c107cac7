/* The test and demo workload: a training-like loop of CUDA calls over the shim
 * CUDA stack (tests/shim), optionally with NCCL collectives across ranks, or
 * over the HIP shim instead. It counts every traced API call it causes,
 * including the driver calls the runtime makes for it, and can write them as
 * the exact numbers a tracer must report (--expect). Flags: docs/shim.md. */
#include <errno.h>
#include <fcntl.h>
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
#include "workload.h"

#define WL_OP_NAME(s) #s,
static const char *const wl_op_names[WL_NOPS] = { WL_OPS(WL_OP_NAME) };
static _Atomic unsigned long long wl_counts[WL_NOPS];
static _Atomic unsigned long long wl_bytes[WL_NOPS];

/* What a forked child sends back through its pipe when it is done. */
struct wl_report {
	unsigned long long counts[WL_NOPS];
	unsigned long long bytes[WL_NOPS];
	int pid;
};

struct wl_opts wl_opt = {
    .iters = 100,
    .kernels = 4,
    .kernel_us = -1,
    .sync_every = 1,
    .malloc_bytes = 1 << 20,
    .slow_malloc_us = 5000,
    .threads = 1,
    .warmup_us = 2000,
    .cpu = -1,
    .nccl_types = (1u << 12) - 1,
    .nccl_ops = (1u << WL_NCCL_NOPS) - 1,
    .nccl_count = 1024,
    .straggler_rank = -1,
};

static atomic_long wl_launches; /* cudaLaunchKernel calls so far, for --warmup-slow */
static const char *wl_role = "parent";

struct wl_thread {
	pthread_t tid;
	int idx;
};

void wl_kernel(void)
{
}

unsigned long long wl_now(void)
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

void wl_count(enum wl_op op)
{
	atomic_fetch_add_explicit(&wl_counts[op], 1, memory_order_relaxed);
}

void wl_count_bytes(enum wl_op op, unsigned long long bytes)
{
	atomic_fetch_add_explicit(&wl_bytes[op], bytes, memory_order_relaxed);
}

/* Exits 1 with "workload: WHAT" (and the code when non-zero). */
void wl_fail(const char *what, int code)
{
	if (code)
		fprintf(stderr, "workload: %s (%d)\n", what, code);
	else
		fprintf(stderr, "workload: %s\n", what);
	exit(1);
}

/* Every workload call must succeed: a failed call would make --expect lie. */
void wl_check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "workload: %s failed: %s (%d)\n", what, cudaGetErrorString(e), e);
		exit(1);
	}
}

void wl_check_cu(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "workload: %s failed: CUresult %d\n", what, r);
		exit(1);
	}
}

void wl_spin_us(double us)
{
	unsigned long long end = wl_now() + (unsigned long long)(us * 1000.0);

	while (wl_now() < end)
		;
}

void wl_sleep_us(double us)
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
		unsigned long long t0 = wl_now();

		wl_count(WL_cudaStreamSynchronize);
		wl_count(WL_cuStreamSynchronize);
		wl_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
		if (wl_opt.nccl)
			wl_nccl_wait_add(wl_now() - t0);
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

/* --progress: the calls made so far (each counted before it is made, so
 * all of them ended) and the time, one line per iteration of thread 0; a
 * tracer killed at time T must hold every call up to the lines before T. */
static void wl_progress(void)
{
	static int fd = -1;
	unsigned long long n = 0;
	struct timespec ts;
	if (fd < 0)
		fd = open(wl_opt.progress, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		wl_fail("cannot open the --progress file", errno);
	for (int i = 0; i < WL_NOPS; i++)
		n += atomic_load(&wl_counts[i]);
	clock_gettime(CLOCK_REALTIME, &ts);
	dprintf(fd, "%llu %llu\n",
		(unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec, n);
}

/* One thread's training loop. */
static void wl_loop(int idx)
{
	size_t drv_copy = wl_opt.h2d ? wl_opt.h2d : 4096;
	size_t bytes = wl_max(wl_max(wl_opt.h2d, wl_opt.d2h), drv_copy);
	cudaGraphExec_t exec = NULL;
	cudaStream_t stream;
	struct wl_ext ext = {0};
	struct wl_nccl *nccl = NULL;
	long allocs = 0;
	void *dbuf, *hbuf, *args[1];

	/* Stream creation is not traced, so not counted. */
	wl_check(cudaStreamCreate(&stream), "cudaStreamCreate");
	hbuf = wl_ext_host_buffer(&ext, bytes);
	wl_malloc(&dbuf, bytes, -1);
	args[0] = &dbuf;
	wl_ext_setup(&ext);
	if (wl_opt.nccl)
		nccl = wl_nccl_setup(idx);
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
		wl_ext_step(&ext, stream, dbuf, hbuf, bytes, args);
		if (nccl)
			wl_nccl_step(nccl, stream, dbuf);
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
		if (wl_opt.progress && idx == 0)
			wl_progress();
	}

	if (exec)
		wl_check(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
	if (nccl)
		wl_nccl_teardown(nccl);
	wl_free(dbuf);
	wl_check(cudaStreamDestroy(stream), "cudaStreamDestroy");
	if (!wl_opt.pinned)
		free(hbuf);
	wl_ext_teardown(&ext);
}

static void *wl_worker(void *arg)
{
	struct wl_thread *t = arg;
	char name[16];

	snprintf(name, sizeof(name), "wl-worker-%d", t->idx);
	pthread_setname_np(pthread_self(), name);
	if (wl_opt.hip)
		wl_hip_loop();
	else
		wl_loop(t->idx);
	return NULL;
}

/* Runs the loop in wl_opt.threads threads and prints the summary line. */
static void wl_run_process(void)
{
	struct wl_thread *th = calloc((size_t)wl_opt.threads, sizeof(*th));
	struct rusage ru0, ru1;
	unsigned long long t0;
	double wall;
	char line[512];
	int err, len;

	if (!th) {
		fprintf(stderr, "workload: out of memory\n");
		exit(1);
	}
	/* A driver API program initialises the driver; not traced. */
	if (!wl_opt.hip && (wl_opt.driver || wl_opt.driver_ext || wl_opt.modules))
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
	 * involuntary ones, i.e. preemptions. With --nccl: the rank and the
	 * mean time of the step-ending stream syncs. */
	len = snprintf(line, sizeof(line),
		       "workload: pid=%d role=%s steps=%ld threads=%d iters=%ld wall_s=%.4f "
		       "step_ms=%.4f cpu_s=%.4f nvcsw=%ld nivcsw=%ld",
		       (int)getpid(), wl_role, wl_opt.iters * wl_opt.threads, wl_opt.threads,
		       wl_opt.iters, wall, wl_opt.iters ? wall * 1e3 / (double)wl_opt.iters : 0.0,
		       wl_cpu_s(&ru1) - wl_cpu_s(&ru0), ru1.ru_nvcsw - ru0.ru_nvcsw,
		       ru1.ru_nivcsw - ru0.ru_nivcsw);
	if (wl_opt.nccl && len > 0 && (size_t)len < sizeof(line))
		len += snprintf(line + len, sizeof(line) - (size_t)len, " rank=%d nccl_wait_ms=%.4f",
				wl_nccl_rank(), wl_nccl_wait_ms());
	/* One write: the ranks of --fork share stderr, and their lines must not
	 * interleave. */
	fprintf(stderr, "%s\n", line);
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
	/* NCCL: the bytes of each op, count x type size summed over calls. */
	for (int i = 0; i < WL_NOPS; i++) {
		unsigned long long n = atomic_load(&wl_bytes[i]);

		if (n)
			fprintf(f, "bytes %s %llu\n", wl_op_names[i], n);
	}
	/* Readers may poll for the file: it appears complete or not at all. */
	if (fclose(f) || rename(tmp, path)) {
		fprintf(stderr, "workload: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The child's half of --fork: the same loop, then its counts to the parent. */
static void wl_child(int wfd)
{
	struct wl_report rep = { .pid = (int)getpid() };

	wl_role = "child";
	/* Counts made before the fork (--check-errors) belong to the parent. */
	for (int i = 0; i < WL_NOPS; i++) {
		atomic_store(&wl_counts[i], 0);
		atomic_store(&wl_bytes[i], 0);
	}
	if (wl_opt.nccl)
		wl_nccl_set_rank(1);
	wl_run_process();
	for (int i = 0; i < WL_NOPS; i++) {
		rep.counts[i] = atomic_load(&wl_counts[i]);
		rep.bytes[i] = atomic_load(&wl_bytes[i]);
	}
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
	for (int i = 0; i < WL_NOPS; i++) {
		atomic_fetch_add(&wl_counts[i], rep.counts[i]);
		atomic_fetch_add(&wl_bytes[i], rep.bytes[i]);
	}
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
	if (wl_opt.kernel_us >= 0 && wl_opt.hip) {
		/* The HIP shim reads its environment at its first call. */
		char us[64];

		snprintf(us, sizeof(us), "%.3f", wl_opt.kernel_us);
		setenv("SHIM_KERNEL_US", us, 1);
	} else if (wl_opt.kernel_us >= 0) {
		shimSetKernelTime((unsigned long long)(wl_opt.kernel_us * 1000.0));
	}
	if (wl_opt.hip && wl_hip_load())
		return 1;
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
	/* Before the fork: both ranks need the same unique ids. */
	if (wl_opt.nccl && wl_nccl_prepare(wl_opt.threads))
		return 1;

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
