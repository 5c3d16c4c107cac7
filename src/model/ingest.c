/* Ingest: one event into the op, (op, process) and (op, thread) series,
 * the process and thread tables and their 1-second slices; the per-second
 * rotation of the series (expiry of the slice that leaves the window,
 * allocation-outlier thresholds). */
#include "model/model_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"

size_t series_size(unsigned W, int full)
{
	size_t s = sizeof(struct series) + W * sizeof(struct sslice);
	if (full)
		s += sizeof(struct ctab) + (size_t)(W + 1) * TAILB * sizeof(struct tailacc) +
		     COLD_KEYS * sizeof(struct coldk);
	return s;
}

void series_rebase(struct series *S, unsigned W, int full)
{
	char *p = (char *)S;
	S->sl = (struct sslice *)(p + sizeof(*S));
	S->ct = NULL;
	S->tail_win = S->tail = NULL;
	S->ck = NULL;
	if (full) {
		char *q = (char *)(S->sl + W);
		S->ct = (struct ctab *)q;
		q += sizeof(struct ctab);
		S->tail_win = (struct tailacc *)q;
		S->tail = S->tail_win + TAILB;
		S->ck = (struct coldk *)(S->tail + (size_t)W * TAILB);
	}
}

void series_clear(struct series *S, unsigned W, int full)
{
	memset(S, 0, series_size(W, full));
	series_rebase(S, W, full);
	hist_clear(&S->life);
	hist_clear(&S->win);
	for (unsigned j = 0; j < W; j++)
		hist_clear(&S->sl[j].h);
}

struct series *series_alloc(unsigned W, int full)
{
	struct series *S = malloc(series_size(W, full));
	if (S)
		series_clear(S, W, full);
	return S;
}

/* Empties a slice after subtracting it from the window. */
static void slice_expire(struct ig_model *m, struct series *S, unsigned j)
{
	struct sslice *sl = &S->sl[j];
	if (!sl->h.n)
		return;
	hist_sub(&S->win, &sl->h);
	if (S->tail) {
		struct tailacc *t = S->tail + (size_t)j * TAILB;
		unsigned lo = sl->h.lo >> TAIL_SHIFT, hi = sl->h.hi >> TAIL_SHIFT;
		for (unsigned c = lo; c <= hi; c++) {
			struct tailacc *w = &S->tail_win[c];
			w->n -= t[c].n;
			w->nosplit -= t[c].nosplit;
			w->dur -= t[c].dur;
			w->pre -= t[c].pre;
			w->blk -= t[c].blk;
			memset(&t[c], 0, sizeof(t[c]));
		}
	}
	memset(&sl->h.b[sl->h.lo], 0, (size_t)(sl->h.hi - sl->h.lo + 1) * sizeof(sl->h.b[0]));
	sl->h.n = 0;
	sl->h.sum_ns = 0;
	sl->h.min_ns = UINT64_MAX;
	sl->h.max_ns = 0;
	sl->h.lo = HIST_BUCKETS - 1;
	sl->h.hi = 0;
	sl->dur = sl->pre = sl->blk = sl->bytes = sl->max = 0;
	sl->switches = sl->nosplit = 0;
}

static int sync_kind(const struct ig_event *e, const struct ig_op_info *oi);

/* The cold-start record of e's key: copies by direction, since a
 * device-to-host copy that waits for the GPU is not a slow host-to-device
 * one; the time another task held the CPU (and a synchronising call's sleep,
 * a wait for the GPU) is not warm-up, so the longest is also kept without. */
static void cold_add(const struct ig_model *m, struct series *S, const struct ig_event *e,
		     uint64_t end)
{
	const struct ig_op_info *oi = ig_op_info(e->op);
	unsigned k = 0;
	if (oi && (oi->kind & IG_OPK_COPY)) {
		k = oi->dir && oi->dir != IG_DIR_DEFAULT ? oi->dir : (unsigned)e->arg1;
		if (k >= COLD_KEYS)
			k = IG_DIR_DEFAULT;
	}
	struct coldk *c = &S->ck[k];
	uint64_t d = e->dur_ns;
	c->calls++;
	c->sb[hist_bucket(d) >> TAIL_SHIFT]++;
	if (c->n >= m->cfg.cold_calls)
		return;
	uint64_t lost = e->preempt_ns + (oi && sync_kind(e, oi) ? e->blocked_ns : 0);
	uint64_t net = d > lost ? d - lost : 0;
	c->n++;
	c->sum += d;
	if (d > c->max)
		c->max = d;
	if (net > c->net_max)
		c->net_max = net;
	c->end = end;
}

