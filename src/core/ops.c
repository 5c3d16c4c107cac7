/* The table of traced CUDA operations and their symbol variants. */
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
