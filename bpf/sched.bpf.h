/* The scheduler: a target thread's switch out and back in, split into
 * preempted and blocked time and charged to its open calls, who kept it
 * waiting (the last runs of each CPU) and who woke it (sched_waking). The
 * wait evidence of a blocked thread comes from bpf/waits.bpf.h.
 * Each tracepoint is attached as tp_btf, with a raw_tp twin as the
 * fallback (the collector loads one of the two). Part of bpf/ingero.bpf.c. */

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
 * waker's stack; posix_timer_fn, it_real_fn: a timer's signal, for a loop
 * paced by sigwait, sigsuspend or pause). */
const volatile __u64 fault_text_start = 0, fault_text_end = 0;
const volatile __u64 hrtimer_text_start = 0, hrtimer_text_end = 0;
const volatile __u64 timeout_text_start = 0, timeout_text_end = 0;
const volatile __u64 sigtimer_text_start = 0, sigtimer_text_end = 0;
const volatile __u64 itimer_text_start = 0, itimer_text_end = 0;

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
	 * only for the syscalls that wait for a timer, at most one per sleep;
	 * and where a thread that makes CUDA calls waits for a lock or a
	 * condition (which one, from its frames), at most one per
	 * IGB_SITE_GAP_NS: a thread that waits longer has each of its waits'
	 * stack, a lock taken 10 000 times a second does not pay a walk each */
	st->off_stack = 0;
	st->off_wstack = 0;
	if (stacks_on && !st->depth) { /* between calls: a blocking sync polls too */
		if ((st->off_cls & IGB_SC_PACE) || st->off_fdk == IGB_FDK_TIMERFD ||
		    st->off_fdk == IGB_FDK_SIGNALFD) {
			st->off_stack = capture_stack(ctx, st->tgid, tid);
		} else if ((st->off_cls & IGB_SC_LOCK) && st->nrec &&
			   st->off_ts - st->site_ts >= IGB_SITE_GAP_NS) {
			st->site_ts = st->off_ts;
			st->off_stack = capture_stack(ctx, st->tgid, tid);
		}
	}
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
static __always_inline __u32 longest_runner(struct cpu_runs *cr, __u64 from, __u64 now, char *comm)
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

/* A target thread leaves the CPU: note when, and whether it was preempted
 * (by whom) or blocked (and why). */
static __always_inline void switch_out(void *ctx, struct task_struct *prev,
				       struct task_struct *next, __u64 now, __u32 prev_tid,
				       __u32 prev_tgid, __u32 next_tgid)
{
	struct tstate *st = thread_get(prev_tid);

	if (!st || st->tgid != prev_tgid)
		st = thread_new(prev_tid, prev_tgid);
	if (!st)
		return;
	count(IGB_CNT_TARGET_SWITCHES, 1);
	st->off_ts = now;
	st->wake_ts = 0;
	st->off_cpu = bpf_get_smp_processor_id();
	st->cgid = bpf_get_current_cgroup_id(); /* the task leaving is current */
	st->off_in_call = st->depth > 0;
	st->off_flags = 0;
	long state = task_state(prev);
	if (state == TASK_RUNNING) {
		st->off_state = IGB_PREEMPTED;
		st->off_other = next_tgid;
		BPF_CORE_READ_STR_INTO(&st->off_comm, next, comm);
		/* off_wait is the blocked intervals' (wait_detail): free here */
		st->off_wait =
		    IGB_POLICY(BPF_CORE_READ(next, policy), BPF_CORE_READ(next, rt_priority)) |
		    (__u64)IGB_POLICY(BPF_CORE_READ(prev, policy),
				      BPF_CORE_READ(prev, static_prio) - 100)
			<< 32;
		if (waits_on && throttled(prev))
			st->off_flags |= IGB_F_THROTTLED;
	} else {
		st->off_state = IGB_BLOCKED;
		st->off_other = 0;
		st->off_comm[0] = 0;
		if (state & TASK_UNINTERRUPTIBLE)
			st->off_flags |= IG_F_DSTATE;
		blocked_why(ctx, st, prev_tid);
		/* stopped (__TASK_STOPPED, __TASK_TRACED; TASK_FROZEN since
		 * Linux 6.1, a bit no earlier state uses) */
		if (st->off_flags & IGB_F_DETAIL)
			st->off_wait |= (__u64)(state & 4	 ? IGB_STOP_SIGNAL
						: state & 8	 ? IGB_STOP_PTRACE
						: state & 0x8000 ? IGB_STOP_FROZEN
								 : IGB_STOP_NONE)
					<< 12;
	}
}

static __always_inline void on_switch(void *ctx, struct task_struct *prev, struct task_struct *next)
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

	if (prev_tid && is_target(prev_tgid))
		switch_out(ctx, prev, next, now, prev_tid, prev_tgid, next_tgid);

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
	if (state == IGB_PREEMPTED) /* the policies: the preemptor's if it is named */
		e->arg1 = (st->off_wait & ~0xffffffffull) |
			  (other == st->off_other ? (__u32)st->off_wait : 0);
	if (state == IGB_BLOCKED && (st->off_flags & IGB_F_DETAIL)) {
		e->arg1 = st->off_wait | (__u64)st->off_waker << 32;
		e->arg0 |= (__u64)(__u32)st->off_how << 32; /* in the scheduler's text */
		e->stream = st->off_wchan;
		e->stack_id = st->off_wstack;
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

	if (!irq_text_end && !hrtimer_text_end && !timeout_text_end && !sigtimer_text_end &&
	    !itimer_text_end)
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
		    (ip >= timeout_text_start && ip < timeout_text_end) ||
		    (ip >= sigtimer_text_start && ip < sigtimer_text_end) ||
		    (ip >= itimer_text_start && ip < itimer_text_end))
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
	/* Frozen in place in a freezable sleep (Linux 6.1+: its state became
	 * TASK_FROZEN while it slept): the thaw wakes it, not what it slept
	 * on, and the wait was the freezer's from then */
	if ((st->off_flags & IGB_F_DETAIL) && (task_state(p) & 0x8000))
		st->off_wait = (st->off_wait & ~(3ull << 12)) | (__u64)IGB_STOP_FROZEN << 12;
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
	/* A lock wait whose call site was taken: the waker's user stack too,
	 * when it wakes from a lock syscall of its own. Its innermost frame
	 * says what the wait was (pthread_rwlock_unlock, __lll_lock_wake,
	 * pthread_cond_signal, sem_post...), which the waiter's often does
	 * not: glibc's waits share one futex function. */
	if (st->off_stack && (st->off_cls & IGB_SC_LOCK) && st->off_other) {
		__u64 arg0;
		long nr = cur_syscall(&arg0);
		if (nr >= 0 && nr < IGB_SYS_MAX && (sys_cls[nr & (IGB_SYS_MAX - 1)] & IGB_SC_LOCK))
			st->off_wstack = capture_stack(ctx, st->off_other, st->off_waker);
	}
}

TP_PROGS(sched_switch, sched_switch, on_switch(ctx, prev, next), bool preempt,
	 struct task_struct *prev, struct task_struct *next)

TP_PROGS(sched_waking, sched_wakeup, on_wakeup(ctx, p), struct task_struct *p)
