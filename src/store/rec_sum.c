/* --record-rate: above N calls a second in one thread, the recorder keeps
 * the first N of the second as rows and tells the rest per run, in
 * ingero_top_summaries (store/recfmt.h): how many calls of each kind, the
 * quantiles of their durations and where the run began and ended. A call
 * that left the CPU, an NCCL call, a call 8x slower than its kind so far in
 * the run, or a kind the run has no room for is kept as a row, and ends
 * the run; so does an off-CPU interval of the thread, and the second's end.
 * The replay lays the summarised calls out again (store/replay_sum.c): their
 * counts are exact, their times estimated. A call and the calls inside it
 * (a runtime call and its driver call) are one unit: the decision on a call
 * waits for the thread's next call, which may be the one around it.
 * Runs on the caller's thread (rec_event's), before the queue. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"
#include "store/rec_int.h"

#define SUM_THREADS 64
#define SLOW_X 8    /* a unit this many times its kind's mean so far is kept */
#define SLOW_MIN 16 /* ... once the kind has this many */
#define NS_PER_S 1000000000ull

struct sum_thread {
	uint32_t tid;
	uint64_t sec;			     /* the second (event time) kept counts */
	uint64_t slot;			     /* the slice of run_ns the open run is in */
	uint64_t kept;			     /* calls kept as rows in it */
	struct ig_event pend[REC_SUM_CALLS]; /* the unit waiting for the next call */
	unsigned npend;
	int hold; /* the waiting unit is to be kept: the call around it left the CPU */
	int open; /* a run is open in s */
	unsigned units;
	struct rec_summary s;
	uint64_t *d[REC_SUM_TYPES]; /* the outer durations of each kind in the run */
};

struct rec_sum {
	unsigned rate;
	uint64_t run_ns; /* a run ends at every multiple of this (event time) */
	unsigned nt;
	uint64_t calls, rows; /* summarised; rows written */
	struct sum_thread t[SUM_THREADS];
};

struct rec_sum *rec_sum_new(unsigned rate, unsigned run_ms)
{
	struct rec_sum *rs = calloc(1, sizeof(*rs));
	if (rs) {
		rs->rate = rate;
		rs->run_ns = (run_ms && run_ms < 1000 ? run_ms : 1000) * 1000000ull;
	}
	return rs;
}

void rec_sum_free(struct rec_sum *rs)
{
	if (!rs)
		return;
	for (unsigned i = 0; i < rs->nt; i++)
		for (int k = 0; k < REC_SUM_TYPES; k++)
			free(rs->t[i].d[k]);
	free(rs);
}

