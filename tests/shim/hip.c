/* Shim libamdhip64.so.6 (and .so.5, same source): the HIP runtime calls that
 * ingero-top traces, over the same simulated GPU as the CUDA shim (its own
 * copy: HIP has no separate driver library), with ROCm's symbol versions and
 * the same timing rules as their CUDA counterparts. docs/shim.md. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "hip.h"
#include "simgpu.h"
#include "stats.h"

#define HIP_SYMS(X)                                                                                \
	X(hipInit)                                                                                 \
	X(hipGetLastError)                                                                         \
	X(hipPeekAtLastError)                                                                      \
	X(hipGetErrorString)                                                                       \
	X(hipGetErrorName)                                                                         \
	X(hipMalloc)                                                                               \
	X(hipFree)                                                                                 \
	X(hipMallocAsync)                                                                          \
	X(hipFreeAsync)                                                                            \
	X(hipMemcpy)                                                                               \
	X(hipMemcpyAsync)                                                                          \
	X(hipMemcpyAsync_spt)                                                                      \
	X(hipMemcpyHtoD)                                                                           \
	X(hipMemcpyDtoH)                                                                           \
	X(hipLaunchKernel)                                                                         \
	X(hipLaunchKernel_spt)                                                                     \
	X(hipModuleLoadData)                                                                       \
	X(hipModuleGetFunction)                                                                    \
	X(hipModuleUnload)                                                                         \
	X(hipModuleLaunchKernel)                                                                   \
	X(hipExtModuleLaunchKernel)                                                                \
	X(hipStreamCreate)                                                                         \
	X(hipStreamCreateWithFlags)                                                                \
	X(hipStreamDestroy)                                                                        \
	X(hipStreamSynchronize)                                                                    \
	X(hipStreamSynchronize_spt)                                                                \
	X(hipDeviceSynchronize)                                                                    \
	X(hipEventCreate)                                                                          \
	X(hipEventRecord)                                                                          \
	X(hipEventSynchronize)                                                                     \
	X(hipEventQuery)                                                                           \
	X(hipEventDestroy)                                                                         \
	X(hipStreamBeginCapture)                                                                   \
	X(hipStreamEndCapture)                                                                     \
	X(hipGraphInstantiate)                                                                     \
	X(hipGraphLaunch)                                                                          \
	X(hipGraphDestroy)                                                                         \
	X(hipGraphExecDestroy)

enum hip_sym { HIP_SYMS(SHIM_SYM_ENUM) HIP_NSYMS };
static const char *const hip_sym_names[HIP_NSYMS] = {HIP_SYMS(SHIM_SYM_NAME)};
static _Atomic unsigned long long hip_calls[HIP_NSYMS];

static __thread hipError_t hip_last_error;

#define HIP_ENTER(s)                                                                               \
	do {                                                                                       \
		SHIM_COUNT(hip_calls, s);                                                          \
		sim_init();                                                                        \
	} while (0)

#define HIP_MODULE_MAGIC 0x48495044u

struct ihipModule_t {
	unsigned int magic;
	char funcs[64];
};

static void hip_atfork_child(void)
{
	for (int i = 0; i < HIP_NSYMS; i++)
		atomic_store(&hip_calls[i], 0);
}

__attribute__((constructor)) static void hip_ctor(void)
{
	pthread_atfork(NULL, NULL, hip_atfork_child);
}

/* Remembers a failure for hipGetLastError. */
static hipError_t hip_ret(hipError_t e)
{
	if (e != hipSuccess)
		hip_last_error = e;
	return e;
}

static hipError_t hip_res(int st)
{
	switch (st) {
	case SIM_OK:
		return hipSuccess;
	case SIM_EINVAL:
		return hip_ret(hipErrorInvalidValue);
	case SIM_ENOMEM:
		return hip_ret(hipErrorOutOfMemory);
	case SIM_EHANDLE:
		return hip_ret(hipErrorInvalidHandle);
	case SIM_ESTATE:
		return hip_ret(hipErrorIllegalState);
	case SIM_ECAPTURE:
		return hip_ret(hipErrorStreamCaptureUnsupported);
	case SIM_EUNMATCHED:
		return hip_ret(hipErrorStreamCaptureUnmatched);
	case SIM_ENOTREADY:
		return hipErrorNotReady; /* an answer, not an error */
	default:
		return hip_ret(hipErrorUnknown);
	}
}

