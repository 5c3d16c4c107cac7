/* The op table: every op has a name, a group, symbols, and names round-trip. */
#include "check.h"
#include "core/ops.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
	for (int op = IG_OP_NONE + 1; op < IG_OP_MAX; op++) {
		const struct ig_op_info *i = ig_op_info(op);
		CHECK(i && i->name && i->short_name && i->symbols[0]);
		CHECKF(ig_op_by_name(i->name) == op, "%s", i->name);
		CHECKF(strlen(i->short_name) <= 20, "%s", i->short_name);
	}
	CHECK(ig_op_info(IG_OP_NONE) == NULL);
	CHECK(ig_op_info(IG_OP_MAX) == NULL);
	CHECK(ig_op_by_name("cuMemAlloc_v2") == IG_OP_CU_MEM_ALLOC);
	CHECK(ig_op_by_name("cudaStreamSync") == IG_OP_CUDA_STREAM_SYNC);
	CHECK(ig_op_by_name("cuLaunchKernel_ptsz") == IG_OP_CU_LAUNCH_KERNEL);
	CHECK(ig_op_by_name("nope") == IG_OP_NONE);
	CHECK(!strcmp(ig_op_name(12345), "?"));
	/* every op of the workload's --expect list (WL_OPS) is known by that name */
	FILE *f = fopen("tests/workload/workload.h", "r");
	char line[256], name[128];
	int nwl = 0;
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " X(%127[A-Za-z0-9_])", name) == 1) {
			nwl++;
			CHECKF(ig_op_by_name(name) != IG_OP_NONE, "%s", name);
		}
	if (f)
		fclose(f);
	CHECK(nwl >= 70);
	/* HIP's mangled hipExtModuleLaunchKernel, groups and libraries */
	CHECK(ig_op_by_name("_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_"
			    "tPPvS4_P11ihipEvent_tS6_j") == IG_OP_HIP_EXT_MODULE_LAUNCH_KERNEL);
	CHECK(ig_op_lib(IG_OP_NCCL_ALL_REDUCE) == IG_LIB_NCCL);
	CHECK(ig_op_lib(IG_OP_HIP_MALLOC) == IG_LIB_HIP);
	CHECK(ig_op_lib(IG_OP_CU_MEMCPY_DTOD) == IG_LIB_CUDA);
	CHECK(ig_op_lib(IG_OP_CU_GRAPH_LAUNCH) == IG_LIB_CUDA);
	CHECK(ig_op_lib(IG_OP_CUDA_GRAPH_LAUNCH) == IG_LIB_CUDART);
	CHECK(!strcmp(ig_op_group_title(IG_GRP_NCCL), "NCCL"));
	CHECK(!strcmp(ig_op_group_title(IG_GRP_HIP), "HIP API"));
	/* HIP ops are judged like their CUDA counterparts: the same kind flags */
	static const int pairs[][2] = {
	    {IG_OP_HIP_LAUNCH_KERNEL, IG_OP_CUDA_LAUNCH_KERNEL},
	    {IG_OP_HIP_MEMCPY, IG_OP_CUDA_MEMCPY},
	    {IG_OP_HIP_MEMCPY_ASYNC, IG_OP_CUDA_MEMCPY_ASYNC},
	    {IG_OP_HIP_MALLOC, IG_OP_CUDA_MALLOC},
	    {IG_OP_HIP_FREE, IG_OP_CUDA_FREE},
	    {IG_OP_HIP_MALLOC_ASYNC, IG_OP_CUDA_MALLOC_ASYNC},
	    {IG_OP_HIP_STREAM_SYNC, IG_OP_CUDA_STREAM_SYNC},
	    {IG_OP_HIP_DEVICE_SYNC, IG_OP_CUDA_DEVICE_SYNC},
	    {IG_OP_HIP_EVENT_SYNC, IG_OP_CUDA_EVENT_SYNC},
	    {IG_OP_HIP_GRAPH_LAUNCH, IG_OP_CUDA_GRAPH_LAUNCH},
	};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		CHECKF(ig_op_info(pairs[i][0])->kind == ig_op_info(pairs[i][1])->kind, "%s",
		       ig_op_name(pairs[i][0]));
	/* NCCL packing round-trips, sizes as nccl.h */
	uint64_t a1 = IG_NCCL_ARG1(7, 2, 5), a2 = IG_NCCL_COMM(0xabcdef, 3, 8);
	CHECK(IG_NCCL_TYPE(a1) == 7 && IG_NCCL_REDOP(a1) == 2 && IG_NCCL_PEER(a1) == 5);
	CHECK(IG_NCCL_PEER(IG_NCCL_ARG1(0, IG_NCCL_NONE8, IG_NCCL_NONE32)) == IG_NCCL_NONE32);
	CHECK(IG_NCCL_COMM_KEY(a2) == 0xabcdef && IG_NCCL_COMM_RANK(a2) == 3 &&
	      IG_NCCL_COMM_NRANKS(a2) == 8);
	static const unsigned sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
	for (unsigned t = 0; t < IG_NCCL_NTYPES; t++)
		CHECK(ig_nccl_type_size(t) == sizes[t]);
	CHECK(ig_nccl_type_size(12) == 0 && !strcmp(ig_nccl_type_name(7), "float32"));
	CHECK(!strcmp(ig_nccl_redop_name(2), "max") && !strcmp(ig_nccl_redop_name(0xff), ""));
	return check_done("test_ops");
}
