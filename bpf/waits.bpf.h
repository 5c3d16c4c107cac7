/* Wait evidence, included by bpf/ingero.bpf.c after struct tstate: what a
 * target thread was doing when it left the CPU (the syscall in flight and
 * its first argument, the kind of fd, the page fault and its mapping, the
 * wait channel, the waking thread, CPU-quota throttling, direct reclaim),
 * and where its kernel CPU time goes between CUDA calls (file syscalls,
 * other syscalls, page faults by kind, reclaim). Layouts: bpf/ingero.h.
 *
 * Cost: no hook on syscalls (the syscall in flight of a blocked thread is
 * read from its registers at the switch-out, its kernel CPU sampled by
 * w_tick); the fault, memcg and reclaim hooks fire for every user page
 * fault, memcg event and reclaim of the machine, and a per-CPU word written
 * at each context switch says whether the task on the CPU is a target
 * thread, so a non-target pays one array lookup. Only tp_btf (the knob
 * waits_on). */

const volatile bool waits_on = false;
/* __sched_text_start/end: the scheduler's and the sleeping locks'
 * functions (schedule, io_schedule, mutex_lock...), 0 when unknown */
const volatile __u64 sched_text_start = 0, sched_text_end = 0;
/* IGB_SC_* of each syscall number, written by user space for its arch */
const volatile __u8 sys_cls[IGB_SYS_MAX] = {};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct igb_calib);
} calib SEC(".maps");

#define K_FLUSH_NS 1000000ULL /* send a thread's kernel time from 1 ms on */
#define K_AGE_NS 200000000ULL /* or once it is 200 ms old */

/* The target thread on each CPU (0: none), written at each switch. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cur_target SEC(".maps");

static __always_inline void set_cur_target(__u32 tid)
{
	__u32 zero = 0, *cur = bpf_map_lookup_elem(&cur_target, &zero);
	if (cur)
		*cur = tid;
}

/* The state of the current task when it is a target thread outside a CUDA
 * call, else NULL. */
static __always_inline struct tstate *cur_thread(__u32 *tid)
{
	__u32 zero = 0, *cur = bpf_map_lookup_elem(&cur_target, &zero);
	*tid = (__u32)bpf_get_current_pid_tgid();
	if (!cur || !*tid || *cur != *tid)
		return NULL;
	struct tstate *st = thread_get(*tid);
	return st && !st->depth ? st : NULL;
}

/* ---- fds ------------------------------------------------------------------ */

#define IG_S_IFMT 0170000
#define IG_S_IFSOCK 0140000
#define IG_S_IFREG 0100000
#define IG_S_IFBLK 0060000
#define IG_S_IFDIR 0040000
#define IG_S_IFCHR 0020000
#define IG_S_IFIFO 0010000
#define IG_PROC_MAGIC 0x9fa0
#define IG_SYSFS_MAGIC 0x62656572
#define IG_CGROUP_MAGIC 0x27e0eb
#define IG_CGROUP2_MAGIC 0x63677270
#define IG_AF_UNIX 1
#define IG_AF_INET 2
#define IG_AF_INET6 10

/* What fd of task t is (enum igb_fdk), and in *obj what names it: a
 * file's dev << 32 | inode, an IPv4 peer's address << 16 | port. */
