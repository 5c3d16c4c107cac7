/* The libraries of target processes: holding a process until user space
 * has attached its CUDA libraries, and the dynamic loader's uprobes
 * (dl_change, dl_change_hint) that tell of a library loaded at run time.
 * Part of bpf/ingero.bpf.c. */

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
