/* User stacks of calls: the native user stack and the CPython frames of
 * the calling thread, hashed and stored once in the stacks map
 * (docs/stacks.md). Part of bpf/ingero.bpf.c. */

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
	__u32 first;  /* the first native frame hashed */
	__u32 py0_fn; /* the innermost Python frame by its function alone */
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
		if (i < hw->first)
			return 0;
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
	if (j || !hw->py0_fn)
		hw->h = mix(hw->h, sc->s.py[j].instr);
	return 0;
}

/* Captures the user stack of the current call, stores it once in the
 * stacks map and returns its id (0 = no stack). With site, the id is the
 * call site's, for a sample of running code: the Python frames alone when
 * there are some (the interpreter's own frames differ at every sample),
 * the innermost by its function, not its line; else the native frames
 * less the sampled instruction (the return addresses name the function
 * it is in and the path to it). The stack stored is the first sample's. */
static __always_inline __u64 capture_stack_as(struct pt_regs *ctx, __u32 tgid, __u32 tid, int site)
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

	hw.h = site ? 0x84222325cbf29ce4ULL : 0xcbf29ce484222325ULL; /* apart from calls' */
	hw.nips = site && npy ? 0 : nips;
	hw.npy = npy;
	hw.first = site && !npy && nips > 1 ? 1 : 0;
	hw.py0_fn = site;
	bpf_loop(IGB_STACK_MAX + IGB_PY_MAX, hash_step, &hw, 0);
	h = hw.h;
	h = mix(h, ((__u64)hw.nips << 8) | npy);
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

static __always_inline __u64 capture_stack(struct pt_regs *ctx, __u32 tgid, __u32 tid)
{
	return capture_stack_as(ctx, tgid, tid, 0);
}

/* The call site of running code (a sample): capture_stack_as's site id. */
static __always_inline __u64 capture_site(struct pt_regs *ctx, __u32 tgid, __u32 tid)
{
	return capture_stack_as(ctx, tgid, tid, 1);
}
