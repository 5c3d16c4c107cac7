/* The table of traced GPU API operations and their symbol variants, and
 * NCCL's data types and reduction ops. */
#include "core/ops.h"

#include "core/event.h"

#include <string.h>

#define S(...) { __VA_ARGS__, NULL }

static const struct ig_op_info ops[IG_OP_MAX] = {
	[IG_OP_NONE] = { "none", "none", 0, 0, 0, 0, S(NULL) },
	[IG_OP_CUDA_MALLOC] = { "cudaMalloc", "cudaMalloc", IG_GRP_RUNTIME, IG_ARGS_SIZE2, 0,
				IG_OPK_ALLOC, S("cudaMalloc") },
	[IG_OP_CUDA_FREE] = { "cudaFree", "cudaFree", IG_GRP_RUNTIME, IG_ARGS_PTR1, 0,
			      IG_OPK_FREE | IG_OPK_IMPLICIT_SYNC, S("cudaFree") },
	[IG_OP_CUDA_MALLOC_MANAGED] = { "cudaMallocManaged", "cudaMallocManaged", IG_GRP_RUNTIME,
					IG_ARGS_SIZE2, 0, IG_OPK_ALLOC, S("cudaMallocManaged") },
	[IG_OP_CUDA_LAUNCH_KERNEL] = { "cudaLaunchKernel", "cudaLaunchKernel", IG_GRP_RUNTIME,
				       IG_ARGS_LAUNCH_RT, 0, IG_OPK_LAUNCH,
				       S("cudaLaunchKernel", "cudaLaunchKernel_ptsz") },
	[IG_OP_CUDA_MEMCPY] = { "cudaMemcpy", "cudaMemcpy", IG_GRP_RUNTIME, IG_ARGS_COPY_RT, 0,
				IG_OPK_COPY | IG_OPK_IMPLICIT_SYNC, S("cudaMemcpy", "cudaMemcpy_ptds") },
	[IG_OP_CUDA_MEMCPY_ASYNC] = { "cudaMemcpyAsync", "cudaMemcpyAsync", IG_GRP_RUNTIME,
				      IG_ARGS_COPY_RT, 0, IG_OPK_COPY,
				      S("cudaMemcpyAsync", "cudaMemcpyAsync_ptsz") },
	[IG_OP_CUDA_STREAM_SYNC] = { "cudaStreamSynchronize", "cudaStreamSync", IG_GRP_RUNTIME,
				     IG_ARGS_STREAM1, 0, IG_OPK_SYNC,
				     S("cudaStreamSynchronize", "cudaStreamSynchronize_ptsz") },
	[IG_OP_CUDA_DEVICE_SYNC] = { "cudaDeviceSynchronize", "cudaDeviceSync", IG_GRP_RUNTIME,
				     IG_ARGS_NONE, 0, IG_OPK_SYNC, S("cudaDeviceSynchronize") },
	[IG_OP_CUDA_STREAM_BEGIN_CAPTURE] = { "cudaStreamBeginCapture", "cudaBeginCapture",
					      IG_GRP_GRAPH, IG_ARGS_STREAM1, 0, 0,
					      S("cudaStreamBeginCapture",
						"cudaStreamBeginCapture_ptsz") },
	[IG_OP_CUDA_STREAM_END_CAPTURE] = { "cudaStreamEndCapture", "cudaEndCapture",
					    IG_GRP_GRAPH, IG_ARGS_STREAM1, 0, 0,
					    S("cudaStreamEndCapture", "cudaStreamEndCapture_ptsz") },
	[IG_OP_CUDA_GRAPH_INSTANTIATE] = { "cudaGraphInstantiate", "cudaGraphInstantiate",
					   IG_GRP_GRAPH, IG_ARGS_NONE, 0, 0,
					   S("cudaGraphInstantiate",
					     "cudaGraphInstantiateWithFlags") },
	[IG_OP_CUDA_GRAPH_LAUNCH] = { "cudaGraphLaunch", "cudaGraphLaunch", IG_GRP_GRAPH,
				      IG_ARGS_STREAM2, 0, IG_OPK_LAUNCH,
				      S("cudaGraphLaunch", "cudaGraphLaunch_ptsz") },
	[IG_OP_CU_LAUNCH_KERNEL] = { "cuLaunchKernel", "cuLaunchKernel", IG_GRP_DRIVER,
				     IG_ARGS_LAUNCH_CU, 0, IG_OPK_LAUNCH | IG_OPK_DRIVER,
				     S("cuLaunchKernel", "cuLaunchKernel_ptsz") },
	[IG_OP_CU_MEMCPY] = { "cuMemcpy", "cuMemcpy", IG_GRP_DRIVER, IG_ARGS_COPY_CU,
			      IG_DIR_DEFAULT, IG_OPK_COPY | IG_OPK_IMPLICIT_SYNC | IG_OPK_DRIVER,
			      S("cuMemcpy", "cuMemcpy_ptds") },
	[IG_OP_CU_MEMCPY_ASYNC] = { "cuMemcpyAsync", "cuMemcpyAsync", IG_GRP_DRIVER,
				    IG_ARGS_COPY_CU, IG_DIR_DEFAULT, IG_OPK_COPY | IG_OPK_DRIVER,
				    S("cuMemcpyAsync", "cuMemcpyAsync_ptsz") },
	[IG_OP_CU_MEMCPY_HTOD] = { "cuMemcpyHtoD", "cuMemcpyHtoD", IG_GRP_DRIVER,
				   IG_ARGS_COPY_CU, IG_DIR_H2D,
				   IG_OPK_COPY | IG_OPK_IMPLICIT_SYNC | IG_OPK_DRIVER,
				   S("cuMemcpyHtoD_v2", "cuMemcpyHtoD", "cuMemcpyHtoD_v2_ptds") },
	[IG_OP_CU_MEMCPY_DTOH] = { "cuMemcpyDtoH", "cuMemcpyDtoH", IG_GRP_DRIVER,
				   IG_ARGS_COPY_CU, IG_DIR_D2H,
				   IG_OPK_COPY | IG_OPK_IMPLICIT_SYNC | IG_OPK_DRIVER,
				   S("cuMemcpyDtoH_v2", "cuMemcpyDtoH", "cuMemcpyDtoH_v2_ptds") },
	[IG_OP_CU_MEM_ALLOC] = { "cuMemAlloc", "cuMemAlloc", IG_GRP_DRIVER, IG_ARGS_SIZE2, 0,
				 IG_OPK_ALLOC | IG_OPK_DRIVER, S("cuMemAlloc_v2", "cuMemAlloc") },
	[IG_OP_CU_MEM_ALLOC_MANAGED] = { "cuMemAllocManaged", "cuMemAllocManaged",
					 IG_GRP_DRIVER, IG_ARGS_SIZE2, 0,
					 IG_OPK_ALLOC | IG_OPK_DRIVER, S("cuMemAllocManaged") },
	[IG_OP_CU_MEM_FREE] = { "cuMemFree", "cuMemFree", IG_GRP_DRIVER, IG_ARGS_PTR1, 0,
				IG_OPK_FREE | IG_OPK_DRIVER, S("cuMemFree_v2", "cuMemFree") },
	[IG_OP_CU_CTX_SYNC] = { "cuCtxSynchronize", "cuCtxSync", IG_GRP_DRIVER, IG_ARGS_NONE, 0,
				IG_OPK_SYNC | IG_OPK_DRIVER, S("cuCtxSynchronize") },
	[IG_OP_CU_STREAM_SYNC] = { "cuStreamSynchronize", "cuStreamSync", IG_GRP_DRIVER,
				   IG_ARGS_STREAM1, 0, IG_OPK_SYNC | IG_OPK_DRIVER,
				   S("cuStreamSynchronize", "cuStreamSynchronize_ptsz") },
	[IG_OP_CU_GRAPH_LAUNCH] = { "cuGraphLaunch", "cuGraphLaunch", IG_GRP_GRAPH,
				    IG_ARGS_STREAM2, 0, IG_OPK_LAUNCH | IG_OPK_DRIVER,
				    S("cuGraphLaunch", "cuGraphLaunch_ptsz") },
	/* runtime calls of frameworks */
	[IG_OP_CUDA_LAUNCH_KERNEL_EX] = { "cudaLaunchKernelExC", "cudaLaunchExC", IG_GRP_RUNTIME,
					  IG_ARGS_LAUNCH_EX, 0, IG_OPK_LAUNCH,
					  S("cudaLaunchKernelExC", "cudaLaunchKernelExC_ptsz") },
	[IG_OP_CUDA_MALLOC_ASYNC] = { "cudaMallocAsync", "cudaMallocAsync", IG_GRP_RUNTIME,
				      IG_ARGS_SIZE2_STREAM3, 0, IG_OPK_ALLOC,
				      S("cudaMallocAsync", "cudaMallocAsync_ptsz") },
	[IG_OP_CUDA_FREE_ASYNC] = { "cudaFreeAsync", "cudaFreeAsync", IG_GRP_RUNTIME,
				    IG_ARGS_PTR1_STREAM2, 0, IG_OPK_FREE,
				    S("cudaFreeAsync", "cudaFreeAsync_ptsz") },
	[IG_OP_CUDA_MALLOC_HOST] = { "cudaMallocHost", "cudaMallocHost", IG_GRP_RUNTIME,
				     IG_ARGS_SIZE2, 0, IG_OPK_ALLOC, S("cudaMallocHost") },
	[IG_OP_CUDA_HOST_ALLOC] = { "cudaHostAlloc", "cudaHostAlloc", IG_GRP_RUNTIME, IG_ARGS_SIZE2,
				    0, IG_OPK_ALLOC, S("cudaHostAlloc") },
	[IG_OP_CUDA_FREE_HOST] = { "cudaFreeHost", "cudaFreeHost", IG_GRP_RUNTIME, IG_ARGS_PTR1, 0,
				   IG_OPK_FREE | IG_OPK_IMPLICIT_SYNC, S("cudaFreeHost") },
	[IG_OP_CUDA_MEMSET] = { "cudaMemset", "cudaMemset", IG_GRP_RUNTIME, IG_ARGS_SIZE3_STREAM4, 0,
				IG_OPK_MEMSET, S("cudaMemset", "cudaMemset_ptds") },
	[IG_OP_CUDA_MEMSET_ASYNC] = { "cudaMemsetAsync", "cudaMemsetAsync", IG_GRP_RUNTIME,
				      IG_ARGS_SIZE3_STREAM4, 0, IG_OPK_MEMSET,
				      S("cudaMemsetAsync", "cudaMemsetAsync_ptsz") },
	[IG_OP_CUDA_EVENT_RECORD] = { "cudaEventRecord", "cudaEventRecord", IG_GRP_RUNTIME,
				      IG_ARGS_PTR1_STREAM2, 0, IG_OPK_EVENT,
				      S("cudaEventRecord", "cudaEventRecord_ptsz") },
	[IG_OP_CUDA_EVENT_QUERY] = { "cudaEventQuery", "cudaEventQuery", IG_GRP_RUNTIME,
				     IG_ARGS_PTR1, 0, IG_OPK_EVENT, S("cudaEventQuery") },
	[IG_OP_CUDA_EVENT_SYNC] = { "cudaEventSynchronize", "cudaEventSync", IG_GRP_RUNTIME,
				    IG_ARGS_PTR1, 0, IG_OPK_SYNC, S("cudaEventSynchronize") },
	[IG_OP_CUDA_STREAM_WAIT_EVENT] = { "cudaStreamWaitEvent", "cudaStreamWaitEvent",
					   IG_GRP_RUNTIME, IG_ARGS_STREAM1, 0, IG_OPK_EVENT,
					   S("cudaStreamWaitEvent",
					     "cudaStreamWaitEvent_ptsz") },
	/* driver calls of frameworks */
	[IG_OP_CU_LAUNCH_KERNEL_EX] = { "cuLaunchKernelEx", "cuLaunchKernelEx", IG_GRP_DRIVER,
					IG_ARGS_LAUNCH_EX, 0, IG_OPK_LAUNCH | IG_OPK_DRIVER,
					S("cuLaunchKernelEx", "cuLaunchKernelEx_ptsz") },
	[IG_OP_CU_MEM_ALLOC_ASYNC] = { "cuMemAllocAsync", "cuMemAllocAsync", IG_GRP_DRIVER,
				       IG_ARGS_SIZE2_STREAM3, 0, IG_OPK_ALLOC | IG_OPK_DRIVER,
				       S("cuMemAllocAsync", "cuMemAllocAsync_ptsz") },
	[IG_OP_CU_MEM_FREE_ASYNC] = { "cuMemFreeAsync", "cuMemFreeAsync", IG_GRP_DRIVER,
				      IG_ARGS_PTR1_STREAM2, 0, IG_OPK_FREE | IG_OPK_DRIVER,
				      S("cuMemFreeAsync", "cuMemFreeAsync_ptsz") },
	[IG_OP_CU_MEMCPY_DTOD] = { "cuMemcpyDtoD", "cuMemcpyDtoD", IG_GRP_DRIVER, IG_ARGS_COPY_CU,
				   IG_DIR_D2D, IG_OPK_COPY | IG_OPK_DRIVER,
				   S("cuMemcpyDtoD_v2", "cuMemcpyDtoD", "cuMemcpyDtoD_v2_ptds") },
	[IG_OP_CU_MEMCPY_HTOD_ASYNC] = { "cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync", IG_GRP_DRIVER,
					 IG_ARGS_COPY_CU, IG_DIR_H2D, IG_OPK_COPY | IG_OPK_DRIVER,
					 S("cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync",
					   "cuMemcpyHtoDAsync_v2_ptsz") },
	[IG_OP_CU_MEMCPY_DTOH_ASYNC] = { "cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync", IG_GRP_DRIVER,
					 IG_ARGS_COPY_CU, IG_DIR_D2H, IG_OPK_COPY | IG_OPK_DRIVER,
					 S("cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync",
					   "cuMemcpyDtoHAsync_v2_ptsz") },
	[IG_OP_CU_MEMCPY_DTOD_ASYNC] = { "cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync", IG_GRP_DRIVER,
					 IG_ARGS_COPY_CU, IG_DIR_D2D, IG_OPK_COPY | IG_OPK_DRIVER,
					 S("cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync",
					   "cuMemcpyDtoDAsync_v2_ptsz") },
	[IG_OP_CU_MODULE_LOAD_DATA] = { "cuModuleLoadData", "cuModuleLoadData", IG_GRP_DRIVER,
					IG_ARGS_NONE, 0, IG_OPK_LOAD | IG_OPK_DRIVER,
					S("cuModuleLoadData") },
	[IG_OP_CU_LIBRARY_LOAD_DATA] = { "cuLibraryLoadData", "cuLibraryLoadData", IG_GRP_DRIVER,
					 IG_ARGS_NONE, 0, IG_OPK_LOAD | IG_OPK_DRIVER,
					 S("cuLibraryLoadData") },
	/* NCCL: only ncclX (NVIDIA's pncclX is an alias at the same address; a
	 * profiler that wraps ncclX and calls pncclX must not count twice) */
	[IG_OP_NCCL_COMM_INIT_RANK] = { "ncclCommInitRank", "ncclCommInitRank", IG_GRP_NCCL,
					IG_ARGS_NCCL_INIT, 0, IG_OPK_COMM,
					S("ncclCommInitRank") },
	[IG_OP_NCCL_COMM_DESTROY] = { "ncclCommDestroy", "ncclCommDestroy", IG_GRP_NCCL,
				      IG_ARGS_PTR1, 0, IG_OPK_COMM,
				      S("ncclCommDestroy") },
	[IG_OP_NCCL_ALL_REDUCE] = { "ncclAllReduce", "ncclAllReduce", IG_GRP_NCCL,
				    IG_ARGS_NCCL_RED, 0, IG_OPK_COLL,
				    S("ncclAllReduce") },
	[IG_OP_NCCL_ALL_GATHER] = { "ncclAllGather", "ncclAllGather", IG_GRP_NCCL,
				    IG_ARGS_NCCL_GATHER, 0, IG_OPK_COLL,
				    S("ncclAllGather") },
	[IG_OP_NCCL_REDUCE_SCATTER] = { "ncclReduceScatter", "ncclReduceScatter", IG_GRP_NCCL,
					IG_ARGS_NCCL_RED, 0, IG_OPK_COLL,
					S("ncclReduceScatter") },
	[IG_OP_NCCL_BROADCAST] = { "ncclBroadcast", "ncclBroadcast", IG_GRP_NCCL,
				   IG_ARGS_NCCL_BCAST, 0, IG_OPK_COLL,
				   S("ncclBroadcast") },
	[IG_OP_NCCL_BCAST] = { "ncclBcast", "ncclBcast", IG_GRP_NCCL, IG_ARGS_NCCL_P2P, 0,
			       IG_OPK_COLL, S("ncclBcast") },
	[IG_OP_NCCL_REDUCE] = { "ncclReduce", "ncclReduce", IG_GRP_NCCL, IG_ARGS_NCCL_REDUCE, 0,
				IG_OPK_COLL, S("ncclReduce") },
	[IG_OP_NCCL_SEND] = { "ncclSend", "ncclSend", IG_GRP_NCCL, IG_ARGS_NCCL_P2P, 0,
			      IG_OPK_COLL, S("ncclSend") },
	[IG_OP_NCCL_RECV] = { "ncclRecv", "ncclRecv", IG_GRP_NCCL, IG_ARGS_NCCL_P2P, 0,
			      IG_OPK_COLL, S("ncclRecv") },
	[IG_OP_NCCL_GROUP_START] = { "ncclGroupStart", "ncclGroupStart", IG_GRP_NCCL,
				     IG_ARGS_NONE, 0, IG_OPK_GROUP,
				     S("ncclGroupStart") },
	[IG_OP_NCCL_GROUP_END] = { "ncclGroupEnd", "ncclGroupEnd", IG_GRP_NCCL, IG_ARGS_NONE, 0,
				   IG_OPK_GROUP, S("ncclGroupEnd") },
	/* HIP: the same kinds as the CUDA counterparts */
	[IG_OP_HIP_LAUNCH_KERNEL] = { "hipLaunchKernel", "hipLaunchKernel", IG_GRP_HIP,
				      IG_ARGS_LAUNCH_RT, 0, IG_OPK_LAUNCH,
				      S("hipLaunchKernel", "hipLaunchKernel_spt") },
	[IG_OP_HIP_MODULE_LAUNCH_KERNEL] = { "hipModuleLaunchKernel", "hipModuleLaunch",
					     IG_GRP_HIP, IG_ARGS_LAUNCH_CU, 0, IG_OPK_LAUNCH,
					     S("hipModuleLaunchKernel") },
	[IG_OP_HIP_EXT_MODULE_LAUNCH_KERNEL] = {
	    "hipExtModuleLaunchKernel", "hipExtModuleLaunch", IG_GRP_HIP, IG_ARGS_LAUNCH_CU, 0,
	    IG_OPK_LAUNCH,
	    S("hipExtModuleLaunchKernel",
	      "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_"
	      "P11ihipEvent_tS6_j") },
	[IG_OP_HIP_MEMCPY] = { "hipMemcpy", "hipMemcpy", IG_GRP_HIP, IG_ARGS_COPY_RT, 0,
			       IG_OPK_COPY | IG_OPK_IMPLICIT_SYNC, S("hipMemcpy", "hipMemcpy_spt") },
	[IG_OP_HIP_MEMCPY_ASYNC] = { "hipMemcpyAsync", "hipMemcpyAsync", IG_GRP_HIP,
				     IG_ARGS_COPY_RT, 0, IG_OPK_COPY,
				     S("hipMemcpyAsync", "hipMemcpyAsync_spt") },
	[IG_OP_HIP_MEMCPY_HTOD] = { "hipMemcpyHtoD", "hipMemcpyHtoD", IG_GRP_HIP, IG_ARGS_COPY_CU,
				    IG_DIR_H2D, IG_OPK_COPY | IG_OPK_IMPLICIT_SYNC,
				    S("hipMemcpyHtoD") },
	[IG_OP_HIP_MEMCPY_DTOH] = { "hipMemcpyDtoH", "hipMemcpyDtoH", IG_GRP_HIP, IG_ARGS_COPY_CU,
				    IG_DIR_D2H, IG_OPK_COPY | IG_OPK_IMPLICIT_SYNC,
				    S("hipMemcpyDtoH") },
	[IG_OP_HIP_MALLOC] = { "hipMalloc", "hipMalloc", IG_GRP_HIP, IG_ARGS_SIZE2, 0, IG_OPK_ALLOC,
			       S("hipMalloc") },
	[IG_OP_HIP_FREE] = { "hipFree", "hipFree", IG_GRP_HIP, IG_ARGS_PTR1, 0,
			     IG_OPK_FREE | IG_OPK_IMPLICIT_SYNC, S("hipFree") },
	[IG_OP_HIP_MALLOC_ASYNC] = { "hipMallocAsync", "hipMallocAsync", IG_GRP_HIP,
				     IG_ARGS_SIZE2_STREAM3, 0, IG_OPK_ALLOC, S("hipMallocAsync") },
	[IG_OP_HIP_STREAM_SYNC] = { "hipStreamSynchronize", "hipStreamSync", IG_GRP_HIP,
				    IG_ARGS_STREAM1, 0, IG_OPK_SYNC,
				    S("hipStreamSynchronize", "hipStreamSynchronize_spt") },
	[IG_OP_HIP_DEVICE_SYNC] = { "hipDeviceSynchronize", "hipDeviceSync", IG_GRP_HIP,
				    IG_ARGS_NONE, 0, IG_OPK_SYNC, S("hipDeviceSynchronize") },
	[IG_OP_HIP_EVENT_SYNC] = { "hipEventSynchronize", "hipEventSync", IG_GRP_HIP, IG_ARGS_PTR1,
				   0, IG_OPK_SYNC, S("hipEventSynchronize") },
	[IG_OP_HIP_GRAPH_LAUNCH] = { "hipGraphLaunch", "hipGraphLaunch", IG_GRP_HIP,
				     IG_ARGS_STREAM2, 0, IG_OPK_LAUNCH,
				     S("hipGraphLaunch", "hipGraphLaunch_spt") },
};

