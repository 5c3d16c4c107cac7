/* The model: ingest, rolling windows, off-CPU accounting and the read API of
 * model.h. Tables are fixed-capacity arrays found through small
 * open-addressing hash tables; 1-second slices are rings indexed by
 * second % window. Histogram series expire their oldest slice eagerly at
 * each second boundary (so the window histogram is always ready to read);
 * the small per-process and per-thread slices carry their second and are
 * filtered when read. */
#include "model/model.h"

#include "core/htab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"

#define NS 1000000000ull
#define TAIL_SHIFT 4
#define TAILB (HIST_BUCKETS >> TAIL_SHIFT) /* quarter-octave buckets for tail sums */
#define CTAB_N IG_CULPRITS
#define MIN_SPAN_NS 1000000ull /* spans shorter than 1 ms are taken as 1 ms */

/* --- culprit tables: who preempted us / who woke us, per 1-s slice ------- */

struct culp {
	uint32_t pid;
	char comm[IG_COMM_LEN];
	uint64_t ns[IG_WIN_MAX];
};

struct ctab {
	uint64_t sec[IG_WIN_MAX]; /* second held by column j */
	struct culp e[CTAB_N];
};

/* --- histogram series: an op, an (op, process) or an (op, thread) -------- */

enum { LV_OP = 0, LV_PROC = 1, LV_THREAD = 2 };

struct tailacc {
	uint32_t n, nosplit;
	uint64_t dur, pre, blk;
};

struct sslice {
	uint64_t sec;
	uint64_t dur, pre, blk, bytes, max;
	uint32_t switches, nosplit;
	struct hist h; /* h.n = calls in the slice */
};

struct series {
	uint64_t key;
	uint64_t first_ns, last_ns;
	uint64_t calls_life;
	uint64_t nested_life; /* calls made inside another traced call of the thread */
	uint32_t pid, tid;
	uint16_t op;
	uint8_t level;
	unsigned cold_n;
	uint64_t cold_max, cold_sum, cold_end;
	uint64_t out_thr; /* outlier threshold, set each second from the window p50 */
	int out_n, out_i;
	uint64_t out_ts[IG_OUTLIERS], out_dur[IG_OUTLIERS];
	struct ctab *ct;	  /* LV_OP, LV_PROC */
	struct tailacc *tail_win; /* TAILB; LV_OP, LV_PROC */
	struct tailacc *tail;	  /* W * TAILB */
	struct sslice *sl;	  /* W */
	struct hist life, win;
};

/* --- processes and threads ------------------------------------------------ */

struct pslice {
	uint64_t sec;
	uint64_t calls, call_ns, copy_ns, copy_bytes, copy_calls;
	uint64_t page_bytes, io_ops, io_bytes, io_lat, io_max;
};

struct proc {
	uint32_t pid, ppid;
	char comm[IG_COMM_LEN];
	uint64_t cgroup_id;
	uint64_t first_ns, last_ns;
	int exited, cuda;
	uint64_t calls_life, page_life;
	struct pslice *sl; /* W */
	struct ctab pre;   /* preemptors (off-CPU preempted intervals) */
	struct ctab wake;  /* wakers of blocked intervals between calls */
};

enum { ST_UNK = 0, ST_PRE = 1, ST_BLK = 2 };

struct tslice {
	uint64_t sec;
	uint64_t calls, call_ns, cuda_ns, sync_calls, sync_ns;
	uint64_t sync_nested, sync_nested_ns; /* of those, inside another sync-like call */
	uint64_t off[2][3];		      /* [in call][state] */
	uint32_t sw[2];
};

struct thread {
	uint32_t tid, pid;
	uint64_t first_ns, last_ns, calls_life;
	uint64_t ua, ub; /* last interval of the union of call intervals */
	uint64_t ca, cb; /* last call interval */
	/* the previous call, to see a driver call nested in a runtime call */
	uint64_t pa, pb;
	uint16_t pop;
	uint8_t psync;
	uint32_t pre_pid;
	char pre_comm[IG_COMM_LEN];
	char comm[IG_COMM_LEN]; /* the thread's own name, from its latest event */
	uint64_t life_cuda, life_off[2][3];
	int tl_n, tl_i;
	struct ig_offcpu_rec tl[IG_TL_MAX];
	uint8_t tl_src[IG_TL_MAX]; /* in_call came from the source's flag */
	struct tslice *sl;	   /* W */
};

/* --- whole-host slices and the slowest calls ------------------------------ */

struct gslice {
	uint64_t sec;
	uint64_t page_bytes, io_ops, io_bytes, io_lat, io_max;
	uint64_t cpu_max, mem_max, swap_max; /* permille, permille, MiB */
};

struct slowslice {
	uint64_t sec;
	int n;
	struct ig_call_rec r[IG_SLOW_MAX]; /* slowest first */
};

struct stab {
	struct htab ht;
	struct series **s;
	unsigned n, cap;
};

struct ig_model {
	struct ig_model_cfg cfg;
	unsigned W;
	int started;
	uint64_t clock_ns, first_ns, cur_sec;
	int eval; /* inside a detector run: the window ends at eval_end */
	uint64_t eval_end;
	struct ig_model_totals tot;

	struct series *ops[IG_OP_MAX];
	struct stab sp, st; /* (op, process), (op, thread) */

	struct htab ph, th;
	struct proc *procs;
	unsigned nprocs;
	struct thread *threads;
	unsigned nthreads;
	struct pslice *psl;
	struct tslice *tsl;

	struct slowslice *slow; /* IG_OP_MAX * W */
	struct gslice *gsl;	/* W */
	struct ig_event host;	/* latest snapshot */
	int host_valid;

	struct ig_detect *det;
	struct ig_proc_stats *scratch_p;
};

/* ------------------------------------------------------------------------- */

void model_cfg_default(struct ig_model_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->window_s = 10;
	c->max_procs = 256;
	c->max_threads = 1024;
	c->max_op_procs = 256;
	c->max_op_threads = 256;
	detect_cfg_default(&c->det);
}

