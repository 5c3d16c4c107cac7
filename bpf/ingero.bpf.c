// SPDX-License-Identifier: GPL-2.0
/* ingero-top kernel side: uprobe/uretprobe pairs on CUDA API functions with
 * per-call off-CPU attribution, plus scheduler, process, page-allocation and
 * block-I/O tracepoints. Only target processes (by tgid) produce records. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "ingero.h"

char LICENSE[] SEC("license") = "GPL";

#define TASK_RUNNING 0
#define TASK_UNINTERRUPTIBLE 0x2
/* event flags, the values of src/core/event.h */
#define IG_F_IN_CALL 0x1
#define IG_F_DSTATE 0x4 /* the interval was an uninterruptible sleep */
#define IG_F_TIMER 0x8	/* a timer ended it */
#define IG_F_FAULT 0x10 /* it began inside a page fault */

/* Knobs, set by user space before load. */
const volatile bool target_all = false;   /* any process calling a probe becomes a target */
const volatile bool exec_all = false;     /* report exec of every process (library rescans) */
const volatile __u64 min_offcpu_ns = 0;   /* shorter off-CPU intervals are only counted */
const volatile bool stacks_on = false;    /* capture user (and CPython) stacks of calls */
/* Tail-only stacks (docs/stacks.md): with stacks_on, a call gets its stack
 * when it took at least its op's stack_tail_ns, or when it is drawn 1 in
 * stack_sample (a power of 2) of the others; 0 = every call gets one. */
const volatile __u32 stack_sample = 0;

/* Per op: the duration from which a call counts as the tail (the op's
 * current p95, or less), written by user space through the mmap-ed .bss
 * about 10 times a second; 0 = not known yet, every call gets its stack. */
__u64 stack_tail_ns[256];

struct frame {
	__u64 ts;
	__u64 arg0;
	__u64 arg1;
	__u64 stream;
	__u64 preempt_ns;
	__u64 blocked_ns;
	__u32 switches;
	__u32 preemptor;
	__u16 op;
	__u16 pad;
	__u32 pad2;
	char preemptor_comm[IGB_COMM_LEN];
};

struct tstate {
	__u32 depth;
	__u32 tgid;       /* the process the thread belonged to when the state was made */
	__u32 off_state;  /* enum igb_state, 0 while on CPU */
	__u64 off_ts;     /* when it left the CPU */
	__u64 wake_ts;    /* when it was woken (blocked intervals) */
	__u32 off_other;  /* preemptor (preempted) or waker (blocked) */
	__u32 off_cpu;
	__u16 off_in_call;
	__u16 off_flags;  /* why it slept: IG_F_DSTATE, IG_F_FAULT, IG_F_TIMER */
	char off_comm[IGB_COMM_LEN];
	struct frame f[IGB_MAX_DEPTH];
	/* wait evidence (waits.bpf.h): the interval off CPU now */
	__u64 off_total; /* off-CPU time so far: what a syscall or fault did not run */
	__u64 off_wchan, off_how, off_obj;
	__u64 off_stack; /* the user stack of a blocked wait that may be a timer's */
	/* a file syscall in flight while the exact hooks are on (sys_ts != 0) */
	__u64 sys_ts, sys_off, sys_claim;
	__u8 sys_cls, sys_fdk;
	__u8 off_cls, off_fdk; /* its syscall's class and fd kind (wait_detail) */
	__u64 off_wait;	 /* IGB_WAIT(...) */
	__u32 off_waker; /* the waking thread */
	__u32 pad3;
	/* the page fault in flight (flt_on) */
	__u8 flt_on, flt_kind, flt_major, pad4;
	__u64 flt_ts, flt_off, flt_claim, flt_addr;
	/* direct reclaim in flight (rcl_on) */
	__u64 rcl_ts, rcl_off;
	__u64 claimed; /* reclaim CPU so far: not the syscall's or the fault's */
	__u8 rcl_on, pad5[7];
	/* kernel CPU not yet sent (IGB_KTIME) */
	__u64 k[IGB_K_N];
	__u64 k_first, k_pend;
	__u32 k_major, k_n;
	__u16 kc[8]; /* syscalls and faults counted, by category */
};

/* A third argument per frame, set and read by the NCCL modes alone (their
 * communicator): in a map of its own, so the state every call touches keeps
 * the size and layout it had before those modes. */
struct arg2s {
	__u64 v[IGB_MAX_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct arg2s);
} thread_arg2 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);  /* tgid */
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);  /* tid */
	__type(value, struct tstate);
} threads SEC(".maps");

/* A zeroed value to initialise thread state without using the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tstate);
} zero_state SEC(".maps");

/* The last runs on each CPU, to name who kept a target thread waiting
 * for its CPU by the task that held it longest during the wait, rather
 * than by whichever task switched in first (often a kernel thread that
 * runs for microseconds, such as rcu_preempt, before the real hog takes
 * the CPU) or last. */
#define IGB_RUNS 8

struct cpu_run {
	__u64 start, end;
	__u32 tgid;
	__u32 pad;
	char comm[IGB_COMM_LEN];
};

struct cpu_runs {
	__u64 since; /* when the current task got the CPU */
	__u32 head;  /* runs written so far; r[head % IGB_RUNS] is next */
	__u32 pad;
	struct cpu_run r[IGB_RUNS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_runs);
} cpu_runs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IGB_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);  /* tgid */
	__type(value, struct igb_pages);
} pages SEC(".maps");

struct io_start {
	__u64 ts;
	__u32 tgid;
	__u32 bytes;
	__u32 op;
	__u32 dev; /* major << 20 | minor of the disk, 0 unknown */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);  /* struct request * */
	__type(value, struct io_start);
} io_inflight SEC(".maps");

/* Distinct stacks by hash (see bpf/ingero.h). LRU: user space copies a
 * stack out the first time it sees its id, so eviction only costs a
 * re-insert when the stack comes back. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, IGB_STACKS_MAX);
	__type(key, __u64);
	__type(value, struct igb_stack);
} stacks SEC(".maps");

/* Per-CPU scratch: the stack being built (too big for the BPF stack) and
 * one interpreter frame read in a single copy. */
struct stack_scratch {
	struct igb_stack s;
	__u8 frame[IGB_PY_FRAME_READ];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct igb_pyproc);
} py_procs SEC(".maps");

/* The PyThreadState of a thread, found once by walking the interpreter's
 * thread list; tstate 0 = not a Python thread when last looked (at ts). */
struct py_thread {
	__u64 tstate;
	__u64 ts;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct py_thread);
} py_threads SEC(".maps");

