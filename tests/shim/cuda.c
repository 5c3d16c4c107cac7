/* Shim libcuda.so.1: the CUDA 12/13 driver API calls that ingero-top traces,
 * over the simulated GPU of simgpu.c, so that the tracer can be tested with
 * real uprobes on a machine without one. Each exported function has its own
 * body (one call fires one uprobe). Timing model and environment knobs:
 * docs/shim.md. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "simgpu.h"
#include "stats.h"

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
	X(cuStreamDestroy_v2)                                                                      \
	X(cuLaunchKernelEx)                                                                        \
	X(cuMemAllocAsync)                                                                         \
	X(cuMemFreeAsync)                                                                          \
	X(cuMemcpyDtoD_v2)                                                                         \
	X(cuMemcpyDtoD)                                                                            \
	X(cuMemcpyHtoDAsync_v2)                                                                    \
	X(cuMemcpyHtoDAsync)                                                                       \
	X(cuMemcpyDtoHAsync_v2)                                                                    \
	X(cuMemcpyDtoHAsync)                                                                       \
	X(cuMemcpyDtoDAsync_v2)                                                                    \
	X(cuMemcpyDtoDAsync)                                                                       \
	X(cuModuleLoadData)                                                                        \
	X(cuModuleGetFunction)                                                                     \
	X(cuModuleUnload)                                                                          \
	X(cuLibraryLoadData)                                                                       \
	X(cuLibraryUnload)                                                                         \
	X(cuMemAllocHost_v2)                                                                       \
	X(cuMemAllocHost)                                                                          \
	X(cuMemHostAlloc)                                                                          \
	X(cuMemFreeHost)                                                                           \
	X(cuMemsetD8_v2)                                                                           \
	X(cuMemsetD8)                                                                              \
	X(cuMemsetD8Async)                                                                         \
	X(cuEventCreate)                                                                           \
	X(cuEventDestroy_v2)                                                                       \
	X(cuEventDestroy)                                                                          \
	X(cuEventRecord)                                                                           \
	X(cuEventQuery)                                                                            \
	X(cuEventSynchronize)                                                                      \
	X(cuEventElapsedTime)                                                                      \
	X(cuStreamWaitEvent)

enum drv_sym { DRV_SYMS(SHIM_SYM_ENUM) DRV_NSYMS };
static const char *const drv_sym_names[DRV_NSYMS] = {DRV_SYMS(SHIM_SYM_NAME)};
static _Atomic unsigned long long drv_calls[DRV_NSYMS];

/* Counts the call and initialises the device on first use. */
#define DRV_ENTER(s)                                                                               \
	do {                                                                                       \
		SHIM_COUNT(drv_calls, s);                                                          \
		sim_init();                                                                        \
	} while (0)

#define DRV_MODULE_MAGIC 0x4d4f444cu
#define DRV_LIBRARY_MAGIC 0x4c494252u

/* A loaded module or library; its functions are fake handles inside it. */
struct drv_module {
	unsigned int magic;
	char funcs[64];
};

static void drv_atfork_child(void)
{
	for (int i = 0; i < DRV_NSYMS; i++)
		atomic_store(&drv_calls[i], 0);
}

/* After fork() the child's SHIM_STATS counters start from zero. */
__attribute__((constructor)) static void drv_ctor(void)
{
	pthread_atfork(NULL, NULL, drv_atfork_child);
}

static CUresult drv_res(int st)
{
	switch (st) {
	case SIM_OK:
		return CUDA_SUCCESS;
	case SIM_EINVAL:
		return CUDA_ERROR_INVALID_VALUE;
	case SIM_ENOMEM:
		return CUDA_ERROR_OUT_OF_MEMORY;
	case SIM_EHANDLE:
		return CUDA_ERROR_INVALID_HANDLE;
	case SIM_ESTATE:
		return CUDA_ERROR_ILLEGAL_STATE;
	case SIM_ECAPTURE:
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	case SIM_EUNMATCHED:
		return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
	case SIM_ENOTREADY:
		return CUDA_ERROR_NOT_READY;
	default:
		return CUDA_ERROR_UNKNOWN;
	}
}

static CUresult drv_launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			   unsigned int bx, unsigned int by, unsigned int bz, CUstream hStream,
			   void **kernelParams, void **extra)
{
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!gx || !gy || !gz || !bx || !by || !bz || (u64)bx * by * bz > 1024 ||
	    (kernelParams && extra))
		return CUDA_ERROR_INVALID_VALUE;
	return drv_res(sim_launch(hStream, sim_kernel_ns(), 1, 1));
}

