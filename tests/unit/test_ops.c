/* The op table: every op has a name, a group, symbols, and names round-trip. */
#include "check.h"
#include "core/ops.h"

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
	return check_done("test_ops");
}
