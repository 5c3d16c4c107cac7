/* The CUDA API operations ingero-top knows: ids, names, groups, and the
 * symbol variants each one is attached to. Pure data. */
#ifndef IG_OPS_H
#define IG_OPS_H

#include <stdint.h>

enum ig_op {
	IG_OP_NONE = 0,
	/* runtime API */
	IG_OP_CUDA_MALLOC,
	IG_OP_CUDA_FREE,
	IG_OP_CUDA_MALLOC_MANAGED,
	IG_OP_CUDA_LAUNCH_KERNEL,
	IG_OP_CUDA_MEMCPY,
	IG_OP_CUDA_MEMCPY_ASYNC,
	IG_OP_CUDA_STREAM_SYNC,
	IG_OP_CUDA_DEVICE_SYNC,
	/* runtime graph API */
	IG_OP_CUDA_STREAM_BEGIN_CAPTURE,
	IG_OP_CUDA_STREAM_END_CAPTURE,
	IG_OP_CUDA_GRAPH_INSTANTIATE,
	IG_OP_CUDA_GRAPH_LAUNCH,
	/* driver API */
	IG_OP_CU_LAUNCH_KERNEL,
	IG_OP_CU_MEMCPY,
	IG_OP_CU_MEMCPY_ASYNC,
	IG_OP_CU_MEMCPY_HTOD,
	IG_OP_CU_MEMCPY_DTOH,
	IG_OP_CU_MEM_ALLOC,
	IG_OP_CU_MEM_ALLOC_MANAGED,
	IG_OP_CU_MEM_FREE,
	IG_OP_CU_CTX_SYNC,
	IG_OP_CU_STREAM_SYNC,
	/* driver graph API */
	IG_OP_CU_GRAPH_LAUNCH,
	IG_OP_MAX,
};

enum ig_op_group { IG_GRP_RUNTIME = 0, IG_GRP_DRIVER = 1, IG_GRP_GRAPH = 2 };

/* What an op is, for the detector and the views. */
#define IG_OPK_ALLOC 0x1  /* allocation */
#define IG_OPK_FREE 0x2
#define IG_OPK_COPY 0x4   /* memory copy */
#define IG_OPK_SYNC 0x8   /* explicit synchronisation */
#define IG_OPK_LAUNCH 0x10
#define IG_OPK_IMPLICIT_SYNC 0x20 /* may synchronise implicitly (sync copies) */
#define IG_OPK_DRIVER 0x40

/* How the BPF entry probe reads the useful arguments (see bpf/ingero.bpf.c). */
enum ig_argmode {
	IG_ARGS_NONE = 0,
	IG_ARGS_PTR1,        /* arg0 = parm1 (pointer freed) */
	IG_ARGS_SIZE2,       /* arg0 = parm2 (bytes) */
	IG_ARGS_COPY_RT,     /* arg0 = parm3 bytes, arg1 = parm4 kind, stream = parm5 */
	IG_ARGS_COPY_CU,     /* arg0 = parm3 bytes, stream = parm4, dir from table */
	IG_ARGS_STREAM1,     /* stream = parm1 */
	IG_ARGS_STREAM2,     /* stream = parm2 */
	IG_ARGS_LAUNCH_RT,   /* arg0 = parm1 func, stream = 2nd stack arg */
	IG_ARGS_LAUNCH_CU,   /* arg0 = parm1 func, stream = 3rd stack arg */
};

struct ig_op_info {
	const char *name;       /* canonical API name, e.g. "cudaStreamSynchronize" */
	const char *short_name; /* column-friendly, e.g. "cudaStreamSync" */
	uint8_t group;          /* enum ig_op_group */
	uint8_t argmode;        /* enum ig_argmode */
	uint8_t dir;            /* fixed copy direction for driver copies, else 0 */
	uint16_t kind;          /* IG_OPK_* */
	const char *symbols[6]; /* exported symbol names to attach, NULL-terminated */
};

/* Returns the static description of op, or NULL when op is out of range. */
const struct ig_op_info *ig_op_info(int op);
/* Canonical name of op, "?" when unknown. */
const char *ig_op_name(int op);
/* Looks an op up by canonical name, short name or symbol variant; IG_OP_NONE
 * when not found. */
int ig_op_by_name(const char *name);

#endif