const struct ig_op_info *ig_op_info(int op)
{
	if (op <= IG_OP_NONE || op >= IG_OP_MAX)
		return NULL;
	return &ops[op];
}

const char *ig_op_name(int op)
{
	const struct ig_op_info *i = ig_op_info(op);
	return i ? i->name : "?";
}

int ig_op_by_name(const char *name)
{
	for (int op = IG_OP_NONE + 1; op < IG_OP_MAX; op++) {
		if (!strcmp(ops[op].name, name) || !strcmp(ops[op].short_name, name))
			return op;
		for (const char *const *s = ops[op].symbols; *s; s++)
			if (!strcmp(*s, name))
				return op;
	}
	return IG_OP_NONE;
}

const char *ig_op_group_title(int group)
{
	static const char *const t[IG_GRP_MAX] = {
	    [IG_GRP_RUNTIME] = "Runtime API (libcudart)", [IG_GRP_DRIVER] = "Driver API (libcuda)",
	    [IG_GRP_GRAPH] = "CUDA Graphs",		  [IG_GRP_NCCL] = "NCCL",
	    [IG_GRP_HIP] = "HIP API",
	};
	return group >= 0 && group < IG_GRP_MAX ? t[group] : "Other";
}

int ig_op_lib(int op)
{
	const struct ig_op_info *i = ig_op_info(op);
	if (!i)
		return IG_LIB_CUDART;
	if (i->group == IG_GRP_NCCL)
		return IG_LIB_NCCL;
	if (i->group == IG_GRP_HIP)
		return IG_LIB_HIP;
	return i->kind & IG_OPK_DRIVER ? IG_LIB_CUDA : IG_LIB_CUDART;
}

