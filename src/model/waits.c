/* Off-CPU intervals and kernel time by mechanism: why a feeding thread
 * waited between CUDA calls, from the kernel's evidence when the source
 * recorded it (core/waits.h: the syscall, the fd, the fault, the wait
 * channel, the waking thread), else from the scheduler's flags and the
 * waker as before; who ended each kind of wait (culprit tables); where its
 * kernel CPU went (IG_EV_KTIME). docs/detection.md has the rules. */
#include "model/model_int.h"

static int off_state(uint8_t s)
{
	return s == IG_OFF_PREEMPTED ? ST_PRE : s == IG_OFF_BLOCKED ? ST_BLK : ST_UNK;
}

/* The scheduler's word alone: a fault, the disk, a timer, a task, or an
 * interrupt. */
static int legacy_reason(uint32_t flags, uint32_t waker_pid)
{
	if (flags & IG_F_FAULT)
		return BW_FAULT;
	if (flags & IG_F_DSTATE)
		return BW_IO;
	if (flags & IG_F_TIMER)
		return BW_SLEEP;
	return waker_pid ? BW_TASK : BW_OTHER;
}

/* A wait with a timeout that might end in a wake-up by another thread:
 * a timer ending it says only that nobody did in time. A poll or select
 * with nothing to wait for (no fd array, no fds: its first argument 0) is a
 * sleep call: time.sleep in Python 3.10 and older, poll(NULL, 0, ms). */
static int timed_kind(int sys, uint64_t obj)
{
	return sys == IG_SYS_FUTEX || (sys == IG_SYS_POLL && obj) || sys == IG_SYS_EPOLL ||
	       sys == IG_SYS_SEMOP || sys == IG_SYS_FLOCK || sys == IG_SYS_AIO;
}

static int fd_is_file(int fdk)
{
	return fdk == IG_FDK_REG || fdk == IG_FDK_BLK;
}

static int fd_is_net(int fdk)
{
	return fdk == IG_FDK_INET || fdk == IG_FDK_INET6;
}

/* A read, write or transfer on an fd: its kind says what the wait was. */
static int io_reason(const struct ig_event *e, int sys, int fdk, int wfn, int task, int base)
{
	if (fd_is_file(fdk))
		return BW_FILE;
	if (fd_is_net(fdk))
		return BW_NET;
	if (wfn == IG_WFN_KLOCK && task)
		return BW_LOCK; /* a kernel lock another writer held (a pipe's mutex) */
	if (sys == IG_SYS_WRITE || sys == IG_SYS_SEND || wfn == IG_WFN_PIPE_WRITE ||
	    wfn == IG_WFN_SOCK_SEND)
		return task ? BW_FULL : base; /* the reader made room */
	return base;
}