static void series_add(struct ig_model *m, struct series *S, const struct ig_event *e, uint64_t end,
		       uint64_t sec, int inwin)
{
	uint64_t d = e->dur_ns;
	S->calls_life++;
	hist_add(&S->life, d);
	S->last_ns = end;
	if (!S->first_ns || e->ts_ns < S->first_ns)
		S->first_ns = e->ts_ns;
	if (S->cold_n < m->cfg.cold_calls) {
		S->cold_n++;
		S->cold_sum += d;
		if (d > S->cold_max)
			S->cold_max = d;
		S->cold_end = end;
	}
	if (S->ck)
		cold_add(m, S, e, end);
	if (S->out_thr && d >= S->out_thr) {
		S->out_ts[S->out_i] = e->ts_ns;
		S->out_dur[S->out_i] = d;
		S->out_i = (S->out_i + 1) % IG_OUTLIERS;
		if (S->out_n < IG_OUTLIERS)
			S->out_n++;
	}
	if (!inwin)
		return;
	unsigned j = (unsigned)(sec % m->W);
	struct sslice *sl = &S->sl[j];
	if (sl->sec != sec) {
		slice_expire(m, S, j); /* defensive: should already be empty */
		sl->sec = sec;
	}
	hist_add(&sl->h, d);
	hist_add(&S->win, d);
	sl->dur += d;
	sl->pre += e->preempt_ns;
	sl->blk += e->blocked_ns;
	sl->switches += e->switches;
	if (d > sl->max)
		sl->max = d;
	int nosplit = (e->flags & IG_F_NO_SPLIT) != 0;
	sl->nosplit += nosplit;
	const struct ig_op_info *oi = ig_op_info(e->op);
	if (oi && (oi->kind & (IG_OPK_COPY | IG_OPK_ALLOC | IG_OPK_MEMSET | IG_OPK_COLL)))
		sl->bytes += e->arg0;
	if (S->tail) {
		unsigned c = hist_bucket(d) >> TAIL_SHIFT;
		struct tailacc *t = &S->tail[(size_t)j * TAILB + c], *w = &S->tail_win[c];
		t->n++;
		w->n++;
		t->nosplit += nosplit;
		w->nosplit += nosplit;
		t->dur += d;
		w->dur += d;
		t->pre += e->preempt_ns;
		w->pre += e->preempt_ns;
		t->blk += e->blocked_ns;
		w->blk += e->blocked_ns;
	}
	if (S->ct && e->preempt_ns && e->other_pid)
		ctab_add(m, S->ct, e->other_pid, 0, e->other_comm, e->preempt_ns, sec);
}

/* The series of key, made (or taken from the least recently active one)
 * when new; touched at end. NULL when out of memory. */
static struct series *stab_get(struct ig_model *m, struct stab *t, uint64_t key, int level,
			       uint64_t end)
{
	int full = level != LV_THREAD, fresh, evicted;
	int32_t i = lru_get(&t->t, key, &fresh, &evicted, NULL);
	if (fresh) {
		if (!t->s[i] && !(t->s[i] = series_alloc(m->W, full))) {
			lru_undo(&t->t, i);
			return NULL;
		}
		if (evicted) {
			series_clear(t->s[i], m->W, full);
			m->tot.evicted_series++;
		}
		t->s[i]->key = key;
		t->s[i]->level = (uint8_t)level;
	}
	lru_touch(&t->t, i, end);
	return t->s[i];
}

struct thread *event_thread(struct ig_model *m, const struct ig_event *e, uint64_t end,
			    struct proc **pp)
{
	struct proc *p = *pp = proc_get(m, e->pid, end);
	struct thread *t = thread_get(m, e->tid ? e->tid : e->pid, e->pid, e->ts_ns, end);
	if (!p->comm[0] && e->comm[0])
		copy_comm(p->comm, e->comm);
	if (e->comm[0])
		copy_comm(t->comm, e->comm);
	return t;
}