static __always_inline void count(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);
	if (v)
		*v += n;
}

static __always_inline bool is_target(__u32 tgid)
{
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/* A record from the ring buffer, not zeroed (the call path writes every
 * field itself); a failed reservation is counted. */
static __always_inline struct igb_event *reserve_raw(void)
{
	struct igb_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		count(IGB_CNT_RB_DROPS, 1);
	return e;
}

static __always_inline struct igb_event *reserve(void)
{
	struct igb_event *e = reserve_raw();
	if (e)
		__builtin_memset(e, 0, sizeof(*e));
	return e;
}

/* Wake the reader only when a good amount is waiting: it polls on a short
 * timer anyway, and a wake-up per record would make the reader's own
 * context switches feed the trace (a feedback loop on small machines). */
static __always_inline void submit(struct igb_event *e)
{
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	bpf_ringbuf_submit(e, avail >= (1 << 20) ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

static __always_inline struct tstate *thread_get(__u32 tid)
{
	return bpf_map_lookup_elem(&threads, &tid);
}

/* The state of a target thread, made on its first traced call or switch.
 * A state exists only for target threads (sched_process_exit deletes it),
 * which lets the call probes skip the targets lookup. */
static __always_inline struct tstate *thread_new(__u32 tid, __u32 tgid)
{
	struct tstate *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&zero_state, &zero);
	if (!st)
		return NULL;
	bpf_map_update_elem(&threads, &tid, st, BPF_ANY);
	st = bpf_map_lookup_elem(&threads, &tid);
	if (st)
		st->tgid = tgid;
	return st;
}

/* ---- CUDA API calls --------------------------------------------------- */

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

/* ---- holding a process until its libraries are attached -------------------
 *
 * A uprobe fires only once it is attached, and user space attaches a CUDA
 * library only once it knows the file. A target that execs a program, or
 * whose dynamic loader has loaded a CUDA library, that user space has not
 * examined yet is stopped (SIGSTOP) right there, before it runs one more
 * instruction, and user space is told (IGB_HOLD, bpf/ingero.h); it
 * attaches what it finds, marks the files in `resolved` and sends SIGCONT.
 * Each file costs one hold, the first time any target uses it. */

const volatile bool hold_on = false; /* stop targets at unexamined files */
const volatile __u32 self_tgid = 0;  /* ingero-top itself: never a target */

#define IG_SIGSTOP 19

/* Files user space has examined (attached, or found to need nothing). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct igb_file);
	__type(value, __u8);
} resolved SEC(".maps");

/* Holds not yet ended (struct igb_held -> enum igb_held_state). User space
 * (and its guardian process, should ingero-top die) continues every process
 * listed here. Another ingero-top running at the same time holds the same
 * processes at the same moments: the last one to answer continues the
 * process (src/collect/hold.c), hence the distinct name. Entries of a
 * process that died while held are removed by user space (1 s at most). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct igb_held);
	__type(value, __u8);
} ig_held SEC(".maps");

static __always_inline void file_key(struct file *f, struct igb_file *k)
{
	struct inode *ino = BPF_CORE_READ(f, f_inode);

	k->dev = ino ? BPF_CORE_READ(ino, i_sb, s_dev) : 0;
	k->ino = ino ? BPF_CORE_READ(ino, i_ino) : 0;
}

/* No file (0) needs nothing. */
static __always_inline bool is_resolved(const struct igb_file *k)
{
	return !k->ino || bpf_map_lookup_elem(&resolved, k) != NULL;
}

static __always_inline void exe_key(struct task_struct *t, struct igb_file *k)
{
	struct file *f = BPF_CORE_READ(t, mm, exe_file);

	k->dev = k->ino = 0;
	if (f)
		file_key(f, k);
}

/* A job of an interactive shell: in a process group other than its
 * parent's, in the same session, with a controlling terminal. The shell
 * waits for its jobs with WUNTRACED: a stop would make it report the job
 * stopped, take the terminal back and leave the job in the background after
 * SIGCONT. Such a process is not stopped (its calls until the attach are
 * missed and it is reported as attached late). ingero-top's own children
 * are always stopped: ingero-top does not look at their stops. */
static __always_inline bool shell_job(struct task_struct *t)
{
	struct task_struct *parent = BPF_CORE_READ(t, group_leader, real_parent);
	struct signal_struct *sig = BPF_CORE_READ(t, signal);
	struct signal_struct *psig = BPF_CORE_READ(parent, signal);

	if (!parent || !sig || !psig || BPF_CORE_READ(parent, tgid) == self_tgid)
		return false;
	if (!BPF_CORE_READ(sig, tty))
		return false;
	return BPF_CORE_READ(sig, pids[PIDTYPE_PGID]) != BPF_CORE_READ(psig, pids[PIDTYPE_PGID]) &&
	       BPF_CORE_READ(sig, pids[PIDTYPE_SID]) == BPF_CORE_READ(psig, pids[PIDTYPE_SID]);
}

/* Stops the current process (when stop) and tells user space. The record
 * is reserved first: a process is never stopped without one. */
static __always_inline void hold(struct task_struct *t, __u32 tgid, __u32 tid,
				 const struct igb_file *lib, const struct igb_file *exe,
				 __u8 reason, __u8 flags, bool stop)
{
	struct igb_event *e = reserve();
	__u64 now = bpf_ktime_get_ns();

	if (!e) {
		if (stop)
			count(IGB_CNT_HOLD_FAILED, 1);
		return;
	}
	if (!stop) {
	} else if (!hold_on) {
		flags |= IGB_HOLD_F_OFF;
	} else if (shell_job(t)) {
		flags |= IGB_HOLD_F_SKIPPED;
		count(IGB_CNT_HOLD_SKIPPED, 1);
	} else if (bpf_send_signal(IG_SIGSTOP)) {
		flags |= IGB_HOLD_F_FAILED;
		count(IGB_CNT_HOLD_FAILED, 1);
	} else {
		flags |= IGB_HOLD_F_STOPPED;
		count(IGB_CNT_HOLDS, 1);
		struct igb_held hk = {.tgid = tgid, .ts_ns = now};
		__u8 st = IGB_HELD;
		bpf_map_update_elem(&ig_held, &hk, &st, BPF_ANY);
	}
	e->kind = IGB_HOLD;
	e->ts_ns = now;
	e->pid = tgid;
	e->tid = tid;
	e->state = reason;
	e->flags = flags;
	e->arg0 = lib->dev;
	e->arg1 = lib->ino;
	e->stream = exe->dev;
	e->dur_ns = exe->ino;
	BPF_CORE_READ_STR_INTO(&e->comm, t, comm);
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* ---- libraries loaded by the dynamic loader ----------------------------------
 *
 * A uprobe on the dynamic loader's _dl_debug_state(), the function glibc
 * calls after every change to its list of loaded objects (the hook
 * debuggers use): at start-up once the program's libraries are mapped, and
 * in every dlopen once the new objects are mapped, each time before any of
 * their code has run (constructors and the program come later). When the
 * state (r_debug.r_state, found through the cookie) is RT_CONSISTENT, the
 * list of loaded objects (r_debug.r_map, struct link_map in <link.h>) is
 * walked: a CUDA library (by name) whose file user space has not examined
 * makes the process a hold. In the default mode a process that has a CUDA
 * library becomes a target here. Without the cookie (no _r_debug symbol)
 * or when the list cannot be read, a hint (IGB_DL_CHANGE) asks user space
 * to look at the mappings instead. */

#define DL_RT_CONSISTENT 0
#define DL_MAX_OBJECTS 2048
#define DL_PATH_MAX 256
/* offsets in struct r_debug and struct link_map (the <link.h> ABI) */
#define DL_R_MAP 8
#define DL_R_STATE 24
#define DL_L_NAME 8
#define DL_L_LD 16
#define DL_L_NEXT 24

/* n starts with the 1..15 characters of p, then ".so". */
static __always_inline bool name_so(const char *n, const char *p, int len)
{
	for (int i = 0; i < 15; i++) {
		if (i >= len)
			return n[i] == '.' && n[i + 1] == 's' && n[i + 2] == 'o';
		if (n[i] != p[i])
			return false;
	}
	return false;
}

/* The file names of the GPU libraries traced (as src/collect/discover.c:
 * discover_is_cuda_lib): libcuda.so*, libcudart.so*, libcudart-HASH.so*
 * (pip wheels), libnccl.so*, libamdhip64.so*. n holds at least 40 bytes. */
static __always_inline bool cuda_name(const char *n)
{
	const char want[] = "libcuda";
	int i;

	if (n[3] == 'n')
		return name_so(n, "libnccl", 7);
	if (n[3] == 'a')
		return name_so(n, "libamdhip64", 11);
	for (i = 0; i < 7; i++)
		if (n[i] != want[i])
			return false;
	if (n[7] == '.')
		return n[8] == 's' && n[9] == 'o';
	if (n[7] != 'r' || n[8] != 't')
		return false;
	if (n[9] == '.')
		return n[10] == 's' && n[11] == 'o';
	if (n[9] != '-')
		return false;
	for (i = 10; i < 37; i++) {
		if (!n[i])
			return false;
		if (n[i] == '.')
			return n[i + 1] == 's' && n[i + 2] == 'o';
	}
	return false;
}

struct dl_walk {
	__u64 map;	     /* the link_map being looked at */
	struct igb_file lib; /* the first CUDA library not examined yet */
	__u32 cuda;	     /* a CUDA library was seen */
	__u32 end;	     /* the end of the list was reached */
	__u32 unsure;	     /* something could not be read: assume the worst */
	__u32 base;	     /* where the base name starts in tail */
};

/* Per-CPU state of one walk. It lives in a map, not on the stack, so that
 * the verifier treats what the callbacks leave there as unknown values and
 * checks each callback once instead of once per value. */
struct dl_scratch {
	char path[DL_PATH_MAX + 64]; /* room to read 64 bytes from any offset */
	char tail[112];		     /* the last bytes of path; room for cuda_name at any base */
	struct dl_walk w;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dl_scratch);
} dl_scratch SEC(".maps");

static __always_inline struct dl_scratch *dl_sc(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&dl_scratch, &zero);
}

static long slash_step(__u32 i, void *ctx)
{
	struct dl_scratch *sc = dl_sc();

	if (!sc || i >= 48)
		return 1;
	__u32 k = i;
	asm volatile("" : "+r"(k)); /* keep the mask: the verifier needs it */
	k &= 63;
	char ch = sc->tail[k];
	if (!ch)
		return 1;
	if (ch == '/')
		sc->w.base = k + 1;
	return 0;
}

/* Whether the object path at user address p has a CUDA library's name;
 * -1 when it cannot be read. Only the last 40 bytes matter: no CUDA
 * library name is longer. */
static __always_inline int cuda_path(struct dl_scratch *sc, __u64 p)
{
	long len = bpf_probe_read_user_str(sc->path, DL_PATH_MAX, (void *)p);
	if (len <= 0)
		return -1;
	__u32 end = (__u32)len - 1; /* where the NUL is */
	__u32 start = end > 40 ? end - 40 : 0;
	__builtin_memset(sc->tail, 0, sizeof(sc->tail));
	if (bpf_probe_read_kernel(sc->tail, 48, sc->path + (start & (DL_PATH_MAX - 1))))
		return -1;
	/* The base name starts after the last '/'. */
	sc->w.base = 0;
	bpf_loop(48, slash_step, NULL, 0);
	sc = dl_sc();
	if (!sc)
		return -1;
	return cuda_name(sc->tail + (sc->w.base & 63));
}

/* bpf_find_vma callback: the file mapped at the object's address. */
static long dl_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct dl_scratch *sc = dl_sc();
	struct file *f = BPF_CORE_READ(vma, vm_file);
	struct igb_file k;

	if (!sc)
		return 0;
	if (!f) {
		sc->w.unsure = 1;
		return 0;
	}
	file_key(f, &k);
	sc->w.cuda = 1;
	if (!sc->w.lib.ino && !is_resolved(&k))
		sc->w.lib = k;
	return 0;
}

