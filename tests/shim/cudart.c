/* Shim libcudart.so.12: the CUDA 12/13 runtime API calls that ingero-top traces,
 * implemented the way NVIDIA's runtime is, on top of the driver API through
 * libcuda's exported symbols (PLT calls), so that uprobes on the driver see
 * the nested calls. Each runtime call that reaches the device makes exactly
 * one traced driver call; the mapping is listed in docs/shim.md. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"
#include "stats.h"

/* Per exported symbol call counters, for SHIM_STATS; they also keep the
 * _ptsz bodies distinct from the plain ones (see cuda.c). */
#define RT_SYMS(X)                                                                                 \
	X(cudaMalloc)                                                                              \
	X(cudaFree)                                                                                \
	X(cudaMallocManaged)                                                                       \
	X(cudaLaunchKernel)                                                                        \
	X(cudaLaunchKernel_ptsz)                                                                   \
	X(cudaMemcpy)                                                                              \
	X(cudaMemcpyAsync)                                                                         \
	X(cudaMemcpyAsync_ptsz)                                                                    \
	X(cudaStreamSynchronize)                                                                   \
	X(cudaStreamSynchronize_ptsz)                                                              \
	X(cudaDeviceSynchronize)                                                                   \
	X(cudaStreamCreate)                                                                        \
	X(cudaStreamDestroy)                                                                       \
	X(cudaStreamBeginCapture)                                                                  \
	X(cudaStreamEndCapture)                                                                    \
	X(cudaGraphInstantiate)                                                                    \
	X(cudaGraphLaunch)                                                                         \
	X(cudaGraphDestroy)                                                                        \
	X(cudaGraphExecDestroy)                                                                    \
	X(cudaGetLastError)                                                                        \
	X(cudaPeekAtLastError)                                                                     \
	X(cudaGetErrorString)                                                                      \
	X(cudaGetErrorName)                                                                        \
	X(cudaLaunchKernelExC)                                                                     \
	X(cudaLaunchKernelExC_ptsz)                                                                \
	X(cudaMallocAsync)                                                                         \
	X(cudaMallocAsync_ptsz)                                                                    \
	X(cudaFreeAsync)                                                                           \
	X(cudaFreeAsync_ptsz)                                                                      \
	X(cudaMallocHost)                                                                          \
	X(cudaHostAlloc)                                                                           \
	X(cudaFreeHost)                                                                            \
	X(cudaMemset)                                                                              \
	X(cudaMemsetAsync)                                                                         \
	X(cudaMemsetAsync_ptsz)                                                                    \
	X(cudaEventCreate)                                                                         \
	X(cudaEventCreateWithFlags)                                                                \
	X(cudaEventDestroy)                                                                        \
	X(cudaEventRecord)                                                                         \
	X(cudaEventRecord_ptsz)                                                                    \
	X(cudaEventQuery)                                                                          \
	X(cudaEventSynchronize)                                                                    \
	X(cudaEventElapsedTime)                                                                    \
	X(cudaStreamWaitEvent)                                                                     \
	X(cudaStreamWaitEvent_ptsz)

enum rt_sym { RT_SYMS(SHIM_SYM_ENUM) RT_NSYMS };
static const char *const rt_sym_names[RT_NSYMS] = {RT_SYMS(SHIM_SYM_NAME)};
static _Atomic unsigned long long rt_calls[RT_NSYMS];
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static __thread cudaError_t rt_last_error;

static void rt_atfork_child(void)
{
	for (int i = 0; i < RT_NSYMS; i++)
		atomic_store(&rt_calls[i], 0);
}

static void rt_init_once(void)
{
	pthread_atfork(NULL, NULL, rt_atfork_child);
}

#define RT_ENTER(s)                                                                                \
	do {                                                                                       \
		pthread_once(&rt_once, rt_init_once);                                              \
		SHIM_COUNT(rt_calls, s);                                                           \
	} while (0)

/* Remembers a failure for cudaGetLastError. Doing this after the driver call
 * also keeps the driver call from becoming a tail jump, so a uretprobe on the
 * runtime function returns after the driver's, as with NVIDIA's library. */
