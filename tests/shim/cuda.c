/* Shim libcuda.so.1: the CUDA 12 driver API over a simulated GPU, so that the
 * tracer can be tested with real uprobes on a machine without one. Owns the
 * device model (per-stream timelines, fake device memory, graphs) and the
 * spin-then-sleep wait that CUDA's default "auto" scheduling uses. Timing
 * model and environment knobs: docs/shim.md. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

/*
 * Per exported symbol call counters. Besides SHIM_STATS, they keep every
 * exported body distinct: gcc's identical code folding would otherwise turn
 * cuMemAlloc into a jump to cuMemAlloc_v2, and a uprobe on each would then
 * fire twice for one call.
 */
#define DRV_SYMS(X)                                                                                \
	X(cuInit)                                                                                  \
	X(cuLaunchKernel)                                                                          \
	X(cuMemcpy)                                                                                \
	X(cuMemcpyAsync)                                                                           \
	X(cuMemcpyHtoD_v2)                                                                         \
	X(cuMemcpyHtoD)                                                                            \
	X(cuMemcpyDtoH_v2)                                                                         \
	X(cuMemcpyDtoH)                                                                            \
	X(cuMemAlloc_v2)                                                                           \
	X(cuMemAlloc)                                                                              \
	X(cuMemAllocManaged)                                                                       \
	X(cuMemFree_v2)                                                                            \
	X(cuMemFree)                                                                               \
	X(cuCtxSynchronize)                                                                        \
	X(cuStreamSynchronize)                                                                     \
	X(cuGraphLaunch)                                                                           \
	X(cuStreamCreate)                                                                          \
	X(cuStreamDestroy_v2)

#define DRV_SYM_ENUM(s) DRV_SYM_##s,
#define DRV_SYM_NAME(s) #s,
enum drv_sym { DRV_SYMS(DRV_SYM_ENUM) DRV_NSYMS };
static const char *const drv_sym_names[DRV_NSYMS] = { DRV_SYMS(DRV_SYM_NAME) };
static _Atomic unsigned long long drv_calls[DRV_NSYMS];

#define DRV_COUNT(s) atomic_fetch_add_explicit(&drv_calls[DRV_SYM_##s], 1, memory_order_relaxed)

typedef unsigned long long u64;

enum drv_sync_mode { DRV_SYNC_AUTO, DRV_SYNC_BLOCK, DRV_SYNC_SPIN, DRV_SYNC_YIELD };

/* Fake device addresses: above the 47-bit user address space, so they can
 * never alias host memory and fault if a program dereferences one. */
#define DRV_DPTR_BASE 0x00c0000000000000ULL
#define DRV_DPTR_ALIGN 512ULL
#define DRV_HASH_SIZE 1024
#define DRV_STREAM_MAGIC 0x5354524du
#define DRV_GRAPH_MAGIC 0x47525048u
#define DRV_EXEC_MAGIC 0x47455845u

struct CUstream_st {
	unsigned int magic;
	int legacy;      /* the legacy default stream (handle 0 or 0x1) */
	int blocking;    /* orders itself after legacy-stream work */
	int capturing;
	u64 busy_until;  /* CLOCK_MONOTONIC ns when its queued work ends */
	u64 cap_ns;      /* device time recorded by the current capture */
	unsigned int cap_nodes;
};

/* A graph and an executable graph are the same thing here: total device time. */
struct CUgraph_st {
	unsigned int magic;
	unsigned int nodes;
	u64 dur_ns;
};

struct CUgraphExec_st {
	unsigned int magic;
	unsigned int nodes;
	u64 dur_ns;
};

struct drv_alloc {
	CUdeviceptr base;
	size_t size;     /* rounded size charged to the memory limit */
	int managed;     /* base is real host memory from mmap */
	struct drv_alloc *next;
};

/* Read once from the environment; the three *_ns marked atomic can be changed
 * at run time by the shimSet* functions. */
