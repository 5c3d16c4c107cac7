/* A CUDA workload that knows what a tracer must see (tests/gpu/, docs/gpu.md):
 * known numbers of every traced call it makes, the time of its kernels from
 * CUDA events, the time of each stream synchronisation from the host clock,
 * and a last phase where a CPU hog shares the feeding thread's core, with the
 * thread's own run-queue delay as the ground truth. Built with nvcc for a
 * real GPU, or with g++ against the shim libraries (GW_SHIM) so CI runs the
 * same phases: only the kernels differ. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#ifdef __CUDACC__
#include <cuda_runtime.h>
#else
#include "shim.h"
#endif

/* The traced ops this program calls, under ingero-top's names. */
#define GW_OPS(X)                                                                                  \
	X(cudaMalloc)                                                                              \
	X(cudaFree)                                                                                \
	X(cudaMallocHost)                                                                          \
	X(cudaFreeHost)                                                                            \
	X(cudaLaunchKernel)                                                                        \
	X(cudaMemcpy)                                                                              \
	X(cudaMemcpyAsync)                                                                         \
	X(cudaStreamSynchronize)                                                                   \
	X(cudaDeviceSynchronize)                                                                   \
	X(cudaEventRecord)                                                                         \
	X(cudaMallocAsync)                                                                         \
	X(cudaFreeAsync)                                                                           \
	X(cudaStreamBeginCapture)                                                                  \
	X(cudaStreamEndCapture)                                                                    \
	X(cudaGraphInstantiate)                                                                    \
	X(cudaGraphLaunch)

#define GW_ENUM(n) OP_##n,
#define GW_NAME(n) #n,
enum gw_op { GW_OPS(GW_ENUM) OP_N };
static const char *const op_names[OP_N] = {GW_OPS(GW_NAME)};
static unsigned long counts[OP_N];