struct proc *proc_get(struct ig_model *m, uint32_t pid, uint64_t t)
{
	int fresh, evicted;
	int32_t i = lru_get(&m->ph, pid, &fresh, &evicted, NULL);
	struct proc *p = &m->procs[i];
	if (fresh) {
		struct pslice *sl = m->psl + (size_t)i * m->W;
		m->tot.evicted_procs += (uint64_t)evicted;
		memset(p, 0, sizeof(*p));
		memset(sl, 0, m->W * sizeof(*sl));
		p->sl = sl;
		p->pid = pid;
		p->first_ns = t;
	}
	if (t > p->last_ns)
		p->last_ns = t;
	lru_touch(&m->ph, i, p->last_ns);
	return p;
}

struct thread *thread_get(struct ig_model *m, uint32_t tid, uint32_t pid, uint64_t ts, uint64_t end)
{
	int fresh, evicted;
	int32_t i = lru_get(&m->th, tid, &fresh, &evicted, NULL);
	struct thread *t = &m->threads[i];
	if (fresh) {
		struct tslice *sl = m->tsl + (size_t)i * m->W;
		m->tot.evicted_threads += (uint64_t)evicted;
		memset(t, 0, sizeof(*t));
		memset(sl, 0, m->W * sizeof(*sl));
		t->sl = sl;
		t->tid = tid;
		t->first_ns = ts;
	}
	t->pid = pid;
	if (ts < t->first_ns)
		t->first_ns = ts;
	if (end > t->last_ns)
		t->last_ns = end;
	lru_touch(&m->th, i, t->last_ns);
	return t;
}

struct tslice *tslot(struct ig_model *m, struct thread *t, uint64_t sec)
{
	struct tslice *s = &t->sl[sec % m->W];
	if (s->sec != sec) {
		memset(s, 0, sizeof(*s));
		s->sec = sec;
	}
	return s;
}

/* A thread's first CUDA call (its record, or an off-CPU interval inside
 * it, which arrives first): its wall time starts there (read.c
 * thread_wall), so its parts do too. What it did before was its start (a
 * launcher's shell, imports, waits for its own children), not time the
 * GPU waited for it: off CPU, its kernel time, none of it counts. */
void thread_fed(struct ig_model *m, struct thread *t)
{
	if (t->fed)
		return;
	t->fed = 1;
	memset(&t->life_raw, 0, sizeof(t->life_raw));
	memset(t->life_off, 0, sizeof(t->life_off));
	for (unsigned j = 0; j < m->W; j++) {
		uint64_t sec = t->sl[j].sec;
		memset(&t->sl[j], 0, sizeof(t->sl[j]));
		t->sl[j].sec = sec;
	}
}

static struct pslice *pslot(struct ig_model *m, struct proc *p, uint64_t sec)
{
	struct pslice *s = &p->sl[sec % m->W];
	if (s->sec != sec) {
		memset(s, 0, sizeof(*s));
		s->sec = sec;
	}
	return s;
}

static struct gslice *gslot(struct ig_model *m, uint64_t sec)
{
	struct gslice *s = &m->gsl[sec % m->W];
	if (s->sec != sec) {
		memset(s, 0, sizeof(*s));
		s->sec = sec;
	}
	return s;
}

/* Adds [a, b) to the thread's union of call time; returns the new part. */
static uint64_t union_add(struct thread *t, uint64_t a, uint64_t b)
{
	if (a >= t->un_end) {
		t->un_start = a;
		t->un_end = b;
		return b - a;
	}
	if (b <= t->un_start)
		return b - a; /* entirely before the last interval (out of order) */
	uint64_t add = 0;
	if (a < t->un_start) {
		add += t->un_start - a;
		t->un_start = a;
	}
	if (b > t->un_end) {
		add += b - t->un_end;
		t->un_end = b;
	}
	return add;
}

static int sync_kind(const struct ig_event *e, const struct ig_op_info *oi)
{
	if (oi->kind & (IG_OPK_SYNC | IG_OPK_IMPLICIT_SYNC))
		return 1;
	if (oi->kind & IG_OPK_COPY) {
		unsigned dir = oi->dir && oi->dir != IG_DIR_DEFAULT ? oi->dir : (unsigned)e->arg1;
		return dir == IG_DIR_D2H;
	}
	return 0;
}