static __always_inline __u8 fd_kind(struct task_struct *t, __u64 fd, __u64 *obj)
{
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return IGB_FDK_NONE;
	struct file **fds = BPF_CORE_READ(fdt, fd), *f = NULL;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	if (!f)
		return IGB_FDK_NONE;
	struct inode *ino = BPF_CORE_READ(f, f_inode);
	__u32 mode = BPF_CORE_READ(ino, i_mode) & IG_S_IFMT;
	*obj = fd;
	/* a file of procfs, sysfs, cgroupfs is the kernel's own state read or
	 * set, not file I/O */
	unsigned long magic = BPF_CORE_READ(ino, i_sb, s_magic);
	if (magic == IG_PROC_MAGIC || magic == IG_SYSFS_MAGIC || magic == IG_CGROUP_MAGIC ||
	    magic == IG_CGROUP2_MAGIC)
		return IGB_FDK_OTHER;
	if (mode == IG_S_IFREG || mode == IG_S_IFBLK) {
		*obj =
		    (__u64)BPF_CORE_READ(ino, i_sb, s_dev) << 32 | (__u32)BPF_CORE_READ(ino, i_ino);
		return mode == IG_S_IFREG ? IGB_FDK_REG : IGB_FDK_BLK;
	}
	if (mode == IG_S_IFIFO)
		return IGB_FDK_FIFO;
	if (mode == IG_S_IFCHR)
		return IGB_FDK_CHR;
	if (mode == IG_S_IFDIR)
		return IGB_FDK_DIR;
	if (mode == IG_S_IFSOCK) {
		struct socket *so = BPF_CORE_READ(f, private_data);
		struct sock *sk = BPF_CORE_READ(so, sk);
		__u16 fam = BPF_CORE_READ(sk, __sk_common.skc_family);
		if (fam == IG_AF_UNIX)
			return IGB_FDK_UNIX;
		if (fam != IG_AF_INET && fam != IG_AF_INET6)
			return IGB_FDK_SOCK;
		__u32 addr = fam == IG_AF_INET
				 ? BPF_CORE_READ(sk, __sk_common.skc_daddr)
				 : BPF_CORE_READ(sk, __sk_common.skc_v6_daddr.in6_u.u6_addr32[3]);
		__u16 port = BPF_CORE_READ(sk, __sk_common.skc_dport);
		*obj = (__u64)bpf_ntohl(addr) << 16 | bpf_ntohs(port);
		return fam == IG_AF_INET ? IGB_FDK_INET : IGB_FDK_INET6;
	}
	if (mode)
		return IGB_FDK_OTHER;
	/* an anonymous inode: its name says what it is */
	char n[8] = {};
	bpf_probe_read_kernel(n, sizeof(n), BPF_CORE_READ(f, f_path.dentry, d_name.name));
	if (n[0] != '[')
		return IGB_FDK_ANON;
	if (n[1] == 'e' && n[2] == 'v' && n[6] == 'f')
		return IGB_FDK_EVENTFD;
	if (n[1] == 'e' && n[2] == 'v' && n[6] == 'p')
		return IGB_FDK_EPOLL;
	if (n[1] == 't' && n[2] == 'i')
		return IGB_FDK_TIMERFD;
	if (n[1] == 's' && n[2] == 'i')
		return IGB_FDK_SIGNALFD;
	return IGB_FDK_ANON;
}

/* ---- kernel CPU time -------------------------------------------------------- */

/* Adds ns of kernel CPU to category cat of the thread; sends what it has
 * once it is 1 ms, or 200 ms old. */