static hipError_t hip_launch(const void *f, unsigned int gx, unsigned int gy, unsigned int gz,
			     unsigned int bx, unsigned int by, unsigned int bz, hipStream_t stream,
			     void **kernelParams, void **extra)
{
	if (!f)
		return hip_ret(hipErrorInvalidDeviceFunction);
	if (!gx || !gy || !gz || !bx || !by || !bz || (u64)bx * by * bz > 1024 ||
	    (kernelParams && extra))
		return hip_ret(hipErrorInvalidConfiguration);
	return hip_res(sim_launch(stream, sim_kernel_ns(), 1, 1));
}

/* hipMemcpy is synchronous whatever the kind, as in HIP; the kind says which
 * side must be device memory. */
static hipError_t hip_memcpy(void *dst, const void *src, size_t n, hipMemcpyKind kind)
{
	if ((unsigned int)kind > hipMemcpyDefault)
		return hip_ret(hipErrorInvalidMemcpyDirection);
	return hip_res(sim_copy_sync(
	    dst, src, n, kind == hipMemcpyHostToDevice || kind == hipMemcpyDeviceToDevice,
	    kind == hipMemcpyDeviceToHost || kind == hipMemcpyDeviceToDevice));
}

static hipError_t hip_memcpy_async(void *dst, const void *src, size_t n, hipMemcpyKind kind,
				   hipStream_t stream)
{
	if ((unsigned int)kind > hipMemcpyDefault)
		return hip_ret(hipErrorInvalidMemcpyDirection);
	if (n && (!dst || !src))
		return hip_ret(hipErrorInvalidValue);
	return hip_res(sim_launch(stream, sim_copy_ns(n), 1, 1));
}

/* ---- exported HIP API -------------------------------------------------------- */

hipError_t hipInit(unsigned int flags)
{
	HIP_ENTER(hipInit);
	return flags ? hip_ret(hipErrorInvalidValue) : hipSuccess;
}

hipError_t hipGetLastError(void)
{
	hipError_t e = hip_last_error;

	HIP_ENTER(hipGetLastError);
	hip_last_error = hipSuccess;
	return e;
}

hipError_t hipPeekAtLastError(void)
{
	HIP_ENTER(hipPeekAtLastError);
	return hip_last_error;
}

static const char *hip_error_name(hipError_t e)
{
	switch (e) {
#define HIP_ERR(x)                                                                                 \
	case x:                                                                                    \
		return #x;
		HIP_ERR(hipSuccess)
		HIP_ERR(hipErrorInvalidValue)
		HIP_ERR(hipErrorOutOfMemory)
		HIP_ERR(hipErrorNotInitialized)
		HIP_ERR(hipErrorInvalidConfiguration)
		HIP_ERR(hipErrorInvalidMemcpyDirection)
		HIP_ERR(hipErrorInvalidDeviceFunction)
		HIP_ERR(hipErrorInvalidImage)
		HIP_ERR(hipErrorInvalidHandle)
		HIP_ERR(hipErrorIllegalState)
		HIP_ERR(hipErrorNotFound)
		HIP_ERR(hipErrorNotReady)
		HIP_ERR(hipErrorStreamCaptureUnsupported)
		HIP_ERR(hipErrorStreamCaptureUnmatched)
		HIP_ERR(hipErrorUnknown)
#undef HIP_ERR
	}
	return "hipErrorUnknown";
}

const char *hipGetErrorString(hipError_t hipError)
{
	HIP_ENTER(hipGetErrorString);
	return hip_error_name(hipError);
}

const char *hipGetErrorName(hipError_t hip_error)
{
	HIP_ENTER(hipGetErrorName);
	return hip_error_name(hip_error);
}

hipError_t hipMalloc(void **ptr, size_t size)
{
	u64 d = 0;
	hipError_t e;

	HIP_ENTER(hipMalloc);
	if (!ptr)
		return hip_ret(hipErrorInvalidValue);
	e = hip_res(sim_alloc(&d, size, 0, 0, 1));
	*ptr = e == hipSuccess ? (void *)d : NULL;
	return e;
}

/* hipFree(NULL) does nothing; otherwise an implicit device synchronisation. */
hipError_t hipFree(void *ptr)
{
	HIP_ENTER(hipFree);
	if (!ptr)
		return hipSuccess;
	return hip_res(sim_free((u64)ptr, 1));
}

hipError_t hipMallocAsync(void **dev_ptr, size_t size, hipStream_t stream)
{
	u64 d = 0;
	hipError_t e;

	HIP_ENTER(hipMallocAsync);
	if (!dev_ptr)
		return hip_ret(hipErrorInvalidValue);
	e = hip_res(sim_alloc(&d, size, 0, 0, 0));
	*dev_ptr = e == hipSuccess ? (void *)d : NULL;
	return e;
}

hipError_t hipFreeAsync(void *dev_ptr, hipStream_t stream)
{
	HIP_ENTER(hipFreeAsync);
	sim_spin(sim_launch_ns());
	return hip_res(sim_free((u64)dev_ptr, 0));
}