/* Keeps e in s if it is among its IG_SLOW_MAX slowest calls: 1 if kept. */
static int slow_insert(struct slowslice *s, const struct ig_event *e)
{
	if (s->n == IG_SLOW_MAX && e->dur_ns <= s->r[IG_SLOW_MAX - 1].dur_ns)
		return 0;
	int i = s->n < IG_SLOW_MAX ? s->n++ : IG_SLOW_MAX - 1;
	while (i > 0 && s->r[i - 1].dur_ns < e->dur_ns) {
		s->r[i] = s->r[i - 1];
		i--;
	}
	struct ig_call_rec *r = &s->r[i];
	r->ts_ns = e->ts_ns;
	r->dur_ns = e->dur_ns;
	r->pid = e->pid;
	r->tid = e->tid;
	r->preempt_ns = e->preempt_ns;
	r->blocked_ns = e->blocked_ns;
	r->switches = e->switches;
	r->other_pid = e->other_pid;
	copy_comm(r->other_comm, e->other_comm);
	r->stack_id = e->stack_id;
	r->arg0 = e->arg0;
	r->flags = e->flags;
	r->ret = e->ret;
	r->op = e->op;
	return 1;
}

/* The slowest calls of the second (the window's) and since the start; a
 * kept call that left the CPU keeps its intervals too (callev.c). */
static void slow_add(struct ig_model *m, const struct thread *t, const struct ig_event *e,
		     uint64_t sec)
{
	struct slowslice *s = &m->slow[(size_t)e->op * m->W + sec % m->W];
	if (s->sec != sec) {
		s->sec = sec;
		s->n = 0;
	}
	int kept = slow_insert(s, e);
	kept |= slow_insert(&m->slow_life[e->op], e);
	if (kept && t && (e->switches || e->preempt_ns || e->blocked_ns))
		callev_keep(m, t, e);
}

static void for_each_series(struct ig_model *m,
			    void (*fn)(struct ig_model *, struct series *, uint64_t), uint64_t arg)
{
	for (int op = 0; op < IG_OP_MAX; op++)
		if (m->ops[op])
			fn(m, m->ops[op], arg);
	for (unsigned k = 0; k < m->sp.t.n; k++)
		fn(m, m->sp.s[k], arg);
	for (unsigned k = 0; k < m->st.t.n; k++)
		fn(m, m->st.s[k], arg);
}

static void expire_fn(struct ig_model *m, struct series *S, uint64_t k)
{
	unsigned j = (unsigned)(k % m->W);
	if (S->sl[j].h.n && S->sl[j].sec + m->W <= k)
		slice_expire(m, S, j);
}

static void thresh_fn(struct ig_model *m, struct series *S, uint64_t k)
{
	const struct ig_op_info *oi = ig_op_info(S->op);
	if (S->level == LV_PROC && oi && (oi->kind & IG_OPK_ALLOC) && S->win.n >= 3)
		S->out_thr = (uint64_t)((double)hist_percentile(&S->win, 0.5) * m->cfg.outlier_x);
}

/* The op, (op, process) and (op, thread) series of a call. */
struct call_series {
	struct series *op, *proc, *thread;
};

static int call_series_add(struct ig_model *m, const struct ig_event *e, const struct thread *t,
			   uint64_t end, uint64_t sec, int inwin, struct call_series *cs)
{
	cs->op = m->ops[e->op];
	if (!cs->op) {
		cs->op = m->ops[e->op] = series_alloc(m->W, 1);
		if (!cs->op)
			return -1;
		cs->op->op = e->op;
		cs->op->level = LV_OP;
	}
	series_add(m, cs->op, e, end, sec, inwin);
	cs->proc = stab_get(m, &m->sp, ((uint64_t)e->pid << 8) | e->op, LV_PROC, end);
	if (cs->proc) {
		cs->proc->op = e->op;
		cs->proc->pid = e->pid;
		series_add(m, cs->proc, e, end, sec, inwin);
	}
	cs->thread = stab_get(m, &m->st, ((uint64_t)t->tid << 8) | e->op, LV_THREAD, end);
	if (cs->thread) {
		cs->thread->op = e->op;
		cs->thread->pid = e->pid;
		cs->thread->tid = t->tid;
		series_add(m, cs->thread, e, end, sec, inwin);
	}
	return 0;
}