const char *ig_op_lib_name(int lib)
{
	static const char *const n[IG_LIB_MAX] = {"libcudart", "libcuda", "libnccl",
						  "libamdhip64"};
	return lib >= 0 && lib < IG_LIB_MAX ? n[lib] : "?";
}

/* ncclDataType_t sizes and names (nccl.h 2.19+: ncclInt8 = 0 ... ncclFloat8e5m2 = 11). */
static const struct {
	unsigned size;
	const char *name;
} nccl_types[IG_NCCL_NTYPES] = {
    {1, "int8"},    {1, "uint8"},  {4, "int32"},   {4, "uint32"},
    {8, "int64"},   {8, "uint64"}, {2, "float16"}, {4, "float32"},
    {8, "float64"}, {2, "bfloat16"}, {1, "fp8e4m3"}, {1, "fp8e5m2"},
};

unsigned ig_nccl_type_size(unsigned type)
{
	return type < IG_NCCL_NTYPES ? nccl_types[type].size : 0;
}

const char *ig_nccl_type_name(unsigned type)
{
	return type < IG_NCCL_NTYPES ? nccl_types[type].name : "?";
}

const char *ig_nccl_redop_name(unsigned op)
{
	static const char *const n[] = {"sum", "prod", "max", "min", "avg"};
	if (op == IG_NCCL_NONE8)
		return "";
	return op < sizeof(n) / sizeof(n[0]) ? n[op] : "?";
}
