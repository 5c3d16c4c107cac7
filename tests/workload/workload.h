/* Shared between the workload's files: its options, the ops it counts (the
 * --expect list) and the helpers that count and check calls. Flags and
 * counts: docs/shim.md. */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <stddef.h>

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
	X(cuGraphLaunch)                                                                           \
	X(cudaLaunchKernelExC)                                                                     \
	X(cudaMallocAsync)                                                                         \
	X(cudaFreeAsync)                                                                           \
	X(cudaMallocHost)                                                                          \
	X(cudaHostAlloc)                                                                           \
	X(cudaFreeHost)                                                                            \
	X(cudaMemset)                                                                              \
	X(cudaMemsetAsync)                                                                         \
	X(cudaEventRecord)                                                                         \
	X(cudaEventQuery)                                                                          \
	X(cudaEventSynchronize)                                                                    \
	X(cudaStreamWaitEvent)                                                                     \
	X(cuLaunchKernelEx)                                                                        \
	X(cuMemAllocAsync)                                                                         \
	X(cuMemFreeAsync)                                                                          \
	X(cuMemcpyDtoD)                                                                            \
	X(cuMemcpyHtoDAsync)                                                                       \
	X(cuMemcpyDtoHAsync)                                                                       \
	X(cuMemcpyDtoDAsync)                                                                       \
	X(cuModuleLoadData)                                                                        \
	X(cuLibraryLoadData)                                                                       \
	X(ncclCommInitRank)                                                                        \
	X(ncclCommDestroy)                                                                         \
	X(ncclAllReduce)                                                                           \
	X(ncclAllGather)                                                                           \
	X(ncclReduceScatter)                                                                       \
	X(ncclBroadcast)                                                                           \
	X(ncclBcast)                                                                               \
	X(ncclReduce)                                                                              \
	X(ncclSend)                                                                                \
	X(ncclRecv)                                                                                \
	X(ncclGroupStart)                                                                          \
	X(ncclGroupEnd)                                                                            \
	X(hipLaunchKernel)                                                                         \
	X(hipModuleLaunchKernel)                                                                   \
	X(hipExtModuleLaunchKernel)                                                                \
	X(hipMemcpy)                                                                               \
	X(hipMemcpyAsync)                                                                          \
	X(hipMemcpyHtoD)                                                                           \
	X(hipMemcpyDtoH)                                                                           \
	X(hipMalloc)                                                                               \
	X(hipFree)                                                                                 \
	X(hipMallocAsync)                                                                          \
	X(hipStreamSynchronize)                                                                    \
	X(hipDeviceSynchronize)                                                                    \
	X(hipEventSynchronize)                                                                     \
	X(hipGraphLaunch)

#define WL_OP_ENUM(s) WL_##s,
enum wl_op { WL_OPS(WL_OP_ENUM) WL_NOPS };

struct wl_opts {
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
	const char *progress; /* --progress FILE: "unix_ns calls" after each iteration */
	int cpu;
	int check_errors;
	/* CUDA 12/13 additions (wl_ext.c) */
	long launch_ex;
	int async_malloc;
	int memset;
	int events;
	int pinned;
	int driver_ext;
	long modules;
	/* NCCL (wl_nccl.c) */
	int nccl;
	unsigned int nccl_types; /* bit per ncclDataType_t */
	unsigned int nccl_ops;	 /* bit per enum wl_nccl_op */
	long nccl_count;
	int nccl_ranks;
	int nccl_rank;
	const char *nccl_id;
	int straggler_rank;
	double straggler_us;
	/* HIP (wl_hip.c) */
	int hip;
};

extern struct wl_opts wl_opt;

/* NCCL calls per step, per data type (--nccl-ops). */
enum wl_nccl_op {
	WL_NCCL_ALLREDUCE,
	WL_NCCL_ALLGATHER,
	WL_NCCL_REDUCESCATTER,
	WL_NCCL_BROADCAST,
	WL_NCCL_BCAST,
	WL_NCCL_REDUCE,
	WL_NCCL_SENDRECV,
	WL_NCCL_NOPS
};

void wl_count(enum wl_op op);
/* NCCL bytes per op, for the "bytes OP N" lines of --expect. */
void wl_count_bytes(enum wl_op op, unsigned long long bytes);
void wl_check(cudaError_t e, const char *what);
void wl_check_cu(CUresult r, const char *what);
void wl_fail(const char *what, int code);
unsigned long long wl_now(void);
void wl_spin_us(double us);
void wl_sleep_us(double us);
/* wl_opts.c: fills wl_opt; -1 after a one-line message on bad flags. */
int wl_parse(int argc, char **argv);
void wl_kernel(void);

/* wl_ext.c: the CUDA 12/13 calls, per thread. */
struct wl_ext {
	cudaStream_t side;
	cudaEvent_t ev;
	void *pin[2];
	CUmodule *mods;
	CUlibrary *libs;
};
void wl_ext_setup(struct wl_ext *x);
void wl_ext_step(struct wl_ext *x, cudaStream_t stream, void *dbuf, void *hbuf, size_t bytes,
		 void **args);
void wl_ext_teardown(struct wl_ext *x);
/* The host buffer of a thread: page-locked with --pinned. */
void *wl_ext_host_buffer(struct wl_ext *x, size_t bytes);

/* wl_nccl.c: one communicator per worker thread; thread i of every rank
 * uses unique id i. */
struct wl_nccl;
int wl_nccl_prepare(int nthreads); /* in the first process, before any fork */
void wl_nccl_set_rank(int rank);   /* in a forked rank */
int wl_nccl_rank(void);
struct wl_nccl *wl_nccl_setup(int thread_idx);
void wl_nccl_step(struct wl_nccl *n, cudaStream_t stream, void *dbuf);
void wl_nccl_teardown(struct wl_nccl *n);
/* Time in the step-ending stream syncs of NCCL steps, all threads. */
void wl_nccl_wait_add(unsigned long long ns);
double wl_nccl_wait_ms(void);
int wl_nccl_parse_types(const char *list, unsigned int *out);
int wl_nccl_parse_ops(const char *list, unsigned int *out);

/* wl_hip.c: the loop over the HIP shim, loaded with dlopen. */
int wl_hip_load(void);
void wl_hip_loop(void);

#endif /* WORKLOAD_H */