/* What a call adds to its thread's time, once nesting is known. */
struct call_time {
	int sync, nest, nosplit;
	uint64_t nested_ns; /* a synchronisation counted by the call around it */
	uint64_t busy;	    /* time first covered by this call */
	uint64_t pre, blk;  /* preempted and blocked parts of busy */
};

/* A driver call made by a runtime call (cudaMemcpy -> cuMemcpyDtoH_v2) lies
 * inside it and usually arrives first, since it ends first. Mark the inner
 * one: a pair is one synchronisation, and the inner op's evidence repeats
 * the outer op's. nest 1: the previous call is inside this one; 2: this one
 * is inside the previous (other arrival order). */
static void call_nesting(struct ig_model *m, const struct ig_event *e, uint64_t end,
			 struct thread *t, const struct call_series *cs, struct call_time *ct)
{
	if (t->prev_end && e->ts_ns <= t->prev_start && t->prev_end <= end) {
		ct->nest = 1;
		struct series *outer = op_proc_find(m, t->pop, e->pid);
		if (outer)
			outer->nested_life++;
		if (m->ops[t->pop])
			m->ops[t->pop]->nested_life++;
		if (ct->sync && t->psync)
			ct->nested_ns = t->prev_end - t->prev_start;
	} else if (t->prev_end && t->prev_start <= e->ts_ns && end <= t->prev_end) {
		ct->nest = 2;
		cs->op->nested_life++;
		if (cs->proc)
			cs->proc->nested_life++;
		if (ct->sync && t->psync)
			ct->nested_ns = e->dur_ns;
	}
	/* preempted time of this call not already counted for a call inside it
	 * (the kernel charges an off-CPU interval to every open call) */
	if (!ct->nosplit && ct->nest == 1) {
		ct->pre = e->preempt_ns > t->ppre ? e->preempt_ns - t->ppre : 0;
		ct->blk = e->blocked_ns > t->pblk ? e->blocked_ns - t->pblk : 0;
	} else if (!ct->nosplit && ct->nest == 0) {
		ct->pre = e->preempt_ns;
		ct->blk = e->blocked_ns;
	}
	if (ct->nest != 2) {
		t->prev_start = e->ts_ns;
		t->prev_end = end;
		t->ppre = ct->nosplit ? 0 : e->preempt_ns;
		t->pblk = ct->nosplit ? 0 : e->blocked_ns;
		t->pop = e->op;
		t->psync = (uint8_t)ct->sync;
	}
}

/* Round trips: after a synchronisation the thread has nothing queued on the
 * GPU, which idles until the next launch is queued (the launch's own time
 * and traps) or through a synchronisation that waits for nothing. Returns
 * the call's time that the GPU idled (0 when none), and 1 in *count for a
 * new such call (its runtime wrapper arriving after it counts no second
 * trap pair). */
static uint64_t rt_idle(struct thread *t, const struct ig_op_info *oi, const struct call_time *ct,
			int k, uint32_t *count)
{
	uint64_t own = ct->busy > ct->pre ? ct->busy - ct->pre : 0;
	*count = 0;
	if (ct->nest == 1) /* the wrapper of the call before (same kind) */
		return t->p_idle ? own : 0;
	if (ct->nest == 2)
		return 0;
	int idle = 0;
	if (k) {
		idle = t->q_empty;
		t->q_empty = 1;
	} else if (oi->kind & (IG_OPK_LAUNCH | IG_OPK_COPY | IG_OPK_MEMSET | IG_OPK_COLL)) {
		idle = t->q_empty && (oi->kind & IG_OPK_LAUNCH);
		t->q_empty = 0;
	}
	t->p_idle = (uint8_t)idle;
	*count = (uint32_t)idle;
	return idle ? own : 0;
}

/* The call's time into its thread's lifetime sums and, in the window, into
 * the thread's and the process's slices. */