static long dl_step(__u32 i, void *ctx)
{
	struct dl_scratch *sc = dl_sc();
	__u64 name = 0, ld = 0, map;

	if (!sc)
		return 1;
	map = sc->w.map;
	if (!map) {
		sc->w.end = 1;
		return 1;
	}
	if (bpf_probe_read_user(&name, sizeof(name), (void *)(map + DL_L_NAME))) {
		sc->w.unsure = 1;
		return 1;
	}
	int r = name ? cuda_path(sc, name) : 0;
	sc = dl_sc(); /* the helpers above may have changed what is known of it */
	if (!sc)
		return 1;
	if (r < 0)
		sc->w.unsure = 1;
	if (r > 0) {
		if (bpf_probe_read_user(&ld, sizeof(ld), (void *)(map + DL_L_LD)) ||
		    bpf_find_vma(bpf_get_current_task_btf(), ld, dl_vma, NULL, 0))
			sc->w.unsure = 1;
	}
	if (bpf_probe_read_user(&sc->w.map, sizeof(sc->w.map), (void *)(map + DL_L_NEXT))) {
		sc->w.unsure = 1;
		return 1;
	}
	return 0;
}

/* The hint of old: look at my mappings. */
static __always_inline void dl_hint(__u32 tgid, __u32 tid)
{
	struct igb_event *e = reserve();

	if (!e)
		return;
	e->kind = IGB_DL_CHANGE;
	e->ts_ns = bpf_ktime_get_ns();
	e->pid = tgid;
	e->tid = tid;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* Kernels without bpf_loop and bpf_find_vma (before 5.17) load this one
 * instead of dl_change: a hint only, no hold. */
SEC("uprobe")
int BPF_KPROBE(dl_change_hint)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	if ((exec_all || is_target(tgid)) && tgid != self_tgid)
		dl_hint(tgid, (__u32)id);
	return 0;
}