static cudaError_t rt_ret(cudaError_t e)
{
	if (e != cudaSuccess)
		rt_last_error = e;
	return e;
}

static cudaError_t rt_from_cu(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS:
		return cudaSuccess;
	case CUDA_ERROR_INVALID_VALUE:
		return cudaErrorInvalidValue;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return cudaErrorMemoryAllocation;
	case CUDA_ERROR_NOT_INITIALIZED:
		return cudaErrorInitializationError;
	case CUDA_ERROR_INVALID_HANDLE:
		return cudaErrorInvalidResourceHandle;
	case CUDA_ERROR_ILLEGAL_STATE:
		return cudaErrorIllegalState;
	case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
		return cudaErrorStreamCaptureUnsupported;
	case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
		return cudaErrorStreamCaptureInvalidated;
	case CUDA_ERROR_STREAM_CAPTURE_UNMATCHED:
		return cudaErrorStreamCaptureUnmatched;
	case CUDA_ERROR_STREAM_CAPTURE_UNJOINED:
		return cudaErrorStreamCaptureUnjoined;
	case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT:
		return cudaErrorStreamCaptureImplicit;
	case CUDA_ERROR_NOT_READY:
		return cudaErrorNotReady;
	case CUDA_ERROR_INVALID_IMAGE:
		return cudaErrorInvalidKernelImage;
	default:
		return cudaErrorUnknown;
	}
}

static int rt_kind_ok(enum cudaMemcpyKind kind)
{
	return (unsigned int)kind <= cudaMemcpyDefault;
}

static cudaError_t rt_launch(const void *func, dim3 grid, dim3 block, void **args,
			     size_t sharedMem, cudaStream_t stream)
{
	if (!func)
		return rt_ret(cudaErrorInvalidDeviceFunction);
	if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z ||
	    (unsigned long long)block.x * block.y * block.z > 1024 || sharedMem > 0xffffffffu)
		return rt_ret(cudaErrorInvalidConfiguration);
	/* The runtime's host stub address stands in for the module's function. */
	return rt_ret(rt_from_cu(cuLaunchKernel((CUfunction)(uintptr_t)func, grid.x, grid.y,
						grid.z, block.x, block.y, block.z,
						(unsigned int)sharedMem, stream, args, NULL)));
}

static cudaError_t rt_memcpy_async(void *dst, const void *src, size_t count,
				   enum cudaMemcpyKind kind, cudaStream_t stream)
{
	if (!rt_kind_ok(kind))
		return rt_ret(cudaErrorInvalidMemcpyDirection);
	return rt_ret(rt_from_cu(cuMemcpyAsync((CUdeviceptr)dst, (CUdeviceptr)src, count, stream)));
}

/* ---- exported runtime API ----------------------------------------------- */

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	CUdeviceptr d = 0;
	cudaError_t e;

	RT_ENTER(cudaMalloc);
	if (!devPtr)
		return rt_ret(cudaErrorInvalidValue);
	e = rt_ret(rt_from_cu(cuMemAlloc_v2(&d, size)));
	*devPtr = e == cudaSuccess ? (void *)d : NULL;
	return e;
}