/* A copy queued on a stream: costs about as much CPU as a launch. */
static CUresult drv_copy_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream,
			       int check_dst, int check_src)
{
	if (n && (!dst || !src))
		return CUDA_ERROR_INVALID_VALUE;
	if ((check_dst && !sim_dptr_ok(dst, n)) || (check_src && !sim_dptr_ok(src, n)))
		return CUDA_ERROR_INVALID_VALUE;
	return drv_res(sim_launch(hStream, sim_copy_ns(n), 1, 1));
}

/* Memset runs on a stream and takes the time of a copy of that size; on
 * managed or page-locked memory the bytes are set at once. */
static CUresult drv_memset(CUdeviceptr dst, unsigned char uc, size_t n, CUstream hStream)
{
	void *host;

	if (!dst || !sim_dptr_ok(dst, n))
		return CUDA_ERROR_INVALID_VALUE;
	host = sim_host_bytes(dst);
	if (host && n)
		memset(host, uc, n);
	return drv_res(sim_launch(hStream, sim_copy_ns(n), 1, 1));
}

static CUresult drv_module_load(struct drv_module **out, const void *image, unsigned int magic)
{
	struct drv_module *m;

	if (!out || !image)
		return CUDA_ERROR_INVALID_VALUE;
	sim_module_load_cost();
	m = calloc(1, sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->magic = magic;
	*out = m;
	return CUDA_SUCCESS;
}

static CUresult drv_module_unload(struct drv_module *m, unsigned int magic)
{
	if (!m || m->magic != magic)
		return CUDA_ERROR_INVALID_HANDLE;
	m->magic = 0;
	free(m);
	return CUDA_SUCCESS;
}

static CUresult drv_host_alloc(void **pp, size_t bytesize, unsigned int flags)
{
	if (flags & ~(unsigned int)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
				    CU_MEMHOSTALLOC_WRITECOMBINED))
		return CUDA_ERROR_INVALID_VALUE;
	return drv_res(sim_host_alloc(pp, bytesize));
}

/* ---- exported driver API: CUDA 12 ---------------------------------------- */

CUresult cuInit(unsigned int flags)
{
	DRV_ENTER(cuInit);
	return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
			unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
			unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
			void **kernelParams, void **extra)
{
	DRV_ENTER(cuLaunchKernel);
	return drv_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, hStream,
			  kernelParams, extra);
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	DRV_ENTER(cuMemcpy);
	/* Unified addressing: either side may be host or device memory. */
	return drv_res(sim_copy_sync((void *)dst, (const void *)src, ByteCount, 0, 0));
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
	DRV_ENTER(cuMemcpyAsync);
	return drv_copy_async(dst, src, ByteCount, hStream, 0, 0);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	DRV_ENTER(cuMemcpyHtoD_v2);
	return drv_res(sim_copy_sync((void *)dstDevice, srcHost, ByteCount, 1, 0));
}

CUresult cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	DRV_ENTER(cuMemcpyHtoD);
	return drv_res(sim_copy_sync((void *)dstDevice, srcHost, ByteCount, 1, 0));
}

CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	DRV_ENTER(cuMemcpyDtoH_v2);
	return drv_res(sim_copy_sync(dstHost, (const void *)srcDevice, ByteCount, 0, 1));
}

CUresult cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	DRV_ENTER(cuMemcpyDtoH);
	return drv_res(sim_copy_sync(dstHost, (const void *)srcDevice, ByteCount, 0, 1));
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	DRV_ENTER(cuMemAlloc_v2);
	return drv_res(sim_alloc(dptr, bytesize, 0, 0, 1));
}

CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
	DRV_ENTER(cuMemAlloc);
	return drv_res(sim_alloc(dptr, bytesize, 0, 0, 1));
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	DRV_ENTER(cuMemAllocManaged);
	return drv_res(sim_alloc(dptr, bytesize, 1, flags, 1));
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	DRV_ENTER(cuMemFree_v2);
	return drv_res(sim_free(dptr, 1));
}

CUresult cuMemFree(CUdeviceptr dptr)
{
	DRV_ENTER(cuMemFree);
	return drv_res(sim_free(dptr, 1));
}

CUresult cuCtxSynchronize(void)
{
	DRV_ENTER(cuCtxSynchronize);
	return drv_res(sim_device_sync());
}

CUresult cuStreamSynchronize(CUstream hStream)
{
	DRV_ENTER(cuStreamSynchronize);
	return drv_res(sim_stream_sync(hStream));
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	DRV_ENTER(cuGraphLaunch);
	return drv_res(sim_graph_launch((struct sim_graph *)hGraphExec, hStream));
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	DRV_ENTER(cuStreamCreate);
	if (Flags & ~CU_STREAM_NON_BLOCKING)
		return CUDA_ERROR_INVALID_VALUE;
	return drv_res(sim_stream_create((void **)phStream, Flags & CU_STREAM_NON_BLOCKING));
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
	DRV_ENTER(cuStreamDestroy_v2);
	return drv_res(sim_stream_destroy(hStream));
}

