/* The HIP (ROCm) types and calls that the shim libamdhip64.so.6 exports, with
 * the names, values and C ABI of ROCm's hip_runtime_api.h. docs/shim.md. */
#ifndef SHIM_HIP_H
#define SHIM_HIP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hipError_t {
	hipSuccess = 0,
	hipErrorInvalidValue = 1,
	hipErrorOutOfMemory = 2,
	hipErrorNotInitialized = 3,
	hipErrorInvalidConfiguration = 9,
	hipErrorInvalidMemcpyDirection = 21,
	hipErrorInvalidDeviceFunction = 98,
	hipErrorInvalidImage = 200,
	hipErrorInvalidHandle = 400,
	hipErrorIllegalState = 401,
	hipErrorNotFound = 500,
	hipErrorNotReady = 600,
	hipErrorStreamCaptureUnsupported = 900,
	hipErrorStreamCaptureUnmatched = 903,
	hipErrorUnknown = 999,
} hipError_t;

typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipGraph *hipGraph_t;
typedef struct hipGraphExec *hipGraphExec_t;
typedef struct hipGraphNode *hipGraphNode_t;
typedef void *hipDeviceptr_t;

#ifndef SHIM_DIM3_DEFINED /* shim.h has the same dim3 */
#define SHIM_DIM3_DEFINED
typedef struct dim3 {
	uint32_t x, y, z;
} dim3;
#endif

typedef enum hipMemcpyKind {
	hipMemcpyHostToHost = 0,
	hipMemcpyHostToDevice = 1,
	hipMemcpyDeviceToHost = 2,
	hipMemcpyDeviceToDevice = 3,
	hipMemcpyDefault = 4,
} hipMemcpyKind;

typedef enum hipStreamCaptureMode {
	hipStreamCaptureModeGlobal = 0,
	hipStreamCaptureModeThreadLocal = 1,
	hipStreamCaptureModeRelaxed = 2,
} hipStreamCaptureMode;

#define hipStreamNonBlocking 0x01
#define hipStreamPerThread ((hipStream_t)2)

hipError_t hipInit(unsigned int flags);
hipError_t hipGetLastError(void);
hipError_t hipPeekAtLastError(void);
const char *hipGetErrorString(hipError_t hipError);
const char *hipGetErrorName(hipError_t hip_error);
hipError_t hipMalloc(void **ptr, size_t size);
hipError_t hipFree(void *ptr);
hipError_t hipMallocAsync(void **dev_ptr, size_t size, hipStream_t stream);
hipError_t hipFreeAsync(void *dev_ptr, hipStream_t stream);
hipError_t hipMemcpy(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind);
hipError_t hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
			  hipStream_t stream);
hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void *src, size_t sizeBytes);
hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t sizeBytes);
/* dim3 by value: two registers each on x86-64; sharedMemBytes and stream are
 * the first and second stack arguments, as with cudaLaunchKernel. */
hipError_t hipLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
			   void **args, size_t sharedMemBytes, hipStream_t stream);
hipError_t hipModuleLoadData(hipModule_t *module, const void *image);
hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *kname);
hipError_t hipModuleUnload(hipModule_t module);
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
				 unsigned int gridDimZ, unsigned int blockDimX,
				 unsigned int blockDimY, unsigned int blockDimZ,
				 unsigned int sharedMemBytes, hipStream_t stream,
				 void **kernelParams, void **extra);
/* A C++ function in ROCm (hip_ext.h): exported only under its mangled name,
 * _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j.
 * Global work sizes are in threads (grid x block), not blocks. */
#define SHIM_HIP_EXT_MODULE_LAUNCH_KERNEL                                                          \
	"_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_"            \
	"P11ihipEvent_tS6_j"
typedef hipError_t (*shimHipExtModuleLaunchKernel_t)(
    hipFunction_t f, uint32_t globalWorkSizeX, uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
    uint32_t localWorkSizeX, uint32_t localWorkSizeY, uint32_t localWorkSizeZ,
    size_t sharedMemBytes, hipStream_t hStream, void **kernelParams, void **extra,
    hipEvent_t startEvent, hipEvent_t stopEvent, uint32_t flags);
hipError_t hipStreamCreate(hipStream_t *stream);
hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags);
hipError_t hipStreamDestroy(hipStream_t stream);
hipError_t hipStreamSynchronize(hipStream_t stream);
hipError_t hipDeviceSynchronize(void);
hipError_t hipEventCreate(hipEvent_t *event);
hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream);
hipError_t hipEventSynchronize(hipEvent_t event);
hipError_t hipEventQuery(hipEvent_t event);
hipError_t hipEventDestroy(hipEvent_t event);
hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode);
hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph);
hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph,
			       hipGraphNode_t *pErrorNode, char *pLogBuffer, size_t bufferSize);
hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream);
hipError_t hipGraphDestroy(hipGraph_t graph);
hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec);
hipError_t hipLaunchKernel_spt(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
			       void **args, size_t sharedMemBytes, hipStream_t stream);
hipError_t hipMemcpyAsync_spt(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
			      hipStream_t stream);
hipError_t hipStreamSynchronize_spt(hipStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* SHIM_HIP_H */