int blocked_reason(const struct ig_event *e)
{
	uint32_t f = e->flags;
	int base = legacy_reason(f, e->other_pid);
	if (!(f & IG_F_DETAIL))
		return base;
	uint64_t w = e->arg1;
	int sys = IG_WAIT_SYS(w), fdk = IG_WAIT_FDK(w), flt = IG_WAIT_FLT(w), wfn = IG_WAIT_WFN(w);
	int task = e->other_pid && IG_WAIT_WAKER(w) && !(f & IG_F_TIMER);
	/* stopped: whatever it was doing, it waited for a SIGCONT, its tracer
	 * or a thaw, not for its syscall */
	if (wfn == IG_WFN_STOP || wfn == IG_WFN_TRACED || wfn == IG_WFN_FROZEN)
		return BW_STOP;
	if ((f & IG_F_RECLAIM) || wfn == IG_WFN_RECLAIM)
		return BW_MEM;
	if (flt) {
		if (wfn == IG_WFN_KLOCK && task)
			return BW_LOCK; /* mmap_lock, held by another thread of the process */
		if (flt == IG_FLT_FILE)
			return BW_COLD;
		/* anonymous memory read back from swap */
		return wfn == IG_WFN_PAGE_IO || (f & IG_F_DSTATE) ? BW_MEM : BW_FAULT;
	}
	if (f & IG_F_GIL)
		return BW_GIL;
	switch (sys) {
	case IG_SYS_FSYNC:
	case IG_SYS_FALLOC:
		return BW_FILE;
	case IG_SYS_AIO: /* the completions it waits for; a timeout: nothing came */
		return (f & IG_F_TIMER) ? BW_SLEEP : BW_FILE;
	case IG_SYS_READ:
		if (fdk == IG_FDK_TIMERFD)
			return BW_SLEEP; /* its own timer */
					 /* fall through */
	case IG_SYS_WRITE:
	case IG_SYS_SPLICE:
	case IG_SYS_RECV:
	case IG_SYS_SEND:
		return io_reason(e, sys, fdk, wfn, task, base);
	case IG_SYS_FUTEX:
	case IG_SYS_FLOCK:
	case IG_SYS_SEMOP:
		return task ? BW_LOCK : base;
	case IG_SYS_POLL:
	case IG_SYS_EPOLL:
		/* woken by an interrupt: a socket's data, a device */
		return (f & IG_F_TIMER) ? BW_SLEEP : task ? BW_TASK : BW_NET;
	case IG_SYS_ACCEPT:
	case IG_SYS_CONNECT:
		return fd_is_net(fdk) ? BW_NET : base;
	case IG_SYS_OPEN:
		return (f & IG_F_DSTATE) ? BW_FILE : base; /* the file system's metadata */
	default:
		return wfn == IG_WFN_KLOCK && task ? BW_LOCK : base;
	}
}

/* The culprit table of a wait between calls and its key (0: none). */
static struct ctab *culprits(struct proc *p, const struct ig_offcpu_rec *r, int bw, uint32_t *key,
			     uint32_t *aux)
{
	uint32_t waker = IG_WAIT_WAKER(r->wait);
	*aux = 0;
	switch (bw) {
	case BW_TASK: /* the waking thread, or its process when not recorded */
		*key = waker ? waker : r->other_pid;
		*aux = r->other_pid;
		return &p->wake;
	case BW_LOCK:
	case BW_GIL:
	case BW_FULL:
	case BW_STOP: /* who let it go on: SIGCONT's sender, the tracer, the thawer */
		*key = waker;
		*aux = r->other_pid;
		return bw == BW_LOCK   ? &p->lock
		       : bw == BW_GIL  ? &p->gil
		       : bw == BW_STOP ? &p->stop
				       : &p->full;
	case BW_NET:
		*key = fd_is_net(IG_WAIT_FDK(r->wait)) ? (uint32_t)(r->obj >> 16) : 0;
		*aux = (uint32_t)(r->obj & 0xffff);
		return &p->net;
	default:
		*key = 0;
		return NULL;
	}
}

/* Whether t's waits name culprits in its process's tables: the feeding
 * threads' (those that make CUDA calls), not the process's other threads:
 * a thread waiting for the GIL that the feeder holds does not make the
 * feeder the GIL's culprit. A process without CUDA calls (a data loader's
 * worker) has all its threads' in them. */
static int counts_culprits(const struct proc *p, const struct thread *t)
{
	return t->first_call_ns || !p->cuda;
}

/* Adds (sign 1) or removes (sign -1) an off-CPU interval of t to or from
 * the "inside calls" (in 1) or "between calls" (in 0) sums of its lifetime
 * and of slice s (NULL: not in the window). A blocked interval's run-queue
 * wait after its wake-up (pre) is preempted time; the rest (main) is the
 * sleep, by reason bw; a throttled one (thr) is the CPU quota's. */
