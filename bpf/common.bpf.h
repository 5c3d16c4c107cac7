/* Shared by every part of bpf/ingero.bpf.c (one compilation unit, one
 * object): the event flags, the knobs user space sets before load, the
 * per-thread state (struct tstate and its call frames), the maps more than
 * one probe family uses, and the small helpers around them (counters, the
 * target test, the ring buffer, thread state, the current kernel stack). */

#define TASK_RUNNING 0
#define TASK_UNINTERRUPTIBLE 0x2
/* event flags, the values of src/core/event.h */
#define IG_F_IN_CALL 0x1
#define IG_F_DSTATE 0x4 /* the interval was an uninterruptible sleep */
#define IG_F_TIMER 0x8	/* a timer ended it */
#define IG_F_FAULT 0x10 /* it began inside a page fault */

/* A tracepoint's two programs, btf_NAME (tp_btf, typed arguments) and
 * raw_NAME (raw_tp, for a kernel that refuses the first): user space
 * loads one of them (collect/collector.c). Both run CALL on the
 * tracepoint's arguments, given as BPF_PROG takes them. */
#define TP_PROGS(tp, name, call, ...)                                                              \
	SEC("tp_btf/" #tp)                                                                         \
	int BPF_PROG(btf_##name, __VA_ARGS__)                                                      \
	{                                                                                          \
		call;                                                                              \
		return 0;                                                                          \
	}                                                                                          \
	SEC("raw_tp/" #tp)                                                                         \
	int BPF_PROG(raw_##name, __VA_ARGS__)                                                      \
	{                                                                                          \
		call;                                                                              \
		return 0;                                                                          \
	}

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
	__u32 nrec;	  /* call records sent (IGB_REFRESH) */
	__u64 cgid;	  /* the thread's cgroup, re-read at each switch-out and IGB_REFRESH */
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
	__u64 off_stack; /* the user stack of a blocked wait: a timer's, or a lock's */
	__u64 site_ts;	 /* when the last lock wait's stack was taken (IGB_SITE_GAP_NS) */
	__u64 off_wstack; /* the waker's user stack, at the end of a lock wait with off_stack */
	/* a file syscall in flight while the exact hooks are on (sys_ts != 0) */
	__u64 sys_ts, sys_off, sys_claim;
	__u8 sys_cls, sys_fdk;
	__u8 off_cls, off_fdk; /* its syscall's class and fd kind (wait_detail) */
	__u64 off_wait;	 /* IGB_WAIT(...) */
	__u32 off_waker; /* the waking thread */
	__u32 pad3;
	/* the page fault in flight (flt_on) */
	__u8 flt_on, flt_kind, flt_major, flt_cow; /* flt_cow: a write to a present page */
	__u64 flt_ts, flt_off, flt_claim, flt_addr;
	/* direct reclaim in flight (rcl_on) */
	__u64 rcl_ts, rcl_off;
	__u64 claimed; /* reclaim CPU so far: not the syscall's or the fault's */
	__u8 rcl_on, pad5[7];
	/* kernel CPU not yet sent (IGB_KTIME) */
	__u64 k[8]; /* by enum igb_kcat */
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

/* The call records, the hottest path, ask two things once in IGB_REFRESH
 * records of the thread rather than at each: whether to wake the reader
 * (the query reads the reader's position, a cache line the reader's CPU
 * writes as it reads: ~55-90 ns a call on the test VM) and the thread's
 * cgroup (a walk of four pointers: ~25 ns), which a switch-out re-reads
 * too. The reader reads the ring every 20 ms anyway; the wake-up is for a
 * burst while it sleeps (docs/performance.md). */
#define IGB_REFRESH 64

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