/* The cookie: the address of _r_debug minus that of _dl_debug_state (both
 * in the loader), 0 when unknown. */
SEC("uprobe")
int BPF_KPROBE(dl_change)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	__s64 delta = (__s64)bpf_get_attach_cookie(ctx);
	bool target = is_target(tgid);
	struct dl_scratch *sc = dl_sc();
	__u32 state = 1;
	__u64 first = 0;

	if ((!exec_all && !target) || tgid == self_tgid || !sc)
		return 0;
	__u64 rd = PT_REGS_IP(ctx) + delta;
	if (!delta || bpf_probe_read_user(&state, sizeof(state), (void *)(rd + DL_R_STATE)) ||
	    bpf_probe_read_user(&first, sizeof(first), (void *)(rd + DL_R_MAP))) {
		dl_hint(tgid, tid);
		return 0;
	}
	if (state != DL_RT_CONSISTENT)
		return 0; /* mapping in progress: look when it is complete */
	__builtin_memset(&sc->w, 0, sizeof(sc->w));
	sc->w.map = first;
	bpf_loop(DL_MAX_OBJECTS, dl_step, NULL, 0);
	sc = dl_sc();
	if (!sc)
		return 0;
	struct igb_file lib = sc->w.lib;
	bool cuda = sc->w.cuda, unsure = sc->w.unsure || !sc->w.end;
	if (unsure)
		count(IGB_CNT_DL_UNSURE, 1);
	if (!cuda && !unsure)
		return 0; /* no CUDA library loaded */
	if (!cuda && !target) {
		dl_hint(tgid, tid); /* unsure about a process that is no target */
		return 0;
	}
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct igb_file exe;
	__u8 flags = 0;
	if (!target) {
		__u8 one = 1;
		bpf_map_update_elem(&targets, &tgid, &one, BPF_ANY);
		flags = IGB_HOLD_F_NEW;
	}
	exe_key(t, &exe);
	bool stop = lib.ino || unsure || !is_resolved(&exe);
	if (stop || flags)
		hold(t, tgid, tid, &lib, &exe, IGB_HOLD_LOAD, flags, stop);
	return 0;
}

/* ---- user stacks ------------------------------------------------------------ */

#define PY_MAX_THREADS 64 /* thread states searched for the calling thread */
#define PY_NOTHREAD_RETRY_NS 1000000000ULL /* re-search a non-Python thread after 1 s */

static __always_inline __u64 read_u64(__u64 addr)
{
	__u64 v = 0;
	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

static __always_inline __u64 frame_field(const __u8 *buf, __u16 off, int size)
{
	if (off > IGB_PY_FRAME_READ - 8)
		return 0;
	if (size == 1)
		return buf[off];
	if (size == 4)
		return *(const __u32 *)(buf + off);
	return *(const __u64 *)(buf + off);
}

/* What the interpreter stores as the thread's id. */
static __always_inline __u64 py_thread_id(const struct igb_pyproc *pp, __u32 tid)
{
	if (pp->tid_kind == IGB_PY_TID_NATIVE)
		return tid;
#ifdef __TARGET_ARCH_x86
	/* thread_id is pthread_self(), which glibc and musl make the thread
	 * pointer: the fs base on x86-64. */
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	return BPF_CORE_READ(t, thread.fsbase);
#else
	return 0;
#endif
}

/* State of the interpreter walks. The loops run under bpf_loop() so the
 * verifier checks each body once, whatever the number of iterations. */
struct py_walk {
	struct igb_pyproc pp;
	__u64 ptr;   /* thread search: the thread state; frame walk: the frame */
	__u64 want;  /* thread id searched */
	__u64 found; /* the thread state found */
	__u32 n;     /* frames stored */
	__u32 flags;
};

static long py_thread_step(__u32 i, void *ctx)
{
	struct py_walk *w = ctx;

	if (!w->ptr)
		return 1;
	if (read_u64(w->ptr + w->pp.tstate_tid) == w->want) {
		w->found = w->ptr;
		return 1;
	}
	w->ptr = read_u64(w->ptr + w->pp.tstate_next);
	return 0;
}

static __always_inline __u64 py_find_tstate(struct py_walk *w, __u32 tid)
{
	struct py_thread *pt = bpf_map_lookup_elem(&py_threads, &tid);
	__u64 now = bpf_ktime_get_ns();
	struct py_thread nt = {};

	w->want = py_thread_id(&w->pp, tid);
	if (!w->want)
		return 0;
	if (pt) {
		if (pt->tstate && read_u64(pt->tstate + w->pp.tstate_tid) == w->want)
			return pt->tstate;
		if (!pt->tstate && now - pt->ts < PY_NOTHREAD_RETRY_NS)
			return 0;
	}
	w->ptr = read_u64(w->pp.runtime + w->pp.runtime_interp_head);
	if (w->ptr)
		w->ptr = read_u64(w->ptr + w->pp.interp_tstate_head);
	w->found = 0;
	bpf_loop(PY_MAX_THREADS, py_thread_step, w, 0);
	nt.tstate = w->found;
	nt.ts = now;
	bpf_map_update_elem(&py_threads, &tid, &nt, BPF_ANY);
	return nt.tstate;
}

static long py_frame_step(__u32 i, void *ctx)
{
	struct py_walk *w = ctx;
	struct stack_scratch *sc;
	__u32 zero = 0, n = w->n;

	if (!w->ptr)
		return 1;
	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!sc)
		return 1;
	if (bpf_probe_read_user(sc->frame, sizeof(sc->frame), (void *)w->ptr)) {
		w->flags |= IGB_STK_PY_ERR;
		count(IGB_CNT_PY_READFAIL, 1);
		return 1;
	}
	__u64 code = frame_field(sc->frame, w->pp.frame_code, 8);
	__u64 instr = frame_field(sc->frame, w->pp.frame_instr, w->pp.instr_int ? 4 : 8);

	w->ptr = frame_field(sc->frame, w->pp.frame_previous, 8);
	if (w->pp.frame_owner != IGB_PY_NONE &&
	    frame_field(sc->frame, w->pp.frame_owner, 1) == w->pp.owner_cstack) {
		/* 3.12: a shim frame marks where a call of the C evaluation
		 * loop began: the frame stored just before is its outermost. */
		if (n > 0)
			sc->s.py[(n - 1) & (IGB_PY_MAX - 1)].code |= IGB_PY_ENTRY;
		return 0;
	}
	if (n >= IGB_PY_MAX) {
		w->flags |= IGB_STK_PY_TRUNC;
		return 1;
	}
	if (w->pp.frame_is_entry != IGB_PY_NONE) {
		if (frame_field(sc->frame, w->pp.frame_is_entry, 1))
			code |= IGB_PY_ENTRY;
	} else if (w->pp.frame_owner == IGB_PY_NONE) {
		code |= IGB_PY_ENTRY; /* 3.10: one C call per frame */
	}
	sc->s.py[n & (IGB_PY_MAX - 1)].code = code;
	sc->s.py[n & (IGB_PY_MAX - 1)].instr = instr;
	w->n = n + 1;
	return 0;
}