static void offcpu_sums(struct thread *t, struct tslice *s, int in, int st, int bw, uint64_t main,
			uint64_t pre, int thr, int timed, int sign)
{
#define ADJ(x, v) ((x) = sign > 0 ? (x) + (v) : ((x) >= (v) ? (x) - (v) : 0))
	struct tparts_raw *L = &t->life_raw;
	ADJ(t->life_off[in][st], main);
	ADJ(t->life_off[in][ST_PRE], pre);
	if (st == ST_BLK && !in)
		ADJ(L->bw[bw], main);
	if (st == ST_BLK && !in && timed)
		ADJ(L->timed, main);
	if (st == ST_PRE && thr)
		ADJ(L->thr[in], main);
	if (st == ST_BLK && in && bw == BW_STOP)
		ADJ(L->stop_in, main);
	if (!s)
		return;
	ADJ(s->off[in][st], main);
	ADJ(s->off[in][ST_PRE], pre);
	if (st == ST_BLK && !in)
		ADJ(s->bw[bw], main);
	if (st == ST_BLK && !in && timed)
		ADJ(s->timed, main);
	if (st == ST_PRE && thr)
		ADJ(s->thr[in], main);
	if (st == ST_BLK && in && bw == BW_STOP)
		ADJ(s->stop_in, main);
	if (sign > 0)
		s->sw[in]++;
	else if (s->sw[in])
		s->sw[in]--;
#undef ADJ
}

/* The slice of the window an interval of t ended in, NULL when it left. */
static struct tslice *slice_of(const struct ig_model *m, struct thread *t,
			       const struct ig_offcpu_rec *r, uint64_t *sec)
{
	*sec = (r->ts_ns + r->dur_ns) / NS;
	struct tslice *s = &t->sl[*sec % m->W];
	return s->sec == *sec ? s : NULL;
}

/* Moves timeline entry idx of t to the other side of a call (to_in) or to
 * another reason (bw), with its culprit. */
static void move_entry(struct ig_model *m, struct thread *t, struct proc *p, int idx, int to_in,
		       int bw, uint32_t waker, uint32_t waker_pid, const char *waker_comm)
{
	struct ig_offcpu_rec *r = &t->tl[idx];
	uint64_t sec, pre = t->tl_pre[idx], main = r->dur_ns - pre;
	struct tslice *s = slice_of(m, t, r, &sec);
	int st = off_state(r->state), thr = (r->flags & IG_F_THROTTLED) != 0;
	int old = t->tl_bw[idx], timed = t->tl_timed[idx];
	uint32_t key, aux;
	offcpu_sums(t, s, r->in_call, st, old, main, pre, thr, timed, -1);
	/* a stop's culprit is counted on either side of a call: it stays */
	int stop = old == BW_STOP && bw == BW_STOP;
	struct ctab *ct = st == ST_BLK && !r->in_call && !stop && counts_culprits(p, t)
			      ? culprits(p, r, old, &key, &aux)
			      : NULL;
	if (ct && key && s)
		ctab_sub_wait(m, ct, key, r->ts_ns + main, main);
	r->in_call = (uint8_t)to_in;
	r->part = (int8_t)(to_in && !stop ? -1 : r->part);
	t->tl_bw[idx] = (uint8_t)bw;
	if (bw != old) {
		t->tl_timed[idx] = 0;
		timed = 0;
	}
	offcpu_sums(t, s, r->in_call, st, bw, main, pre, thr, timed, 1);
	if (to_in || stop || st != ST_BLK || !s || !counts_culprits(p, t))
		return;
	if (waker) { /* the thread that ended the wait it belongs to */
		r->wait = (r->wait & 0xffffffffull) | (uint64_t)waker << 32;
		r->other_pid = waker_pid;
		copy_comm(r->other_comm, waker_comm);
	}
	ct = culprits(p, r, bw, &key, &aux);
	if (ct && key)
		ctab_add_wait(m, ct, key, aux, r->other_comm, r->ts_ns + main, main);
}

