/* The NCCL 2 types and calls that the shim libnccl.so.2 exports: the same
 * names, values and C ABI as NVIDIA's nccl.h (2.28). Each ncclX is a weak
 * alias of the profiling name pncclX, as in NVIDIA's library; both are
 * declared. docs/shim.md. */
#ifndef SHIM_NCCL_H
#define SHIM_NCCL_H

#include <stddef.h>

#include "shim.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NCCL_UNIQUE_ID_BYTES 128
/* Passed by value: 128 bytes, in memory on the stack on x86-64. */
typedef struct {
	char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef struct ncclComm *ncclComm_t;

typedef enum {
	ncclSuccess = 0,
	ncclUnhandledCudaError = 1,
	ncclSystemError = 2,
	ncclInternalError = 3,
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
	ncclRemoteError = 6,
	ncclInProgress = 7,
	ncclNumResults = 8
} ncclResult_t;

typedef enum {
	ncclSum = 0,
	ncclProd = 1,
	ncclMax = 2,
	ncclMin = 3,
	ncclAvg = 4,
	ncclNumOps = 5,
	ncclMaxRedOp = 0x7fffffff
} ncclRedOp_t;

/* Element sizes: 1 1 4 4 8 8 2 4 8 2 1 1 bytes, in this order. */
typedef enum {
	ncclInt8 = 0,
	ncclChar = 0,
	ncclUint8 = 1,
	ncclInt32 = 2,
	ncclInt = 2,
	ncclUint32 = 3,
	ncclInt64 = 4,
	ncclUint64 = 5,
	ncclFloat16 = 6,
	ncclHalf = 6,
	ncclFloat32 = 7,
	ncclFloat = 7,
	ncclFloat64 = 8,
	ncclDouble = 8,
	ncclBfloat16 = 9,
	ncclFloat8e4m3 = 10,
	ncclFloat8e5m2 = 11,
	ncclNumTypes = 12
} ncclDataType_t;

ncclResult_t ncclGetVersion(int *version);
ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommCount(const ncclComm_t comm, int *count);
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank);
const char *ncclGetErrorString(ncclResult_t result);
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
			   ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
			   cudaStream_t stream);
/* sendcount: elements per rank; recvbuff holds nranks * sendcount. */
ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
			   ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
/* recvcount: elements per rank; sendbuff holds nranks * recvcount. */
ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
			       ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
			       cudaStream_t stream);
ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
			   ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
		       cudaStream_t stream);
ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
			ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
		      ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
		      ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
#define SHIM_NCCL_PROTO(s) extern __typeof__(s) p##s;
SHIM_NCCL_PROTO(ncclGetVersion)
SHIM_NCCL_PROTO(ncclGetUniqueId)
SHIM_NCCL_PROTO(ncclCommInitRank)
SHIM_NCCL_PROTO(ncclCommDestroy)
SHIM_NCCL_PROTO(ncclCommCount)
SHIM_NCCL_PROTO(ncclCommUserRank)
SHIM_NCCL_PROTO(ncclGetErrorString)
SHIM_NCCL_PROTO(ncclAllReduce)
SHIM_NCCL_PROTO(ncclAllGather)
SHIM_NCCL_PROTO(ncclReduceScatter)
SHIM_NCCL_PROTO(ncclBroadcast)
SHIM_NCCL_PROTO(ncclBcast)
SHIM_NCCL_PROTO(ncclReduce)
SHIM_NCCL_PROTO(ncclSend)
SHIM_NCCL_PROTO(ncclRecv)
SHIM_NCCL_PROTO(ncclGroupStart)
SHIM_NCCL_PROTO(ncclGroupEnd)
#undef SHIM_NCCL_PROTO

/* The size of one element of a data type, bytes; 0 for an unknown type. */
static inline size_t shimNcclTypeSize(ncclDataType_t t)
{
	static const unsigned char sizes[ncclNumTypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};

	return (unsigned int)t < ncclNumTypes ? sizes[t] : 0;
}

#ifdef __cplusplus
}
#endif

#endif /* SHIM_NCCL_H */