/* ---- exported driver API: CUDA 12/13 additions --------------------------- */

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
			  void **extra)
{
	DRV_ENTER(cuLaunchKernelEx);
	if (!config || (config->numAttrs && !config->attrs))
		return CUDA_ERROR_INVALID_VALUE;
	return drv_launch(f, config->gridDimX, config->gridDimY, config->gridDimZ,
			  config->blockDimX, config->blockDimY, config->blockDimZ, config->hStream,
			  kernelParams, extra);
}

/* Stream-ordered allocation from a pool: an enqueue's CPU cost, no implicit
 * synchronisation. */
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	DRV_ENTER(cuMemAllocAsync);
	return drv_res(sim_alloc(dptr, bytesize, 0, 0, 0));
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	DRV_ENTER(cuMemFreeAsync);
	sim_spin(sim_launch_ns());
	return drv_res(sim_free(dptr, 0));
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	DRV_ENTER(cuMemcpyDtoD_v2);
	return drv_copy_async(dstDevice, srcDevice, ByteCount, NULL, 1, 1);
}

CUresult cuMemcpyDtoD(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	DRV_ENTER(cuMemcpyDtoD);
	return drv_copy_async(dstDevice, srcDevice, ByteCount, NULL, 1, 1);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
			      CUstream hStream)
{
	DRV_ENTER(cuMemcpyHtoDAsync_v2);
	return drv_copy_async(dstDevice, (CUdeviceptr)srcHost, ByteCount, hStream, 1, 0);
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
			   CUstream hStream)
{
	DRV_ENTER(cuMemcpyHtoDAsync);
	return drv_copy_async(dstDevice, (CUdeviceptr)srcHost, ByteCount, hStream, 1, 0);
}

CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
			      CUstream hStream)
{
	DRV_ENTER(cuMemcpyDtoHAsync_v2);
	return drv_copy_async((CUdeviceptr)dstHost, srcDevice, ByteCount, hStream, 0, 1);
}

CUresult cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
	DRV_ENTER(cuMemcpyDtoHAsync);
	return drv_copy_async((CUdeviceptr)dstHost, srcDevice, ByteCount, hStream, 0, 1);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
			      CUstream hStream)
{
	DRV_ENTER(cuMemcpyDtoDAsync_v2);
	return drv_copy_async(dstDevice, srcDevice, ByteCount, hStream, 1, 1);
}

CUresult cuMemcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
			   CUstream hStream)
{
	DRV_ENTER(cuMemcpyDtoDAsync);
	return drv_copy_async(dstDevice, srcDevice, ByteCount, hStream, 1, 1);
}

/* Loading code is a cold-start cost: SHIM_MODULE_US of CPU per load, plus
 * SHIM_MODULE_COLD_US for the first load of the process. */
CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	DRV_ENTER(cuModuleLoadData);
	return drv_module_load((struct drv_module **)module, image, DRV_MODULE_MAGIC);
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	struct drv_module *m = (struct drv_module *)hmod;

	DRV_ENTER(cuModuleGetFunction);
	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!m || m->magic != DRV_MODULE_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	*hfunc = (CUfunction)&m->funcs[(unsigned char)name[0] % sizeof(m->funcs)];
	return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule hmod)
{
	DRV_ENTER(cuModuleUnload);
	return drv_module_unload((struct drv_module *)hmod, DRV_MODULE_MAGIC);
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
			   void **jitOptionsValues, unsigned int numJitOptions,
			   CUlibraryOption *libraryOptions, void **libraryOptionValues,
			   unsigned int numLibraryOptions)
{
	DRV_ENTER(cuLibraryLoadData);
	if ((numJitOptions && (!jitOptions || !jitOptionsValues)) ||
	    (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
		return CUDA_ERROR_INVALID_VALUE;
	return drv_module_load((struct drv_module **)library, code, DRV_LIBRARY_MAGIC);
}

CUresult cuLibraryUnload(CUlibrary library)
{
	DRV_ENTER(cuLibraryUnload);
	return drv_module_unload((struct drv_module *)library, DRV_LIBRARY_MAGIC);
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	DRV_ENTER(cuMemAllocHost_v2);
	return drv_host_alloc(pp, bytesize, 0);
}

CUresult cuMemAllocHost(void **pp, size_t bytesize)
{
	DRV_ENTER(cuMemAllocHost);
	return drv_host_alloc(pp, bytesize, 0);
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	DRV_ENTER(cuMemHostAlloc);
	return drv_host_alloc(pp, bytesize, Flags);
}

CUresult cuMemFreeHost(void *p)
{
	DRV_ENTER(cuMemFreeHost);
	return drv_res(sim_host_free(p));
}

CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	DRV_ENTER(cuMemsetD8_v2);
	return drv_memset(dstDevice, uc, N, NULL);
}

CUresult cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	DRV_ENTER(cuMemsetD8);
	return drv_memset(dstDevice, uc, N, NULL);
}

CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
	DRV_ENTER(cuMemsetD8Async);
	return drv_memset(dstDevice, uc, N, hStream);
}

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	DRV_ENTER(cuEventCreate);
	if (Flags & ~(unsigned int)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING |
				    CU_EVENT_INTERPROCESS))
		return CUDA_ERROR_INVALID_VALUE;
	return drv_res(sim_event_create((struct sim_event **)phEvent));
}

CUresult cuEventDestroy_v2(CUevent hEvent)
{
	DRV_ENTER(cuEventDestroy_v2);
	return drv_res(sim_event_destroy((struct sim_event *)hEvent));
}

CUresult cuEventDestroy(CUevent hEvent)
{
	DRV_ENTER(cuEventDestroy);
	return drv_res(sim_event_destroy((struct sim_event *)hEvent));
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
	DRV_ENTER(cuEventRecord);
	return drv_res(sim_event_record((struct sim_event *)hEvent, hStream));
}

CUresult cuEventQuery(CUevent hEvent)
{
	DRV_ENTER(cuEventQuery);
	return drv_res(sim_event_query((struct sim_event *)hEvent));
}

CUresult cuEventSynchronize(CUevent hEvent)
{
	DRV_ENTER(cuEventSynchronize);
	return drv_res(sim_event_sync((struct sim_event *)hEvent));
}

CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	DRV_ENTER(cuEventElapsedTime);
	return drv_res(sim_event_elapsed((struct sim_event *)hStart, (struct sim_event *)hEnd,
					 pMilliseconds));
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	DRV_ENTER(cuStreamWaitEvent);
	if (Flags)
		return CUDA_ERROR_INVALID_VALUE;
	return drv_res(sim_stream_wait_event(hStream, (struct sim_event *)hEvent));
}

/* ---- shim-only controls -------------------------------------------------- */

void shimSetKernelTime(unsigned long long ns)
{
	sim_init();
	sim_set_kernel_ns(ns);
}

void shimSetMallocTime(unsigned long long ns)
{
	sim_init();
	sim_set_malloc_ns(ns);
}

void shimSetLaunchTime(unsigned long long ns)
{
	sim_init();
	sim_set_launch_ns(ns);
}

void shimSetThreadKernelTime(unsigned long long ns)
{
	sim_set_thread_kernel_ns(ns);
}

void shimSetThreadMallocTime(unsigned long long ns)
{
	sim_set_thread_malloc_ns(ns);
}

void shimSetThreadLaunchTime(unsigned long long ns)
{
	sim_set_thread_launch_ns(ns);
}

unsigned long long shimNow(void)
{
	return sim_now();
}

CUresult shimCaptureBegin(CUstream hStream)
{
	sim_init();
	return drv_res(sim_capture_begin(hStream));
}

CUresult shimCaptureEnd(CUstream hStream, CUgraph *phGraph)
{
	sim_init();
	return drv_res(sim_capture_end(hStream, (struct sim_graph **)phGraph));
}

CUresult shimGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph)
{
	sim_init();
	return drv_res(
	    sim_graph_instantiate((struct sim_graph **)phGraphExec, (struct sim_graph *)hGraph));
}

CUresult shimGraphDestroy(CUgraph hGraph)
{
	return drv_res(sim_graph_destroy((struct sim_graph *)hGraph, SIM_GRAPH_MAGIC));
}

CUresult shimGraphExecDestroy(CUgraphExec hGraphExec)
{
	return drv_res(sim_graph_destroy((struct sim_graph *)hGraphExec, SIM_EXEC_MAGIC));
}

CUresult shimExtEnqueue(CUstream hStream, shimExt *phExt)
{
	sim_init();
	if (!phExt)
		return CUDA_ERROR_INVALID_VALUE;
	return drv_res(sim_ext_enqueue(hStream, phExt));
}

unsigned long long shimExtStart(shimExt hExt)
{
	return sim_ext_start(hExt);
}

void shimExtComplete(shimExt hExt, unsigned long long end_ns)
{
	sim_ext_complete(hExt, end_ns);
}

/* SHIM_STATS=FILE: at exit, "PID SYMBOL COUNT" for every exported driver
 * symbol this process called. Tests compare it with what a tracer saw. */
__attribute__((destructor)) static void drv_write_stats(void)
{
	shim_write_stats(drv_sym_names, drv_calls, DRV_NSYMS);
}