void reclassify(struct ig_model *m, struct thread *t, struct proc *p, uint64_t a, uint64_t b)
{
	for (int k = 0; k < t->tl_n; k++) {
		int idx = (t->tl_i - 1 - k + IG_TL_MAX) % IG_TL_MAX;
		struct ig_offcpu_rec *r = &t->tl[idx];
		if (r->ts_ns < a)
			break;
		if (r->in_call || t->tl_src[idx] || r->ts_ns >= b)
			continue;
		move_entry(m, t, p, idx, 1, t->tl_bw[idx], 0, 0, NULL);
	}
}

/* A wait ended by another thread (bw, entry at idx): the timed waits of
 * the same kind on the same object just before it, that timers ended,
 * were the same wait (a condition polled with a timeout, CPython's GIL
 * asked for every 5 ms): they move to its reason and its culprit. */
static void merge_timed(struct ig_model *m, struct thread *t, struct proc *p, int idx, int bw)
{
	const struct ig_offcpu_rec *w = &t->tl[idx];
	int sys = IG_WAIT_SYS(w->wait);
	for (int k = 1; k < t->tl_n; k++) {
		int j = (idx - k + IG_TL_MAX) % IG_TL_MAX;
		struct ig_offcpu_rec *r = &t->tl[j];
		if (r->state == IG_OFF_PREEMPTED && !r->in_call)
			continue; /* a preemption between two tries */
		uint64_t d = r->obj > w->obj ? r->obj - w->obj : w->obj - r->obj;
		if (r->in_call || !t->tl_timed[j] || t->tl_bw[j] != BW_SLEEP ||
		    IG_WAIT_SYS(r->wait) != sys || d >= 64)
			break;
		move_entry(m, t, p, j, 0, bw, IG_WAIT_WAKER(w->wait), w->other_pid, w->other_comm);
		r->part = w->part;
	}
}

static const int8_t part_of_bw[BW_N] = {
    [BW_IO] = IG_PART_IO_WAIT,	   [BW_TASK] = IG_PART_TASK_WAIT,    [BW_SLEEP] = IG_PART_SLEEP,
    [BW_FAULT] = IG_PART_FAULT,	   [BW_OTHER] = IG_PART_UNKNOWN,     [BW_FILE] = IG_PART_FILE_IO,
    [BW_COLD] = IG_PART_COLD_READ, [BW_MEM] = IG_PART_MEM_PRESSURE,  [BW_LOCK] = IG_PART_LOCK_WAIT,
    [BW_GIL] = IG_PART_GIL_WAIT,   [BW_FULL] = IG_PART_BACKPRESSURE, [BW_NET] = IG_PART_NET_WAIT,
    [BW_STOP] = IG_PART_STOPPED,
};

/* A wait between calls at user stack id: its call site's time. */
static void site_add(struct wait_site at[4], uint64_t id, uint64_t ns)
{
	int k = 0;
	for (int i = 0; i < 4; i++) {
		if (at[i].id == id) {
			at[i].ns += ns;
			return;
		}
		if (at[i].ns < at[k].ns)
			k = i;
	}
	at[k].id = id;
	at[k].ns = ns;
}

/* The call site of a blocked wait between calls that has a stack: a wait
 * on a futex, semaphore or file lock is a lock's (the GIL's when it is the
 * GIL), timed ones that ran out too (the same wait, or a condition
 * polled: not a sleep's call site, which the next real sleep's would
 * lose to); a sleep, poll or timerfd wait a timer ended is the loop's
 * pacing. */
static void wait_site(struct proc *p, const struct ig_event *e, int bw, uint64_t ns)
{
	int sys = e->flags & IG_F_DETAIL ? IG_WAIT_SYS(e->arg1) : IG_SYS_NONE;
	if (sys == IG_SYS_FUTEX || sys == IG_SYS_SEMOP || sys == IG_SYS_FLOCK) {
		site_add(bw == BW_GIL ? p->gil_at : p->lock_at, e->stack_id, ns);
		if (bw == BW_LOCK && e->stream)
			site_add(p->wake_at, e->stream, ns);
	} else if (bw == BW_SLEEP)
		site_add(p->sleep_at, e->stack_id, ns);
}