static unsigned clampu(unsigned v, unsigned lo, unsigned hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static uint64_t win_start_sec(const struct ig_model *m)
{
	return m->cur_sec + 1 >= m->W ? m->cur_sec + 1 - m->W : 0;
}

static uint64_t win_end_ns(const struct ig_model *m)
{
	return m->eval ? m->eval_end : m->clock_ns;
}

/* Length of the window covered since `since` (first event of the thing). */
static uint64_t span_since(const struct ig_model *m, uint64_t since)
{
	uint64_t ws = win_start_sec(m) * NS, we = win_end_ns(m);
	if (since < m->first_ns)
		since = m->first_ns;
	if (since > ws)
		ws = since;
	uint64_t s = we > ws ? we - ws : 0;
	return s < MIN_SPAN_NS ? MIN_SPAN_NS : s;
}

/* What a rate is divided by: span_since, but something first seen a moment
 * ago counts over at least a second (or over the whole session when that
 * is shorter), so a single call does not show as 1000/s. */
static uint64_t rate_span(const struct ig_model *m, uint64_t since)
{
	uint64_t s = span_since(m, since), least = span_since(m, m->first_ns);
	if (least > NS)
		least = NS;
	return s > least ? s : least;
}

static int in_window(const struct ig_model *m, uint64_t sec)
{
	return sec >= win_start_sec(m) && sec <= m->cur_sec;
}

static void copy_comm(char *dst, const char *src)
{
	size_t n = strnlen(src, IG_COMM_LEN - 1);
	memcpy(dst, src, n);
	memset(dst + n, 0, IG_COMM_LEN - n);
}

/* --- culprit tables -------------------------------------------------------- */

static uint64_t ctab_sum(const struct ig_model *m, const struct ctab *t, int k)
{
	uint64_t s = 0;
	for (unsigned j = 0; j < m->W; j++)
		if (in_window(m, t->sec[j]))
			s += t->e[k].ns[j];
	return s;
}

static void ctab_add(struct ig_model *m, struct ctab *t, uint32_t pid, const char *comm,
		     uint64_t ns, uint64_t sec)
{
	unsigned j = (unsigned)(sec % m->W);
	if (t->sec[j] != sec) {
		for (int k = 0; k < CTAB_N; k++)
			t->e[k].ns[j] = 0;
		t->sec[j] = sec;
	}
	int k, free_k = -1;
	for (k = 0; k < CTAB_N; k++) {
		if (t->e[k].pid == pid)
			break;
		if (!t->e[k].pid && free_k < 0)
			free_k = k;
	}
	if (k == CTAB_N) {
		if (free_k < 0) { /* replace the smallest in the window */
			uint64_t best = UINT64_MAX;
			for (int i = 0; i < CTAB_N; i++) {
				uint64_t s = ctab_sum(m, t, i);
				if (s < best) {
					best = s;
					free_k = i;
				}
			}
			memset(t->e[free_k].ns, 0, sizeof(t->e[free_k].ns));
		}
		k = free_k;
		t->e[k].pid = pid;
	}
	if (comm && comm[0])
		copy_comm(t->e[k].comm, comm);
	t->e[k].ns[j] += ns;
}

static void ctab_sub(struct ig_model *m, struct ctab *t, uint32_t pid, uint64_t ns, uint64_t sec)
{
	unsigned j = (unsigned)(sec % m->W);
	if (t->sec[j] != sec)
		return;
	for (int k = 0; k < CTAB_N; k++)
		if (t->e[k].pid == pid) {
			t->e[k].ns[j] = t->e[k].ns[j] > ns ? t->e[k].ns[j] - ns : 0;
			return;
		}
}

/* Top n of a table, largest first; shares of `total` (or of the table sum). */
static int ctab_top(const struct ig_model *m, const struct ctab *t, struct ig_culprit *out, int n,
		    uint64_t total)
{
	struct ig_culprit all[CTAB_N];
	int c = 0;
	uint64_t sum = 0;
	for (int k = 0; k < CTAB_N; k++) {
		if (!t->e[k].pid)
			continue;
		uint64_t s = ctab_sum(m, t, k);
		if (!s)
			continue;
		all[c].pid = t->e[k].pid;
		copy_comm(all[c].comm, t->e[k].comm);
		all[c].ns = s;
		sum += s;
		c++;
	}
	/* insertion sort: largest first, then pid */
	for (int i = 1; i < c; i++)
		for (int j = i;
		     j > 0 && (all[j].ns > all[j - 1].ns ||
			       (all[j].ns == all[j - 1].ns && all[j].pid < all[j - 1].pid));
		     j--) {
			struct ig_culprit x = all[j];
			all[j] = all[j - 1];
			all[j - 1] = x;
		}
	if (total < sum)
		total = sum;
	int w = c < n ? c : n;
	for (int i = 0; i < w; i++) {
		out[i] = all[i];
		out[i].share = total ? (double)all[i].ns / (double)total : 0;
	}
	return w;
}

/* --- series ----------------------------------------------------------------- */

static size_t series_size(unsigned W, int full)
{
	size_t s = sizeof(struct series) + W * sizeof(struct sslice);
	if (full)
		s += sizeof(struct ctab) + (size_t)(W + 1) * TAILB * sizeof(struct tailacc);
	return s;
}

static void series_clear(struct series *S, unsigned W, int full)
{
	char *p = (char *)S;
	memset(S, 0, series_size(W, full));
	S->sl = (struct sslice *)(p + sizeof(*S));
	if (full) {
		char *q = (char *)(S->sl + W);
		S->ct = (struct ctab *)q;
		q += sizeof(struct ctab);
		S->tail_win = (struct tailacc *)q;
		S->tail = S->tail_win + TAILB;
	}
	hist_clear(&S->life);
	hist_clear(&S->win);
	for (unsigned j = 0; j < W; j++)
		hist_clear(&S->sl[j].h);
}

static struct series *series_alloc(unsigned W, int full)
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

static void series_add(struct ig_model *m, struct series *S, const struct ig_event *e, uint64_t end,
		       uint64_t sec, int inwin)
{
	uint64_t d = e->dur_ns;
	S->calls_life++;
	hist_add(&S->life, d);
	S->last_ns = end;
	if (!S->first_ns || e->ts_ns < S->first_ns)
		S->first_ns = e->ts_ns;
	if (S->cold_n < m->cfg.det.cold_calls) {
		S->cold_n++;
		S->cold_sum += d;
		if (d > S->cold_max)
			S->cold_max = d;
		S->cold_end = end;
	}
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
	if (oi && (oi->kind & (IG_OPK_COPY | IG_OPK_ALLOC)))
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
		ctab_add(m, S->ct, e->other_pid, e->other_comm, e->preempt_ns, sec);
}

static struct series *stab_get(struct ig_model *m, struct stab *t, uint64_t key, int level)
{
	int32_t i = ht_get(&t->ht, key);
	if (i >= 0)
		return t->s[i];
	int full = level != LV_THREAD;
	if (t->n < t->cap) {
		i = (int32_t)t->n;
		if (!t->s[i] && !(t->s[i] = series_alloc(m->W, full)))
			return NULL;
		t->n++;
	} else { /* evict the least recently active */
		uint64_t best = UINT64_MAX;
		for (unsigned k = 0; k < t->n; k++)
			if (t->s[k]->last_ns < best) {
				best = t->s[k]->last_ns;
				i = (int32_t)k;
			}
		ht_del(&t->ht, t->s[i]->key);
		series_clear(t->s[i], m->W, full);
		m->tot.evicted_series++;
	}
	t->s[i]->key = key;
	t->s[i]->level = (uint8_t)level;
	ht_put(&t->ht, key, i);
	return t->s[i];
}

/* --- processes and threads --------------------------------------------------- */

static struct proc *proc_find(const struct ig_model *m, uint32_t pid)
{
	int32_t i = ht_get(&m->ph, pid);
	return i >= 0 ? &m->procs[i] : NULL;
}

static struct thread *thread_find(const struct ig_model *m, uint32_t tid)
{
	int32_t i = ht_get(&m->th, tid);
	return i >= 0 ? &m->threads[i] : NULL;
}

static struct proc *proc_get(struct ig_model *m, uint32_t pid, uint64_t t)
{
	int32_t i = ht_get(&m->ph, pid);
	struct proc *p;
	if (i >= 0) {
		p = &m->procs[i];
	} else {
		if (m->nprocs < m->cfg.max_procs) {
			i = (int32_t)m->nprocs++;
		} else {
			uint64_t best = UINT64_MAX;
			for (unsigned k = 0; k < m->nprocs; k++)
				if (m->procs[k].last_ns < best) {
					best = m->procs[k].last_ns;
					i = (int32_t)k;
				}
			ht_del(&m->ph, m->procs[i].pid);
			m->tot.evicted_procs++;
		}
		p = &m->procs[i];
		struct pslice *sl = m->psl + (size_t)i * m->W;
		memset(p, 0, sizeof(*p));
		memset(sl, 0, m->W * sizeof(*sl));
		p->sl = sl;
		p->pid = pid;
		p->first_ns = t;
		ht_put(&m->ph, pid, i);
	}
	if (t > p->last_ns)
		p->last_ns = t;
	return p;
}

static struct thread *thread_get(struct ig_model *m, uint32_t tid, uint32_t pid, uint64_t ts,
				 uint64_t end)
{
	int32_t i = ht_get(&m->th, tid);
	struct thread *t;
	if (i >= 0) {
		t = &m->threads[i];
	} else {
		if (m->nthreads < m->cfg.max_threads) {
			i = (int32_t)m->nthreads++;
		} else {
			uint64_t best = UINT64_MAX;
			for (unsigned k = 0; k < m->nthreads; k++)
				if (m->threads[k].last_ns < best) {
					best = m->threads[k].last_ns;
					i = (int32_t)k;
				}
			ht_del(&m->th, m->threads[i].tid);
			m->tot.evicted_threads++;
		}
		t = &m->threads[i];
		struct tslice *sl = m->tsl + (size_t)i * m->W;
		memset(t, 0, sizeof(*t));
		memset(sl, 0, m->W * sizeof(*sl));
		t->sl = sl;
		t->tid = tid;
		t->first_ns = ts;
		ht_put(&m->th, tid, i);
	}
	t->pid = pid;
	if (ts < t->first_ns)
		t->first_ns = ts;
	if (end > t->last_ns)
		t->last_ns = end;
	return t;
}

static struct tslice *tslot(struct ig_model *m, struct thread *t, uint64_t sec)
{
	struct tslice *s = &t->sl[sec % m->W];
	if (s->sec != sec) {
		memset(s, 0, sizeof(*s));
		s->sec = sec;
	}
	return s;
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
	if (a >= t->ub) {
		t->ua = a;
		t->ub = b;
		return b - a;
	}
	if (b <= t->ua)
		return b - a; /* entirely before the last interval (out of order) */
	uint64_t add = 0;
	if (a < t->ua) {
		add += t->ua - a;
		t->ua = a;
	}
	if (b > t->ub) {
		add += b - t->ub;
		t->ub = b;
	}
	return add;
}

static int off_state(uint8_t s)
{
	return s == IG_OFF_PREEMPTED ? ST_PRE : s == IG_OFF_BLOCKED ? ST_BLK : ST_UNK;
}

/* Off-CPU intervals that arrived before the call containing them (replays
 * ordered by time, sources without IG_F_IN_CALL) move from "between calls"
 * to "inside calls". */
static void reclassify(struct ig_model *m, struct thread *t, struct proc *p, uint64_t a, uint64_t b)
{
	for (int k = 0; k < t->tl_n; k++) {
		int idx = (t->tl_i - 1 - k + IG_TL_MAX) % IG_TL_MAX;
		struct ig_offcpu_rec *r = &t->tl[idx];
		if (r->ts_ns < a)
			break;
		if (r->in_call || t->tl_src[idx] || r->ts_ns >= b)
			continue;
		r->in_call = 1;
		uint64_t sec = (r->ts_ns + r->dur_ns) / NS;
		struct tslice *s = &t->sl[sec % m->W];
		int st = off_state(r->state);
		if (t->life_off[0][st] >= r->dur_ns) {
			t->life_off[0][st] -= r->dur_ns;
			t->life_off[1][st] += r->dur_ns;
		}
		if (s->sec == sec && s->off[0][st] >= r->dur_ns && s->sw[0]) {
			s->off[0][st] -= r->dur_ns;
			s->off[1][st] += r->dur_ns;
			s->sw[0]--;
			s->sw[1]++;
		}
		if (st == ST_BLK && r->other_pid)
			ctab_sub(m, &p->wake, r->other_pid, r->dur_ns, sec);
	}
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

static void slow_add(struct ig_model *m, const struct ig_event *e, uint64_t sec)
{
	struct slowslice *s = &m->slow[(size_t)e->op * m->W + sec % m->W];
	if (s->sec != sec) {
		s->sec = sec;
		s->n = 0;
	}
	if (s->n == IG_SLOW_MAX && e->dur_ns <= s->r[IG_SLOW_MAX - 1].dur_ns)
		return;
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
}

/* --- time ------------------------------------------------------------------- */

static void for_each_series(struct ig_model *m,
			    void (*fn)(struct ig_model *, struct series *, uint64_t), uint64_t arg)
{
	for (int op = 0; op < IG_OP_MAX; op++)
		if (m->ops[op])
			fn(m, m->ops[op], arg);
	for (unsigned k = 0; k < m->sp.n; k++)
		fn(m, m->sp.s[k], arg);
	for (unsigned k = 0; k < m->st.n; k++)
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
		S->out_thr =
		    (uint64_t)((double)hist_percentile(&S->win, 0.5) * m->cfg.det.alloc_outlier_x);
}

/* The clock enters second k: run the detector over the W complete seconds
 * before it, then drop the slice that leaves the window. */
static void tick(struct ig_model *m, uint64_t k)
{
	m->eval = 1;
	m->eval_end = k * NS;
	detect_run(m->det, m, k * NS);
	m->tot.detector_runs++;
	for_each_series(m, thresh_fn, k);
	m->eval = 0;
	for_each_series(m, expire_fn, k);
	m->cur_sec = k;
}

static void advance_to(struct ig_model *m, uint64_t t)
{
	uint64_t s = t / NS;
	uint64_t c = m->cur_sec;
	for (uint64_t k = c + 1; k <= s; k++) {
		if (k > c + m->W + 1 && k < s) {
			/* everything has expired; one last run at the target second */
			k = s;
			m->cur_sec = s - 1;
		}
		tick(m, k);
	}
	if (t > m->clock_ns)
		m->clock_ns = t;
}

void model_advance(struct ig_model *m, uint64_t now_ns)
{
	if (!m || !m->started || now_ns <= m->clock_ns)
		return;
	advance_to(m, now_ns);
}

/* --- ingest ------------------------------------------------------------------ */

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
	struct proc *p = proc_get(m, e->pid, end);
	struct thread *t = thread_get(m, e->tid ? e->tid : e->pid, e->pid, e->ts_ns, end);
	if (!p->comm[0] && e->comm[0])
		copy_comm(p->comm, e->comm);
	if (e->comm[0])
		copy_comm(t->comm, e->comm);
	if (e->cgroup_id)
		p->cgroup_id = e->cgroup_id;
	p->cuda = 1;
	p->calls_life++;
	t->calls_life++;

	struct series *S0 = m->ops[e->op];
	if (!S0) {
		S0 = m->ops[e->op] = series_alloc(m->W, 1);
		if (!S0)
			return;
		S0->op = e->op;
		S0->level = LV_OP;
	}
	series_add(m, S0, e, end, sec, inwin);
	struct series *S1 = stab_get(m, &m->sp, ((uint64_t)e->pid << 8) | e->op, LV_PROC);
	if (S1) {
		S1->op = e->op;
		S1->pid = e->pid;
		series_add(m, S1, e, end, sec, inwin);
	}
	struct series *S2 = stab_get(m, &m->st, ((uint64_t)t->tid << 8) | e->op, LV_THREAD);
	if (S2) {
		S2->op = e->op;
		S2->pid = e->pid;
		S2->tid = t->tid;
		series_add(m, S2, e, end, sec, inwin);
	}

	if (e->preempt_ns && e->other_pid) {
		t->pre_pid = e->other_pid;
		copy_comm(t->pre_comm, e->other_comm);
	}
	/* A driver call made by a runtime call (cudaMemcpy -> cuMemcpyDtoH_v2)
	 * lies inside it and usually arrives first, since it ends first. Mark
	 * the inner one: a pair is one synchronisation, and the inner op's
	 * evidence repeats the outer op's. nest 1: the previous call is inside
	 * this one; 2: this one is inside the previous (other arrival order). */
	int sync = sync_kind(e, oi), nest = 0;
	uint64_t nested_ns = 0;
	if (t->pb && e->ts_ns <= t->pa && t->pb <= end) {
		nest = 1;
		int32_t k = ht_get(&m->sp.ht, ((uint64_t)e->pid << 8) | t->pop);
		if (k >= 0)
			m->sp.s[k]->nested_life++;
		if (m->ops[t->pop])
			m->ops[t->pop]->nested_life++;
		if (sync && t->psync)
			nested_ns = t->pb - t->pa;
	} else if (t->pb && t->pa <= e->ts_ns && end <= t->pb) {
		nest = 2;
		S0->nested_life++;
		if (S1)
			S1->nested_life++;
		if (sync && t->psync)
			nested_ns = e->dur_ns;
	}
	if (nest != 2) {
		t->pa = e->ts_ns;
		t->pb = end;
		t->pop = e->op;
		t->psync = (uint8_t)sync;
	}
	reclassify(m, t, p, e->ts_ns, end);
	uint64_t busy = union_add(t, e->ts_ns, end);
	t->life_cuda += busy;
	if (end > t->cb || e->ts_ns < t->ca || !t->cb) {
		t->ca = e->ts_ns;
		t->cb = end;
	}
	if (!inwin)
		return;
	slow_add(m, e, sec);
	struct tslice *ts = tslot(m, t, sec);
	ts->calls++;
	ts->call_ns += e->dur_ns;
	ts->cuda_ns += busy;
	if (sync) {
		ts->sync_calls++;
		ts->sync_ns += e->dur_ns;
		if (nested_ns) {
			ts->sync_nested++;
			ts->sync_nested_ns += nested_ns;
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

static void ingest_offcpu(struct ig_model *m, const struct ig_event *e, uint64_t end, uint64_t sec,
			  int inwin)
{
	struct proc *p = proc_get(m, e->pid, end);
	struct thread *t = thread_get(m, e->tid ? e->tid : e->pid, e->pid, e->ts_ns, end);
	if (!p->comm[0] && e->comm[0])
		copy_comm(p->comm, e->comm);
	if (e->comm[0])
		copy_comm(t->comm, e->comm);
	int st = off_state(e->state);
	int src = (e->flags & IG_F_IN_CALL) != 0;
	int in = src || (e->ts_ns >= t->ca && e->ts_ns < t->cb);

	struct ig_offcpu_rec *r = &t->tl[t->tl_i];
	r->ts_ns = e->ts_ns;
	r->dur_ns = e->dur_ns;
	r->state = e->state;
	r->in_call = (uint8_t)in;
	r->cpu = (uint16_t)e->cpu;
	r->other_pid = e->other_pid;
	copy_comm(r->other_comm, e->other_comm);
	t->tl_src[t->tl_i] = (uint8_t)src;
	t->tl_i = (t->tl_i + 1) % IG_TL_MAX;
	if (t->tl_n < IG_TL_MAX)
		t->tl_n++;

	if (st == ST_PRE && e->other_pid) {
		t->pre_pid = e->other_pid;
		copy_comm(t->pre_comm, e->other_comm);
	}
	t->life_off[in][st] += e->dur_ns;
	if (!inwin)
		return;
	struct tslice *ts = tslot(m, t, sec);
	ts->off[in][st] += e->dur_ns;
	ts->sw[in]++;
	if (st == ST_PRE && e->other_pid)
		ctab_add(m, &p->pre, e->other_pid, e->other_comm, e->dur_ns, sec);
	if (st == ST_BLK && !in && e->other_pid)
		ctab_add(m, &p->wake, e->other_pid, e->other_comm, e->dur_ns, sec);
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
		advance_to(m, end);
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
	case IG_EV_FORK: {
		struct proc *parent = proc_get(m, e->pid, end);
		if (!parent->comm[0] && e->comm[0])
			copy_comm(parent->comm, e->comm);
		char comm[IG_COMM_LEN];
		copy_comm(comm, parent->comm);
		if (e->arg0 && e->arg0 != e->pid) {
			struct proc *c = proc_get(m, (uint32_t)e->arg0, end);
			c->ppid = e->pid;
			if (!c->comm[0])
				copy_comm(c->comm, comm);
		}
		break;
	}
	case IG_EV_EXEC:
	case IG_EV_COMM:
		p = proc_get(m, e->pid, end);
		if (e->comm[0])
			copy_comm(p->comm, e->comm);
		if (e->kind == IG_EV_COMM && e->arg0 && !p->ppid)
			p->ppid = (uint32_t)e->arg0; /* read from /proc when first seen */
		if (e->kind == IG_EV_EXEC)
			p->exited = 0;
		break;
	case IG_EV_EXIT:
		p = proc_get(m, e->pid, end);
		p->exited = 1;
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
		p = proc_get(m, e->pid, end);
		if (!p->comm[0] && e->comm[0])
			copy_comm(p->comm, e->comm);
		if (inwin) {
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
		break;
	case IG_EV_SNAPSHOT:
		if (!m->host_valid || e->ts_ns >= m->host.ts_ns) {
			m->host = *e;
			m->host_valid = 1;
		}
		if (inwin) {
			struct gslice *gs = gslot(m, sec);
			if (e->arg0 > gs->cpu_max)
				gs->cpu_max = e->arg0;
			if (e->arg1 > gs->mem_max)
				gs->mem_max = e->arg1;
			if (e->preempt_ns > gs->swap_max)
				gs->swap_max = e->preempt_ns;
		}
		break;
	default:
		break;
	}
}

/* --- lifecycle ---------------------------------------------------------------- */

static void stab_free(struct stab *t)
{
	if (t->s)
		for (unsigned k = 0; k < t->cap; k++)
			free(t->s[k]);
	free(t->s);
	ht_free(&t->ht);
}

void model_free(struct ig_model *m)
{
	if (!m)
		return;
	for (int op = 0; op < IG_OP_MAX; op++)
		free(m->ops[op]);
	stab_free(&m->sp);
	stab_free(&m->st);
	ht_free(&m->ph);
	ht_free(&m->th);
	free(m->procs);
	free(m->threads);
	free(m->psl);
	free(m->tsl);
	free(m->slow);
	free(m->gsl);
	free(m->scratch_p);
	detect_free(m->det);
	free(m);
}

struct ig_model *model_new(const struct ig_model_cfg *cfg)
{
	struct ig_model *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	if (cfg)
		m->cfg = *cfg;
	else
		model_cfg_default(&m->cfg);
	struct ig_model_cfg *c = &m->cfg;
	c->window_s = clampu(c->window_s ? c->window_s : 10, 2, IG_WIN_MAX);
	c->max_procs = clampu(c->max_procs ? c->max_procs : 256, 4, 1u << 16);
	c->max_threads = clampu(c->max_threads ? c->max_threads : 1024, 4, 1u << 18);
	c->max_op_procs = clampu(c->max_op_procs ? c->max_op_procs : 256, 4, 1u << 14);
	c->max_op_threads = clampu(c->max_op_threads ? c->max_op_threads : 256, 4, 1u << 14);
	if (!c->det.min_calls) /* a zeroed detector config means defaults */
		detect_cfg_default(&c->det);
	m->W = c->window_s;
	m->sp.cap = c->max_op_procs;
	m->st.cap = c->max_op_threads;
	if (ht_init(&m->sp.ht, m->sp.cap) || ht_init(&m->st.ht, m->st.cap) ||
	    ht_init(&m->ph, c->max_procs) || ht_init(&m->th, c->max_threads))
		goto fail;
	m->sp.s = calloc(m->sp.cap, sizeof(*m->sp.s));
	m->st.s = calloc(m->st.cap, sizeof(*m->st.s));
	m->procs = calloc(c->max_procs, sizeof(*m->procs));
	m->threads = calloc(c->max_threads, sizeof(*m->threads));
	m->psl = calloc((size_t)c->max_procs * m->W, sizeof(*m->psl));
	m->tsl = calloc((size_t)c->max_threads * m->W, sizeof(*m->tsl));
	m->slow = calloc((size_t)IG_OP_MAX * m->W, sizeof(*m->slow));
	m->gsl = calloc(m->W, sizeof(*m->gsl));
	m->scratch_p = calloc(c->max_procs, sizeof(*m->scratch_p));
	m->det = detect_new(&c->det);
	if (!m->sp.s || !m->st.s || !m->procs || !m->threads || !m->psl || !m->tsl || !m->slow ||
	    !m->gsl || !m->scratch_p || !m->det)
		goto fail;
	return m;
fail:
	model_free(m);
	return NULL;
}

const struct ig_model_cfg *model_cfg(const struct ig_model *m)
{
	return &m->cfg;
}

void model_reset(struct ig_model *m)
{
	for (int op = 0; op < IG_OP_MAX; op++) {
		free(m->ops[op]);
		m->ops[op] = NULL;
	}
	/* series memory is kept for reuse; only the tables forget them */
	for (unsigned k = 0; k < m->sp.n; k++)
		series_clear(m->sp.s[k], m->W, 1);
	for (unsigned k = 0; k < m->st.n; k++)
		series_clear(m->st.s[k], m->W, 0);
	m->sp.n = m->st.n = 0;
	ht_clear(&m->sp.ht);
	ht_clear(&m->st.ht);
	ht_clear(&m->th);
	m->nthreads = 0;
	memset(m->tsl, 0, (size_t)m->cfg.max_threads * m->W * sizeof(*m->tsl));
	for (unsigned k = 0; k < m->nprocs; k++) { /* keep names, drop numbers */
		struct proc *p = &m->procs[k];
		struct proc keep = *p;
		memset(p, 0, sizeof(*p));
		p->pid = keep.pid;
		p->ppid = keep.ppid;
		memcpy(p->comm, keep.comm, sizeof(p->comm));
		p->cgroup_id = keep.cgroup_id;
		p->exited = keep.exited;
		p->first_ns = m->clock_ns;
		p->last_ns = keep.last_ns;
		p->sl = keep.sl;
		memset(p->sl, 0, m->W * sizeof(*p->sl));
	}
	memset(m->slow, 0, (size_t)IG_OP_MAX * m->W * sizeof(*m->slow));
	memset(m->gsl, 0, m->W * sizeof(*m->gsl));
	memset(&m->tot, 0, sizeof(m->tot));
	if (m->started)
		m->first_ns = m->clock_ns;
	detect_reset(m->det);
}

/* --- reading -------------------------------------------------------------------- */

uint64_t model_now(const struct ig_model *m)
{
	return m->clock_ns;
}

void model_totals(const struct ig_model *m, struct ig_model_totals *t)
{
	*t = m->tot;
	t->now_ns = m->clock_ns;
	t->first_ns = m->started ? m->first_ns : 0;
	t->win_start_ns = m->started ? win_start_sec(m) * NS : 0;
	if (t->win_start_ns < t->first_ns)
		t->win_start_ns = t->first_ns;
	t->win_span_ns = m->started ? span_since(m, m->first_ns) : 0;
	t->procs = m->nprocs;
	t->threads = m->nthreads;
	t->op_procs = m->sp.n;
	t->op_threads = m->st.n;
}

static void pcts_of(const struct hist *h, struct ig_pcts *p)
{
	static const double qs[] = {0.5, 0.9, 0.95, 0.99, 0.999};
	uint64_t v[5];
	hist_percentiles(h, qs, v, 5);
	p->n = h->n;
	p->p50 = v[0];
	p->p90 = v[1];
	p->p95 = v[2];
	p->p99 = v[3];
	p->p999 = v[4];
	p->max = h->max_ns;
	p->min = h->n ? h->min_ns : 0;
	p->mean = hist_mean(h);
}

static uint64_t series_time_win(const struct ig_model *m, const struct series *S)
{
	uint64_t s = 0;
	for (unsigned j = 0; j < m->W; j++)
		if (S->sl[j].h.n)
			s += S->sl[j].dur;
	return s;
}

static uint64_t thread_span(const struct ig_model *m, uint32_t tid)
{
	const struct thread *t = thread_find(m, tid);
	return span_since(m, t ? t->first_ns : m->first_ns);
}

static int chain_sev(const struct ig_model *m, int op, uint32_t pid)
{
	int sev = -1;
	for (int i = 0; i < detect_count(m->det); i++) {
		const struct ig_chain *c = detect_chain(m->det, i);
		if (!c->active)
			continue;
		if ((op && c->op != op) || (pid && c->pid != pid))
			continue;
		if (c->severity > sev)
			sev = c->severity;
	}
	return sev;
}

static void series_fill(const struct ig_model *m, const struct series *S, struct ig_series_stats *o)
{
	memset(o, 0, sizeof(*o));
	o->op = S->op;
	o->pid = S->pid;
	o->tid = S->tid;
	if (S->pid)
		copy_comm(o->comm, model_comm(m, S->pid));
	if (S->tid) {
		const struct thread *t = thread_find(m, S->tid);
		if (t)
			copy_comm(o->tcomm, t->comm);
	}
	o->calls_life = S->calls_life;
	o->nested_life = S->nested_life;
	pcts_of(&S->life, &o->life);
	pcts_of(&S->win, &o->win);
	o->calls_win = S->win.n;
	uint64_t wmax = 0, wmin = UINT64_MAX;
	for (unsigned j = 0; j < m->W; j++) {
		const struct sslice *sl = &S->sl[j];
		if (!sl->h.n)
			continue;
		if (sl->h.min_ns < wmin)
			wmin = sl->h.min_ns;
		o->time_win_ns += sl->dur;
		o->bytes_win += sl->bytes;
		o->preempt_ns_win += sl->pre;
		o->blocked_ns_win += sl->blk;
		o->switches_win += sl->switches;
		o->no_split_calls_win += sl->nosplit;
		if (sl->max > wmax)
			wmax = sl->max;
	}
	if (o->win.n) { /* exact, from the slices (the window sum only keeps buckets) */
		o->win.max = wmax;
		o->win.min = wmin;
	}
	o->calls_per_s = (double)o->calls_win * 1e9 / (double)rate_span(m, S->first_ns);
	o->tail_ratio = o->win.p50 ? (double)o->win.p99 / (double)o->win.p50 : 0;
	uint64_t ws = win_start_sec(m);
	for (uint64_t sec = ws; sec <= m->cur_sec; sec++) {
		const struct sslice *sl = &S->sl[sec % m->W];
		o->spark_p99[o->spark_n++] =
		    sl->h.n && sl->sec == sec ? hist_percentile(&sl->h, 0.99) : 0;
	}
	o->tail_preempt_share = o->tail_blocked_share = -1;
	if (S->tail_win && o->win.n) {
		unsigned from = hist_bucket(o->win.p95) >> TAIL_SHIFT;
		uint64_t nosplit = 0;
		for (unsigned c = from; c < TAILB; c++) {
			const struct tailacc *t = &S->tail_win[c];
			o->tail_calls += t->n;
			o->tail_ns += t->dur;
			o->tail_preempt_ns += t->pre;
			o->tail_blocked_ns += t->blk;
			nosplit += t->nosplit;
		}
		if (o->tail_ns && nosplit < o->tail_calls) {
			o->tail_preempt_share = (double)o->tail_preempt_ns / (double)o->tail_ns;
			o->tail_blocked_share = (double)o->tail_blocked_ns / (double)o->tail_ns;
		}
	}
	/* wall share over the threads that called this op in the window */
	uint64_t t_op = 0, t_wall = 0;
	for (unsigned k = 0; k < m->st.n; k++) {
		const struct series *T = m->st.s[k];
		if (T->op != S->op || !T->win.n)
			continue;
		if (S->level == LV_PROC && T->pid != S->pid)
			continue;
		if (S->level == LV_THREAD && T != S)
			continue;
		t_op += series_time_win(m, T);
		t_wall += thread_span(m, T->tid);
	}
	o->wall_share = t_wall ? (double)t_op / (double)t_wall : 0;
	if (o->wall_share > 1)
		o->wall_share = 1;
	if (S->ct) {
		struct ig_culprit top;
		if (ctab_top(m, S->ct, &top, 1, o->preempt_ns_win) == 1) {
			o->top_preemptor_pid = top.pid;
			copy_comm(o->top_preemptor_comm, top.comm);
			o->top_preemptor_share = top.share;
		}
	}
	o->severity = chain_sev(m, S->op, S->pid);
	o->first_ns = S->first_ns;
	o->cold_n = S->cold_n;
	o->cold_max_ns = S->cold_max;
	o->cold_mean_ns = S->cold_n ? S->cold_sum / S->cold_n : 0;
	o->cold_end_ns = S->cold_end;
	o->noutliers = S->out_n;
	for (int i = 0; i < S->out_n; i++) {
		int idx = (S->out_i - S->out_n + i + IG_OUTLIERS) % IG_OUTLIERS;
		o->outlier_ts[i] = S->out_ts[idx];
		o->outlier_dur[i] = S->out_dur[idx];
	}
}

int model_ops(const struct ig_model *m, int *ops, int max)
{
	int n = 0;
	for (int op = 1; op < IG_OP_MAX && n < max; op++)
		if (m->ops[op] && m->ops[op]->calls_life)
			ops[n++] = op;
	return n;
}

int model_op_stats(const struct ig_model *m, int op, struct ig_series_stats *out)
{
	if (op <= 0 || op >= IG_OP_MAX || !m->ops[op])
		return -ENOENT;
	series_fill(m, m->ops[op], out);
	return 0;
}

static int cmp_series_pid(const void *a, const void *b)
{
	const struct ig_series_stats *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->op - y->op;
}

int model_op_procs(const struct ig_model *m, int op, struct ig_series_stats *out, int max)
{
	int n = 0;
	for (unsigned k = 0; k < m->sp.n && n < max; k++)
		if (m->sp.s[k]->op == op)
			series_fill(m, m->sp.s[k], &out[n++]);
	qsort(out, (size_t)n, sizeof(*out), cmp_series_pid);
	return n;
}

int model_op_threads(const struct ig_model *m, int op, uint32_t pid, struct ig_series_stats *out,
		     int max)
{
	int n = 0;
	for (unsigned k = 0; k < m->st.n && n < max; k++) {
		const struct series *S = m->st.s[k];
		if (S->op == op && (!pid || S->pid == pid))
			series_fill(m, S, &out[n++]);
	}
	qsort(out, (size_t)n, sizeof(*out), cmp_series_pid);
	return n;
}

int model_proc_ops(const struct ig_model *m, uint32_t pid, struct ig_series_stats *out, int max)
{
	int n = 0;
	for (unsigned k = 0; k < m->sp.n && n < max; k++)
		if (m->sp.s[k]->pid == pid)
			series_fill(m, m->sp.s[k], &out[n++]);
	qsort(out, (size_t)n, sizeof(*out), cmp_series_pid);
	return n;
}

int model_op_proc_stats(const struct ig_model *m, int op, uint32_t pid, struct ig_series_stats *out)
{
	int32_t i = ht_get(&m->sp.ht, ((uint64_t)pid << 8) | (unsigned)op);
	if (i < 0)
		return -ENOENT;
	series_fill(m, m->sp.s[i], out);
	return 0;
}

const struct hist *model_op_hist(const struct ig_model *m, int op, uint32_t pid, int lifetime)
{
	const struct series *S = NULL;
	if (op <= 0 || op >= IG_OP_MAX)
		return NULL;
	if (!pid) {
		S = m->ops[op];
	} else {
		int32_t i = ht_get(&m->sp.ht, ((uint64_t)pid << 8) | (unsigned)op);
		S = i >= 0 ? m->sp.s[i] : NULL;
	}
	return S ? (lifetime ? &S->life : &S->win) : NULL;
}

int model_slow_calls(const struct ig_model *m, int op, uint32_t pid, struct ig_call_rec *out,
		     int max)
{
	if (op <= 0 || op >= IG_OP_MAX || max <= 0)
		return 0;
	int n = 0;
	for (unsigned j = 0; j < m->W; j++) {
		const struct slowslice *s = &m->slow[(size_t)op * m->W + j];
		if (!in_window(m, s->sec))
			continue;
		for (int k = 0; k < s->n; k++) {
			const struct ig_call_rec *r = &s->r[k];
			if (pid && r->pid != pid)
				continue;
			if (n == max && r->dur_ns <= out[n - 1].dur_ns)
				break; /* the slice is sorted: nothing better follows */
			int i = n < max ? n++ : max - 1;
			while (i > 0 &&
			       (out[i - 1].dur_ns < r->dur_ns ||
				(out[i - 1].dur_ns == r->dur_ns && out[i - 1].ts_ns > r->ts_ns))) {
				out[i] = out[i - 1];
				i--;
			}
			out[i] = *r;
		}
	}
	return n;
}

/* Window sums of one thread. */
struct tsum {
	uint64_t calls, call_ns, cuda_ns, sync_calls, sync_ns, sync_nested, sync_nested_ns;
	uint64_t off[2][3];
	uint32_t sw;
};

static void thread_sum(const struct ig_model *m, const struct thread *t, struct tsum *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned j = 0; j < m->W; j++) {
		const struct tslice *x = &t->sl[j];
		if (!in_window(m, x->sec))
			continue;
		s->calls += x->calls;
		s->call_ns += x->call_ns;
		s->cuda_ns += x->cuda_ns;
		s->sync_calls += x->sync_calls;
		s->sync_ns += x->sync_ns;
		s->sync_nested += x->sync_nested;
		s->sync_nested_ns += x->sync_nested_ns;
		for (int a = 0; a < 2; a++)
			for (int b = 0; b < 3; b++)
				s->off[a][b] += x->off[a][b];
		s->sw += x->sw[0] + x->sw[1];
	}
}

static int thread_active(const struct ig_model *m, const struct thread *t)
{
	return t->last_ns >= win_start_sec(m) * NS;
}

static double pct(uint64_t a, uint64_t b)
{
	double v = b ? 100.0 * (double)a / (double)b : 0;
	return v > 100 ? 100 : v;
}

static void proc_fill(const struct ig_model *m, const struct proc *p, struct ig_proc_stats *o)
{
	memset(o, 0, sizeof(*o));
	o->pid = p->pid;
	o->ppid = p->ppid;
	copy_comm(o->comm, p->comm);
	o->cgroup_id = p->cgroup_id;
	o->first_ns = p->first_ns;
	o->last_ns = p->last_ns;
	o->exited = p->exited;
	o->cuda = p->cuda;
	o->calls_life = p->calls_life;
	o->page_bytes_life = p->page_life;
	for (unsigned j = 0; j < m->W; j++) {
		const struct pslice *s = &p->sl[j];
		if (!in_window(m, s->sec))
			continue;
		o->calls_win += s->calls;
		o->page_bytes_win += s->page_bytes;
		o->io_ops_win += s->io_ops;
		o->io_bytes_win += s->io_bytes;
		o->io_lat_ns_win += s->io_lat;
		if (s->io_max > o->io_max_ns_win)
			o->io_max_ns_win = s->io_max;
	}
	o->calls_per_s = (double)o->calls_win * 1e9 / (double)rate_span(m, p->first_ns);
	/* two passes: feeding threads (calls in the window), else all active */
	uint64_t pre_all = 0;
	int feeding = 0;
	for (unsigned k = 0; k < m->nthreads; k++) {
		const struct thread *t = &m->threads[k];
		if (t->pid != p->pid)
			continue;
		o->threads++;
		struct tsum s;
		thread_sum(m, t, &s);
		pre_all += s.off[0][ST_PRE] + s.off[1][ST_PRE];
		if (s.calls)
			feeding++;
	}
	for (unsigned k = 0; k < m->nthreads; k++) {
		const struct thread *t = &m->threads[k];
		if (t->pid != p->pid || !thread_active(m, t))
			continue;
		struct tsum s;
		thread_sum(m, t, &s);
		if (feeding && !s.calls)
			continue;
		uint64_t span = span_since(m, t->first_ns);
		o->wall_ns += span;
		o->cuda_ns += s.cuda_ns;
		o->off_preempt_ns += s.off[0][ST_PRE] + s.off[1][ST_PRE];
		o->off_blocked_ns += s.off[0][ST_BLK] + s.off[1][ST_BLK];
		o->off_unknown_ns += s.off[0][ST_UNK] + s.off[1][ST_UNK];
		uint64_t in = s.off[1][0] + s.off[1][1] + s.off[1][2];
		uint64_t btw = s.off[0][0] + s.off[0][1] + s.off[0][2];
		o->off_in_call_ns += in;
		o->off_between_ns += btw;
		uint64_t used = s.cuda_ns + btw;
		o->between_on_cpu_ns += span > used ? span - used : 0;
		o->switches += s.sw;
	}
	for (unsigned k = 0; k < m->nthreads; k++) {
		const struct thread *t = &m->threads[k];
		if (t->pid != p->pid || (p->cuda && !t->calls_life))
			continue;
		uint64_t end = t->last_ns > t->first_ns ? t->last_ns : t->first_ns;
		o->life_wall_ns += end - t->first_ns;
		o->life_cuda_ns += t->life_cuda;
		o->life_off_preempt_ns += t->life_off[0][ST_PRE] + t->life_off[1][ST_PRE];
		o->life_off_blocked_ns += t->life_off[0][ST_BLK] + t->life_off[1][ST_BLK];
		o->life_off_unknown_ns += t->life_off[0][ST_UNK] + t->life_off[1][ST_UNK];
		o->life_off_between_ns += t->life_off[0][0] + t->life_off[0][1] + t->life_off[0][2];
	}
	uint64_t off = o->off_preempt_ns + o->off_blocked_ns + o->off_unknown_ns;
	o->off_pct = pct(off, o->wall_ns);
	o->off_preempt_pct = pct(o->off_preempt_ns, o->wall_ns);
	o->off_blocked_pct = pct(o->off_blocked_ns, o->wall_ns);
	o->off_unknown_pct = pct(o->off_unknown_ns, o->wall_ns);
	o->between_pct = pct(o->off_between_ns, o->wall_ns);
	o->npreemptors = ctab_top(m, &p->pre, o->preemptors, 4, pre_all);
	o->nwakers = ctab_top(m, &p->wake, o->wakers, 4, 0);
	o->severity = chain_sev(m, 0, p->pid);
}

static int cmp_proc(const void *a, const void *b)
{
	const struct ig_proc_stats *x = a, *y = b;
	if (x->cuda != y->cuda)
		return y->cuda - x->cuda;
	if (x->calls_win != y->calls_win)
		return x->calls_win > y->calls_win ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int model_procs(const struct ig_model *m, struct ig_proc_stats *out, int max)
{
	if (max <= 0)
		return 0;
	for (unsigned k = 0; k < m->nprocs; k++)
		proc_fill(m, &m->procs[k], &m->scratch_p[k]);
	qsort(m->scratch_p, m->nprocs, sizeof(*m->scratch_p), cmp_proc);
	int n = (int)m->nprocs < max ? (int)m->nprocs : max;
	memcpy(out, m->scratch_p, (size_t)n * sizeof(*out));
	return n;
}

int model_proc(const struct ig_model *m, uint32_t pid, struct ig_proc_stats *out)
{
	const struct proc *p = proc_find(m, pid);
	if (!p)
		return -ENOENT;
	proc_fill(m, p, out);
	return 0;
}

static void thread_fill(const struct ig_model *m, const struct thread *t, struct ig_thread_stats *o)
{
	memset(o, 0, sizeof(*o));
	o->tid = t->tid;
	o->pid = t->pid;
	o->first_ns = t->first_ns;
	o->last_ns = t->last_ns;
	o->calls_life = t->calls_life;
	struct tsum s;
	thread_sum(m, t, &s);
	o->calls_win = s.calls;
	uint64_t span = span_since(m, t->first_ns);
	o->calls_per_s = (double)s.calls * 1e9 / (double)rate_span(m, t->first_ns);
	o->wall_ns = thread_active(m, t) ? span : 0;
	o->cuda_ns = s.cuda_ns;
	o->off_preempt_ns = s.off[0][ST_PRE] + s.off[1][ST_PRE];
	o->off_blocked_ns = s.off[0][ST_BLK] + s.off[1][ST_BLK];
	o->off_unknown_ns = s.off[0][ST_UNK] + s.off[1][ST_UNK];
	o->off_in_call_ns = s.off[1][0] + s.off[1][1] + s.off[1][2];
	o->off_between_ns = s.off[0][0] + s.off[0][1] + s.off[0][2];
	o->between_preempt_ns = s.off[0][ST_PRE];
	o->between_blocked_ns = s.off[0][ST_BLK];
	o->between_unknown_ns = s.off[0][ST_UNK];
	uint64_t used = s.cuda_ns + o->off_between_ns;
	o->between_on_cpu_ns = o->wall_ns > used ? o->wall_ns - used : 0;
	o->cuda_pct = pct(s.cuda_ns, o->wall_ns);
	o->off_pct = pct(o->off_preempt_ns + o->off_blocked_ns + o->off_unknown_ns, o->wall_ns);
	o->between_pct = pct(o->off_between_ns, o->wall_ns);
	o->switches = s.sw;
	o->sync_calls_win = s.sync_calls;
	o->sync_ns_win = s.sync_ns;
	o->sync_nested_win = s.sync_nested;
	o->sync_nested_ns_win = s.sync_nested_ns;
	o->last_preemptor_pid = t->pre_pid;
	copy_comm(o->last_preemptor_comm, t->pre_comm);
	copy_comm(o->comm, t->comm);
	uint64_t best = 0;
	for (unsigned k = 0; k < m->st.n; k++) {
		const struct series *S = m->st.s[k];
		if (S->tid != t->tid || !S->win.n)
			continue;
		uint64_t tw = series_time_win(m, S);
		if (tw > best || (tw == best && S->op < o->main_op)) {
			best = tw;
			o->main_op = S->op;
		}
	}
}

static int cmp_thread(const void *a, const void *b)
{
	const struct ig_thread_stats *x = a, *y = b;
	if (x->calls_win != y->calls_win)
		return x->calls_win > y->calls_win ? -1 : 1;
	if (x->cuda_ns != y->cuda_ns)
		return x->cuda_ns > y->cuda_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int model_threads(const struct ig_model *m, uint32_t pid, struct ig_thread_stats *out, int max)
{
	int n = 0;
	/* keep the busiest max: fill, then replace the least busy when better */
	for (unsigned k = 0; k < m->nthreads; k++) {
		const struct thread *t = &m->threads[k];
		if (pid && t->pid != pid)
			continue;
		struct ig_thread_stats s;
		thread_fill(m, t, &s);
		if (n < max) {
			out[n++] = s;
		} else if (max > 0) {
			int worst = 0;
			for (int i = 1; i < n; i++)
				if (cmp_thread(&out[i], &out[worst]) > 0)
					worst = i;
			if (cmp_thread(&s, &out[worst]) < 0)
				out[worst] = s;
		}
	}
	qsort(out, (size_t)n, sizeof(*out), cmp_thread);
	return n;
}

int model_thread_offcpu(const struct ig_model *m, uint32_t tid, struct ig_offcpu_rec *out, int max)
{
	const struct thread *t = thread_find(m, tid);
	if (!t)
		return 0;
	int n = t->tl_n < max ? t->tl_n : max;
	for (int i = 0; i < n; i++)
		out[i] = t->tl[(t->tl_i - n + i + IG_TL_MAX) % IG_TL_MAX];
	return n;
}

void model_host(const struct ig_model *m, struct ig_host *o)
{
	memset(o, 0, sizeof(*o));
	o->valid = m->host_valid;
	if (m->host_valid) {
		o->ts_ns = m->host.ts_ns;
		o->cpu_pct = (double)m->host.arg0 / 10.0;
		o->mem_pct = (double)m->host.arg1 / 10.0;
		o->mem_avail_mb = m->host.stream;
		o->swap_mb = m->host.preempt_ns;
		o->load1 = (double)m->host.blocked_ns / 100.0;
	}
	for (unsigned j = 0; j < m->W; j++) {
		const struct gslice *s = &m->gsl[j];
		if (!in_window(m, s->sec))
			continue;
		if ((double)s->cpu_max / 10.0 > o->cpu_max_win)
			o->cpu_max_win = (double)s->cpu_max / 10.0;
		if ((double)s->mem_max / 10.0 > o->mem_max_win)
			o->mem_max_win = (double)s->mem_max / 10.0;
		if (s->swap_max > o->swap_max_win)
			o->swap_max_win = s->swap_max;
		o->page_bytes_win += s->page_bytes;
		o->io_ops_win += s->io_ops;
		o->io_bytes_win += s->io_bytes;
		o->io_lat_ns_win += s->io_lat;
		if (s->io_max > o->io_max_ns_win)
			o->io_max_ns_win = s->io_max;
	}
}

const struct ig_detect *model_detect(const struct ig_model *m)
{
	return m->det;
}

int model_chain_count(const struct ig_model *m)
{
	return detect_count(m->det);
}

const struct ig_chain *model_chain(const struct ig_model *m, int i)
{
	return detect_chain(m->det, i);
}

const char *model_comm(const struct ig_model *m, uint32_t pid)
{
	const struct proc *p = proc_find(m, pid);
	return p ? p->comm : "";
}
