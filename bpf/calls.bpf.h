/* The CUDA/HIP API calls: the uprobe that opens a call (call_enter) and
 * the uretprobes that close it (call_exit, call_exit_stk with the user
 * stack), each call with its off-CPU time charged by bpf/sched.bpf.h.
 * Part of bpf/ingero.bpf.c. */

/* The entry half of a call: push a frame on the thread's call stack. This
 * and on_call_exit run on every traced call, so they do as little as they
 * can: no targets lookup once the thread has a state, no memset, one clock
 * read each (docs/performance.md). */
SEC("uprobe")
int BPF_KPROBE(call_enter)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct tstate *st = thread_get(tid);
	struct frame *f;
	__u32 depth;

	if (!st || st->tgid != tgid) {
		if (!is_target(tgid)) {
			__u8 one = 1;
			if (!target_all)
				return 0;
			bpf_map_update_elem(&targets, &tgid, &one, BPF_ANY);
		}
		st = thread_new(tid, tgid);
		if (!st)
			return 0;
	}
	depth = st->depth;
	if (depth >= IGB_MAX_DEPTH) {
		count(IGB_CNT_DEPTH_OVERFLOW, 1);
		return 0;
	}
	f = &st->f[depth & (IGB_MAX_DEPTH - 1)];
	f->op = IGB_COOKIE_OP(cookie);
	f->arg0 = 0;
	f->arg1 = IGB_COOKIE_DIR(cookie);
	f->stream = 0;
	f->preempt_ns = 0;
	f->blocked_ns = 0;
	f->switches = 0;
	f->preemptor = 0;

	switch (IGB_COOKIE_ARGMODE(cookie)) {
	case IGB_ARGS_PTR1:
		f->arg0 = PT_REGS_PARM1(ctx);
		break;
	case IGB_ARGS_SIZE2:
		f->arg0 = PT_REGS_PARM2(ctx);
		break;
	case IGB_ARGS_COPY_RT: /* (dst, src, count, kind[, stream]) */
		f->arg0 = PT_REGS_PARM3(ctx);
		f->arg1 = PT_REGS_PARM4(ctx);
		f->stream = PT_REGS_PARM5(ctx);
		break;
	case IGB_ARGS_COPY_CU: /* (dst, src, count[, stream]); direction from the cookie */
		f->arg0 = PT_REGS_PARM3(ctx);
		f->stream = PT_REGS_PARM4(ctx);
		break;
	case IGB_ARGS_STREAM1:
		f->stream = PT_REGS_PARM1(ctx);
		break;
	case IGB_ARGS_STREAM2:
		f->stream = PT_REGS_PARM2(ctx);
		break;
	case IGB_ARGS_LAUNCH_RT: /* (func, dim3 grid, dim3 block, args, shmem, stream) */
		f->arg0 = PT_REGS_PARM1(ctx);
		f->stream = stack_arg(ctx, 2);
		break;
	case IGB_ARGS_LAUNCH_CU: /* (f, gx, gy, gz, bx, by, bz, shmem, stream, ...) */
		f->arg0 = PT_REGS_PARM1(ctx);
		f->stream = stack_arg(ctx, 3);
		break;
	default:
		if (IGB_COOKIE_ARGMODE(cookie) >= IGB_ARGS_SIZE2_STREAM3)
			later_args(ctx, f, IGB_COOKIE_ARGMODE(cookie), depth);
		break;
	}
	/* Off-CPU state of a nested call starts from zero; the outer frame
	 * keeps accumulating too. The timestamp goes last so the call's own
	 * set-up cost is not part of it. */
	f->ts = bpf_ktime_get_ns();
	st->depth = depth + 1;
	return 0;
}

/* The return half of a call. Two programs share it: call_exit, and
 * call_exit_stk that also captures the stack. The collector loads one of
 * them, so kernels without bpf_loop() still load call_exit. */