/* cudaFree(NULL) does nothing and calls nothing, as in CUDA. */
cudaError_t cudaFree(void *devPtr)
{
	RT_ENTER(cudaFree);
	if (!devPtr)
		return cudaSuccess;
	return rt_ret(rt_from_cu(cuMemFree_v2((CUdeviceptr)devPtr)));
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	CUdeviceptr d = 0;
	cudaError_t e;

	RT_ENTER(cudaMallocManaged);
	if (!devPtr)
		return rt_ret(cudaErrorInvalidValue);
	e = rt_ret(rt_from_cu(cuMemAllocManaged(&d, size, flags)));
	*devPtr = e == cudaSuccess ? (void *)d : NULL;
	return e;
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
			     size_t sharedMem, cudaStream_t stream)
{
	RT_ENTER(cudaLaunchKernel);
	return rt_launch(func, gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
				  size_t sharedMem, cudaStream_t stream)
{
	RT_ENTER(cudaLaunchKernel_ptsz);
	return rt_launch(func, gridDim, blockDim, args, sharedMem,
			 stream ? stream : cudaStreamPerThread);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	CUresult r;

	RT_ENTER(cudaMemcpy);
	switch (kind) {
	case cudaMemcpyHostToDevice:
		r = cuMemcpyHtoD_v2((CUdeviceptr)dst, src, count);
		break;
	case cudaMemcpyDeviceToHost:
		r = cuMemcpyDtoH_v2(dst, (CUdeviceptr)src, count);
		break;
	case cudaMemcpyHostToHost:
	case cudaMemcpyDeviceToDevice:
	case cudaMemcpyDefault:
		r = cuMemcpy((CUdeviceptr)dst, (CUdeviceptr)src, count);
		break;
	default:
		return rt_ret(cudaErrorInvalidMemcpyDirection);
	}
	return rt_ret(rt_from_cu(r));
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
			    cudaStream_t stream)
{
	RT_ENTER(cudaMemcpyAsync);
	return rt_memcpy_async(dst, src, count, kind, stream);
}

cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
				 enum cudaMemcpyKind kind, cudaStream_t stream)
{
	RT_ENTER(cudaMemcpyAsync_ptsz);
	return rt_memcpy_async(dst, src, count, kind, stream ? stream : cudaStreamPerThread);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	RT_ENTER(cudaStreamSynchronize);
	return rt_ret(rt_from_cu(cuStreamSynchronize(stream)));
}

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	RT_ENTER(cudaStreamSynchronize_ptsz);
	return rt_ret(rt_from_cu(cuStreamSynchronize(stream ? stream : cudaStreamPerThread)));
}

cudaError_t cudaDeviceSynchronize(void)
{
	RT_ENTER(cudaDeviceSynchronize);
	return rt_ret(rt_from_cu(cuCtxSynchronize()));
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	RT_ENTER(cudaStreamCreate);
	if (!pStream)
		return rt_ret(cudaErrorInvalidValue);
	return rt_ret(rt_from_cu(cuStreamCreate(pStream, CU_STREAM_DEFAULT)));
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	RT_ENTER(cudaStreamDestroy);
	return rt_ret(rt_from_cu(cuStreamDestroy_v2(stream)));
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	RT_ENTER(cudaStreamBeginCapture);
	if ((unsigned int)mode > cudaStreamCaptureModeRelaxed)
		return rt_ret(cudaErrorInvalidValue);
	return rt_ret(rt_from_cu(shimCaptureBegin(stream)));
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
	RT_ENTER(cudaStreamEndCapture);
	return rt_ret(rt_from_cu(shimCaptureEnd(stream, pGraph)));
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
				 unsigned long long flags)
{
	RT_ENTER(cudaGraphInstantiate);
	return rt_ret(rt_from_cu(shimGraphInstantiate(pGraphExec, graph)));
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	RT_ENTER(cudaGraphLaunch);
	return rt_ret(rt_from_cu(cuGraphLaunch(graphExec, stream)));
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
	RT_ENTER(cudaGraphDestroy);
	return rt_ret(rt_from_cu(shimGraphDestroy(graph)));
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
	RT_ENTER(cudaGraphExecDestroy);
	return rt_ret(rt_from_cu(shimGraphExecDestroy(graphExec)));
}

/* ---- CUDA 12/13 additions ------------------------------------------------ */