struct opts {
	int iters;	      /* timed steps: spin kernel between two events, then a sync */
	long kernel_us;	      /* the timed kernel's length */
	int copies;	      /* synchronous H2D + D2H copies, and async D2H + sync */
	size_t bytes;	      /* size of each copy */
	int async_allocs;     /* cudaMallocAsync + kernel + cudaFreeAsync */
	int graph_launches;   /* launches of a captured three-kernel graph */
	int launch_calls;     /* empty launches timed for the per-call cost */
	double contend_s;     /* seconds of the contention phase */
	long prep_us;	      /* host work per contention step */
	int cpu;	      /* the shared core, -1: the first allowed */
	const char *expect;   /* op counts (ingero-top's --expect format) */
	const char *report;   /* timings, "key value" lines */
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "gpu_workload: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/* Counts the call, then fails loudly on an error: every count printed is a
 * call that was made. */
#define CK(op, call)                                                                               \
	do {                                                                                       \
		counts[OP_##op]++;                                                                 \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess)                                                             \
			die("%s: %s", #call, cudaGetErrorString(e_));                              \
	} while (0)

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void busy_us(long us)
{
	unsigned long long end = now_ns() + (unsigned long long)us * 1000ull;

	while (now_ns() < end)
		;
}

/* ---- kernels: the only part that differs between a GPU and the shim ------- */

enum kern { K_SPIN, K_SCALE, K_EMPTY };

#ifdef __CUDACC__
__global__ void gw_spin(unsigned long long ns)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
}

__global__ void gw_scale(float *x, size_t n, float a)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		x[i] *= a;
}

__global__ void gw_empty(void) {}

static void launch(enum kern k, unsigned long long ns, float *p, size_t n, cudaStream_t s)
{
	counts[OP_cudaLaunchKernel]++;
	if (k == K_SPIN)
		gw_spin<<<1, 1, 0, s>>>(ns);
	else if (k == K_SCALE)
		gw_scale<<<264, 256, 0, s>>>(p, n, 1.0f);
	else
		gw_empty<<<1, 1, 0, s>>>();
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		die("kernel launch: %s", cudaGetErrorString(e));
}
#else
static void gw_host_kernel(void) {}

/* The shim's kernels last what the thread's kernel time says. */
static void launch(enum kern k, unsigned long long ns, float *p, size_t n, cudaStream_t s)
{
	void *args[] = {&ns, &p, &n};
	dim3 one = {1, 1, 1};

	shimSetThreadKernelTime(k == K_SPIN ? ns : k == K_SCALE ? 20000 : 2000);
	CK(cudaLaunchKernel, cudaLaunchKernel((const void *)gw_host_kernel, one, one, args, 0, s));
}
#endif

/* ---- ground truth ------------------------------------------------------------ */

struct timing {
	unsigned long long sum_ns;
	std::vector<unsigned long long> each;
};

static struct timing sync_all, sync_timed, kern_event, launch_cost;

static void sync_stream(cudaStream_t s, struct timing *t)
{
	unsigned long long t0 = now_ns(), dt;

	CK(cudaStreamSynchronize, cudaStreamSynchronize(s));
	dt = now_ns() - t0;
	sync_all.sum_ns += dt;
	sync_all.each.push_back(dt);
	if (t) {
		t->sum_ns += dt;
		t->each.push_back(dt);
	}
}

static unsigned long long median(std::vector<unsigned long long> v)
{
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

/* run_delay of this thread (ns runnable but not running), from schedstat. */
static unsigned long long run_delay_ns(void)
{
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	fclose(f);
	return wait;
}

/* ---- the phases ------------------------------------------------------------ */

struct gpu {
	cudaStream_t timed, side, work; /* timed: the timed phase only */
	cudaEvent_t e0, e1;
	float *dbuf, *dsmall;
	void *pinned;
	char *pageable;
	size_t n;
};

static void phase_copies(struct gpu *g, const struct opts *o)
{
	for (int i = 0; i < o->copies; i++) {
		CK(cudaMemcpy, cudaMemcpy(g->dbuf, g->pageable, o->bytes, cudaMemcpyHostToDevice));
		CK(cudaMemcpy, cudaMemcpy(g->pageable, g->dbuf, o->bytes, cudaMemcpyDeviceToHost));
		CK(cudaMemcpyAsync, cudaMemcpyAsync(g->pinned, g->dbuf, o->bytes,
						    cudaMemcpyDeviceToHost, g->side));
		sync_stream(g->side, NULL);
	}
}

/* Each step: a spin kernel of kernel_us between two events on the timed
 * stream, a scale kernel on the side stream, then a sync of each. */
static void phase_timed(struct gpu *g, const struct opts *o)
{
	for (int i = 0; i < o->iters; i++) {
		float ms = 0;

		CK(cudaEventRecord, cudaEventRecord(g->e0, g->timed));
		launch(K_SPIN, (unsigned long long)o->kernel_us * 1000ull, NULL, 0, g->timed);
		CK(cudaEventRecord, cudaEventRecord(g->e1, g->timed));
		launch(K_SCALE, 0, g->dbuf, g->n, g->side);
		sync_stream(g->timed, &sync_timed);
		sync_stream(g->side, NULL);
		cudaError_t e = cudaEventElapsedTime(&ms, g->e0, g->e1);
		if (e != cudaSuccess)
			die("cudaEventElapsedTime: %s", cudaGetErrorString(e));
		kern_event.each.push_back((unsigned long long)(ms * 1e6));
		kern_event.sum_ns += (unsigned long long)(ms * 1e6);
	}
}

static void phase_async(struct gpu *g, const struct opts *o)
{
	for (int i = 0; i < o->async_allocs; i++) {
		void *p = NULL;

		CK(cudaMallocAsync, cudaMallocAsync(&p, 1 << 20, g->work));
		launch(K_SCALE, 0, (float *)p, (1 << 20) / sizeof(float), g->work);
		CK(cudaFreeAsync, cudaFreeAsync(p, g->work));
	}
	sync_stream(g->work, NULL);
}

/* Three 100 us kernels captured once, the graph launched graph_launches
 * times, a sync after each launch. */
static void phase_graph(struct gpu *g, const struct opts *o)
{
	cudaGraph_t graph;
	cudaGraphExec_t exec;

	CK(cudaStreamBeginCapture, cudaStreamBeginCapture(g->work, cudaStreamCaptureModeGlobal));
	for (int k = 0; k < 3; k++)
		launch(K_SPIN, 100000, NULL, 0, g->work);
	CK(cudaStreamEndCapture, cudaStreamEndCapture(g->work, &graph));
	CK(cudaGraphInstantiate, cudaGraphInstantiate(&exec, graph, 0));
	for (int i = 0; i < o->graph_launches; i++) {
		CK(cudaGraphLaunch, cudaGraphLaunch(exec, g->work));
		sync_stream(g->work, NULL);
	}
	cudaGraphExecDestroy(exec);
	cudaGraphDestroy(graph);
}

/* Empty launches back to back, a sync every 256: the host time of the
 * launches alone, for the tracer's cost per call as a ratio to untraced. */
static void phase_launch_cost(struct gpu *g, const struct opts *o)
{
	for (int i = 0; i < o->launch_calls; i++) {
		unsigned long long t0 = now_ns();

		launch(K_EMPTY, 0, NULL, 0, g->side);
		launch_cost.sum_ns += now_ns() - t0;
		if (i % 256 == 255)
			sync_stream(g->side, NULL);
	}
	sync_stream(g->side, NULL);
}

static int pick_cpu(int want)
{
	cpu_set_t set;

	if (want >= 0)
		return want;
	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			return c;
	return 0;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* The hog is forked before CUDA starts and waits on a pipe, so the child of
 * a CUDA process never runs with the parent's GPU state. */
static pid_t hog_start(int cpu, int *go_fd)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		char c;

		close(fds[1]);
		prctl(PR_SET_NAME, "gpu-hog");
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (pin(cpu))
			_exit(2);
		if (read(fds[0], &c, 1) != 1)
			_exit(0);
		for (volatile unsigned long x = 0;; x++)
			;
	}
	close(fds[0]);
	*go_fd = fds[1];
	return pid;
}

struct contention {
	int cpu;
	pid_t hog;
	unsigned long long wall_ns, run_delay_ns;
	int steps;
};

/* The feeding thread and the hog on one core: host work, a 200 us kernel and
 * a sync per step, for contend_s seconds. */
static void phase_contention(struct gpu *g, const struct opts *o, struct contention *c, int go_fd)
{
	unsigned long long t0, d0, end;

	if (pin(c->cpu))
		die("cannot pin to CPU %d: %s", c->cpu, strerror(errno));
	if (write(go_fd, "g", 1) != 1)
		die("cannot start the hog: %s", strerror(errno));
	t0 = now_ns();
	d0 = run_delay_ns();
	end = t0 + (unsigned long long)(o->contend_s * 1e9);
	while (now_ns() < end) {
		busy_us(o->prep_us);
		launch(K_SPIN, 200000, NULL, 0, g->work);
		sync_stream(g->work, NULL);
		c->steps++;
	}
	c->wall_ns = now_ns() - t0;
	c->run_delay_ns = run_delay_ns() - d0;
	kill(c->hog, SIGKILL);
	waitpid(c->hog, NULL, 0);
}

/* ---- output ------------------------------------------------------------------ */

static void write_expect(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "pid %d\n", (int)getpid());
	for (int i = 0; i < OP_N; i++)
		fprintf(f, "%s %lu\n", op_names[i], counts[i]);
	fclose(f);
}