hipError_t hipMemcpy(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind)
{
	HIP_ENTER(hipMemcpy);
	return hip_memcpy(dst, src, sizeBytes, kind);
}

hipError_t hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
			  hipStream_t stream)
{
	HIP_ENTER(hipMemcpyAsync);
	return hip_memcpy_async(dst, src, sizeBytes, kind, stream);
}

hipError_t hipMemcpyAsync_spt(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
			      hipStream_t stream)
{
	HIP_ENTER(hipMemcpyAsync_spt);
	return hip_memcpy_async(dst, src, sizeBytes, kind, stream ? stream : hipStreamPerThread);
}

hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void *src, size_t sizeBytes)
{
	HIP_ENTER(hipMemcpyHtoD);
	return hip_res(sim_copy_sync(dst, src, sizeBytes, 1, 0));
}

hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t sizeBytes)
{
	HIP_ENTER(hipMemcpyDtoH);
	return hip_res(sim_copy_sync(dst, src, sizeBytes, 0, 1));
}

hipError_t hipLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
			   void **args, size_t sharedMemBytes, hipStream_t stream)
{
	HIP_ENTER(hipLaunchKernel);
	return hip_launch(function_address, numBlocks.x, numBlocks.y, numBlocks.z, dimBlocks.x,
			  dimBlocks.y, dimBlocks.z, stream, args, NULL);
}

hipError_t hipLaunchKernel_spt(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
			       void **args, size_t sharedMemBytes, hipStream_t stream)
{
	HIP_ENTER(hipLaunchKernel_spt);
	return hip_launch(function_address, numBlocks.x, numBlocks.y, numBlocks.z, dimBlocks.x,
			  dimBlocks.y, dimBlocks.z, stream ? stream : hipStreamPerThread, args,
			  NULL);
}

/* A code object load: the same cold-start cost as cuModuleLoadData. */
hipError_t hipModuleLoadData(hipModule_t *module, const void *image)
{
	struct ihipModule_t *m;

	HIP_ENTER(hipModuleLoadData);
	if (!module || !image)
		return hip_ret(hipErrorInvalidValue);
	sim_module_load_cost();
	m = calloc(1, sizeof(*m));
	if (!m)
		return hip_ret(hipErrorOutOfMemory);
	m->magic = HIP_MODULE_MAGIC;
	*module = m;
	return hipSuccess;
}

hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *kname)
{
	HIP_ENTER(hipModuleGetFunction);
	if (!function || !kname)
		return hip_ret(hipErrorInvalidValue);
	if (!module || module->magic != HIP_MODULE_MAGIC)
		return hip_ret(hipErrorInvalidHandle);
	*function = (hipFunction_t)&module->funcs[(unsigned char)kname[0] % sizeof(module->funcs)];
	return hipSuccess;
}

hipError_t hipModuleUnload(hipModule_t module)
{
	HIP_ENTER(hipModuleUnload);
	if (!module || module->magic != HIP_MODULE_MAGIC)
		return hip_ret(hipErrorInvalidHandle);
	module->magic = 0;
	free(module);
	return hipSuccess;
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
				 unsigned int gridDimZ, unsigned int blockDimX,
				 unsigned int blockDimY, unsigned int blockDimZ,
				 unsigned int sharedMemBytes, hipStream_t stream,
				 void **kernelParams, void **extra)
{
	HIP_ENTER(hipModuleLaunchKernel);
	return hip_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, stream,
			  kernelParams, extra);
}

/* The mangled C++ name, as ROCm exports it (see hip.h). Work sizes are
 * threads; a size that is not a multiple of the block is rounded up. The
 * events, when given, are recorded around the kernel. */
hipError_t shim_hipExtModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX,
					 uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
					 uint32_t localWorkSizeX, uint32_t localWorkSizeY,
					 uint32_t localWorkSizeZ, size_t sharedMemBytes,
					 hipStream_t hStream, void **kernelParams, void **extra,
					 hipEvent_t startEvent, hipEvent_t stopEvent,
					 uint32_t flags) __asm__(SHIM_HIP_EXT_MODULE_LAUNCH_KERNEL);