static void call_account(struct ig_model *m, const struct ig_event *e, const struct ig_op_info *oi,
			 struct proc *p, struct thread *t, const struct call_time *ct, uint64_t sec,
			 int inwin)
{
	int k = ct->sync != 0;
	uint32_t idle_n;
	uint64_t idle = rt_idle(t, oi, ct, k, &idle_n);
	t->life_raw.rt_idle += idle;
	t->life_raw.rt_idle_n += idle_n;
	int ks = k && !(oi->kind & IG_OPK_COPY); /* a copy moves data: GPU work */
	if (ks) {
		t->life_raw.rt_sync += idle;
		t->life_raw.rt_sync_n += idle_n;
	}
	t->life_cuda += ct->busy;
	t->life_raw.in_busy[k] += ct->busy;
	/* outer calls: a call arriving before the call it is in (nest 1 on the
	 * outer one) was counted as outer already */
	t->life_raw.outer[k] += ct->nest == 0;
	t->life_raw.in_pre[k] += ct->pre;
	t->life_raw.in_blk[k] += ct->blk;
	t->life_raw.nosplit += (uint32_t)ct->nosplit;
	uint32_t gap = t->gap_sleeps; /* the gap this call ends */
	t->gap_sleeps = 0;
	if (!inwin)
		return;
	slow_add(m, t, e, sec);
	struct tslice *ts = tslot(m, t, sec);
	ts->slept_gaps += gap > 0;
	ts->gap_sleeps += gap;
	ts->calls++;
	ts->call_ns += e->dur_ns;
	ts->cuda_ns += ct->busy;
	ts->in_busy[k] += ct->busy;
	ts->outer[k] += ct->nest == 0;
	ts->rt_idle += idle;
	ts->rt_idle_n += idle_n;
	if (ks) {
		ts->rt_sync += idle;
		ts->rt_sync_n += idle_n;
	}
	ts->in_pre[k] += ct->pre;
	ts->in_blk[k] += ct->blk;
	ts->nosplit += (uint32_t)ct->nosplit;
	if (ct->sync) {
		ts->sync_calls++;
		ts->sync_ns += e->dur_ns;
		if (ct->nested_ns) {
			ts->sync_nested++;
			ts->sync_nested_ns += ct->nested_ns;
		}
	}
	struct pslice *ps = pslot(m, p, sec);
	ps->calls++;
	ps->call_ns += e->dur_ns;
	if (oi->kind & IG_OPK_COPY) {
		ps->copy_ns += e->dur_ns;
		ps->copy_bytes += e->arg0;
		ps->copy_calls++;
	}
}

static void ingest_call(struct ig_model *m, const struct ig_event *e, uint64_t end, uint64_t sec,
			int inwin)
{
	const struct ig_op_info *oi = ig_op_info(e->op);
	if (!oi) {
		m->tot.ignored++;
		return;
	}
	m->tot.calls++;
	if (e->flags & IG_F_NO_SPLIT)
		m->tot.no_split_seen = 1;
	struct proc *p;
	struct thread *t = event_thread(m, e, end, &p);
	if (e->cgroup_id)
		p->cgroup_id = e->cgroup_id;
	p->cuda = 1;
	p->calls_life++;
	t->calls_life++;
	thread_fed(m, t);
	if (!t->first_call_ns || e->ts_ns < t->first_call_ns)
		t->first_call_ns = e->ts_ns;

	struct call_series cs;
	if (call_series_add(m, e, t, end, sec, inwin, &cs))
		return;
	if (e->preempt_ns && e->other_pid) {
		t->pre_pid = e->other_pid;
		copy_comm(t->pre_comm, e->other_comm);
	}
	struct call_time ct = {.sync = sync_kind(e, oi),
			       .nosplit = (e->flags & IG_F_NO_SPLIT) != 0};
	call_nesting(m, e, end, t, &cs, &ct);
	/* NCCL operations: enqueued, and completed by synchronisations */
	if (oi->group == IG_GRP_NCCL || m->nccl->npend || e->op == IG_OP_CUDA_EVENT_RECORD)
		nccl_call(m, t, e, end, sec, inwin);
	reclassify(m, t, p, e->ts_ns, end);
	ct.busy = union_add(t, e->ts_ns, end);
	if (ct.pre > ct.busy)
		ct.pre = ct.busy;
	if (ct.blk > ct.busy - ct.pre)
		ct.blk = ct.busy - ct.pre;
	if (end > t->call_end || e->ts_ns < t->call_start || !t->call_end) {
		t->call_start = e->ts_ns;
		t->call_end = end;
	}
	call_account(m, e, oi, p, t, &ct, sec, inwin);
}