static void write_report(const char *path, const struct gpu *g, const struct opts *o,
			 const struct contention *c, const unsigned long long phase_ns[6])
{
	static const char *const phases[6] = {"setup", "copies", "timed", "async", "graph", "launch"};
	FILE *f = path ? fopen(path, "w") : stdout;

	if (!f)
		die("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "pid %d\n", (int)getpid());
	fprintf(f, "stream_timed %p\nstream_side %p\nstream_work %p\n", (void *)g->timed, (void *)g->side,
		(void *)g->work);
	for (int i = 0; i < 6; i++)
		fprintf(f, "phase_%s_ns %llu\n", phases[i], phase_ns[i]);
	fprintf(f, "copy_bytes %zu\n", o->bytes);
	fprintf(f, "timed_iters %d\ntimed_kernel_us %ld\n", o->iters, o->kernel_us);
	fprintf(f, "timed_kernel_event_ns_median %llu\n", median(kern_event.each));
	fprintf(f, "timed_kernel_event_ns_sum %llu\n", kern_event.sum_ns);
	fprintf(f, "timed_sync_host_ns_median %llu\n", median(sync_timed.each));
	fprintf(f, "timed_sync_host_ns_sum %llu\n", sync_timed.sum_ns);
	fprintf(f, "sync_calls %zu\nsync_host_ns_sum %llu\n", sync_all.each.size(), sync_all.sum_ns);
	fprintf(f, "launch_cost_calls %d\n", o->launch_calls);
	fprintf(f, "launch_cost_ns_per_call %.1f\n",
		o->launch_calls ? (double)launch_cost.sum_ns / o->launch_calls : 0.0);
	fprintf(f, "contention_cpu %d\nhog_pid %d\n", c->cpu, (int)c->hog);
	fprintf(f, "contention_steps %d\ncontention_wall_ns %llu\ncontention_run_delay_ns %llu\n",
		c->steps, c->wall_ns, c->run_delay_ns);
	if (path)
		fclose(f);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: gpu_workload [--iters N] [--kernel-us US] [--copies N] [--bytes N]\n"
		"       [--async N] [--graph N] [--launches N] [--contend S] [--prep-us US]\n"
		"       [--cpu N] [--expect FILE] [--report FILE]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--iters")) o->iters = atoi(v);
		else if (!strcmp(a, "--kernel-us")) o->kernel_us = atol(v);
		else if (!strcmp(a, "--copies")) o->copies = atoi(v);
		else if (!strcmp(a, "--bytes")) o->bytes = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--async")) o->async_allocs = atoi(v);
		else if (!strcmp(a, "--graph")) o->graph_launches = atoi(v);
		else if (!strcmp(a, "--launches")) o->launch_calls = atoi(v);
		else if (!strcmp(a, "--contend")) o->contend_s = atof(v);
		else if (!strcmp(a, "--prep-us")) o->prep_us = atol(v);
		else if (!strcmp(a, "--cpu")) o->cpu = atoi(v);
		else if (!strcmp(a, "--expect")) o->expect = v;
		else if (!strcmp(a, "--report")) o->report = v;
		else usage();
	}
	if (o->bytes < 4096 || o->iters < 1 || o->kernel_us < 1)
		usage();
}