/* Copies the calling thread's interpreter frames (code object and
 * instruction of each) into s->py. Only pointers are taken here; the code
 * objects are decoded later in user space (src/stacks/pyframes.c). */
static __always_inline void py_capture(struct igb_stack *s, __u32 tgid, __u32 tid)
{
	struct igb_pyproc *pp = bpf_map_lookup_elem(&py_procs, &tgid);
	struct py_walk w = {};
	__u64 tstate;

	if (!pp)
		return;
	s->flags |= IGB_STK_PY;
	__builtin_memcpy(&w.pp, pp, sizeof(w.pp));
	tstate = py_find_tstate(&w, tid);
	if (!tstate) {
		s->flags |= IGB_STK_PY_NOTHREAD;
		count(IGB_CNT_PY_NOTHREAD, 1);
		return;
	}
	w.ptr = read_u64(tstate + w.pp.tstate_frame);
	if (w.ptr && w.pp.cframe_current != IGB_PY_NONE)
		w.ptr = read_u64(w.ptr + w.pp.cframe_current);
	w.n = 0;
	w.flags = 0;
	bpf_loop(IGB_PY_MAX + 8, py_frame_step, &w, 0);
	s->npy = w.n > IGB_PY_MAX ? IGB_PY_MAX : w.n;
	s->flags |= w.flags;
}

static __always_inline __u64 mix(__u64 h, __u64 v)
{
	h ^= v;
	h = (h << 27) | (h >> 37);
	return h * 0x9e3779b97f4a7c15ULL;
}

struct hash_walk {
	__u64 h;
	__u32 nips, npy;
};

static long hash_step(__u32 i, void *ctx)
{
	struct hash_walk *hw = ctx;
	struct stack_scratch *sc;
	__u32 zero = 0;

	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!sc)
		return 1;
	if (i < hw->nips) {
		__u32 k = i;
		asm volatile("" : "+r"(k));
		hw->h = mix(hw->h, sc->s.ips[k & (IGB_STACK_MAX - 1)]);
		return 0;
	}
	__u32 j = i - hw->nips;
	if (j >= hw->npy || j >= IGB_PY_MAX)
		return 1;
	asm volatile("" : "+r"(j)); /* keep the mask: the verifier needs it */
	j &= IGB_PY_MAX - 1;
	hw->h = mix(hw->h, sc->s.py[j].code);
	hw->h = mix(hw->h, sc->s.py[j].instr);
	return 0;
}

/* Captures the user stack of the current call, stores it once in the
 * stacks map and returns its id (0 = no stack). */
static __always_inline __u64 capture_stack(struct pt_regs *ctx, __u32 tgid, __u32 tid)
{
	struct hash_walk hw;
	struct stack_scratch *sc;
	struct igb_stack *s;
	__u32 zero = 0, nips, npy;
	__u64 h;
	long n;

	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!sc)
		return 0;
	s = &sc->s;
	s->tgid = tgid;
	s->flags = 0;
	s->npy = 0;
	n = bpf_get_stack(ctx, s->ips, sizeof(s->ips), BPF_F_USER_STACK);
	if (n < 0) {
		count(IGB_CNT_STACK_ERR, 1);
		n = 0;
	}
	nips = (__u32)n / 8;
	s->nips = nips;
	py_capture(s, tgid, tid);
	npy = s->npy;
	if (!nips && !npy)
		return 0;

	hw.h = 0xcbf29ce484222325ULL;
	hw.nips = nips;
	hw.npy = npy;
	bpf_loop(IGB_STACK_MAX + IGB_PY_MAX, hash_step, &hw, 0);
	h = hw.h;
	h = mix(h, ((__u64)nips << 8) | npy);
	h ^= h >> 31;
	if (!h)
		h = 1;
	count(IGB_CNT_STACKS, 1);
	if (!bpf_map_lookup_elem(&stacks, &h)) {
		if (bpf_map_update_elem(&stacks, &h, s, BPF_NOEXIST) == 0)
			count(IGB_CNT_STACK_NEW, 1);
		else if (!bpf_map_lookup_elem(&stacks, &h))
			count(IGB_CNT_STACK_MAPFAIL, 1);
	}
	return h;
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
	e->cgroup_id = bpf_get_current_cgroup_id();
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
	submit(e);
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

/* ---- scheduler ------------------------------------------------------------ */

struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline long task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___old *)t, state);
}

/* Kernel text ranges (from /proc/kallsyms, 0 when unknown) that tell why a
 * target thread slept: it went to sleep inside a page fault (exc_page_fault
 * on its stack), or a timer woke it (hrtimer_wakeup, process_timeout on the
 * waker's stack). */
const volatile __u64 fault_text_start = 0, fault_text_end = 0;
const volatile __u64 hrtimer_text_start = 0, hrtimer_text_end = 0;
const volatile __u64 timeout_text_start = 0, timeout_text_end = 0;

#define IG_SLEEP_FRAMES 32 /* kernel frames searched for a fault or a timer */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[IG_SLEEP_FRAMES]);
} kstack SEC(".maps");

/* The current kernel stack into the per-CPU buffer; the number of frames. */
static __always_inline __u32 kernel_stack(void *ctx, __u64 **ips)
{
	__u32 zero = 0;
	*ips = bpf_map_lookup_elem(&kstack, &zero);
	if (!*ips)
		return 0;
	long n = bpf_get_stack(ctx, *ips, IG_SLEEP_FRAMES * sizeof(__u64), 0);
	return n > 0 ? (__u32)n / 8 : 0;
}