static __always_inline void k_add(struct tstate *st, __u32 tid, __u32 cat, __u64 ns, __u64 now,
				  __u32 cnt)
{
	if (cat >= IGB_K_N)
		return;
	st->k[cat & 7] += ns;
	st->kc[cat & 7] += cnt; /* syscalls and faults timed; a sample counts none */
	st->k_pend += ns;
	st->k_n++;
	if (!st->k_first)
		st->k_first = now;
	if (st->k_pend < K_FLUSH_NS && now - st->k_first < K_AGE_NS)
		return;
	__u32 zero = 0;
	struct igb_calib *cb = bpf_map_lookup_elem(&calib, &zero);
	if (cb && cb->tgid && cb->tgid == st->tgid) { /* the calibration's, not a record */
		for (int i = 0; i < IGB_K_N; i++) {
			__sync_fetch_and_add(&cb->ns[i], st->k[i]);
			__sync_fetch_and_add(&cb->n[i], st->kc[i]);
		}
		goto reset;
	}
	struct igb_event *e = reserve();
	if (e) {
		e->kind = IGB_KTIME;
		e->ts_ns = now;
		e->dur_ns = st->k_pend;
		e->pid = st->tgid;
		e->tid = tid;
		e->arg0 = st->k[IGB_K_FILE];
		e->arg1 = st->k[IGB_K_SYS];
		e->stream = st->k[IGB_K_MINOR];
		e->cgroup_id = st->k[IGB_K_MAJ_FILE];
		e->preempt_ns = st->k[IGB_K_MAJ_ANON];
		e->blocked_ns = st->k[IGB_K_RECLAIM];
		e->other_pid =
		    st->k[IGB_K_COW] > 0xffffffffull ? 0xffffffffu : (__u32)st->k[IGB_K_COW];
		e->op = st->kc[IGB_K_COW];
		e->switches = st->k_major;
		e->ret = (__s32)st->k_n;
		e->stack_id =
		    IGB_KCOUNTS(st->kc[IGB_K_FILE], st->kc[IGB_K_SYS], st->kc[IGB_K_MINOR],
				st->kc[IGB_K_MAJ_FILE], st->kc[IGB_K_MAJ_ANON]);
		e->cpu = bpf_get_smp_processor_id();
		bpf_get_current_comm(e->comm, sizeof(e->comm));
		submit(e);
	}
reset:
	for (int i = 0; i < 8; i++) {
		st->k[i] = 0;
		st->kc[i] = 0;
	}
	st->k_first = st->k_pend = 0;
	st->k_major = st->k_n = 0;
}

/* On-CPU time of a span that began at ts with the thread's off-CPU total
 * at off and its reclaim total at claim: what it ran, less the reclaim
 * inside it (counted on its own). */
static __always_inline __u64 on_cpu_since(const struct tstate *st, __u64 now, __u64 ts, __u64 off,
					  __u64 claim)
{
	__u64 away = (st->off_total - off) + (st->claimed - claim);
	return now > ts + away ? now - ts - away : 0;
}

/* The registers of an x86-64 or arm64 task: its syscall's number. */
struct pt_regs___x86 {
	long orig_ax;
} __attribute__((preserve_access_index));
struct pt_regs___arm64 {
	int syscallno;
} __attribute__((preserve_access_index));

static __always_inline long regs_syscall(struct pt_regs *r)
{
	if (bpf_core_field_exists(((struct pt_regs___x86 *)0)->orig_ax))
		return BPF_CORE_READ((struct pt_regs___x86 *)r, orig_ax);
	if (bpf_core_field_exists(((struct pt_regs___arm64 *)0)->syscallno))
		return BPF_CORE_READ((struct pt_regs___arm64 *)r, syscallno);
	return -1;
}

/* The syscall the current task entered the kernel with, from its saved
 * user registers (-1: none known): the syscall in flight of a blocked
 * thread that no hook saw begin (futex, poll, nanosleep, recv...). */
static __always_inline long cur_syscall(__u64 *arg0)
{
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!r)
		return -1;
	*arg0 = PT_REGS_PARM1_CORE_SYSCALL(r);
	return regs_syscall(r);
}

#define IG_KERNEL_IP 0x8000000000000000ULL /* the kernel's half (x86-64, arm64) */

/* The CPU clock's sample on every CPU (a perf event each tick_ns): a target
 * thread between CUDA calls caught in the kernel, in a syscall, counts
 * tick_ns of kernel time for it, file I/O or not (its fd's kind). Sampled,
 * as perf does: a hook on every syscall made each traced CUDA call pay, its
 * return being a syscall (uretprobe) on recent kernels. Faults and reclaim
 * are timed exactly by their tracepoints, not here. */
const volatile __u64 tick_ns = 0;
/* user space attaches w_sys_enter/exit (below) while the targets spend
 * kernel time in syscalls, and says so here: the samples then leave them
 * to the exact count */