static struct {
	_Atomic u64 launch_ns;
	_Atomic u64 kernel_ns;
	_Atomic u64 malloc_ns;
	u64 free_ns;
	u64 copy_fixed_ns;
	double copy_gbps; /* GB/s == bytes per ns */
	u64 spin_ns;
	int sync_mode;
	u64 mem_limit;
} drv_cfg;

/* The device. Everything below is under drv_lock. */
static pthread_mutex_t drv_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUstream_st drv_legacy = { .magic = DRV_STREAM_MAGIC, .legacy = 1, .blocking = 1 };
static u64 drv_dev_busy;      /* end of all queued work */
static u64 drv_blocking_busy; /* end of queued work on blocking streams */
static u64 drv_next_dptr = DRV_DPTR_BASE;
static u64 drv_mem_used;
static struct drv_alloc *drv_allocs[DRV_HASH_SIZE];
static struct drv_alloc *drv_managed; /* managed allocations, for range lookups */

static __thread struct CUstream_st drv_ptds; /* the per-thread default stream */
static __thread u64 drv_tl_kernel_ns = SHIM_TIME_UNSET;
static __thread u64 drv_tl_malloc_ns = SHIM_TIME_UNSET;
static __thread u64 drv_tl_launch_ns = SHIM_TIME_UNSET;
static __thread int drv_tl_slack_set;

static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static u64 drv_env_us(const char *name, double def_us)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (!s || !*s)
		return (u64)(def_us * 1000.0);
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v < 0 || v > 1e9) {
		fprintf(stderr, "shim: ignoring %s=%s: not a number of microseconds\n", name, s);
		return (u64)(def_us * 1000.0);
	}
	return (u64)(v * 1000.0 + 0.5);
}

static void drv_atfork_prepare(void)
{
	pthread_mutex_lock(&drv_lock);
}

static void drv_atfork_parent(void)
{
	pthread_mutex_unlock(&drv_lock);
}

/* The child is a new process: its counters start from zero so SHIM_STATS
 * reports only what it called itself. */
static void drv_atfork_child(void)
{
	for (int i = 0; i < DRV_NSYMS; i++)
		atomic_store(&drv_calls[i], 0);
	pthread_mutex_unlock(&drv_lock);
}

static void drv_init_once(void)
{
	const char *s;

	drv_cfg.launch_ns = drv_env_us("SHIM_LAUNCH_US", 5);
	drv_cfg.kernel_ns = drv_env_us("SHIM_KERNEL_US", 100);
	drv_cfg.malloc_ns = drv_env_us("SHIM_MALLOC_US", 20);
	drv_cfg.free_ns = drv_env_us("SHIM_FREE_US", 5);
	drv_cfg.copy_fixed_ns = drv_env_us("SHIM_COPY_US", 10);
	drv_cfg.spin_ns = drv_env_us("SHIM_SPIN_US", 200);
	drv_cfg.copy_gbps = 10.0;
	s = getenv("SHIM_COPY_GBPS");
	if (s && *s) {
		char *end;
		double v = strtod(s, &end);

		if (*end || !(v > 0))
			fprintf(stderr, "shim: ignoring SHIM_COPY_GBPS=%s: not a positive number\n", s);
		else
			drv_cfg.copy_gbps = v;
	}
	drv_cfg.mem_limit = 16ULL << 30;
	s = getenv("SHIM_MEM_MB");
	if (s && *s) {
		char *end;
		unsigned long long v = strtoull(s, &end, 10);

		if (*end || !v)
			fprintf(stderr, "shim: ignoring SHIM_MEM_MB=%s: not a positive integer\n", s);
		else
			drv_cfg.mem_limit = v << 20;
	}
	drv_cfg.sync_mode = DRV_SYNC_AUTO;
	s = getenv("SHIM_SYNC");
	if (s && *s) {
		if (!strcmp(s, "block"))
			drv_cfg.sync_mode = DRV_SYNC_BLOCK;
		else if (!strcmp(s, "spin"))
			drv_cfg.sync_mode = DRV_SYNC_SPIN;
		else if (!strcmp(s, "yield"))
			drv_cfg.sync_mode = DRV_SYNC_YIELD;
		else if (strcmp(s, "auto"))
			fprintf(stderr, "shim: ignoring SHIM_SYNC=%s: want auto, block, spin or yield\n",
				s);
	}
	pthread_atfork(drv_atfork_prepare, drv_atfork_parent, drv_atfork_child);
}