static void ingest_block_io(struct ig_model *m, const struct ig_event *e, uint64_t end,
			    uint64_t sec, int inwin)
{
	struct proc *p = proc_get(m, e->pid, end);
	if (e->arg1)
		p->io_dev = (uint32_t)e->arg1;
	if (!p->comm[0] && e->comm[0])
		copy_comm(p->comm, e->comm);
	if (!inwin)
		return;
	struct pslice *ps = pslot(m, p, sec);
	struct gslice *gs = gslot(m, sec);
	ps->io_ops++;
	gs->io_ops++;
	ps->io_bytes += e->arg0;
	gs->io_bytes += e->arg0;
	ps->io_lat += e->dur_ns;
	gs->io_lat += e->dur_ns;
	if (e->dur_ns > ps->io_max)
		ps->io_max = e->dur_ns;
	if (e->dur_ns > gs->io_max)
		gs->io_max = e->dur_ns;
}

static void ingest_cgroup(struct ig_model *m, const struct ig_event *e, uint64_t end, uint64_t sec,
			  int inwin)
{
	struct proc *p = proc_get(m, e->pid, end);
	struct ig_quota *q = &p->quota;
	q->quota_us = e->arg0;
	q->period_us = e->arg1;
	q->v2 = e->flags & 1;
	if (e->container && e->container[0])
		snprintf(q->dir, sizeof(q->dir), "%s", e->container);
	uint64_t nthr = e->stream >> 32, nper = (uint32_t)e->stream;
	q->life_thr_ns += e->arg2;
	q->life_nr_thr += nthr;
	q->life_nr_per += nper;
	if (!inwin)
		return;
	struct pslice *ps = pslot(m, p, sec);
	ps->cg_thr_ns += e->arg2;
	ps->cg_nr_thr += nthr;
	ps->cg_nr_per += nper;
}

static void ingest_snapshot(struct ig_model *m, const struct ig_event *e, uint64_t sec, int inwin)
{
	if (!m->host_valid || e->ts_ns >= m->host.ts_ns) {
		m->host = *e;
		m->host_valid = 1;
	}
	if (!inwin)
		return;
	struct gslice *gs = gslot(m, sec);
	if (e->arg0 > gs->cpu_max)
		gs->cpu_max = e->arg0;
	if (e->arg1 > gs->mem_max)
		gs->mem_max = e->arg1;
	if (e->preempt_ns > gs->swap_max)
		gs->swap_max = e->preempt_ns;
}

/* pid forked arg0: the child has its parent's name and container. */
static void ingest_fork(struct ig_model *m, const struct ig_event *e, uint64_t end)
{
	struct proc *parent = proc_get(m, e->pid, end);
	if (!parent->comm[0] && e->comm[0])
		copy_comm(parent->comm, e->comm);
	char comm[IG_COMM_LEN];
	copy_comm(comm, parent->comm);
	if (e->arg0 && e->arg0 != e->pid) {
		struct proc *c = proc_get(m, (uint32_t)e->arg0, end);
		parent->forks++;
		parent->fork_pid = (uint32_t)e->arg0;
		c->shares = 1;
		c->ppid = e->pid;
		if (c->exited) /* a reused pid: a new process */
			c->first_ns = e->ts_ns;
		c->exited = 0;
		c->execd = 0;
		c->exit_ns = 0;
		if (!c->comm[0])
			copy_comm(c->comm, comm);
		if (parent->container[0]) /* a child starts in its parent's cgroup */
			memcpy(c->container, parent->container, sizeof(c->container));
	}
}

/* A name event (the process's or a thread's name, parent, container) or an
 * exec (the new name of a process that lives on). */