static cudaError_t rt_launch_ex(const cudaLaunchConfig_t *config, const void *func, void **args,
				int ptsz)
{
	CUlaunchConfig c;

	if (!config)
		return rt_ret(cudaErrorInvalidValue);
	if (!func)
		return rt_ret(cudaErrorInvalidDeviceFunction);
	if (!config->gridDim.x || !config->gridDim.y || !config->gridDim.z || !config->blockDim.x ||
	    !config->blockDim.y || !config->blockDim.z ||
	    (unsigned long long)config->blockDim.x * config->blockDim.y * config->blockDim.z >
		1024 ||
	    config->dynamicSmemBytes > 0xffffffffu)
		return rt_ret(cudaErrorInvalidConfiguration);
	c = (CUlaunchConfig){
	    .gridDimX = config->gridDim.x,
	    .gridDimY = config->gridDim.y,
	    .gridDimZ = config->gridDim.z,
	    .blockDimX = config->blockDim.x,
	    .blockDimY = config->blockDim.y,
	    .blockDimZ = config->blockDim.z,
	    .sharedMemBytes = (unsigned int)config->dynamicSmemBytes,
	    .hStream = config->stream || !ptsz ? config->stream : cudaStreamPerThread,
	    /* Same layout: id, padding, 64-byte value. */
	    .attrs = (CUlaunchAttribute *)config->attrs,
	    .numAttrs = config->numAttrs,
	};
	return rt_ret(rt_from_cu(cuLaunchKernelEx(&c, (CUfunction)(uintptr_t)func, args, NULL)));
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
	RT_ENTER(cudaLaunchKernelExC);
	return rt_launch_ex(config, func, args, 0);
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
				     void **args)
{
	RT_ENTER(cudaLaunchKernelExC_ptsz);
	return rt_launch_ex(config, func, args, 1);
}

static cudaError_t rt_malloc_async(void **devPtr, size_t size, cudaStream_t stream)
{
	CUdeviceptr d = 0;
	cudaError_t e;

	if (!devPtr)
		return rt_ret(cudaErrorInvalidValue);
	e = rt_ret(rt_from_cu(cuMemAllocAsync(&d, size, stream)));
	*devPtr = e == cudaSuccess ? (void *)d : NULL;
	return e;
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
	RT_ENTER(cudaMallocAsync);
	return rt_malloc_async(devPtr, size, hStream);
}

cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
	RT_ENTER(cudaMallocAsync_ptsz);
	return rt_malloc_async(devPtr, size, hStream ? hStream : cudaStreamPerThread);
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
	RT_ENTER(cudaFreeAsync);
	return rt_ret(rt_from_cu(cuMemFreeAsync((CUdeviceptr)devPtr, hStream)));
}

cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
	RT_ENTER(cudaFreeAsync_ptsz);
	return rt_ret(rt_from_cu(
	    cuMemFreeAsync((CUdeviceptr)devPtr, hStream ? hStream : cudaStreamPerThread)));
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	RT_ENTER(cudaMallocHost);
	if (!ptr)
		return rt_ret(cudaErrorInvalidValue);
	return rt_ret(rt_from_cu(cuMemAllocHost_v2(ptr, size)));
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	RT_ENTER(cudaHostAlloc);
	if (!pHost)
		return rt_ret(cudaErrorInvalidValue);
	return rt_ret(rt_from_cu(cuMemHostAlloc(pHost, size, flags)));
}

/* cudaFreeHost(NULL) does nothing, as in CUDA. */
cudaError_t cudaFreeHost(void *ptr)
{
	RT_ENTER(cudaFreeHost);
	if (!ptr)
		return cudaSuccess;
	return rt_ret(rt_from_cu(cuMemFreeHost(ptr)));
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	RT_ENTER(cudaMemset);
	return rt_ret(rt_from_cu(cuMemsetD8_v2((CUdeviceptr)devPtr, (unsigned char)value, count)));
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	RT_ENTER(cudaMemsetAsync);
	return rt_ret(
	    rt_from_cu(cuMemsetD8Async((CUdeviceptr)devPtr, (unsigned char)value, count, stream)));
}

cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	RT_ENTER(cudaMemsetAsync_ptsz);
	return rt_ret(rt_from_cu(cuMemsetD8Async((CUdeviceptr)devPtr, (unsigned char)value, count,
						 stream ? stream : cudaStreamPerThread)));
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	RT_ENTER(cudaEventCreate);
	if (!event)
		return rt_ret(cudaErrorInvalidValue);
	return rt_ret(rt_from_cu(cuEventCreate(event, CU_EVENT_DEFAULT)));
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	RT_ENTER(cudaEventCreateWithFlags);
	if (!event)
		return rt_ret(cudaErrorInvalidValue);
	return rt_ret(rt_from_cu(cuEventCreate(event, flags)));
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	RT_ENTER(cudaEventDestroy);
	return rt_ret(rt_from_cu(cuEventDestroy_v2(event)));
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	RT_ENTER(cudaEventRecord);
	return rt_ret(rt_from_cu(cuEventRecord(event, stream)));
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
	RT_ENTER(cudaEventRecord_ptsz);
	return rt_ret(rt_from_cu(cuEventRecord(event, stream ? stream : cudaStreamPerThread)));
}

/* cudaErrorNotReady is an answer, not an error: cudaGetLastError does not
 * remember it. */
cudaError_t cudaEventQuery(cudaEvent_t event)
{
	cudaError_t e;

	RT_ENTER(cudaEventQuery);
	e = rt_from_cu(cuEventQuery(event));
	return e == cudaErrorNotReady ? e : rt_ret(e);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	RT_ENTER(cudaEventSynchronize);
	return rt_ret(rt_from_cu(cuEventSynchronize(event)));
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	RT_ENTER(cudaEventElapsedTime);
	return rt_ret(rt_from_cu(cuEventElapsedTime(ms, start, end)));
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	RT_ENTER(cudaStreamWaitEvent);
	return rt_ret(rt_from_cu(cuStreamWaitEvent(stream, event, flags)));
}

cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	RT_ENTER(cudaStreamWaitEvent_ptsz);
	return rt_ret(
	    rt_from_cu(cuStreamWaitEvent(stream ? stream : cudaStreamPerThread, event, flags)));
}

/* ---- errors --------------------------------------------------------------- */

cudaError_t cudaGetLastError(void)
{
	cudaError_t e = rt_last_error;

	RT_ENTER(cudaGetLastError);
	rt_last_error = cudaSuccess;
	return e;
}

cudaError_t cudaPeekAtLastError(void)
{
	RT_ENTER(cudaPeekAtLastError);
	return rt_last_error;
}

static const char *rt_error_name(cudaError_t error)
{
	switch (error) {
#define RT_ERR(e)                                                                                  \
	case e:                                                                                    \
		return #e;
		RT_ERR(cudaSuccess)
		RT_ERR(cudaErrorInvalidValue)
		RT_ERR(cudaErrorMemoryAllocation)
		RT_ERR(cudaErrorInitializationError)
		RT_ERR(cudaErrorInvalidConfiguration)
		RT_ERR(cudaErrorInvalidDevicePointer)
		RT_ERR(cudaErrorInvalidMemcpyDirection)
		RT_ERR(cudaErrorInvalidDeviceFunction)
		RT_ERR(cudaErrorInvalidResourceHandle)
		RT_ERR(cudaErrorIllegalState)
		RT_ERR(cudaErrorNotReady)
		RT_ERR(cudaErrorInvalidKernelImage)
		RT_ERR(cudaErrorStreamCaptureUnsupported)
		RT_ERR(cudaErrorStreamCaptureInvalidated)
		RT_ERR(cudaErrorStreamCaptureUnmatched)
		RT_ERR(cudaErrorStreamCaptureUnjoined)
		RT_ERR(cudaErrorStreamCaptureImplicit)
		RT_ERR(cudaErrorUnknown)
#undef RT_ERR
	}
	return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t error)
{
	RT_ENTER(cudaGetErrorString);
	return rt_error_name(error);
}

const char *cudaGetErrorName(cudaError_t error)
{
	RT_ENTER(cudaGetErrorName);
	return rt_error_name(error);
}

/* SHIM_STATS=FILE: see cuda.c; same "PID SYMBOL COUNT" lines. */
__attribute__((destructor)) static void rt_write_stats(void)
{
	shim_write_stats(rt_sym_names, rt_calls, RT_NSYMS);
}
