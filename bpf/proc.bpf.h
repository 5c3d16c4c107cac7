/* Process life: fork (the children of targets are targets), exec (a new
 * program may be held, bpf/libs.bpf.h), exit, and thread renames.
 * Each tracepoint is attached as tp_btf, with a raw_tp twin as the
 * fallback (the collector loads one of the two). Part of bpf/ingero.bpf.c. */

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

TP_PROGS(sched_process_fork, sched_fork, on_fork(parent, child), struct task_struct *parent,
	 struct task_struct *child)

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

TP_PROGS(task_rename, task_rename, on_rename(task, comm), struct task_struct *task,
	 const char *comm)

TP_PROGS(sched_process_exec, sched_exec, on_exec(p), struct task_struct *p)

TP_PROGS(sched_process_exit, sched_exit, on_exit(p), struct task_struct *p)