#include "waits.bpf.h"

/* Why the thread going to sleep now sleeps, into st->off_flags: inside a
 * page fault (exc_page_fault on its stack), and with waits_on what it
 * waits in (waits.bpf.h). */
static __always_inline void blocked_why(void *ctx, struct tstate *st, __u32 tid)
{
	__u64 *ips = NULL;
	__u32 n = fault_text_end || waits_on ? kernel_stack(ctx, &ips) : 0;
	if (!ips)
		n = 0;
	for (__u32 i = 0; i < IG_SLEEP_FRAMES && fault_text_end; i++) {
		if (i >= n || !ips)
			break;
		if (ips[i] >= fault_text_start && ips[i] < fault_text_end) {
			st->off_flags |= IG_F_FAULT;
			break;
		}
	}
	if (!waits_on)
		return;
	wait_detail(st, ips, n);
	/* where a loop paces itself (a stray time.sleep must be easy to find):
	 * only for the syscalls that wait for a timer, at most one per sleep */
	st->off_stack = 0;
	if (stacks_on && !st->depth && /* between calls: a blocking sync polls too */
	    ((st->off_cls & IGB_SC_PACE) || st->off_fdk == IGB_FDK_TIMERFD))
		st->off_stack = capture_stack(ctx, st->tgid, tid);
	if (st->flt_on)
		st->off_flags |= IG_F_FAULT;
	if (st->rcl_on)
		st->off_flags |= IGB_F_RECLAIM;
	st->off_flags |= IGB_F_DETAIL;
}

/* Adds an off-CPU interval to every open call of the thread (a nested
 * driver call and the runtime call around it both lost that time). */
static __always_inline void charge_calls(struct tstate *st, __u64 preempt_ns, __u64 blocked_ns,
					 __u32 preemptor, const char *pcomm)
{
	__u32 depth = st->depth;

	for (int i = 0; i < IGB_MAX_DEPTH; i++) {
		if (i >= depth)
			break;
		st->f[i].preempt_ns += preempt_ns;
		st->f[i].blocked_ns += blocked_ns;
		st->f[i].switches++;
		if (preemptor && preempt_ns) {
			st->f[i].preemptor = preemptor;
			__builtin_memcpy(st->f[i].preemptor_comm, pcomm, IGB_COMM_LEN);
		}
	}
}

/* The task that ran longest on this CPU between from and now (0: none
 * known), with its name in comm. */
static __always_inline __u32 longest_runner(struct cpu_runs *cr, __u64 from, __u64 now,
					    char *comm)
{
	__u64 best = 0;
	__u32 who = 0, at = 0;

	for (__u32 i = 0; i < IGB_RUNS; i++) {
		struct cpu_run *r = &cr->r[i];
		__u64 a = r->start > from ? r->start : from;
		__u64 b = r->end < now ? r->end : now;
		if (r->tgid && b > a && b - a > best) {
			best = b - a;
			who = r->tgid;
			at = i;
		}
	}
	if (who)
		__builtin_memcpy(comm, cr->r[at & (IGB_RUNS - 1)].comm, IGB_COMM_LEN);
	return who;
}

static __always_inline void on_switch(void *ctx, struct task_struct *prev,
				      struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 prev_tgid = BPF_CORE_READ(prev, tgid), next_tgid = BPF_CORE_READ(next, tgid);
	__u32 prev_tid = BPF_CORE_READ(prev, pid), next_tid = BPF_CORE_READ(next, pid);
	struct tstate *st;

	count(IGB_CNT_SWITCHES, 1);

	__u32 zero = 0;
	struct cpu_runs *cr = bpf_map_lookup_elem(&cpu_runs, &zero);
	if (cr) {
		if (prev_tid && cr->since) { /* idle is nobody */
			struct cpu_run *r = &cr->r[cr->head & (IGB_RUNS - 1)];
			r->start = cr->since;
			r->end = now;
			r->tgid = prev_tgid;
			BPF_CORE_READ_STR_INTO(&r->comm, prev, comm);
			cr->head++;
		}
		cr->since = now;
	}

	if (prev_tid && is_target(prev_tgid)) {
		st = thread_get(prev_tid);
		if (!st || st->tgid != prev_tgid)
			st = thread_new(prev_tid, prev_tgid);
		if (st) {
			count(IGB_CNT_TARGET_SWITCHES, 1);
			st->off_ts = now;
			st->wake_ts = 0;
			st->off_cpu = bpf_get_smp_processor_id();
			st->off_in_call = st->depth > 0;
			st->off_flags = 0;
			long state = task_state(prev);
			if (state == TASK_RUNNING) {
				st->off_state = IGB_PREEMPTED;
				st->off_other = next_tgid;
				BPF_CORE_READ_STR_INTO(&st->off_comm, next, comm);
				if (waits_on && throttled(prev))
					st->off_flags |= IGB_F_THROTTLED;
			} else {
				st->off_state = IGB_BLOCKED;
				st->off_other = 0;
				st->off_comm[0] = 0;
				if (state & TASK_UNINTERRUPTIBLE)
					st->off_flags |= IG_F_DSTATE;
				blocked_why(ctx, st, prev_tid);
			}
		}
	}

	bool next_target = next_tid && is_target(next_tgid);
	if (waits_on)
		set_cur_target(next_target ? next_tid : 0);
	if (!next_target)
		return;
	st = thread_get(next_tid);
	if (!st || !st->off_state || now < st->off_ts)
		return;

	__u64 dur = now - st->off_ts, preempt_ns, blocked_ns;
	__u32 other = st->off_other, state = st->off_state;
	char ocomm[IGB_COMM_LEN];

	__builtin_memcpy(ocomm, st->off_comm, IGB_COMM_LEN);
	/* who held this CPU longest while the thread waited for it */
	__u64 wait_from = st->off_ts;
	if (st->off_state != IGB_PREEMPTED)
		wait_from = st->wake_ts >= st->off_ts && st->wake_ts <= now ? st->wake_ts : now;
	char lcomm[IGB_COMM_LEN];
	__u32 longest = cr && wait_from < now ? longest_runner(cr, wait_from, now, lcomm) : 0;
	if (st->off_state == IGB_PREEMPTED && longest) {
		other = longest;
		__builtin_memcpy(ocomm, lcomm, IGB_COMM_LEN);
	}
	if (st->off_state == IGB_PREEMPTED) {
		preempt_ns = dur;
		blocked_ns = 0;
	} else {
		/* Slept, then waited in the run queue after the wake-up: the
		 * wait is CPU contention, and the task that just ran on this
		 * CPU is what it waited behind. */
		__u64 wake = st->wake_ts;
		if (wake < st->off_ts || wake > now)
			wake = now;
		blocked_ns = wake - st->off_ts;
		preempt_ns = now - wake;
	}
	if (st->depth > 0) {
		__u32 preemptor = other;
		char pcomm[IGB_COMM_LEN];
		__builtin_memcpy(pcomm, ocomm, IGB_COMM_LEN);
		if (st->off_state == IGB_BLOCKED && preempt_ns && longest) {
			preemptor = longest;
			__builtin_memcpy(pcomm, lcomm, IGB_COMM_LEN);
		} else if (st->off_state == IGB_BLOCKED && preempt_ns && prev_tid) {
			preemptor = prev_tgid;
			BPF_CORE_READ_STR_INTO(&pcomm, prev, comm);
		}
		charge_calls(st, preempt_ns, blocked_ns, preemptor, pcomm);
	}
	st->off_state = 0;
	st->off_total += dur;

	if (dur < min_offcpu_ns)
		return;
	struct igb_event *e = reserve();
	if (!e)
		return;
	e->kind = IGB_OFFCPU;
	e->ts_ns = st->off_ts;
	e->dur_ns = dur;
	e->pid = next_tgid;
	e->tid = next_tid;
	e->state = state;
	e->preempt_ns = preempt_ns;
	e->blocked_ns = blocked_ns;
	e->cpu = st->off_cpu;
	e->flags = (st->off_in_call ? IG_F_IN_CALL : 0) | st->off_flags;
	e->other_pid = other;
	__builtin_memcpy(e->other_comm, ocomm, IGB_COMM_LEN);
	/* who held the CPU while the woken thread waited for it */
	e->arg0 = state == IGB_BLOCKED && preempt_ns ? (longest ? longest : prev_tgid) : 0;
	if (state == IGB_BLOCKED && (st->off_flags & IGB_F_DETAIL)) {
		e->arg1 = st->off_wait | (__u64)st->off_waker << 32;
		e->stream = st->off_wchan;
		e->stack_id = st->off_how;
		e->cgroup_id = st->off_obj;
		e->switches = (__u32)st->off_stack; /* unused by off-CPU records */
		e->ret = (__s32)(st->off_stack >> 32);
	}
	BPF_CORE_READ_STR_INTO(&e->comm, next, comm);
	submit(e);
}