static inline void drv_init(void)
{
	pthread_once(&drv_once, drv_init_once);
}

static inline u64 drv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

static inline void drv_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static inline u64 drv_max(u64 a, u64 b)
{
	return a > b ? a : b;
}

/* Burns CPU like the driver does while it builds a launch or an allocation:
 * the caller stays runnable, so a CPU hog shows up as preemption. */
static void drv_spin(u64 ns)
{
	u64 deadline;

	if (!ns)
		return;
	deadline = drv_now() + ns;
	while (drv_now() < deadline)
		drv_relax();
}

/*
 * Waits for the device the way CUDA's auto schedule does: sleep while the end
 * is far away, spin through the last SHIM_SPIN_US. The thread is then mostly
 * blocked during a long wait, and runnable (preemptible) near its end.
 * Absolute-time sleeps keep the total exact: a timer never fires early, and
 * the spin absorbs the wake-up latency.
 */
static void drv_wait_until(u64 deadline)
{
	u64 spin = drv_cfg.spin_ns;
	u64 now = drv_now();

	if (now >= deadline)
		return;
	if (drv_cfg.sync_mode == DRV_SYNC_BLOCK) {
		spin = 0;
		/* With nothing to absorb the default 50 us timer slack, a pure
		 * sleep would end late by that much; 1 ns keeps syncs exact. */
		if (!drv_tl_slack_set) {
			prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
			drv_tl_slack_set = 1;
		}
	}
	if (drv_cfg.sync_mode != DRV_SYNC_SPIN && drv_cfg.sync_mode != DRV_SYNC_YIELD &&
	    deadline - now > spin) {
		u64 wake = deadline - spin;
		struct timespec ts = { .tv_sec = (time_t)(wake / 1000000000ULL),
				       .tv_nsec = (long)(wake % 1000000000ULL) };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	while (drv_now() < deadline) {
		if (drv_cfg.sync_mode == DRV_SYNC_YIELD)
			sched_yield();
		else
			drv_relax();
	}
}

static u64 drv_kernel_ns(void)
{
	return drv_tl_kernel_ns != SHIM_TIME_UNSET ? drv_tl_kernel_ns : atomic_load(&drv_cfg.kernel_ns);
}

static u64 drv_launch_ns(void)
{
	return drv_tl_launch_ns != SHIM_TIME_UNSET ? drv_tl_launch_ns : atomic_load(&drv_cfg.launch_ns);
}

static u64 drv_malloc_ns(void)
{
	return drv_tl_malloc_ns != SHIM_TIME_UNSET ? drv_tl_malloc_ns : atomic_load(&drv_cfg.malloc_ns);
}

static u64 drv_copy_ns(size_t bytes)
{
	return drv_cfg.copy_fixed_ns + (u64)((double)bytes / drv_cfg.copy_gbps);
}

/* Maps a handle to its stream; NULL when the handle is not a live stream.
 * Handles 0 and CU_STREAM_LEGACY are the legacy default stream. Lock held. */
static struct CUstream_st *drv_stream(CUstream h)
{
	if (!h || h == CU_STREAM_LEGACY)
		return &drv_legacy;
	if (h == CU_STREAM_PER_THREAD) {
		if (drv_ptds.magic != DRV_STREAM_MAGIC) {
			drv_ptds.magic = DRV_STREAM_MAGIC;
			drv_ptds.blocking = 1;
		}
		return &drv_ptds;
	}
	return h->magic == DRV_STREAM_MAGIC ? h : NULL;
}

/*
 * Puts dur ns of work at the end of stream s and returns when it will end.
 * Legacy default stream semantics, as in CUDA: work on the legacy stream
 * waits for all blocking streams, and work on a blocking stream waits for the
 * legacy stream. Lock held.
 */
static u64 drv_queue(struct CUstream_st *s, u64 now, u64 dur)
{
	u64 start = drv_max(now, s->busy_until);

	if (s->legacy)
		start = drv_max(start, drv_blocking_busy);
	else if (s->blocking)
		start = drv_max(start, drv_legacy.busy_until);
	s->busy_until = start + dur;
	drv_dev_busy = drv_max(drv_dev_busy, s->busy_until);
	if (s->blocking)
		drv_blocking_busy = drv_max(drv_blocking_busy, s->busy_until);
	return s->busy_until;
}

static inline unsigned int drv_hash(CUdeviceptr p)
{
	return (unsigned int)((p >> 9) ^ (p >> 21)) & (DRV_HASH_SIZE - 1);
}

static inline int drv_is_fake(CUdeviceptr p)
{
	return p >= DRV_DPTR_BASE && p < DRV_DPTR_BASE + (1ULL << 52);
}

/* Is [p, p + n) device memory a copy may touch? Fake addresses only need to be
 * in the range handed out so far; managed ones must be inside one live
 * allocation, because they are real host memory. Lock held. */
static int drv_dptr_ok(CUdeviceptr p, size_t n)
{
	if (drv_is_fake(p))
		return p < drv_next_dptr && n <= drv_next_dptr - p;
	for (struct drv_alloc *a = drv_managed; a; a = a->next)
		if (p >= a->base && p - a->base <= a->size && n <= a->size - (p - a->base))
			return 1;
	return 0;
}

/* A synchronous copy on the legacy stream: it waits for the device's queued
 * work, then for the transfer itself, and only then moves bytes that are
 * really in host memory (host or managed on both sides). */
static CUresult drv_copy_sync(void *dst, const void *src, size_t n, int check_dst, int check_src)
{
	u64 end;

	if (n && (!dst || !src))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&drv_lock);
	if ((check_dst && !drv_dptr_ok((CUdeviceptr)dst, n)) ||
	    (check_src && !drv_dptr_ok((CUdeviceptr)src, n))) {
		pthread_mutex_unlock(&drv_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	end = drv_queue(&drv_legacy, drv_now(), drv_copy_ns(n));
	pthread_mutex_unlock(&drv_lock);
	drv_wait_until(end);
	if (n && !drv_is_fake((CUdeviceptr)dst) && !drv_is_fake((CUdeviceptr)src))
		memmove(dst, src, n);
	return CUDA_SUCCESS;
}

static CUresult drv_alloc(CUdeviceptr *dptr, size_t bytesize, int managed, unsigned int flags)
{
	struct drv_alloc *a;
	size_t size;
	void *host = NULL;

	if (!dptr || !bytesize || bytesize > (1ULL << 48))
		return CUDA_ERROR_INVALID_VALUE;
	if (managed && flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	size = (bytesize + DRV_DPTR_ALIGN - 1) & ~(DRV_DPTR_ALIGN - 1);
	/* The allocator's CPU cost, outside the lock: one slow allocation must
	 * not serialise the other threads. */
	drv_spin(drv_malloc_ns());
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (managed) {
		/* Managed memory is usable from the host, so it must be real.
		 * Anonymous pages cost nothing until touched. */
		host = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (host == MAP_FAILED) {
			free(a);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	pthread_mutex_lock(&drv_lock);
	if (drv_mem_used + size > drv_cfg.mem_limit) {
		pthread_mutex_unlock(&drv_lock);
		if (host)
			munmap(host, size);
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	drv_mem_used += size;
	a->size = size;
	a->managed = managed;
	if (managed) {
		a->base = (CUdeviceptr)host;
		a->next = drv_managed;
		drv_managed = a;
	} else {
		a->base = drv_next_dptr;
		drv_next_dptr += size + DRV_DPTR_ALIGN; /* a gap catches overruns */
		a->next = drv_allocs[drv_hash(a->base)];
		drv_allocs[drv_hash(a->base)] = a;
	}
	*dptr = a->base;
	pthread_mutex_unlock(&drv_lock);
	return CUDA_SUCCESS;
}

/* Frees like cudaFree does in real CUDA: an implicit device synchronisation
 * first, then a little CPU work. */
static CUresult drv_free(CUdeviceptr dptr)
{
	struct drv_alloc **pp, *a = NULL;
	u64 end;

	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&drv_lock);
	pp = drv_is_fake(dptr) ? &drv_allocs[drv_hash(dptr)] : &drv_managed;
	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->base == dptr) {
			a = *pp;
			*pp = a->next;
			break;
		}
	}
	if (!a) {
		pthread_mutex_unlock(&drv_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	drv_mem_used -= a->size;
	end = drv_dev_busy;
	pthread_mutex_unlock(&drv_lock);
	drv_wait_until(end);
	drv_spin(drv_cfg.free_ns);
	if (a->managed)
		munmap((void *)a->base, a->size);
	free(a);
	return CUDA_SUCCESS;
}

/* ---- exported driver API ------------------------------------------------ */

CUresult cuInit(unsigned int flags)
{
	DRV_COUNT(cuInit);
	drv_init();
	return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
			unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
			unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
			void **kernelParams, void **extra)
{
	struct CUstream_st *s;
	u64 dur;

	DRV_COUNT(cuLaunchKernel);
	drv_init();
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!gridDimX || !gridDimY || !gridDimZ || !blockDimX || !blockDimY || !blockDimZ ||
	    (u64)blockDimX * blockDimY * blockDimZ > 1024 || (kernelParams && extra))
		return CUDA_ERROR_INVALID_VALUE;
	drv_spin(drv_launch_ns());
	dur = drv_kernel_ns();
	pthread_mutex_lock(&drv_lock);
	s = drv_stream(hStream);
	if (s && s->capturing) {
		s->cap_ns += dur;
		s->cap_nodes++;
	} else if (s) {
		drv_queue(s, drv_now(), dur);
	}
	pthread_mutex_unlock(&drv_lock);
	return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	DRV_COUNT(cuMemcpy);
	drv_init();
	/* Unified addressing: either side may be host or device memory. */
	return drv_copy_sync((void *)dst, (const void *)src, ByteCount, 0, 0);
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
	struct CUstream_st *s;
	u64 dur;

	DRV_COUNT(cuMemcpyAsync);
	drv_init();
	if (ByteCount && (!dst || !src))
		return CUDA_ERROR_INVALID_VALUE;
	/* Enqueueing a copy costs about as much CPU as a launch. */
	drv_spin(drv_launch_ns());
	dur = drv_copy_ns(ByteCount);
	pthread_mutex_lock(&drv_lock);
	s = drv_stream(hStream);
	if (s && s->capturing) {
		s->cap_ns += dur;
		s->cap_nodes++;
	} else if (s) {
		drv_queue(s, drv_now(), dur);
	}
	pthread_mutex_unlock(&drv_lock);
	return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	DRV_COUNT(cuMemcpyHtoD_v2);
	drv_init();
	return drv_copy_sync((void *)dstDevice, srcHost, ByteCount, 1, 0);
}

CUresult cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	DRV_COUNT(cuMemcpyHtoD);
	drv_init();
	return drv_copy_sync((void *)dstDevice, srcHost, ByteCount, 1, 0);
}

CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	DRV_COUNT(cuMemcpyDtoH_v2);
	drv_init();
	return drv_copy_sync(dstHost, (const void *)srcDevice, ByteCount, 0, 1);
}

CUresult cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	DRV_COUNT(cuMemcpyDtoH);
	drv_init();
	return drv_copy_sync(dstHost, (const void *)srcDevice, ByteCount, 0, 1);
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	DRV_COUNT(cuMemAlloc_v2);
	drv_init();
	return drv_alloc(dptr, bytesize, 0, 0);
}

CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
	DRV_COUNT(cuMemAlloc);
	drv_init();
	return drv_alloc(dptr, bytesize, 0, 0);
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	DRV_COUNT(cuMemAllocManaged);
	drv_init();
	return drv_alloc(dptr, bytesize, 1, flags);
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	DRV_COUNT(cuMemFree_v2);
	drv_init();
	return drv_free(dptr);
}

