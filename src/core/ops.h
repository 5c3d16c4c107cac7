/* The GPU API operations ingero-top knows (CUDA runtime and driver, NCCL,
 * HIP): ids, names, groups, kinds, argument layouts and the symbol variants
 * each one is attached to; NCCL's data types, reduction ops and how an NCCL
 * call's arguments are packed into an event. Pure data. */
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
	/* runtime API calls of frameworks (CUDA 12/13) */
	IG_OP_CUDA_LAUNCH_KERNEL_EX,
	IG_OP_CUDA_MALLOC_ASYNC,
	IG_OP_CUDA_FREE_ASYNC,
	IG_OP_CUDA_MALLOC_HOST,
	IG_OP_CUDA_HOST_ALLOC,
	IG_OP_CUDA_FREE_HOST,
	IG_OP_CUDA_MEMSET,
	IG_OP_CUDA_MEMSET_ASYNC,
	IG_OP_CUDA_EVENT_RECORD,
	IG_OP_CUDA_EVENT_QUERY,
	IG_OP_CUDA_EVENT_SYNC,
	IG_OP_CUDA_STREAM_WAIT_EVENT,
	/* driver API calls of frameworks */
	IG_OP_CU_LAUNCH_KERNEL_EX,
	IG_OP_CU_MEM_ALLOC_ASYNC,
	IG_OP_CU_MEM_FREE_ASYNC,
	IG_OP_CU_MEMCPY_DTOD,
	IG_OP_CU_MEMCPY_HTOD_ASYNC,
	IG_OP_CU_MEMCPY_DTOH_ASYNC,
	IG_OP_CU_MEMCPY_DTOD_ASYNC,
	IG_OP_CU_MODULE_LOAD_DATA,
	IG_OP_CU_LIBRARY_LOAD_DATA,
	/* NCCL (libnccl.so.2) */
	IG_OP_NCCL_COMM_INIT_RANK,
	IG_OP_NCCL_COMM_DESTROY,
	IG_OP_NCCL_ALL_REDUCE,
	IG_OP_NCCL_ALL_GATHER,
	IG_OP_NCCL_REDUCE_SCATTER,
	IG_OP_NCCL_BROADCAST,
	IG_OP_NCCL_BCAST,
	IG_OP_NCCL_REDUCE,
	IG_OP_NCCL_SEND,
	IG_OP_NCCL_RECV,
	IG_OP_NCCL_GROUP_START,
	IG_OP_NCCL_GROUP_END,
	/* HIP (libamdhip64.so.6, .so.5) */
	IG_OP_HIP_LAUNCH_KERNEL,
	IG_OP_HIP_MODULE_LAUNCH_KERNEL,
	IG_OP_HIP_EXT_MODULE_LAUNCH_KERNEL,
	IG_OP_HIP_MEMCPY,
	IG_OP_HIP_MEMCPY_ASYNC,
	IG_OP_HIP_MEMCPY_HTOD,
	IG_OP_HIP_MEMCPY_DTOH,
	IG_OP_HIP_MALLOC,
	IG_OP_HIP_FREE,
	IG_OP_HIP_MALLOC_ASYNC,
	IG_OP_HIP_STREAM_SYNC,
	IG_OP_HIP_DEVICE_SYNC,
	IG_OP_HIP_EVENT_SYNC,
	IG_OP_HIP_GRAPH_LAUNCH,
	IG_OP_MAX,
};
/* Series keys and the recording's op ids keep an op in 8 bits. */
_Static_assert(IG_OP_MAX <= 256, "ops must fit in 8 bits");

enum ig_op_group {
	IG_GRP_RUNTIME = 0,
	IG_GRP_DRIVER = 1,
	IG_GRP_GRAPH = 2,
	IG_GRP_NCCL = 3,
	IG_GRP_HIP = 4,
	IG_GRP_MAX,
};

/* The library an op lives in: what the attach summary lists as missing. */
enum ig_op_lib { IG_LIB_CUDART = 0, IG_LIB_CUDA = 1, IG_LIB_NCCL = 2, IG_LIB_HIP = 3, IG_LIB_MAX };

/* What an op is, for the detector and the views. */
#define IG_OPK_ALLOC 0x1  /* allocation */
#define IG_OPK_FREE 0x2
#define IG_OPK_COPY 0x4   /* memory copy */
#define IG_OPK_SYNC 0x8   /* explicit synchronisation */
#define IG_OPK_LAUNCH 0x10
#define IG_OPK_IMPLICIT_SYNC 0x20 /* may synchronise implicitly (sync copies) */
#define IG_OPK_DRIVER 0x40	  /* in the driver library (libcuda) */
#define IG_OPK_MEMSET 0x80	  /* fills device memory: arg0 = bytes */
#define IG_OPK_EVENT 0x100	  /* records or queries an event (no host wait) */
#define IG_OPK_LOAD 0x200	  /* loads device code: a cold start */
#define IG_OPK_COLL 0x400	  /* an NCCL data operation: bytes, completion wait */
#define IG_OPK_GROUP 0x800	  /* ncclGroupStart / ncclGroupEnd */
#define IG_OPK_COMM 0x1000	  /* an NCCL communicator is made or destroyed */