static __always_inline int on_call_exit(struct pt_regs *ctx, bool want_stack)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	__u16 op = IGB_COOKIE_OP(cookie);
	struct task_struct *task;
	struct igb_event *e;
	struct tstate *st;
	struct frame *f;
	__u32 depth;

	st = thread_get(tid);
	if (!st)
		return 0;
	depth = st->depth;
	if (depth == 0 || depth > IGB_MAX_DEPTH) {
		count(IGB_CNT_UNMATCHED_RET, 1);
		return 0;
	}
	f = &st->f[(depth - 1) & (IGB_MAX_DEPTH - 1)];
	if (f->op != op) {
		/* Frames above this op's are calls that never returned (longjmp,
		 * a uretprobe lost to an exception): pop them. No frame of this
		 * op: its entry was not seen (the return probe went live first,
		 * while attaching to a running process), so the stack is left
		 * as it is: popping it would lose the outer call's frame. */
		__u32 d = depth;
		for (int i = 0; i < IGB_MAX_DEPTH; i++) {
			if (d == 0 || st->f[(d - 1) & (IGB_MAX_DEPTH - 1)].op == op)
				break;
			d--;
		}
		if (d == 0) {
			count(IGB_CNT_UNMATCHED_RET, 1);
			return 0;
		}
		count(IGB_CNT_UNMATCHED_RET, depth - d);
		depth = d;
		f = &st->f[(depth - 1) & (IGB_MAX_DEPTH - 1)];
	}
	st->depth = depth - 1;

	/* After the duration is taken, so capture cost is not part of it.
	 * Read at return, on the frames of the call itself: still the call's
	 * stack, and the duration decides whether it is worth the walk. */
	__u64 stack_id = 0;
	if (want_stack && stacks_on) {
		__u64 tail = stack_sample ? stack_tail_ns[op & 255] : 0;
		if (!tail || now - f->ts >= tail ||
		    !(bpf_get_prandom_u32() & (stack_sample - 1)))
			stack_id = capture_stack(ctx, tgid, tid);
	}

	if (IGB_COOKIE_ARGMODE(cookie) >= IGB_ARGS_NCCL_RED) {
		/* arg2 is set at entry for the NCCL modes only: their record
		 * is the wide one, every other call's keeps its size */
		struct igb_event_wide *w = bpf_ringbuf_reserve(&events, sizeof(*w), 0);
		if (!w) {
			count(IGB_CNT_RB_DROPS, 1);
			return 0;
		}
		struct arg2s *a = bpf_map_lookup_elem(&thread_arg2, &tid);
		w->arg2 = a ? a->v[(depth - 1) & (IGB_MAX_DEPTH - 1)] : 0;
		e = &w->e;
	} else {
		e = reserve_raw();
		if (!e)
			return 0;
	}
	/* Every field is written: the record is not zeroed first. */
	e->ts_ns = f->ts;
	e->dur_ns = now - f->ts;
	e->arg0 = f->arg0;
	if (IGB_COOKIE_ARGMODE(cookie) == IGB_ARGS_NCCL_INIT) {
		/* the communicator ncclCommInitRank made, 0 when it failed */
		__u64 comm = 0;
		bpf_probe_read_user(&comm, sizeof(comm), (void *)f->arg0);
		e->arg0 = comm;
	}
	e->arg1 = f->arg1;
	e->stream = f->stream;
	bool refresh = (st->nrec++ & (IGB_REFRESH - 1)) == 0;
	if (refresh)
		st->cgid = bpf_get_current_cgroup_id();
	e->cgroup_id = st->cgid;
	e->preempt_ns = f->preempt_ns;
	e->blocked_ns = f->blocked_ns;
	e->pid = tgid;
	e->tid = tid;
	e->switches = f->switches;
	e->other_pid = f->preemptor;
	e->cpu = bpf_get_smp_processor_id();
	e->ret = (__s32)PT_REGS_RC(ctx);
	e->kind = IGB_CALL;
	e->op = op;
	e->state = 0;
	e->flags = 0;
	e->pad = 0;
	/* The comm straight from the task (two loads, no helper call). */
	task = bpf_get_current_task_btf();
	__builtin_memcpy(e->comm, task->comm, IGB_COMM_LEN);
	if (f->preemptor)
		__builtin_memcpy(e->other_comm, f->preemptor_comm, IGB_COMM_LEN);
	else
		__builtin_memset(e->other_comm, 0, IGB_COMM_LEN);
	e->stack_id = stack_id;
	if (refresh)
		submit(e);
	else
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(call_exit)
{
	return on_call_exit(ctx, false);
}

SEC("uretprobe")
int BPF_KRETPROBE(call_exit_stk)
{
	return on_call_exit(ctx, true);
}