/* A wait for a program the process p ran, between calls: in wait4 or
 * waitid, or ended by a child of p younger than CHILD_AGE_NS that ran a
 * program of another name (exec: one it started for this step and reads
 * the output of; a pool's workers are forked, or exec the interpreter
 * under its parent's name, and live on). */
#define CHILD_AGE_NS 500000000ull
static int ran_child(const struct ig_model *m, const struct proc *p, const struct ig_event *e,
		     uint64_t end)
{
	if ((e->flags & IG_F_DETAIL) && IG_WAIT_SYS(e->arg1) == IG_SYS_WAIT)
		return 1;
	const struct proc *q = e->other_pid ? proc_find(m, e->other_pid) : NULL;
	return q && q->ppid == p->pid && q->execd && end >= q->first_ns &&
	       end - q->first_ns < CHILD_AGE_NS && e->other_comm[0] &&
	       strncmp(e->other_comm, p->comm, IG_COMM_LEN) != 0;
}

void ingest_offcpu(struct ig_model *m, const struct ig_event *e, uint64_t end, uint64_t sec,
		   int inwin)
{
	struct proc *p;
	struct thread *t = event_thread(m, e, end, &p);
	int st = off_state(e->state);
	int src = (e->flags & IG_F_IN_CALL) != 0;
	int in = src || (e->ts_ns >= t->call_start && e->ts_ns < t->call_end);
	int bw = blocked_reason(e);
	int thr = st == ST_PRE && (e->flags & IG_F_THROTTLED);
	if (src)
		thread_fed(m, t);
	int timed = st == ST_BLK && bw == BW_SLEEP && (e->flags & IG_F_DETAIL) &&
		    timed_kind(IG_WAIT_SYS(e->arg1), e->arg2);
	int idx = t->tl_i;

	struct ig_offcpu_rec *r = &t->tl[idx];
	r->ts_ns = e->ts_ns;
	r->dur_ns = e->dur_ns;
	r->state = e->state;
	r->in_call = (uint8_t)in;
	r->cpu = (uint16_t)e->cpu;
	r->other_pid = e->other_pid;
	copy_comm(r->other_comm, e->other_comm);
	r->flags = e->flags;
	r->wait = e->flags & IG_F_DETAIL ? e->arg1 : 0;
	r->obj = e->flags & IG_F_DETAIL ? e->arg2 : 0;
	r->part = (int8_t)(st == ST_BLK && bw == BW_STOP ? IG_PART_STOPPED /* in calls too */
			   : in				 ? -1
			   : st == ST_PRE ? (thr ? IG_PART_THROTTLED : IG_PART_PREEMPTED)
			   : st == ST_BLK ? part_of_bw[bw]
					  : IG_PART_UNKNOWN);
	r->child = (uint8_t)(r->part == IG_PART_TASK_WAIT && ran_child(m, p, e, end));
	t->tl_src[idx] = (uint8_t)src;
	t->tl_bw[idx] = (uint8_t)bw;
	t->tl_timed[idx] = (uint8_t)timed;
	t->tl_i = (t->tl_i + 1) % IG_TL_MAX;
	if (t->tl_n < IG_TL_MAX)
		t->tl_n++;

	if (st == ST_PRE && e->other_pid) {
		t->pre_pid = e->other_pid;
		copy_comm(t->pre_comm, e->other_comm);
	}
	/* the wait in the run queue after a wake-up, while the task arg0 held
	 * the CPU: preempted. With nobody on the CPU (idle: the wake-up latency
	 * of a sleeping CPU) or an unknown holder, the wait belongs to the sleep. */
	uint64_t pre =
	    st == ST_BLK && e->arg0 ? (e->preempt_ns < e->dur_ns ? e->preempt_ns : e->dur_ns) : 0;
	uint64_t main = e->dur_ns - pre;
	t->tl_pre[idx] = pre;
	/* sleep calls (a poll's naps), not waits with a timeout nobody ended:
	 * a server idle between requests times out again and again too */
	if (st == ST_BLK && !in && bw == BW_SLEEP && !timed && t->gap_sleeps < UINT16_MAX)
		t->gap_sleeps++;
	struct tslice *s = inwin ? tslot(m, t, sec) : NULL;
	offcpu_sums(t, s, in, st, bw, main, pre, thr, timed, 1);
	if (e->flags & IG_F_DETAIL) {
		t->life_raw.waits++;
		if (s)
			s->waits++;
	}
	if (st == ST_BLK && !in && (bw == BW_FILE || bw == BW_COLD) && r->obj >> 32 &&
	    (fd_is_file(IG_WAIT_FDK(r->wait)) || IG_WAIT_FLT(r->wait) == IG_FLT_FILE))
		p->file_dev = (uint32_t)(r->obj >> 32);
	if (!inwin || !counts_culprits(p, t))
		return;
	if (st == ST_BLK && !in && e->stack_id && t->first_call_ns)
		wait_site(p, e, bw, main);
	if (st == ST_PRE && (e->arg1 >> 32) && t->first_call_ns)
		p->feed_sched = (uint32_t)(e->arg1 >> 32);
	if (st == ST_PRE && e->other_pid) /* aux: its scheduling policy, when known */
		ctab_add_wait(m, &p->pre, e->other_pid, (uint32_t)(e->arg1 & 0x1ffff),
			      e->other_comm, e->ts_ns + e->dur_ns, e->dur_ns);
	if (pre && e->arg0) {
		const struct proc *q = proc_find(m, (uint32_t)e->arg0);
		ctab_add_wait(m, &p->pre, (uint32_t)e->arg0, 0, q ? q->comm : "",
			      e->ts_ns + e->dur_ns, pre);
	}
	if (st == ST_BLK && bw == BW_STOP) {
		int wfn = IG_WAIT_WFN(r->wait);
		p->stop_ns[wfn == IG_WFN_TRACED	  ? IG_STOP_TRACED
			   : wfn == IG_WFN_FROZEN ? IG_STOP_FROZEN
						  : IG_STOP_SIGNAL] += main;
	}
	if (st != ST_BLK || (in && bw != BW_STOP))
		return;
	uint32_t key, aux;
	struct ctab *ct = culprits(p, r, bw, &key, &aux);
	if (ct && key)
		ctab_add_wait(m, ct, key, aux, e->other_comm, e->ts_ns + main, main);
	if ((bw == BW_LOCK || bw == BW_TASK || bw == BW_GIL) &&
	    timed_kind(IG_WAIT_SYS(r->wait), r->obj))
		merge_timed(m, t, p, idx, bw);
}