static void ingest_name(struct ig_model *m, const struct ig_event *e, uint64_t end)
{
	if (e->kind == IG_EV_COMM && e->container && e->container[0])
		snprintf(proc_get(m, e->pid, end)->container, IG_CONTAINER_LEN, "%s",
			 e->container); /* the process's, whichever thread */
	if (e->kind == IG_EV_COMM && e->tid && e->tid != e->pid) { /* a thread renamed itself */
		struct thread *t = thread_find(m, e->tid);
		if (t && e->comm[0])
			copy_comm(t->comm, e->comm);
		return;
	}
	/* the main thread's name is the process's */
	struct proc *p = proc_get(m, e->pid, end);
	if (e->comm[0]) {
		struct thread *t = thread_find(m, e->pid);
		if (t)
			copy_comm(t->comm, e->comm);
	}
	if (e->comm[0])
		copy_comm(p->comm, e->comm);
	if (e->kind == IG_EV_COMM && e->arg0 && !p->ppid)
		p->ppid = (uint32_t)e->arg0; /* read from /proc when first seen */
	if (e->kind == IG_EV_EXEC) {
		p->exited = 0;
		p->exit_ns = 0;
		p->execd = 1;
		/* a new program: it shares no memory with its parent, nor with
		 * the children it forked before */
		struct proc *pp = p->shares && p->ppid ? proc_find(m, p->ppid) : NULL;
		if (pp && pp->forks)
			pp->forks--;
		if (pp && pp->fork_pid == p->pid)
			pp->fork_pid = 0;
		p->shares = 0;
		p->forks = p->fork_pid = 0;
	}
}

void model_ingest(struct ig_model *m, const struct ig_event *e)
{
	if (e->kind <= IG_EV_NONE || e->kind >= IG_EV_KIND_MAX || !e->ts_ns) {
		m->tot.ignored++;
		return;
	}
	int has_dur = e->kind == IG_EV_CALL || e->kind == IG_EV_OFFCPU || e->kind == IG_EV_BLOCK_IO;
	uint64_t end = e->ts_ns + (has_dur ? e->dur_ns : 0);
	if (!m->started) {
		m->started = 1;
		m->first_ns = e->ts_ns;
		m->cur_sec = end / NS;
		m->clock_ns = end;
	} else if (end > m->clock_ns) {
		model_advance_to(m, end);
	}
	if (e->ts_ns < m->first_ns)
		m->first_ns = e->ts_ns;
	m->tot.events++;
	m->tot.by_kind[e->kind]++;
	uint64_t sec = end / NS;
	int inwin = sec + m->W > m->cur_sec;
	if (!inwin)
		m->tot.late++;

	struct proc *p;
	switch (e->kind) {
	case IG_EV_CALL:
		ingest_call(m, e, end, sec, inwin);
		break;
	case IG_EV_OFFCPU:
		ingest_offcpu(m, e, end, sec, inwin);
		break;
	case IG_EV_KTIME:
		ingest_ktime(m, e, end, sec, inwin);
		break;
	case IG_EV_SAMPLE:
		ingest_sample(m, e, end);
		break;
	case IG_EV_FORK:
		ingest_fork(m, e, end);
		break;
	case IG_EV_COMM:
	case IG_EV_EXEC:
		ingest_name(m, e, end);
		break;
	case IG_EV_EXIT:
		p = proc_get(m, e->pid, end);
		p->exited = 1;
		p->exit_ns = e->ts_ns;
		break;
	case IG_EV_PAGE_ALLOC:
		p = proc_get(m, e->pid, end);
		p->page_life += e->arg0;
		if (inwin) {
			pslot(m, p, sec)->page_bytes += e->arg0;
			gslot(m, sec)->page_bytes += e->arg0;
		}
		break;
	case IG_EV_BLOCK_IO:
		ingest_block_io(m, e, end, sec, inwin);
		break;
	case IG_EV_GPU:
	case IG_EV_GPU_PROC:
		gpu_ingest(m, e, sec, inwin);
		break;
	case IG_EV_SNAPSHOT:
		ingest_snapshot(m, e, sec, inwin);
		break;
	case IG_EV_CGROUP:
		ingest_cgroup(m, e, end, sec, inwin);
		break;
	case IG_EV_ENV: {
		struct proc *ep = proc_get(m, e->pid, end);
		ep->env = (uint32_t)e->arg0;
		ep->env_src = (uint32_t)e->arg1;
		ep->env_initial = (uint32_t)e->arg2;
		if (e->stream)
			ep->cpus = e->stream;
		break;
	}
	default:
		break;
	}
}

/* Second k begins: the slice that leaves the window is subtracted. */
void model_expire(struct ig_model *m, uint64_t k)
{
	for_each_series(m, expire_fn, k);
}

/* Second k begins: allocation-outlier thresholds from the window p50. */
void model_thresholds(struct ig_model *m, uint64_t k)
{
	for_each_series(m, thresh_fn, k);
}
