/* A minimal cuda.h + cuda_runtime_api.h for the test shim: the CUDA 12 types
 * and prototypes that the shim libraries export (same names, same C ABI as
 * NVIDIA's), plus the shim-only control functions (shim* prefix) that let a
 * test program steer the simulated GPU. See docs/shim.md. */
#ifndef SHIM_H
#define SHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- driver API types (cuda.h) ------------------------------------------ */

typedef enum cudaError_enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_ILLEGAL_STATE = 401,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
	CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
	CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
	CUDA_ERROR_STREAM_CAPTURE_UNJOINED = 904,
	CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
	CUDA_ERROR_UNKNOWN = 999,
} CUresult;

typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2 */
typedef struct CUstream_st *CUstream;
typedef struct CUfunc_st *CUfunction;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;

#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)
#define CU_STREAM_DEFAULT 0x0
#define CU_STREAM_NON_BLOCKING 0x1
#define CU_MEM_ATTACH_GLOBAL 0x1
#define CU_MEM_ATTACH_HOST 0x2

CUresult cuInit(unsigned int flags);
CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
			unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
			unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
			void **kernelParams, void **extra);
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuCtxSynchronize(void);
CUresult cuStreamSynchronize(CUstream hStream);
CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream);
CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags);
CUresult cuStreamDestroy_v2(CUstream hStream);
/* Un-suffixed ABI-v1 names. Real libcuda still exports them; here they take the
 * _v2 argument types (64-bit CUdeviceptr, size_t) and behave like _v2. */
CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemFree(CUdeviceptr dptr);
CUresult cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
CUresult cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);

/* ---- runtime API types (cuda_runtime_api.h, driver_types.h) ------------- */

typedef enum cudaError {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInitializationError = 3,
	cudaErrorInvalidConfiguration = 9,
	cudaErrorInvalidDevicePointer = 17,
	cudaErrorInvalidMemcpyDirection = 21,
	cudaErrorInvalidDeviceFunction = 98,
	cudaErrorInvalidResourceHandle = 400,
	cudaErrorIllegalState = 401,
	cudaErrorStreamCaptureUnsupported = 900,
	cudaErrorStreamCaptureInvalidated = 901,
	cudaErrorStreamCaptureUnmatched = 903,
	cudaErrorStreamCaptureUnjoined = 904,
	cudaErrorStreamCaptureImplicit = 906,
	cudaErrorUnknown = 999,
} cudaError_t;

typedef struct CUstream_st *cudaStream_t;
typedef struct CUgraph_st *cudaGraph_t;
typedef struct CUgraphExec_st *cudaGraphExec_t;

/* Passed by value, as in NVIDIA's headers: 12 bytes, two registers on x86-64. */
typedef struct dim3 {
	unsigned int x, y, z;
} dim3;

enum cudaMemcpyKind {
	cudaMemcpyHostToHost = 0,
	cudaMemcpyHostToDevice = 1,
	cudaMemcpyDeviceToHost = 2,
	cudaMemcpyDeviceToDevice = 3,
	cudaMemcpyDefault = 4,
};

enum cudaStreamCaptureMode {
	cudaStreamCaptureModeGlobal = 0,
	cudaStreamCaptureModeThreadLocal = 1,
	cudaStreamCaptureModeRelaxed = 2,
};

#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaMemAttachGlobal 0x01

cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaFree(void *devPtr);
cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags);
cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
			     size_t sharedMem, cudaStream_t stream);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
			    cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaStreamCreate(cudaStream_t *pStream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
				 unsigned long long flags);
cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
/* Both return the enum name ("cudaErrorInvalidValue"); static strings. */
const char *cudaGetErrorString(cudaError_t error);
const char *cudaGetErrorName(cudaError_t error);
/* Per-thread default stream entry points (nvcc --default-stream per-thread):
 * stream 0 means the calling thread's own default stream. */
cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
				  size_t sharedMem, cudaStream_t stream);
cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
				 enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);

/* ---- shim-only controls, exported by libcuda.so.1 ----------------------- */

/* Times are nanoseconds. The process-wide setters override the SHIM_*_US
 * environment defaults for every thread; the per-thread setters override the
 * process-wide value for the calling thread only, until called again with
 * SHIM_TIME_UNSET. */
#define SHIM_TIME_UNSET (~0ULL)

void shimSetKernelTime(unsigned long long ns); /* duration of each kernel */
void shimSetMallocTime(unsigned long long ns); /* CPU cost of an allocation */
void shimSetLaunchTime(unsigned long long ns); /* CPU cost of a launch */
void shimSetThreadKernelTime(unsigned long long ns);
void shimSetThreadMallocTime(unsigned long long ns);
void shimSetThreadLaunchTime(unsigned long long ns);
/* The simulated clock: CLOCK_MONOTONIC in ns. */
unsigned long long shimNow(void);

/* Stream capture and graphs live in the driver, as in real CUDA, but these
 * hooks are not real API names so no tracer counts them. The runtime's
 * cudaStreamBeginCapture/EndCapture/GraphInstantiate/Destroy use them. */
CUresult shimCaptureBegin(CUstream hStream);
CUresult shimCaptureEnd(CUstream hStream, CUgraph *phGraph);
CUresult shimGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph);
CUresult shimGraphDestroy(CUgraph hGraph);
CUresult shimGraphExecDestroy(CUgraphExec hGraphExec);

#ifdef __cplusplus
}
#endif

#endif /* SHIM_H */
