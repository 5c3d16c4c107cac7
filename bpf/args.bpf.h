/* The arguments of traced calls read at entry (bpf/calls.bpf.h,
 * call_enter): arguments passed on the stack, CUDA 12 launch configs, the
 * NCCL collectives' arguments and the argument modes added later (the
 * modes: bpf/ingero.h). Part of bpf/ingero.bpf.c. */

static __always_inline __u64 stack_arg(struct pt_regs *ctx, int n)
{
	/* n-th argument passed on the stack (1-based), x86-64 SysV: at entry
	 * the return address is at sp, the first stack argument at sp + 8. */
	__u64 v = 0;
	bpf_probe_read_user(&v, sizeof(v), (void *)(PT_REGS_SP(ctx) + 8 * n));
	return v;
}

/* The sixth integer argument (x86-64 SysV: r9); libbpf 1.1 has no
 * PT_REGS_PARM6. */
#define PARM6(ctx) (((struct pt_regs *)(ctx))->r9)

/* A CUDA 12 launch config (cudaLaunchConfig_t, CUlaunchConfig): grid and
 * block dimensions first, the stream at offset 32. arg1 = blocks << 16 |
 * threads per block; the stream goes to f->stream. */
static __always_inline void launch_config(struct frame *f, __u64 cfg)
{
	__u32 dim[6];
	__u64 st = 0;

	if (!bpf_probe_read_user(dim, sizeof(dim), (void *)cfg)) {
		__u64 blocks = (__u64)dim[0] * dim[1] * dim[2];
		__u64 threads = (__u64)dim[3] * dim[4] * dim[5];
		if (blocks > (1ULL << 47) - 1)
			blocks = (1ULL << 47) - 1;
		f->arg1 = blocks << 16 | (threads > 0xffff ? 0xffff : threads);
	}
	bpf_probe_read_user(&st, sizeof(st), (void *)(cfg + 32));
	f->stream = st;
}

/* The NCCL arguments (bpf/ingero.h): most of them are too many for the
 * registers, the last ones are on the stack. */
static __always_inline void nccl_args(struct pt_regs *ctx, struct frame *f, __u32 mode,
				      __u64 *arg2)
{
	switch (mode) {
	case IGB_ARGS_NCCL_RED: /* (send, recv, count, type, op, comm, stream) */
		f->arg0 = PT_REGS_PARM3(ctx);
		f->arg1 = IGB_NCCL_ARG1(PT_REGS_PARM4(ctx), PT_REGS_PARM5(ctx), 0xffffffff);
		*arg2 = PARM6(ctx);
		f->stream = stack_arg(ctx, 1);
		break;
	case IGB_ARGS_NCCL_GATHER: /* (send, recv, count, type, comm, stream) */
		f->arg0 = PT_REGS_PARM3(ctx);
		f->arg1 = IGB_NCCL_ARG1(PT_REGS_PARM4(ctx), 0xff, 0xffffffff);
		*arg2 = PT_REGS_PARM5(ctx);
		f->stream = PARM6(ctx);
		break;
	case IGB_ARGS_NCCL_BCAST: /* (send, recv, count, type, root, comm, stream) */
		f->arg0 = PT_REGS_PARM3(ctx);
		f->arg1 = IGB_NCCL_ARG1(PT_REGS_PARM4(ctx), 0xff, PT_REGS_PARM5(ctx));
		*arg2 = PARM6(ctx);
		f->stream = stack_arg(ctx, 1);
		break;
	case IGB_ARGS_NCCL_REDUCE: /* (send, recv, count, type, op, root, comm, stream) */
		f->arg0 = PT_REGS_PARM3(ctx);
		f->arg1 = IGB_NCCL_ARG1(PT_REGS_PARM4(ctx), PT_REGS_PARM5(ctx), PARM6(ctx));
		*arg2 = stack_arg(ctx, 1);
		f->stream = stack_arg(ctx, 2);
		break;
	case IGB_ARGS_NCCL_P2P: /* (buf, count, type, peer or root, comm, stream) */
		f->arg0 = PT_REGS_PARM2(ctx);
		f->arg1 = IGB_NCCL_ARG1(PT_REGS_PARM3(ctx), 0xff, PT_REGS_PARM4(ctx));
		*arg2 = PT_REGS_PARM5(ctx);
		f->stream = PARM6(ctx);
		break;
	case IGB_ARGS_NCCL_INIT: {
		/* (comm *, nranks, ncclUniqueId id, rank): the 128-byte id is
		 * passed by value in memory (on the stack), so rank is the third
		 * integer register. The id's first 16 bytes (NCCL: a random
		 * magic and the root's address) name the communicator on every
		 * rank; the exit reads *comm. */
		__u64 a = stack_arg(ctx, 1), b = stack_arg(ctx, 2);
		f->arg0 = PT_REGS_PARM1(ctx);
		f->arg1 = (__u32)PT_REGS_PARM2(ctx) | (__u64)(__u32)PT_REGS_PARM3(ctx) << 32;
		*arg2 = (a ^ (b * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
		break;
	}
	default:
		break;
	}
}

/* The argument modes added after the first op table (bpf/ingero.h: from
 * IGB_ARGS_SIZE2_STREAM3 on), behind one compare and out of line (a BPF
 * subprogram): inlined into call_enter, this code made every entry ~15 ns
 * slower although the instructions the first table's ops run were the same
 * (kernel.bpf_stats_enabled, docs/gpu.md "Cost"). Only the NCCL modes use
 * arg2 (map thread_arg2), which goes in their wide record alone. */
static __noinline void later_args(struct pt_regs *ctx, struct frame *f, __u32 mode,
				       __u32 slot)
{
	switch (mode) {
	case IGB_ARGS_SIZE2_STREAM3: /* (ptr *, bytes, stream) */
		f->arg0 = PT_REGS_PARM2(ctx);
		f->stream = PT_REGS_PARM3(ctx);
		break;
	case IGB_ARGS_PTR1_STREAM2: /* (ptr, stream) */
		f->arg0 = PT_REGS_PARM1(ctx);
		f->stream = PT_REGS_PARM2(ctx);
		break;
	case IGB_ARGS_LAUNCH_EX: /* (const config *, func, ...) */
		f->arg0 = PT_REGS_PARM2(ctx);
		launch_config(f, PT_REGS_PARM1(ctx));
		break;
	case IGB_ARGS_SIZE3_STREAM4: /* memset: (ptr, value, count[, stream]) */
		f->arg0 = PT_REGS_PARM3(ctx);
		f->stream = PT_REGS_PARM4(ctx);
		break;
	case IGB_ARGS_NCCL_RED ... IGB_ARGS_NCCL_INIT: {
		__u32 tid = (__u32)bpf_get_current_pid_tgid();
		struct arg2s *a = bpf_map_lookup_elem(&thread_arg2, &tid);
		if (!a) {
			struct arg2s zero = {};
			bpf_map_update_elem(&thread_arg2, &tid, &zero, BPF_ANY);
			a = bpf_map_lookup_elem(&thread_arg2, &tid);
		}
		__u64 scratch;
		nccl_args(ctx, f, mode, a ? &a->v[slot & (IGB_MAX_DEPTH - 1)] : &scratch);
		break;
	}
	default:
		break;
	}
}