__u32 sys_hooked = 0;

/* A thread that makes CUDA calls, caught running its own code between
 * them: where (its user stack), for the host work's call site. */
static __always_inline void host_sample(struct bpf_perf_event_data *ctx, struct tstate *st,
					__u32 tid)
{
	__u64 id = capture_site((struct pt_regs *)ctx, st->tgid, tid);
	if (!id)
		return;
	struct igb_event *e = reserve();
	if (!e)
		return;
	e->kind = IGB_SAMPLE;
	e->ts_ns = bpf_ktime_get_ns();
	e->dur_ns = tick_ns;
	e->pid = st->tgid;
	e->tid = tid;
	e->stack_id = id;
	e->cpu = bpf_get_smp_processor_id();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	submit(e);
}

SEC("perf_event")
int w_tick(struct bpf_perf_event_data *ctx)
{
	__u32 tid;
	struct tstate *st = cur_thread(&tid);
	if (!st)
		return 0;
	if (PT_REGS_IP(&ctx->regs) < IG_KERNEL_IP) {
		st->flt_on = 0; /* running its own code: a fault whose end went unseen is over */
		if (stacks_on && !st->depth && st->nrec)
			host_sample(ctx, st, tid);
		return 0;
	}
	if (st->flt_on || st->rcl_on || sys_hooked)
		return 0;
	__u64 arg0 = 0, obj = 0;
	long nr = cur_syscall(&arg0);
	if (nr < 0 || nr >= IGB_SYS_MAX)
		return 0; /* an interrupt or an exception, not a syscall */
	__u8 cls = sys_cls[nr & (IGB_SYS_MAX - 1)];
	if (cls & IGB_SC_PROBE)
		return 0; /* returning from a traced call: the tracer's time */
	__u8 fdk = cls & IGB_SC_FD ? fd_kind(bpf_get_current_task_btf(), arg0, &obj) : 0;
	bool file = (cls & IGB_SC_SYNC) ||
		    ((cls & IGB_SC_IO) && (fdk == IGB_FDK_REG || fdk == IGB_FDK_BLK));
	k_add(st, tid, file ? IGB_K_FILE : IGB_K_SYS, tick_ns, bpf_ktime_get_ns(), 0);
	return 0;
}

/* A file-capable syscall (read, write, fsync...) when the exact hooks are
 * on: every other syscall returns at once, before any lookup (a traced
 * CUDA call's return is itself a syscall on recent kernels: this filter is
 * what it pays while they are attached). */
static __always_inline __u8 file_class(long id)
{
	__u8 cls = id >= 0 && id < IGB_SYS_MAX ? sys_cls[id & (IGB_SYS_MAX - 1)] : 0;
	return cls & (IGB_SC_IO | IGB_SC_SYNC) ? cls : 0;
}

/* Attached by user space only while the targets spend kernel time in
 * syscalls (collector_tick): the exact kernel CPU of the file-capable ones. */