/* A thread that makes CUDA calls, caught by the tick in its own code
 * between them: the time the tick stands for, to its stack's call site. */
void ingest_sample(struct ig_model *m, const struct ig_event *e, uint64_t end)
{
	struct proc *p = proc_get(m, e->pid, end);
	uint64_t ns = e->dur_ns ? e->dur_ns : 1;
	if (!e->stack_id)
		return;
	site_add(p->host_at, e->stack_id, ns);
	p->host_sampled += ns;
}

void ingest_ktime(struct ig_model *m, const struct ig_event *e, uint64_t end, uint64_t sec,
		  int inwin)
{
	struct ig_ktime k;
	ig_ktime_unpack(e, &k);
	proc_get(m, e->pid, end);
	struct thread *t = thread_get(m, e->tid ? e->tid : e->pid, e->pid, e->ts_ns, end);
	if (e->comm[0])
		copy_comm(t->comm, e->comm);
	struct tslice *s = inwin ? tslot(m, t, sec) : NULL;
	t->life_raw.waits++; /* the kernel's evidence: it was recorded */
	if (s)
		s->waits++;
	for (int i = 0; i < IG_K_N; i++) {
		t->life_raw.kt[i] += k.ns[i];
		if (s)
			s->kt[i] += k.ns[i];
	}
}