/* Kernel text of the interrupt entry code (hard interrupts) and of
 * __do_softirq, from /proc/kallsyms; 0 when unknown. */
const volatile __u64 irq_text_start = 0, irq_text_end = 0;
const volatile __u64 softirq_text_start = 0, softirq_text_end = 0;

enum { WAKE_IRQ = 1, WAKE_TIMER = 2 };

/* Where the wake-up runs: in an interrupt (a timer, an I/O completion) on
 * top of whatever task was running, so that task woke nobody (WAKE_IRQ);
 * and whether a timer expired (WAKE_TIMER: a sleep or a timeout ended,
 * whoever runs the timer). Told by the kernel stack: an interrupt entry,
 * hrtimer_wakeup or process_timeout on it (the per-CPU preemption counter
 * would say "interrupt" directly, but its symbol is only in kallsyms with
 * KALLSYMS_ALL). Only called for the wake-up of a blocked target thread. */
static __always_inline int wake_ctx(void *ctx)
{
	__u64 *ips;
	int r = 0;

	if (!irq_text_end && !hrtimer_text_end && !timeout_text_end)
		return 0;
	__u32 n = kernel_stack(ctx, &ips);
	for (__u32 i = 0; i < IG_SLEEP_FRAMES; i++) {
		if (i >= n)
			break;
		__u64 ip = ips[i];
		if ((ip >= irq_text_start && ip < irq_text_end) ||
		    (ip >= softirq_text_start && ip < softirq_text_end))
			r |= WAKE_IRQ;
		if ((ip >= hrtimer_text_start && ip < hrtimer_text_end) ||
		    (ip >= timeout_text_start && ip < timeout_text_end))
			r |= WAKE_TIMER;
	}
	return r;
}

static __always_inline void on_wakeup(void *ctx, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), tid = BPF_CORE_READ(p, pid);
	struct tstate *st;

	if (!is_target(tgid))
		return;
	st = thread_get(tid);
	if (!st || st->off_state != IGB_BLOCKED || st->wake_ts)
		return;
	st->wake_ts = bpf_ktime_get_ns();
	/* The waker is the current task, unless the wake-up comes from an
	 * interrupt (a timer, an I/O completion): then nobody, "[irq]". From
	 * the idle task outside an interrupt it is nobody too, "[idle]". */
	int how = wake_ctx(ctx);
	if (how & WAKE_TIMER)
		st->off_flags |= IG_F_TIMER;
	if (how & WAKE_IRQ) {
		st->off_other = 0;
		__builtin_memcpy(st->off_comm, "[irq]", 6);
		return;
	}
	__u64 waker = bpf_get_current_pid_tgid();
	st->off_other = waker >> 32;
	st->off_waker = (__u32)waker;
	if (st->off_other)
		bpf_get_current_comm(st->off_comm, sizeof(st->off_comm));
	else
		__builtin_memcpy(st->off_comm, "[idle]", 7);
}

static __always_inline void on_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid), cpid = BPF_CORE_READ(child, pid);
	__u8 one = 1;

	if (ctgid != cpid || !is_target(ptgid))
		return; /* a new thread shares its tgid, already a target */
	bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY);
	/* The child has the parent's address space: same interpreter layout. */
	struct igb_pyproc *pp = bpf_map_lookup_elem(&py_procs, &ptgid);
	if (pp)
		bpf_map_update_elem(&py_procs, &ctgid, pp, BPF_ANY);
	struct igb_event *e = reserve();
	if (!e)
		return;
	e->kind = IGB_FORK;
	e->ts_ns = bpf_ktime_get_ns();
	e->pid = ptgid;
	e->tid = BPF_CORE_READ(parent, pid);
	e->arg0 = ctgid;
	BPF_CORE_READ_STR_INTO(&e->comm, parent, comm);
	submit(e);
}