hipError_t shim_hipExtModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX,
					 uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
					 uint32_t localWorkSizeX, uint32_t localWorkSizeY,
					 uint32_t localWorkSizeZ, size_t sharedMemBytes,
					 hipStream_t hStream, void **kernelParams, void **extra,
					 hipEvent_t startEvent, hipEvent_t stopEvent,
					 uint32_t flags)
{
	hipError_t e;

	HIP_ENTER(hipExtModuleLaunchKernel);
	if (!localWorkSizeX || !localWorkSizeY || !localWorkSizeZ)
		return hip_ret(hipErrorInvalidConfiguration);
	if (startEvent && sim_event_record((struct sim_event *)startEvent, hStream) != SIM_OK)
		return hip_ret(hipErrorInvalidHandle);
	e = hip_launch(f, (globalWorkSizeX + localWorkSizeX - 1) / localWorkSizeX,
		       (globalWorkSizeY + localWorkSizeY - 1) / localWorkSizeY,
		       (globalWorkSizeZ + localWorkSizeZ - 1) / localWorkSizeZ, localWorkSizeX,
		       localWorkSizeY, localWorkSizeZ, hStream, kernelParams, extra);
	if (e == hipSuccess && stopEvent &&
	    sim_event_record((struct sim_event *)stopEvent, hStream) != SIM_OK)
		return hip_ret(hipErrorInvalidHandle);
	return e;
}

hipError_t hipStreamCreate(hipStream_t *stream)
{
	HIP_ENTER(hipStreamCreate);
	return hip_res(sim_stream_create((void **)stream, 0));
}

hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)
{
	HIP_ENTER(hipStreamCreateWithFlags);
	if (flags & ~(unsigned int)hipStreamNonBlocking)
		return hip_ret(hipErrorInvalidValue);
	return hip_res(sim_stream_create((void **)stream, flags & hipStreamNonBlocking));
}

hipError_t hipStreamDestroy(hipStream_t stream)
{
	HIP_ENTER(hipStreamDestroy);
	return hip_res(sim_stream_destroy(stream));
}

hipError_t hipStreamSynchronize(hipStream_t stream)
{
	HIP_ENTER(hipStreamSynchronize);
	return hip_res(sim_stream_sync(stream));
}

hipError_t hipStreamSynchronize_spt(hipStream_t stream)
{
	HIP_ENTER(hipStreamSynchronize_spt);
	return hip_res(sim_stream_sync(stream ? stream : hipStreamPerThread));
}

hipError_t hipDeviceSynchronize(void)
{
	HIP_ENTER(hipDeviceSynchronize);
	return hip_res(sim_device_sync());
}

hipError_t hipEventCreate(hipEvent_t *event)
{
	HIP_ENTER(hipEventCreate);
	return hip_res(sim_event_create((struct sim_event **)event));
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
	HIP_ENTER(hipEventRecord);
	return hip_res(sim_event_record((struct sim_event *)event, stream));
}

hipError_t hipEventSynchronize(hipEvent_t event)
{
	HIP_ENTER(hipEventSynchronize);
	return hip_res(sim_event_sync((struct sim_event *)event));
}

hipError_t hipEventQuery(hipEvent_t event)
{
	HIP_ENTER(hipEventQuery);
	return hip_res(sim_event_query((struct sim_event *)event));
}

hipError_t hipEventDestroy(hipEvent_t event)
{
	HIP_ENTER(hipEventDestroy);
	return hip_res(sim_event_destroy((struct sim_event *)event));
}

hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode)
{
	HIP_ENTER(hipStreamBeginCapture);
	if ((unsigned int)mode > hipStreamCaptureModeRelaxed)
		return hip_ret(hipErrorInvalidValue);
	return hip_res(sim_capture_begin(stream));
}

hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph)
{
	HIP_ENTER(hipStreamEndCapture);
	return hip_res(sim_capture_end(stream, (struct sim_graph **)pGraph));
}

hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph,
			       hipGraphNode_t *pErrorNode, char *pLogBuffer, size_t bufferSize)
{
	HIP_ENTER(hipGraphInstantiate);
	return hip_res(
	    sim_graph_instantiate((struct sim_graph **)pGraphExec, (struct sim_graph *)graph));
}

hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream)
{
	HIP_ENTER(hipGraphLaunch);
	return hip_res(sim_graph_launch((struct sim_graph *)graphExec, stream));
}

hipError_t hipGraphDestroy(hipGraph_t graph)
{
	HIP_ENTER(hipGraphDestroy);
	return hip_res(sim_graph_destroy((struct sim_graph *)graph, SIM_GRAPH_MAGIC));
}

hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec)
{
	HIP_ENTER(hipGraphExecDestroy);
	return hip_res(sim_graph_destroy((struct sim_graph *)graphExec, SIM_EXEC_MAGIC));
}

/* SHIM_STATS=FILE: "PID SYMBOL COUNT" lines at exit, as the other shims. The
 * mangled launch is counted as hipExtModuleLaunchKernel. */
__attribute__((destructor)) static void hip_write_stats(void)
{
	shim_write_stats(hip_sym_names, hip_calls, HIP_NSYMS);
}