/* How the BPF entry probe reads the useful arguments (see bpf/calls.bpf.h). */
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
	IG_ARGS_SIZE2_STREAM3, /* arg0 = parm2 bytes, stream = parm3 (stream-ordered alloc) */
	IG_ARGS_PTR1_STREAM2,  /* arg0 = parm1 pointer, stream = parm2 (stream-ordered free) */
	IG_ARGS_LAUNCH_EX,     /* (config *, func, ...): arg0 = func, from the config:
				* stream (offset 32), arg1 = grid blocks << 16 | threads
				* per block */
	IG_ARGS_SIZE3_STREAM4, /* arg0 = parm3 bytes, stream = parm4 (memset) */
	/* NCCL: the BPF side leaves arg0 = count, arg1 = IG_NCCL_ARG1(type, op,
	 * peer or root), arg2 = the communicator handle, stream; the collector
	 * turns them into the event's form (below). */
	IG_ARGS_NCCL_RED,    /* (send, recv, count, type, op, comm, stream): AllReduce,
			      * ReduceScatter */
	IG_ARGS_NCCL_GATHER, /* (send, recv, count, type, comm, stream): AllGather */
	IG_ARGS_NCCL_BCAST,  /* (send, recv, count, type, root, comm, stream): Broadcast */
	IG_ARGS_NCCL_REDUCE, /* (send, recv, count, type, op, root, comm, stream) */
	IG_ARGS_NCCL_P2P,    /* (buf, count, type, peer or root, comm, stream): Send,
			      * Recv, Bcast */
	IG_ARGS_NCCL_INIT,   /* (comm *, nranks, id (128 bytes on the stack), rank): at
			      * exit arg0 = *comm, arg1 = nranks | rank << 32, arg2 =
			      * a hash of the id's first 16 bytes */
	IG_ARGS_MAX,
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
/* Title of an op group for tables ("Runtime API (libcudart)", "NCCL",
 * "HIP API"); "Other" when out of range. */
const char *ig_op_group_title(int group);
/* The library family of op (enum ig_op_lib), IG_LIB_CUDART when unknown. */
int ig_op_lib(int op);
/* "libcudart", "libcuda", "libnccl", "libamdhip64". */
const char *ig_op_lib_name(int lib);

/* --- NCCL ------------------------------------------------------------------
 * An NCCL call's event (IG_EV_CALL of an IG_OPK_COLL op), as the collector
 * makes it and recordings keep it:
 *   arg0   bytes this rank sends: count x size of the type (the count is
 *          per rank for AllGather and ReduceScatter, as NCCL's is)
 *   arg1   IG_NCCL_ARG1(type, op, peer): data type (bits 0-7, 0xff unknown),
 *          reduction op (8-15, 0xff none), peer or root (16-47, 0xffffffff
 *          none)
 *   arg2   IG_NCCL_COMM(key, rank, nranks): the communicator as
 *          ncclCommInitRank made it: rank (bits 0-19), nranks (20-39), a
 *          24-bit key shared by the ranks of one communicator (40-63);
 *          0 = not known (the collector did not see it made)
 *   stream the CUDA stream
 * ncclCommInitRank's and ncclCommDestroy's events carry arg2 the same way. */
#define IG_NCCL_NONE8 0xffu
#define IG_NCCL_NONE32 0xffffffffu
#define IG_NCCL_ARG1(type, op, peer)                                                              \
	((uint64_t)((type)&0xff) | ((uint64_t)((op)&0xff) << 8) | ((uint64_t)(uint32_t)(peer) << 16))
#define IG_NCCL_TYPE(arg1) ((unsigned)((arg1)&0xff))
#define IG_NCCL_REDOP(arg1) ((unsigned)(((arg1) >> 8) & 0xff))
#define IG_NCCL_PEER(arg1) ((uint32_t)((arg1) >> 16))
#define IG_NCCL_MAX_RANKS 0xfffffu
#define IG_NCCL_COMM(key, rank, nranks)                                                           \
	(((uint64_t)(rank)&0xfffff) | (((uint64_t)(nranks)&0xfffff) << 20) |                      \
	 (((uint64_t)(key)&0xffffff) << 40))
#define IG_NCCL_COMM_RANK(a2) ((uint32_t)((a2)&0xfffff))
#define IG_NCCL_COMM_NRANKS(a2) ((uint32_t)(((a2) >> 20) & 0xfffff))
#define IG_NCCL_COMM_KEY(a2) ((uint32_t)(((a2) >> 40) & 0xffffff))

/* ncclDataType_t: ncclInt8 = 0 ... ncclFloat8e5m2 = 11. */
#define IG_NCCL_NTYPES 12
/* Size in bytes of an NCCL data type, 0 when unknown. */
unsigned ig_nccl_type_size(unsigned type);
/* "int8" ... "fp8e5m2", "?" when unknown. */
const char *ig_nccl_type_name(unsigned type);
/* ncclRedOp_t: "sum", "prod", "max", "min", "avg", "?" (none: ""). */
const char *ig_nccl_redop_name(unsigned op);

#endif