static __always_inline void on_exec(struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	bool target = is_target(tgid);

	bpf_map_delete_elem(&py_procs, &tgid); /* a new program: no interpreter known */
	if (!exec_all && !target)
		return;
	struct igb_event *e = reserve();
	if (e) {
		e->kind = IGB_EXEC;
		e->ts_ns = bpf_ktime_get_ns();
		e->pid = tgid;
		e->tid = BPF_CORE_READ(p, pid);
		e->arg0 = target;
		e->cgroup_id = bpf_get_current_cgroup_id();
		BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
		submit(e);
	}
	if (!target)
		return;
	/* A new program (it may have the CUDA runtime linked in): hold it
	 * until user space has looked at it. */
	struct igb_file exe, none = {};
	exe_key(p, &exe);
	if (!is_resolved(&exe))
		hold(p, tgid, BPF_CORE_READ(p, pid), &none, &exe, IGB_HOLD_EXEC, 0, true);
}

static __always_inline void on_exit(struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), tid = BPF_CORE_READ(p, pid);

	bpf_map_delete_elem(&threads, &tid);
	bpf_map_delete_elem(&py_threads, &tid);
	if (tid != tgid || !is_target(tgid))
		return;
	bpf_map_delete_elem(&targets, &tgid);
	bpf_map_delete_elem(&py_procs, &tgid);
	struct igb_event *e = reserve();
	if (!e)
		return;
	e->kind = IGB_EXIT;
	e->ts_ns = bpf_ktime_get_ns();
	e->pid = tgid;
	e->tid = tid;
	e->ret = BPF_CORE_READ(p, exit_code);
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
	submit(e);
}

/* ---- memory and block I/O ----------------------------------------------- */

static __always_inline void on_page_alloc(unsigned int order)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct igb_pages *pg, init = {};

	if (!tgid || !is_target(tgid))
		return;
	pg = bpf_map_lookup_elem(&pages, &tgid);
	if (!pg) {
		bpf_map_update_elem(&pages, &tgid, &init, BPF_NOEXIST);
		pg = bpf_map_lookup_elem(&pages, &tgid);
		if (!pg)
			return;
	}
	__sync_fetch_and_add(&pg->bytes, 4096ULL << (order & 31));
	__sync_fetch_and_add(&pg->allocs, 1);
}

static __always_inline void on_rq_issue(struct request *rq)
{
	__u64 key = (__u64)rq;
	struct io_start s = {};

	s.ts = bpf_ktime_get_ns();
	s.tgid = bpf_get_current_pid_tgid() >> 32;
	s.bytes = BPF_CORE_READ(rq, __data_len);
	s.op = BPF_CORE_READ(rq, cmd_flags) & 0xff;
	if (bpf_core_field_exists(rq->part))
		s.dev = BPF_CORE_READ(rq, part, bd_dev);
	bpf_map_update_elem(&io_inflight, &key, &s, BPF_ANY);
}

static __always_inline void on_rq_complete(struct request *rq, unsigned int nr_bytes)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct io_start *s = bpf_map_lookup_elem(&io_inflight, &key);

	if (!s)
		return;
	__u64 dur = now - s->ts;
	__u32 tgid = s->tgid, bytes = s->bytes ? s->bytes : nr_bytes, op = s->op, dev = s->dev;
	bpf_map_delete_elem(&io_inflight, &key);
	if (!tgid || !is_target(tgid)) {
		count(IGB_CNT_IO_OTHER, 1);
		count(IGB_CNT_IO_OTHER_NS, dur);
		return;
	}
	struct igb_event *e = reserve();
	if (!e)
		return;
	e->kind = IGB_BLOCK_IO;
	e->ts_ns = now - dur;
	e->dur_ns = dur;
	e->pid = tgid;
	e->arg0 = bytes;
	e->arg1 = dev;
	/* REQ_OP_READ 0, WRITE 1, FLUSH 2, DISCARD 3 -> IG_IO_* */
	e->op = op == 0 ? 1 : op == 1 ? 2 : op == 3 ? 3 : 4;
	e->cpu = bpf_get_smp_processor_id();
	submit(e);
}

/* ---- attachment points: tp_btf, with raw_tp twins as a fallback ------- */

SEC("tp_btf/sched_switch")
int BPF_PROG(btf_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(ctx, prev, next);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(raw_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(ctx, prev, next);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(btf_sched_wakeup, struct task_struct *p)
{
	on_wakeup(ctx, p);
	return 0;
}

SEC("raw_tp/sched_waking")
int BPF_PROG(raw_sched_wakeup, struct task_struct *p)
{
	on_wakeup(ctx, p);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(btf_sched_fork, struct task_struct *parent, struct task_struct *child)
{
	on_fork(parent, child);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(raw_sched_fork, struct task_struct *parent, struct task_struct *child)
{
	on_fork(parent, child);
	return 0;
}

/* A target thread renames itself (prctl(PR_SET_NAME), setproctitle, a
 * worker pool naming its workers): the name is known at once. The
 * tracepoint runs before the task's comm changes: the new one is the
 * argument. */
static __always_inline void on_rename(struct task_struct *t, const char *comm)
{
	__u32 tgid = BPF_CORE_READ(t, tgid);

	if (!is_target(tgid))
		return;
	struct igb_event *e = reserve();
	if (!e)
		return;
	e->kind = IGB_COMM;
	e->ts_ns = bpf_ktime_get_ns();
	e->pid = tgid;
	e->tid = BPF_CORE_READ(t, pid);
	e->cpu = bpf_get_smp_processor_id();
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), comm);
	submit(e);
}

SEC("tp_btf/task_rename")
int BPF_PROG(btf_task_rename, struct task_struct *task, const char *comm)
{
	on_rename(task, comm);
	return 0;
}

SEC("raw_tp/task_rename")
int BPF_PROG(raw_task_rename, struct task_struct *task, const char *comm)
{
	on_rename(task, comm);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(btf_sched_exec, struct task_struct *p)
{
	on_exec(p);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(raw_sched_exec, struct task_struct *p)
{
	on_exec(p);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(btf_sched_exit, struct task_struct *p)
{
	on_exit(p);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(raw_sched_exit, struct task_struct *p)
{
	on_exit(p);
	return 0;
}

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(btf_page_alloc, struct page *page, unsigned int order)
{
	on_page_alloc(order);
	return 0;
}

SEC("raw_tp/mm_page_alloc")
int BPF_PROG(raw_page_alloc, struct page *page, unsigned int order)
{
	on_page_alloc(order);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(btf_rq_issue, struct request *rq)
{
	on_rq_issue(rq);
	return 0;
}

SEC("raw_tp/block_rq_issue")
int BPF_PROG(raw_rq_issue, struct request *rq)
{
	on_rq_issue(rq);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(btf_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	on_rq_complete(rq, nr_bytes);
	return 0;
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(raw_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	on_rq_complete(rq, nr_bytes);
	return 0;
}