CUresult cuMemFree(CUdeviceptr dptr)
{
	DRV_COUNT(cuMemFree);
	drv_init();
	return drv_free(dptr);
}

CUresult cuCtxSynchronize(void)
{
	u64 end;

	DRV_COUNT(cuCtxSynchronize);
	drv_init();
	pthread_mutex_lock(&drv_lock);
	end = drv_dev_busy;
	pthread_mutex_unlock(&drv_lock);
	drv_wait_until(end);
	return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream hStream)
{
	struct CUstream_st *s;
	CUresult ret = CUDA_SUCCESS;
	u64 end = 0;

	DRV_COUNT(cuStreamSynchronize);
	drv_init();
	pthread_mutex_lock(&drv_lock);
	s = drv_stream(hStream);
	if (!s)
		ret = CUDA_ERROR_INVALID_HANDLE;
	else if (s->capturing)
		ret = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	else if (s->legacy) /* the legacy stream is ordered after blocking streams */
		end = drv_max(s->busy_until, drv_blocking_busy);
	else
		end = s->busy_until;
	pthread_mutex_unlock(&drv_lock);
	if (ret == CUDA_SUCCESS)
		drv_wait_until(end);
	return ret;
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	struct CUstream_st *s;
	u64 dur;

	DRV_COUNT(cuGraphLaunch);
	drv_init();
	if (!hGraphExec || hGraphExec->magic != DRV_EXEC_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	/* One launch worth of CPU for the whole graph: that is the point of
	 * graphs. */
	drv_spin(drv_launch_ns());
	dur = hGraphExec->dur_ns;
	pthread_mutex_lock(&drv_lock);
	s = drv_stream(hStream);
	if (s && s->capturing) {
		s->cap_ns += dur;
		s->cap_nodes += hGraphExec->nodes;
	} else if (s) {
		drv_queue(s, drv_now(), dur);
	}
	pthread_mutex_unlock(&drv_lock);
	return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	struct CUstream_st *s;

	DRV_COUNT(cuStreamCreate);
	drv_init();
	if (!phStream || (Flags & ~CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	s = calloc(1, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->magic = DRV_STREAM_MAGIC;
	s->blocking = !(Flags & CU_STREAM_NON_BLOCKING);
	*phStream = s;
	return CUDA_SUCCESS;
}

/* Returns at once even with work pending, as CUDA does; the work still
 * counts in the device timeline. */
CUresult cuStreamDestroy_v2(CUstream hStream)
{
	struct CUstream_st *s;

	DRV_COUNT(cuStreamDestroy_v2);
	drv_init();
	pthread_mutex_lock(&drv_lock);
	s = drv_stream(hStream);
	if (s && (s->legacy || s == &drv_ptds))
		s = NULL;
	if (s)
		s->magic = 0;
	pthread_mutex_unlock(&drv_lock);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	free(s);
	return CUDA_SUCCESS;
}

/* ---- shim-only controls -------------------------------------------------- */

void shimSetKernelTime(unsigned long long ns)
{
	drv_init();
	atomic_store(&drv_cfg.kernel_ns, ns);
}

void shimSetMallocTime(unsigned long long ns)
{
	drv_init();
	atomic_store(&drv_cfg.malloc_ns, ns);
}

void shimSetLaunchTime(unsigned long long ns)
{
	drv_init();
	atomic_store(&drv_cfg.launch_ns, ns);
}

void shimSetThreadKernelTime(unsigned long long ns)
{
	drv_tl_kernel_ns = ns;
}

void shimSetThreadMallocTime(unsigned long long ns)
{
	drv_tl_malloc_ns = ns;
}

void shimSetThreadLaunchTime(unsigned long long ns)
{
	drv_tl_launch_ns = ns;
}

unsigned long long shimNow(void)
{
	return drv_now();
}

CUresult shimCaptureBegin(CUstream hStream)
{
	struct CUstream_st *s;
	CUresult ret = CUDA_SUCCESS;

	drv_init();
	pthread_mutex_lock(&drv_lock);
	s = drv_stream(hStream);
	if (!s)
		ret = CUDA_ERROR_INVALID_HANDLE;
	else if (s->legacy)
		ret = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	else if (s->capturing)
		ret = CUDA_ERROR_ILLEGAL_STATE;
	else {
		s->capturing = 1;
		s->cap_ns = 0;
		s->cap_nodes = 0;
	}
	pthread_mutex_unlock(&drv_lock);
	return ret;
}

CUresult shimCaptureEnd(CUstream hStream, CUgraph *phGraph)
{
	struct CUstream_st *s;
	struct CUgraph_st *g;

	drv_init();
	if (!phGraph)
		return CUDA_ERROR_INVALID_VALUE;
	g = calloc(1, sizeof(*g));
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&drv_lock);
	s = drv_stream(hStream);
	if (s && s->capturing) {
		g->magic = DRV_GRAPH_MAGIC;
		g->dur_ns = s->cap_ns;
		g->nodes = s->cap_nodes;
		s->capturing = 0;
	}
	pthread_mutex_unlock(&drv_lock);
	if (!g->magic) {
		free(g);
		return s ? CUDA_ERROR_STREAM_CAPTURE_UNMATCHED : CUDA_ERROR_INVALID_HANDLE;
	}
	*phGraph = g;
	return CUDA_SUCCESS;
}

CUresult shimGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph)
{
	struct CUgraphExec_st *e;

	drv_init();
	if (!phGraphExec)
		return CUDA_ERROR_INVALID_VALUE;
	if (!hGraph || hGraph->magic != DRV_GRAPH_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->magic = DRV_EXEC_MAGIC;
	e->nodes = hGraph->nodes;
	e->dur_ns = hGraph->dur_ns;
	*phGraphExec = e;
	return CUDA_SUCCESS;
}

CUresult shimGraphDestroy(CUgraph hGraph)
{
	if (!hGraph || hGraph->magic != DRV_GRAPH_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	hGraph->magic = 0;
	free(hGraph);
	return CUDA_SUCCESS;
}

CUresult shimGraphExecDestroy(CUgraphExec hGraphExec)
{
	if (!hGraphExec || hGraphExec->magic != DRV_EXEC_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	hGraphExec->magic = 0;
	free(hGraphExec);
	return CUDA_SUCCESS;
}

/* SHIM_STATS=FILE: at exit, append "PID SYMBOL COUNT" for every exported
 * driver symbol this process called, in one write so that processes sharing
 * the file do not interleave. Tests compare it with what a tracer saw. */
__attribute__((destructor)) static void drv_write_stats(void)
{
	const char *path = getenv("SHIM_STATS");
	char buf[4096];
	size_t len = 0;
	int fd;

	if (!path || !*path)
		return;
	for (int i = 0; i < DRV_NSYMS; i++) {
		u64 n = atomic_load(&drv_calls[i]);

		if (n && len < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%d %s %llu\n",
						(int)getpid(), drv_sym_names[i], n);
	}
	if (!len)
		return;
	if (len > sizeof(buf))
		len = sizeof(buf);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, buf, len) < 0)
		fprintf(stderr, "shim: cannot write %s: %s\n", path, strerror(errno));
	close(fd);
}