int main(int argc, char **argv)
{
	struct opts o = {500, 2000, 20, 64u << 20, 100, 50, 20000, 4.0, 300, -1, NULL, NULL};
	struct contention c = {};
	struct gpu g = {};
	unsigned long long phase_ns[6], t;
	int go_fd = -1;

	parse(argc, argv, &o);
	c.cpu = pick_cpu(o.cpu);
	if (o.contend_s > 0)
		c.hog = hog_start(c.cpu, &go_fd);

	t = now_ns();
	g.n = o.bytes / sizeof(float);
	CK(cudaMalloc, cudaMalloc((void **)&g.dbuf, o.bytes));
	CK(cudaMalloc, cudaMalloc((void **)&g.dsmall, 4096));
	CK(cudaMallocHost, cudaMallocHost(&g.pinned, o.bytes));
	g.pageable = (char *)calloc(1, o.bytes);
	if (!g.pageable)
		die("out of memory");
	if (cudaStreamCreate(&g.timed) || cudaStreamCreate(&g.side) || cudaStreamCreate(&g.work) ||
	    cudaEventCreate(&g.e0) || cudaEventCreate(&g.e1))
		die("cannot create streams and events");
	phase_ns[0] = now_ns() - t;

	t = now_ns(), phase_copies(&g, &o), phase_ns[1] = now_ns() - t;
	t = now_ns(), phase_timed(&g, &o), phase_ns[2] = now_ns() - t;
	t = now_ns(), phase_async(&g, &o), phase_ns[3] = now_ns() - t;
	t = now_ns(), phase_graph(&g, &o), phase_ns[4] = now_ns() - t;
	t = now_ns(), phase_launch_cost(&g, &o), phase_ns[5] = now_ns() - t;
	if (o.contend_s > 0)
		phase_contention(&g, &o, &c, go_fd);

	CK(cudaDeviceSynchronize, cudaDeviceSynchronize());
	CK(cudaFree, cudaFree(g.dsmall));
	CK(cudaFree, cudaFree(g.dbuf));
	CK(cudaFreeHost, cudaFreeHost(g.pinned));
	free(g.pageable);
	if (o.expect)
		write_expect(o.expect);
	write_report(o.report, &g, &o, &c, phase_ns);
	return 0;
}