SEC("tp_btf/sys_enter")
int BPF_PROG(w_sys_enter, struct pt_regs *regs, long id)
{
	__u8 cls = file_class(id);
	if (!cls)
		return 0;
	__u32 tid;
	struct tstate *st = cur_thread(&tid);
	if (!st)
		return 0;
	st->flt_on = 0; /* a fault whose end went unseen is over */
	st->sys_ts = bpf_ktime_get_ns();
	st->sys_off = st->off_total;
	st->sys_claim = st->claimed;
	__u64 arg0 = PT_REGS_PARM1_CORE_SYSCALL(regs), obj = 0;
	st->sys_cls = cls;
	st->sys_fdk = cls & IGB_SC_FD ? fd_kind(bpf_get_current_task_btf(), arg0, &obj) : 0;
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(w_sys_exit, struct pt_regs *regs, long ret)
{
	if (!file_class(regs_syscall(regs)))
		return 0;
	__u32 tid;
	struct tstate *st = cur_thread(&tid);
	if (!st || !st->sys_ts)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u64 cpu = on_cpu_since(st, now, st->sys_ts, st->sys_off, st->sys_claim);
	__u8 cls = st->sys_cls, fdk = st->sys_fdk;
	bool file = (cls & IGB_SC_SYNC) ||
		    ((cls & IGB_SC_IO) && (fdk == IGB_FDK_REG || fdk == IGB_FDK_BLK));
	st->sys_ts = 0;
	k_add(st, tid, file ? IGB_K_FILE : IGB_K_SYS, cpu, now, 1);
	return 0;
}

/* A page fault of a target thread begins: anonymous memory until the
 * page cache says otherwise (mm_filemap_fault, below). The kind is not
 * looked up here: bpf_find_vma with interrupts off (as they are at this
 * tracepoint) defers its unlock to an irq_work, a self-interrupt that cost
 * 12 us per fault on a VM. */
SEC("tp_btf/page_fault_user")
int BPF_PROG(w_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	__u64 now = bpf_ktime_get_ns(); /* first: the filter's cost is the fault's */
	__u32 tid;
	struct tstate *st = cur_thread(&tid);
	if (!st)
		return 0;
	st->flt_on = 1;
	st->flt_kind = IGB_FLT_ANON;
	st->flt_major = 0;
	/* x86's error code: bit 0 a present page (a protection fault), bit 1
	 * a write: a write to a page it may not write yet, copy on write */
	st->flt_cow = (error_code & 3) == 3;
	st->flt_addr = address;
	st->flt_off = st->off_total;
	st->flt_claim = st->claimed;
	st->flt_ts = now;
	return 0;
}

/* The fault goes through the page cache of a file (tmpfs and shmem have
 * their own): a file mapping, named by its device and inode. */
SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(w_filemap_fault, struct address_space *mapping, unsigned long index)
{
	__u32 tid;
	struct tstate *st = cur_thread(&tid);
	if (!st || !st->flt_on)
		return 0;
	struct inode *ino = BPF_CORE_READ(mapping, host);
	st->flt_kind = BPF_CORE_READ(ino, i_sb, s_bdev) ? IGB_FLT_FILE : IGB_FLT_SHMEM;
	st->flt_addr =
	    (__u64)BPF_CORE_READ(ino, i_sb, s_dev) << 32 | (__u32)BPF_CORE_READ(ino, i_ino);
	return 0;
}

/* A major fault is counted when the page must be read (filemap_fault,
 * do_swap_page); every fault at its end (mm_account_fault): both through
 * the memory cgroup's counters, in the faulting task. */
SEC("tp_btf/count_memcg_events")
int BPF_PROG(w_memcg_event, struct mem_cgroup *memcg, int item, unsigned long val)
{
	__u32 tid;
	struct tstate *st = cur_thread(&tid);
	if (!st || !st->flt_on)
		return 0;
	if (item == bpf_core_enum_value(enum vm_event_item, PGMAJFAULT)) {
		st->flt_major = 1;
		return 0;
	}
	if (item != bpf_core_enum_value(enum vm_event_item, PGFAULT))
		return 0;
	/* the rest of the fault (its return to user space) is not seen: at
	 * most a few hundred ns, counted as the thread's own work */
	__u64 now = bpf_ktime_get_ns();
	__u64 cpu = on_cpu_since(st, now, st->flt_ts, st->flt_off, st->flt_claim);
	__u32 cat = st->flt_major ? (st->flt_kind == IGB_FLT_FILE ? IGB_K_MAJ_FILE : IGB_K_MAJ_ANON)
		    : st->flt_cow && st->flt_kind == IGB_FLT_ANON ? IGB_K_COW
								  : IGB_K_MINOR;
	st->flt_on = 0;
	if (st->flt_major)
		st->k_major++;
	k_add(st, tid, cat, cpu, now, 1);
	return 0;
}

static __always_inline void reclaim_begin(void)
{
	__u32 tid;
	struct tstate *st = cur_thread(&tid);
	if (!st)
		return;
	st->rcl_on = 1;
	st->rcl_ts = bpf_ktime_get_ns();
	st->rcl_off = st->off_total;
}

static __always_inline void reclaim_end(void)
{
	__u32 tid;
	struct tstate *st = cur_thread(&tid);
	if (!st || !st->rcl_on)
		return;
	__u64 now = bpf_ktime_get_ns();
	__u64 cpu = now > st->rcl_ts + (st->off_total - st->rcl_off)
			? now - st->rcl_ts - (st->off_total - st->rcl_off)
			: 0;
	st->rcl_on = 0;
	st->claimed += cpu;
	k_add(st, tid, IGB_K_RECLAIM, cpu, now, 1);
}

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(w_reclaim_begin, int order, gfp_t gfp)
{
	reclaim_begin();
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(w_reclaim_end, unsigned long nr)
{
	reclaim_end();
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(w_memcg_reclaim_begin, int order, gfp_t gfp)
{
	reclaim_begin();
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(w_memcg_reclaim_end, unsigned long nr)
{
	reclaim_end();
	return 0;
}

/* ---- at a switch ----------------------------------------------------------- */

struct task_struct___throttled {
	bool throttled;
} __attribute__((preserve_access_index));

/* Whether a preempted task was taken off because its cgroup's CPU quota
 * ran out: the task itself (Linux 6.18 throttles tasks as they return to
 * user space) or its CFS queue (before). */
static __always_inline bool throttled(struct task_struct *p)
{
	if (bpf_core_field_exists(((struct task_struct___throttled *)p)->throttled) &&
	    BPF_CORE_READ((struct task_struct___throttled *)p, throttled))
		return true;
	if (!bpf_core_field_exists(p->se.cfs_rq))
		return false;
	struct cfs_rq *q = BPF_CORE_READ(p, se.cfs_rq);
	return q && BPF_CORE_READ(q, throttle_count) > 0;
}

static __always_inline bool in_sched_text(__u64 ip)
{
	return ip >= sched_text_start && ip < sched_text_end;
}

/* What a target thread going to sleep is waiting in: the syscall in
 * flight and its object, the fault and its mapping, the wait channel
 * from the kernel stack (ips, n frames; NULL: none). */
static __always_inline void wait_detail(struct tstate *st, const __u64 *ips, __u32 n)
{
	__u64 wchan = 0, how = 0;
	bool seen = false;
	for (__u32 i = 0; i < IG_SLEEP_FRAMES; i++) {
		if (i >= n || !ips)
			break;
		if (in_sched_text(ips[i])) {
			how = ips[i];
			seen = true;
		} else if (seen) {
			wchan = ips[i];
			break;
		}
	}
	st->off_wchan = wchan;
	st->off_how = how;
	st->off_waker = 0;
	__u16 sys1 = 0;
	__u8 fdk = 0, cls = 0, flt = st->flt_on ? st->flt_kind : 0;
	__u64 obj = 0;
	if (!flt) { /* the syscall in flight, from the registers it entered with */
		__u64 arg0 = 0;
		long nr = cur_syscall(&arg0);
		if (nr >= 0 && nr < IGB_SYS_MAX) {
			sys1 = (__u16)(nr + 1);
			cls = sys_cls[nr & (IGB_SYS_MAX - 1)];
			obj = arg0;
			fdk = cls & IGB_SC_FD ? fd_kind(bpf_get_current_task_btf(), arg0, &obj) : 0;
		}
	}
	st->off_cls = cls;
	st->off_fdk = fdk;
	st->off_obj = flt ? st->flt_addr : obj;
	st->off_wait = IGB_WAIT(sys1, fdk, flt);
}