void rec_sum_counts(const struct rec_sum *rs, uint64_t *calls, uint64_t *rows)
{
	*calls = rs ? rs->calls : 0;
	*rows = rs ? rs->rows : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Ends t's run: its quantiles, and the row queued. */
static void close_run(struct rec *r, struct sum_thread *t)
{
	if (!t->open)
		return;
	t->open = 0;
	struct rec_summary *s = malloc(sizeof(*s));
	if (!s) {
		r->sum_lost += t->s.calls;
		return;
	}
	*s = t->s;
	for (unsigned k = 0; k < s->nunits; k++) {
		struct rec_sum_unit *u = &s->u[k];
		qsort(t->d[k], u->n, sizeof(uint64_t), cmp_u64);
		for (int i = 0; i < REC_SUM_Q; i++)
			u->q[i] = t->d[k][(size_t)(recfmt_sum_q[i] * (u->n - 1) + 0.5)];
	}
	uint64_t calls = s->calls;
	int rc = rec_enqueue_summary(r, s);
	if (!rc) {
		r->sum->calls += calls;
		r->sum->rows++;
	} else if (rc == -ENOBUFS) { /* the full queue counted the row as one event */
		r->sum_lost += calls - 1;
	}
}

static int same_call(const struct rec_sum_call *c, const struct ig_event *e)
{
	return c->op == e->op && c->ret == e->ret && c->flags == e->flags && c->arg0 == e->arg0 &&
	       c->arg1 == e->arg1 && c->arg2 == e->arg2 && c->stream == e->stream &&
	       c->stack_id == e->stack_id;
}

/* The unit's kind in t's run: found, added, or -1 (no room). */
static int unit_kind(struct sum_thread *t, const struct ig_event *u, unsigned n)
{
	struct rec_summary *s = &t->s;
	for (unsigned k = 0; k < s->nunits; k++) {
		unsigned j = 0;
		while (j < n && same_call(&s->u[k].c[j], &u[j]))
			j++;
		if (j == n && s->u[k].ncalls == n)
			return (int)k;
	}
	if (s->nunits == REC_SUM_TYPES)
		return -1;
	unsigned k = s->nunits;
	if (!t->d[k] && !(t->d[k] = malloc(REC_SUM_MAX_UNITS * sizeof(uint64_t))))
		return -1;
	struct rec_sum_unit *su = &s->u[k];
	*su = (struct rec_sum_unit){.ncalls = n};
	for (unsigned j = 0; j < n; j++)
		su->c[j] = (struct rec_sum_call){.op = u[j].op,
						 .ret = u[j].ret,
						 .flags = u[j].flags,
						 .cpu = u[j].cpu,
						 .arg0 = u[j].arg0,
						 .arg1 = u[j].arg1,
						 .arg2 = u[j].arg2,
						 .stream = u[j].stream,
						 .stack_id = u[j].stack_id};
	s->nunits++;
	return (int)k;
}

/* A unit the run may hold: no call left the CPU or belongs to NCCL's
 * bookkeeping, the inner calls lie inside the outer one. */
static int summarisable(const struct ig_event *u, unsigned n)
{
	for (unsigned j = 0; j < n; j++) {
		const struct ig_op_info *oi = ig_op_info(u[j].op);
		if (!oi || oi->group == IG_GRP_NCCL || u[j].op == IG_OP_CUDA_EVENT_RECORD ||
		    u[j].preempt_ns || u[j].blocked_ns || u[j].switches)
			return 0;
		if (j && (u[j].ts_ns < u[0].ts_ns ||
			  u[j].ts_ns + u[j].dur_ns > u[0].ts_ns + u[0].dur_ns))
			return 0;
	}
	return 1;
}

/* Adds the unit (outer call first) to t's run, opening one; 0, or -1 when
 * it must be kept as rows (the run is then to be ended). */
static int run_add(struct sum_thread *t, const struct ig_event *u, unsigned n)
{
	if (!summarisable(u, n))
		return -1;
	if (t->open && t->units == REC_SUM_MAX_UNITS)
		return -1;
	if (!t->open) {
		t->s = (struct rec_summary){.pid = u[0].pid,
					    .tid = t->tid,
					    .cgroup_id = u[0].cgroup_id,
					    .node = u[0].node,
					    .from_ns = u[0].ts_ns};
		t->units = 0;
	}
	int k = unit_kind(t, u, n);
	if (k < 0)
		return -1;
	struct rec_sum_unit *su = &t->s.u[k];
	if (su->n >= SLOW_MIN && u[0].dur_ns > SLOW_X * (su->c[0].dur_sum / su->n))
		return -1;
	t->open = 1;
	t->d[k][su->n++] = u[0].dur_ns;
	su->c[0].dur_sum += u[0].dur_ns;
	for (unsigned j = 1; j < n; j++) {
		su->c[j].dur_sum += u[j].dur_ns;
		su->c[j].off_sum += u[j].ts_ns - u[0].ts_ns;
	}
	t->s.calls += n;
	t->units++;
	uint64_t end = u[0].ts_ns + u[0].dur_ns;
	if (end > t->s.to_ns)
		t->s.to_ns = end;
	return 0;
}

/* Decides the waiting unit: kept as rows, or into the run. */
static void decide(struct rec *r, struct sum_thread *t)
{
	unsigned n = t->npend;
	if (!n)
		return;
	t->npend = 0;
	struct ig_event u[REC_SUM_CALLS];
	memcpy(u, t->pend, n * sizeof(u[0]));
	unsigned o = 0; /* the outer call first: earliest start, then longest */
	for (unsigned j = 1; j < n; j++)
		if (u[j].ts_ns < u[o].ts_ns ||
		    (u[j].ts_ns == u[o].ts_ns && u[j].dur_ns > u[o].dur_ns))
			o = j;
	struct ig_event x = u[0];
	u[0] = u[o];
	u[o] = x;
	uint64_t end = u[0].ts_ns + u[0].dur_ns, sec = end / NS_PER_S;
	if (sec != t->sec) {
		close_run(r, t);
		t->sec = sec;
		t->kept = 0;
	}
	if (end / r->sum->run_ns != t->slot) {
		close_run(r, t);
		t->slot = end / r->sum->run_ns;
	}
	int hold = t->hold;
	t->hold = 0;
	if (t->kept >= r->sum->rate && !hold && !run_add(t, u, n))
		return;
	close_run(r, t);
	for (unsigned j = 0; j < n; j++) /* in the order they came */
		rec_enqueue_event(r, &t->pend[j]);
	t->kept += n;
}

static struct sum_thread *thread_of(struct rec_sum *rs, uint32_t tid)
{
	for (unsigned i = 0; i < rs->nt; i++)
		if (rs->t[i].tid == tid)
			return &rs->t[i];
	return NULL;
}

/* t's waiting unit decided and its run ended. */
static void settle(struct rec *r, struct sum_thread *t)
{
	decide(r, t);
	close_run(r, t);
}

/* A slot for tid: a free one, or the one idle longest when it has been
 * idle two seconds; NULL when every slot is busy (the thread's calls are
 * then all kept). */
static struct sum_thread *thread_new(struct rec *r, uint32_t tid, uint64_t sec)
{
	struct rec_sum *rs = r->sum;
	struct sum_thread *t = NULL;
	if (rs->nt < SUM_THREADS) {
		t = &rs->t[rs->nt++];
	} else {
		for (unsigned i = 0; i < rs->nt; i++)
			if (!t || rs->t[i].sec < t->sec)
				t = &rs->t[i];
		if (t->sec + 2 > sec)
			return NULL;
		settle(r, t);
	}
	t->tid = tid;
	t->sec = sec;
	t->kept = 0;
	t->npend = 0;
	t->hold = 0;
	t->open = 0;
	return t;
}

/* e is inside the waiting unit, or around it. */
static int nests(const struct sum_thread *t, const struct ig_event *e)
{
	uint64_t lo = UINT64_MAX, hi = 0, end = e->ts_ns + e->dur_ns;
	for (unsigned j = 0; j < t->npend; j++) {
		uint64_t a = t->pend[j].ts_ns, b = a + t->pend[j].dur_ns;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
	}
	return (e->ts_ns <= lo && end >= hi) || (e->ts_ns >= lo && end <= hi);
}

int rec_sum_event(struct rec *r, const struct ig_event *e)
{
	if (!r->sum)
		return 0;
	uint32_t tid = e->tid ? e->tid : e->pid;
	struct sum_thread *t = thread_of(r->sum, tid);
	/* a run holds no off-CPU time; one inside a call still open: that call
	 * will be kept (it left the CPU), and the calls it made with it */
	if (e->kind == IG_EV_OFFCPU && t) {
		if (e->flags & IG_F_IN_CALL) {
			close_run(r, t);
			t->hold = t->npend > 0;
		} else {
			settle(r, t);
		}
		return 0;
	}
	if (e->kind == IG_EV_OFFCPU)
		return 0;
	if (e->kind != IG_EV_CALL)
		return 0;
	if (!t && !(t = thread_new(r, tid, (e->ts_ns + e->dur_ns) / NS_PER_S)))
		return 0;
	if (t->npend && (t->npend == REC_SUM_CALLS || !nests(t, e)))
		decide(r, t);
	t->pend[t->npend] = *e;
	t->pend[t->npend++].container = NULL;
	return 1;
}

void rec_sum_flush(struct rec *r)
{
	if (!r->sum)
		return;
	for (unsigned i = 0; i < r->sum->nt; i++)
		settle(r, &r->sum->t[i]);
}

/* How long a unit waits for the call around it once event time has passed
 * its end: a runtime call ends microseconds after the driver call inside. */
#define SUM_NEST_WAIT_NS 50000000ull

void rec_sum_tick(struct rec *r, uint64_t now_ns)
{
	if (!r->sum)
		return;
	for (unsigned i = 0; i < r->sum->nt; i++) {
		struct sum_thread *t = &r->sum->t[i];
		uint64_t hi = 0;
		for (unsigned j = 0; j < t->npend; j++)
			if (t->pend[j].ts_ns + t->pend[j].dur_ns > hi)
				hi = t->pend[j].ts_ns + t->pend[j].dur_ns;
		if (t->npend && hi + SUM_NEST_WAIT_NS <= now_ns)
			decide(r, t);
		if (t->open && (t->slot + 1) * r->sum->run_ns <= now_ns)
			close_run(r, t);
	}
}
