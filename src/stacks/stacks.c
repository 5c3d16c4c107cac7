/* User stacks: tables of stacks and (op, stack) series under one mutex, a
 * job queue, and the resolver thread that owns the process table, the
 * symbol cache and the interpreters. See stacks.h. */
#include "stacks/stacks.h"

#include "core/htab.h"

#include "collect/collector.h"
#include "core/hist.h"
#include "core/ops.h"
#include "stacks/pyframes.h"
#include "stacks/symbolize.h"
#include "store/recfmt.h"

#include <linux/types.h>
#include "ingero.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define QUEUE_CAP 8192
#define DELAY_CAP 256
#define KNOWN_PIDS 4096		   /* pids already sent to the resolver (power of 2) */
#define EXEC_DELAY_NS 150000000ull /* the loader maps libraries after exec */
#define PY_RETRY_NS 200000000ull   /* an interpreter still starting */
#define PY_TRIES 25
#define RECAPTURE_NS 100000000ull /* mappings re-read at most this often */
#define TAIL_MIN_CALLS 20
#define NS 1000000000ull
#define MAX_FRAMES (IGB_STACK_MAX + IGB_PY_MAX + 8)


/* ---- tables ------------------------------------------------------------- */

/* A frame as stored: strings are offsets into the stack's blob. */
struct iframe {
	uint8_t kind;
	int line; /* Python: the line; native: the source line (src), 0 = none */
	uint64_t ip, off;
	uint32_t sym, file, text;
	uint32_t src; /* native: source file of line (base name), 0 = none */
};

struct stk {
	uint64_t id; /* 0 = free slot */
	uint32_t pid;
	uint8_t state;
	bool loaded;  /* from a recording */
	bool drained; /* given to stacks_drain */
	uint64_t seen;
	struct igb_stack *raw; /* until resolved */
	uint64_t *ips;
	int nips;
	struct iframe *fr;
	int nfr;
	char *blob;
	int headline; /* frame index, -1 none */
};

struct series {
	uint64_t id; /* 0 = free slot */
	int op;
	uint32_t pid;
	uint64_t calls, total_ns, max_ns, tail_calls, tail_ns, last_ns;
	uint64_t seen;
};

struct optail {
	struct hist h;
	uint64_t thr; /* tail threshold, UINT64_MAX until known */
	uint64_t sec; /* event second of the last evaluation */
};

enum job_type { J_STACK = 1, J_PROC, J_EXEC, J_EXIT };

struct job {
	uint8_t type;
	uint32_t pid;
	uint64_t id;
	uint64_t due_ns; /* CLOCK_MONOTONIC, delayed jobs */
};

enum py_state { PYS_UNKNOWN = 0, PYS_NONE, PYS_ON, PYS_UNSUPPORTED, PYS_AGAIN };

/* A process, owned by the resolver thread. */
struct rproc {
	uint32_t pid;
	struct sym_proc *maps;
	uint64_t maps_ns;
	struct py_proc *py;
	int py_state, py_tries;
	bool exited;
	uint64_t last_use;
	char note[200];
};

struct stacks {
	struct stacks_opts o;
	pthread_mutex_t mu;
	pthread_cond_t work, idle;
	pthread_t thread;
	bool threaded, stop, busy;

	struct collector *coll;

	struct stk *stks;
	struct htab stk_ht;
	unsigned nstks;
	struct series *ser;
	struct htab ser_ht;
	unsigned nser;
	struct optail *tails;
	uint64_t seq;

	struct job *queue;
	unsigned qhead, qlen;
	struct job delayed[DELAY_CAP];
	unsigned ndelayed;
	uint32_t known[KNOWN_PIDS];

	struct stacks_stats stats;

	/* resolver-owned */
	struct rproc *procs;
	unsigned nprocs;
	uint64_t use_clock;
	struct sym_cache *sym;
	/* published for stacks_proc_note, under mu */
	struct {
		uint32_t pid;
		char note[200];
	} * pnotes;
	unsigned npnotes;
};

/* snprintf that may truncate (display text), without the warning. */
static void __attribute__((format(printf, 3, 4))) tfmt(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static uint64_t series_key(int op, uint64_t id)
{
	return id ^ ((uint64_t)(op + 1) * 0x9e3779b97f4a7c15ull);
}

static void stk_clear(struct stk *s)
{
	free(s->raw);
	free(s->ips);
	free(s->fr);
	free(s->blob);
	memset(s, 0, sizeof(*s));
}

/* ---- life cycle ------------------------------------------------------------- */

static void *resolver_main(void *arg);

struct stacks *stacks_new(const struct stacks_opts *o)
{
	struct stacks *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	if (o)
		st->o = *o;
	if (!st->o.max_stacks)
		st->o.max_stacks = 4096;
	if (!st->o.max_series)
		st->o.max_series = 8192;
	if (!st->o.max_procs)
		st->o.max_procs = 512;
	st->stks = calloc(st->o.max_stacks, sizeof(*st->stks));
	st->ser = calloc(st->o.max_series, sizeof(*st->ser));
	st->tails = calloc(IG_OP_MAX, sizeof(*st->tails));
	st->queue = calloc(QUEUE_CAP, sizeof(*st->queue));
	st->procs = calloc(st->o.max_procs, sizeof(*st->procs));
	st->pnotes = calloc(st->o.max_procs, sizeof(*st->pnotes));
	st->sym = sym_cache_new(st->o.max_sym_bytes);
	if (!st->stks || !st->ser || !st->tails || !st->queue || !st->procs || !st->pnotes ||
	    !st->sym || ht_init(&st->stk_ht, st->o.max_stacks) ||
	    ht_init(&st->ser_ht, st->o.max_series))
		goto fail;
	for (int i = 0; i < IG_OP_MAX; i++) {
		hist_clear(&st->tails[i].h);
		st->tails[i].thr = UINT64_MAX;
	}
	pthread_mutex_init(&st->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->work, &ca);
	pthread_cond_init(&st->idle, &ca);
	pthread_condattr_destroy(&ca);
	if (!st->o.inline_resolve) {
		/* The resolver takes no signals: they belong to the main loop. */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		int r = pthread_create(&st->thread, NULL, resolver_main, st);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (r) {
			pthread_mutex_destroy(&st->mu);
			pthread_cond_destroy(&st->work);
			pthread_cond_destroy(&st->idle);
			goto fail;
		}
		st->threaded = true;
	}
	return st;
fail:
	ht_free(&st->stk_ht);
	ht_free(&st->ser_ht);
	free(st->stks);
	free(st->ser);
	free(st->tails);
	free(st->queue);
	free(st->procs);
	free(st->pnotes);
	sym_cache_free(st->sym);
	free(st);
	return NULL;
}

void stacks_free(struct stacks *st)
{
	if (!st)
		return;
	if (st->threaded) {
		pthread_mutex_lock(&st->mu);
		st->stop = true;
		pthread_cond_broadcast(&st->work);
		pthread_mutex_unlock(&st->mu);
		pthread_join(st->thread, NULL);
	}
	for (unsigned i = 0; i < st->o.max_stacks; i++)
		stk_clear(&st->stks[i]);
	for (unsigned i = 0; i < st->nprocs; i++) {
		sym_proc_free(st->procs[i].maps);
		py_proc_free(st->procs[i].py);
	}
	ht_free(&st->stk_ht);
	ht_free(&st->ser_ht);
	free(st->stks);
	free(st->ser);
	free(st->tails);
	free(st->queue);
	free(st->procs);
	free(st->pnotes);
	sym_cache_free(st->sym);
	pthread_mutex_destroy(&st->mu);
	pthread_cond_destroy(&st->work);
	pthread_cond_destroy(&st->idle);
	free(st);
}

void stacks_set_collector(struct stacks *st, struct collector *c)
{
	pthread_mutex_lock(&st->mu);
	st->coll = c;
	pthread_mutex_unlock(&st->mu);
}

/* ---- jobs (under mu) ------------------------------------------------------- */

static void run_jobs_inline(struct stacks *st);

static bool post(struct stacks *st, struct job j)
{
	if (j.due_ns) {
		if (st->ndelayed == DELAY_CAP)
			return false;
		st->delayed[st->ndelayed++] = j;
	} else {
		if (st->qlen == QUEUE_CAP)
			return false;
		st->queue[(st->qhead + st->qlen++) % QUEUE_CAP] = j;
	}
	if (st->threaded)
		pthread_cond_signal(&st->work);
	return true;
}

/* Next job due now; false when none. */
static bool pop(struct stacks *st, struct job *j, uint64_t now)
{
	for (unsigned i = 0; i < st->ndelayed; i++)
		if (st->delayed[i].due_ns <= now) {
			*j = st->delayed[i];
			st->delayed[i] = st->delayed[--st->ndelayed];
			return true;
		}
	if (!st->qlen)
		return false;
	*j = st->queue[st->qhead];
	st->qhead = (st->qhead + 1) % QUEUE_CAP;
	st->qlen--;
	return true;
}

static bool pid_known(struct stacks *st, uint32_t pid, bool add)
{
	unsigned h = hmix(pid) & (KNOWN_PIDS - 1);
	for (unsigned k = 0; k < KNOWN_PIDS; k++) {
		uint32_t *slot = &st->known[(h + k) & (KNOWN_PIDS - 1)];
		if (*slot == pid)
			return true;
		if (!*slot) {
			if (add)
				*slot = pid;
			return false;
		}
	}
	if (add) { /* full: start over (a process is at worst read again) */
		memset(st->known, 0, sizeof(st->known));
		st->known[h] = pid;
	}
	return false;
}

static void pid_forget(struct stacks *st, uint32_t pid)
{
	/* Open addressing without tombstones: rebuild without pid. */
	uint32_t old[KNOWN_PIDS];
	memcpy(old, st->known, sizeof(old));
	memset(st->known, 0, sizeof(st->known));
	for (unsigned i = 0; i < KNOWN_PIDS; i++)
		if (old[i] && old[i] != pid)
			pid_known(st, old[i], true);
}

/* ---- noting calls (ingest thread) ------------------------------------------- */

static int stk_find(struct stacks *st, uint64_t id)
{
	return ht_get(&st->stk_ht, id);
}

/* A free slot, evicting the least recently seen settled stack if needed. */
static int stk_slot(struct stacks *st)
{
	if (st->nstks < st->o.max_stacks) {
		for (unsigned i = 0; i < st->o.max_stacks; i++)
			if (!st->stks[i].id)
				return (int)i;
	}
	int victim = -1;
	for (unsigned i = 0; i < st->o.max_stacks; i++) {
		struct stk *s = &st->stks[i];
		if (s->state == STACKS_PENDING)
			continue;
		if (victim < 0 || s->seen < st->stks[victim].seen)
			victim = (int)i;
	}
	if (victim < 0)
		return -1;
	ht_del(&st->stk_ht, st->stks[victim].id);
	stk_clear(&st->stks[victim]);
	st->nstks--;
	st->stats.evicted++;
	return victim;
}

static struct stk *stk_insert(struct stacks *st, uint64_t id, uint32_t pid)
{
	int i = stk_slot(st);
	if (i < 0)
		return NULL;
	struct stk *s = &st->stks[i];
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->pid = pid;
	s->headline = -1;
	s->seen = st->seq;
	ht_put(&st->stk_ht, id, i);
	st->nstks++;
	return s;
}

static struct series *series_get(struct stacks *st, int op, uint64_t id, uint32_t pid)
{
	uint64_t key = series_key(op, id);
	int32_t i = ht_get(&st->ser_ht, key);
	if (i >= 0 && st->ser[i].id == id && st->ser[i].op == op)
		return &st->ser[i];
	if (i >= 0) /* a 64-bit key collision: count it with the first */
		return &st->ser[i];
	int slot = -1;
	if (st->nser < st->o.max_series) {
		for (unsigned k = 0; k < st->o.max_series; k++)
			if (!st->ser[k].id) {
				slot = (int)k;
				break;
			}
	}
	if (slot < 0) {
		for (unsigned k = 0; k < st->o.max_series; k++)
			if (slot < 0 || st->ser[k].seen < st->ser[slot].seen)
				slot = (int)k;
		ht_del(&st->ser_ht, series_key(st->ser[slot].op, st->ser[slot].id));
		st->nser--;
	}
	struct series *s = &st->ser[slot];
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->op = op;
	s->pid = pid;
	ht_put(&st->ser_ht, key, slot);
	st->nser++;
	return s;
}

/* Is dur a tail call of op? The threshold is the op's p95 so far,
 * re-evaluated once per second of event time, and at every power of two
 * of calls while there are few. */
static bool is_tail(struct stacks *st, int op, uint64_t end_ns, uint64_t dur)
{
	struct optail *t = &st->tails[op];
	hist_add(&t->h, dur);
	uint64_t sec = end_ns / NS, n = t->h.n;
	if (sec != t->sec || t->thr == UINT64_MAX || (n < 65536 && !(n & (n - 1)))) {
		t->sec = sec;
		t->thr = t->h.n >= TAIL_MIN_CALLS ? hist_percentile(&t->h, 0.95) : UINT64_MAX;
	}
	return dur >= t->thr;
}

static void note_call(struct stacks *st, const struct ig_event *e)
{
	struct igb_stack *raw = NULL;
	struct collector *coll;

	if (e->op <= IG_OP_NONE || e->op >= IG_OP_MAX)
		return;
	pthread_mutex_lock(&st->mu);
	st->stats.calls++;
	if (!e->stack_id) {
		st->stats.calls_no_stack++;
		pthread_mutex_unlock(&st->mu);
		return;
	}
	st->seq++;
	int i = stk_find(st, e->stack_id);
	coll = st->coll;
	if (i < 0 && coll) {
		/* Copy it out of the kernel now, before the LRU map drops it;
		 * the syscall runs without the lock. */
		pthread_mutex_unlock(&st->mu);
		raw = malloc(sizeof(*raw));
		if (raw && collector_stack(coll, e->stack_id, raw)) {
			free(raw);
			raw = NULL;
		}
		pthread_mutex_lock(&st->mu);
		i = stk_find(st, e->stack_id);
	}
	if (i < 0) {
		if (!pid_known(st, e->pid, true) && coll)
			post(st, (struct job){.type = J_PROC, .pid = e->pid});
		struct stk *s = stk_insert(st, e->stack_id, e->pid);
		if (s && raw) {
			s->raw = raw;
			raw = NULL;
			s->state = STACKS_PENDING;
			if (!post(st, (struct job){.type = J_STACK, .pid = e->pid, .id = s->id})) {
				st->stats.queue_full++;
				s->state = STACKS_MISSING;
			}
		} else if (s) {
			s->state = STACKS_MISSING;
		}
		i = s ? stk_find(st, e->stack_id) : -1;
	} else if (!pid_known(st, e->pid, true) && coll) {
		post(st, (struct job){.type = J_PROC, .pid = e->pid});
	}
	if (i >= 0)
		st->stks[i].seen = st->seq;

	struct series *se = series_get(st, e->op, e->stack_id, e->pid);
	se->calls++;
	se->total_ns += e->dur_ns;
	if (e->dur_ns > se->max_ns)
		se->max_ns = e->dur_ns;
	if (is_tail(st, e->op, e->ts_ns + e->dur_ns, e->dur_ns)) {
		se->tail_calls++;
		se->tail_ns += e->dur_ns;
	}
	if (e->ts_ns + e->dur_ns > se->last_ns)
		se->last_ns = e->ts_ns + e->dur_ns;
	se->seen = st->seq;
	pthread_mutex_unlock(&st->mu);
	free(raw);
}

void stacks_event(struct stacks *st, const struct ig_event *e)
{
	switch (e->kind) {
	case IG_EV_CALL:
		note_call(st, e);
		break;
	case IG_EV_EXEC:
		pthread_mutex_lock(&st->mu);
		if (st->coll) {
			pid_forget(st, e->pid);
			post(st, (struct job){.type = J_EXEC, .pid = e->pid});
		}
		pthread_mutex_unlock(&st->mu);
		break;
	case IG_EV_FORK:
		/* Read the child early: a short-lived worker may be gone by the
		 * time its first stack is resolved. */
		pthread_mutex_lock(&st->mu);
		if (st->coll && e->arg0 && !pid_known(st, (uint32_t)e->arg0, true))
			post(st, (struct job){.type = J_PROC, .pid = (uint32_t)e->arg0});
		pthread_mutex_unlock(&st->mu);
		break;
	case IG_EV_EXIT:
		pthread_mutex_lock(&st->mu);
		if (st->coll)
			post(st, (struct job){.type = J_EXIT, .pid = e->pid});
		pthread_mutex_unlock(&st->mu);
		break;
	default:
		break;
	}
	if (!st->threaded)
		run_jobs_inline(st);
}

void stacks_watch_pid(struct stacks *st, uint32_t pid)
{
	pthread_mutex_lock(&st->mu);
	pid_known(st, pid, true);
	post(st, (struct job){.type = J_PROC, .pid = pid});
	pthread_mutex_unlock(&st->mu);
	if (!st->threaded)
		run_jobs_inline(st);
}

int stacks_add_raw(struct stacks *st, uint64_t id, uint32_t pid, const struct igb_stack *raw)
{
	if (!id)
		return -EINVAL;
	struct igb_stack *copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, raw, sizeof(*copy));
	pthread_mutex_lock(&st->mu);
	if (stk_find(st, id) >= 0) {
		pthread_mutex_unlock(&st->mu);
		free(copy);
		return -EEXIST;
	}
	if (!pid_known(st, pid, true))
		post(st, (struct job){.type = J_PROC, .pid = pid});
	struct stk *s = stk_insert(st, id, pid);
	int r = 0;
	if (!s) {
		free(copy);
		r = -ENOMEM;
	} else {
		s->raw = copy;
		s->state = STACKS_PENDING;
		if (!post(st, (struct job){.type = J_STACK, .pid = pid, .id = id})) {
			st->stats.queue_full++;
			s->state = STACKS_MISSING;
		}
	}
	pthread_mutex_unlock(&st->mu);
	if (!st->threaded)
		run_jobs_inline(st);
	return r;
}

void stacks_reset(struct stacks *st)
{
	pthread_mutex_lock(&st->mu);
	memset(st->ser, 0, st->o.max_series * sizeof(*st->ser));
	memset(st->ser_ht.vals, 0xff, (st->ser_ht.mask + 1) * sizeof(*st->ser_ht.vals));
	st->nser = 0;
	for (int i = 0; i < IG_OP_MAX; i++) {
		hist_clear(&st->tails[i].h);
		st->tails[i].thr = UINT64_MAX;
		st->tails[i].sec = 0;
	}
	pthread_mutex_unlock(&st->mu);
}

/* ---- building frames ------------------------------------------------------------ */

struct builder {
	struct iframe fr[MAX_FRAMES];
	int n;
	char *blob;
	size_t len, cap;
};

static uint32_t bstr(struct builder *b, const char *s)
{
	size_t l = strlen(s) + 1;
	if (b->len + l > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (cap < b->len + l)
			cap *= 2;
		char *n = realloc(b->blob, cap);
		if (!n)
			return 0; /* offset 0 is "" */
		b->blob = n;
		b->cap = cap;
	}
	memcpy(b->blob + b->len, s, l);
	b->len += l;
	return (uint32_t)(b->len - l);
}

static void binit(struct builder *b)
{
	b->n = 0;
	b->blob = NULL;
	b->len = b->cap = 0;
	bstr(b, ""); /* offset 0 */
}

static void badd(struct builder *b, int kind, uint64_t ip, uint64_t off, int line, const char *sym,
		 const char *file, const char *text)
{
	if (b->n >= MAX_FRAMES)
		return;
	struct iframe *f = &b->fr[b->n++];
	f->kind = (uint8_t)kind;
	f->ip = ip;
	f->off = off;
	f->line = line;
	f->sym = sym && *sym ? bstr(b, sym) : 0;
	f->file = file && *file ? bstr(b, file) : 0;
	f->text = bstr(b, text);
	f->src = 0;
}

static const char *base_name(const char *p);

/* A native frame with its source file:line (DWARF line tables). */
static void badd_src(struct builder *b, uint64_t ip, uint64_t off, const char *sym,
		     const char *file, const char *text, const char *src, int line)
{
	badd(b, STACKS_NATIVE, ip, off, src && *src ? line : 0, sym, file, text);
	if (src && *src && line > 0 && b->n > 0)
		b->fr[b->n - 1].src = bstr(b, base_name(src));
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p ? p : "";
}

static void note_frame(struct builder *b, const char *fmt, const char *arg)
{
	char text[320];
	snprintf(text, sizeof(text), fmt, arg);
	badd(b, STACKS_NOTE, 0, 0, 0, NULL, NULL, text);
}

/* Moves the stack's builder output into s and picks the headline. */
static void publish(struct stk *s, struct builder *b)
{
	free(s->fr);
	free(s->blob);
	s->fr = malloc(sizeof(*s->fr) * (size_t)(b->n ? b->n : 1));
	if (!s->fr) {
		free(b->blob);
		s->blob = NULL;
		s->nfr = 0;
		s->state = STACKS_MISSING;
		return;
	}
	memcpy(s->fr, b->fr, sizeof(*s->fr) * (size_t)b->n);
	s->nfr = b->n;
	s->blob = b->blob;
	s->headline = -1;
	for (int i = 0; i < s->nfr && s->headline < 0; i++)
		if (s->fr[i].kind == STACKS_PY)
			s->headline = i;
	for (int i = 0; i < s->nfr && s->headline < 0; i++) {
		const struct iframe *f = &s->fr[i];
		const char *file = base_name(s->blob + f->file);
		if (f->kind == STACKS_NATIVE && f->sym && strncmp(file, "libcuda", 7))
			s->headline = i;
	}
	if (s->headline < 0 && s->nfr)
		s->headline = 0;
	s->state = STACKS_RESOLVED;
}

/* ---- the resolver (resolver thread, or inline) -------------------------------- */

static struct rproc *proc_get(struct stacks *st, uint32_t pid, bool create)
{
	for (unsigned i = 0; i < st->nprocs; i++)
		if (st->procs[i].pid == pid) {
			st->procs[i].last_use = ++st->use_clock;
			return &st->procs[i];
		}
	if (!create)
		return NULL;
	unsigned slot = st->nprocs;
	if (slot == st->o.max_procs) {
		/* Evict: an exited process first, the least recently used. */
		slot = 0;
		for (unsigned i = 1; i < st->nprocs; i++) {
			struct rproc *a = &st->procs[i], *v = &st->procs[slot];
			if (a->exited != v->exited ? a->exited : a->last_use < v->last_use)
				slot = i;
		}
		sym_proc_free(st->procs[slot].maps);
		py_proc_free(st->procs[slot].py);
	} else {
		st->nprocs++;
	}
	struct rproc *p = &st->procs[slot];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->last_use = ++st->use_clock;
	return p;
}

static void publish_note(struct stacks *st, struct rproc *p)
{
	pthread_mutex_lock(&st->mu);
	unsigned i;
	for (i = 0; i < st->npnotes; i++)
		if (st->pnotes[i].pid == p->pid)
			break;
	if (i == st->npnotes) {
		if (st->npnotes == st->o.max_procs)
			i = (unsigned)(p->pid % st->o.max_procs);
		else
			st->npnotes++;
	}
	st->pnotes[i].pid = p->pid;
	snprintf(st->pnotes[i].note, sizeof(st->pnotes[i].note), "%s", p->note);
	unsigned on = 0, unsup = 0;
	for (unsigned k = 0; k < st->nprocs; k++) {
		on += st->procs[k].py_state == PYS_ON;
		unsup += st->procs[k].py_state == PYS_UNSUPPORTED;
	}
	st->stats.py_procs = on;
	st->stats.py_unsupported = unsup;
	st->stats.procs = st->nprocs;
	pthread_mutex_unlock(&st->mu);
}

static void capture(struct stacks *st, struct rproc *p)
{
	int err = 0;
	struct sym_proc *m = sym_proc_capture(st->sym, (int)p->pid, &err);
	if (m && !sym_proc_nmaps(m)) { /* a zombie: its mappings are gone */
		sym_proc_free(m);
		m = NULL;
		err = -ESRCH;
	}
	if (!m) {
		if (err == -ESRCH)
			p->exited = true;
		return;
	}
	sym_proc_free(p->maps);
	p->maps = m;
	p->maps_ns = mono_ns();
}

static void detect_python(struct stacks *st, struct rproc *p)
{
	struct collector *coll;

	if (st->o.no_python || !p->maps || p->exited)
		return;
	py_proc_free(p->py);
	p->py = NULL;
	int r = py_detect(st->sym, p->maps, &p->py, p->note, sizeof(p->note));
	pthread_mutex_lock(&st->mu);
	coll = st->coll;
	pthread_mutex_unlock(&st->mu);
	if (r == 0) {
		p->py_state = PYS_ON;
		if (coll) {
			struct igb_pyproc cfg;
			py_bpf_config(p->py, &cfg);
			int e = collector_set_python(coll, (int)p->pid, &cfg);
			if (e)
				snprintf(p->note + strlen(p->note),
					 sizeof(p->note) - strlen(p->note), " (kernel map: %s)",
					 strerror(-e));
		}
	} else if (r == -EAGAIN && ++p->py_tries < PY_TRIES) {
		p->py_state = PYS_AGAIN;
		pthread_mutex_lock(&st->mu);
		post(st, (struct job){
			     .type = J_PROC, .pid = p->pid, .due_ns = mono_ns() + PY_RETRY_NS});
		pthread_mutex_unlock(&st->mu);
	} else if (r == -ENOTSUP || r == -EAGAIN) {
		p->py_state = PYS_UNSUPPORTED;
	} else {
		p->py_state = PYS_NONE;
		p->note[0] = 0;
	}
	publish_note(st, p);
}

static bool is_eval_frame(const char *sym)
{
	return sym && !strncmp(sym, "_PyEval_EvalFrameDefault", 24);
}

static void resolve_native(struct stacks *st, struct rproc *p, uint64_t ip, struct builder *b)
{
	struct sym_info si;
	char text[320];
	int r = p && p->maps ? sym_resolve(st->sym, p->maps, ip, true, &si) : -ESRCH;

	if (r == 0) {
		char src[128] = "";
		if (si.src_file && si.src_line > 0)
			snprintf(src, sizeof(src), " %s:%d", base_name(si.src_file), si.src_line);
		snprintf(text, sizeof(text), "%s+0x%" PRIx64 " (%s%s)%s", si.name, si.off,
			 base_name(si.path), si.flags & SYM_F_DELETED ? ", deleted" : "", src);
		badd_src(b, ip, si.off, si.name, si.path, text, si.src_file, si.src_line);
		st->stats.frames_resolved++;
		return;
	}
	if (r == -ENOENT && si.path && !(si.flags & SYM_F_ANON))
		snprintf(text, sizeof(text), "0x%" PRIx64 " (%s+0x%" PRIx64 ")", ip,
			 base_name(si.path), si.file_vaddr);
	else if (r == -ENOENT && si.path)
		snprintf(text, sizeof(text), "0x%" PRIx64 " (%s)", ip, si.path);
	else
		snprintf(text, sizeof(text), "0x%" PRIx64 " (?)", ip);
	badd(b, STACKS_NATIVE, ip, r == -ENOENT ? si.file_vaddr : 0, 0, NULL,
	     r == -ENOENT ? si.path : NULL, text);
	st->stats.frames_unresolved++;
}

/* The Python frames of one group (one evaluation loop call). */
static void add_py_group(struct stacks *st, struct rproc *p, const struct igb_stack *raw, int from,
			 int to, struct builder *b, bool *failed)
{
	for (int i = from; i < to; i++) {
		struct py_frame pf;
		char text[320];
		int r = py_resolve(p->py, raw->py[i].code, raw->py[i].instr, &pf);
		if (r) {
			*failed = true;
			continue;
		}
		tfmt(text, sizeof(text), "[py] %s:%d in %s()", pf.file, pf.line, pf.func);
		badd(b, STACKS_PY, 0, 0, pf.line, pf.func, pf.file, text);
		st->stats.py_frames++;
	}
}

static void resolve_stack(struct stacks *st, struct rproc *p, const struct igb_stack *raw,
			  struct builder *b)
{
	int nips = raw->nips > IGB_STACK_MAX ? IGB_STACK_MAX : raw->nips;
	int npy = raw->npy > IGB_PY_MAX ? IGB_PY_MAX : raw->npy;
	bool py = npy > 0 && p && p->py, failed = false;

	/* Mappings read before a library was loaded: read them again. */
	if (p && !p->exited && p->maps && mono_ns() - p->maps_ns > RECAPTURE_NS) {
		for (int i = 0; i < nips; i++)
			if (!sym_proc_covers(p->maps, raw->ips[i])) {
				capture(st, p);
				break;
			}
	}
	if (p && !p->maps && !p->exited)
		capture(st, p);
	/* A return address outside every executable mapping is not one: the
	 * frame-pointer chain broke in the frame before (code built without
	 * frame pointers). Stop there rather than show garbage. */
	int cut = -1;
	if (p && p->maps)
		for (int i = 0; i < nips && cut < 0; i++)
			if (!sym_proc_covers(p->maps, raw->ips[i]))
				cut = i;
	if (cut >= 0)
		nips = cut;

	/* Python frames go in groups, one per call of the evaluation loop
	 * (IGB_PY_ENTRY ends a group), each in place of its native
	 * _PyEval_EvalFrameDefault frame; groups with no such frame (the
	 * interpreter has no frame pointers) go where the interpreter's own
	 * code first appears, else after the last native frame. */
	int gend[IGB_PY_MAX + 1], ng = 0, g = 0;
	if (py) {
		for (int i = 0; i < npy; i++)
			if ((raw->py[i].code & IGB_PY_ENTRY) || i == npy - 1)
				gend[ng++] = i + 1;
	}
	const char *interp = py ? py_path(p->py) : NULL;
	int gstart = 0;
	bool rest_placed = !py;
	for (int i = 0; i < nips; i++) {
		int before = b->n;
		resolve_native(st, p, raw->ips[i], b);
		struct iframe *f = &b->fr[before];
		const char *sym = f->sym ? b->blob + f->sym : NULL;
		const char *file = f->file ? b->blob + f->file : NULL;
		if (py && g < ng && is_eval_frame(sym)) {
			b->n = before; /* the Python frames replace it */
			add_py_group(st, p, raw, gstart, gend[g], b, &failed);
			gstart = gend[g++];
			continue;
		}
		if (py && !rest_placed && g < ng && file && interp && !strcmp(file, interp)) {
			struct iframe nf = *f; /* its strings stay in the blob */
			b->n = before;
			add_py_group(st, p, raw, gstart, npy, b, &failed);
			g = ng;
			rest_placed = true;
			if (b->n < MAX_FRAMES)
				b->fr[b->n++] = nf;
		}
	}
	if (cut > 0) {
		char where[256];
		const struct iframe *last = &b->fr[b->n - 1];
		tfmt(where, sizeof(where),
		     "native frames stop here: the frame-pointer chain breaks after %s (built "
		     "without frame pointers?)",
		     last->file ? base_name(b->blob + last->file) : "this frame");
		note_frame(b, "[note] %s", where);
	}
	if (py && g < ng)
		add_py_group(st, p, raw, gstart, npy, b, &failed);
	if (npy > 0 && !py)
		note_frame(b, "[note] %s", "Python frames captured but the interpreter is unknown");
	if (failed)
		note_frame(b, "[note] %s",
			   p && p->exited
			       ? "Python frames lost: the process exited before they were read"
			       : "some Python frames could not be read");
	if (raw->flags & IGB_STK_PY_TRUNC)
		note_frame(b, "[note] more than %s Python frames: the outermost are not shown",
			   "32");
	if (raw->flags & IGB_STK_PY_ERR)
		note_frame(b, "[note] %s", "the interpreter's frames could not all be read");
	if (p && p->py_state == PYS_UNSUPPORTED && p->note[0])
		note_frame(b, "[note] %s", p->note);
	else if (p && p->py_state == PYS_ON && !(raw->flags & IGB_STK_PY))
		note_frame(b, "[note] %s",
			   "captured before the interpreter was found: no Python frames");
	if (nips == IGB_STACK_MAX)
		note_frame(b, "[note] %s native frames: the outermost may be cut", "64");
	if (!nips && !npy)
		note_frame(b, "[note] %s", "no user frames (no frame pointers at the call?)");
	if (p && !p->maps && nips)
		note_frame(b, "[note] %s", "the process exited before its mappings were read");
}

static void job_stack(struct stacks *st, const struct job *j)
{
	struct igb_stack *raw;
	struct builder b;

	pthread_mutex_lock(&st->mu);
	int i = stk_find(st, j->id);
	raw = i >= 0 ? st->stks[i].raw : NULL;
	if (raw)
		st->stks[i].raw = NULL; /* ours now */
	pthread_mutex_unlock(&st->mu);
	if (!raw)
		return;

	uint64_t t0 = mono_ns();
	struct rproc *p = proc_get(st, j->pid, true);
	binit(&b);
	resolve_stack(st, p, raw, &b);
	uint64_t dt = mono_ns() - t0;

	uint64_t *ips = malloc(sizeof(*ips) * (raw->nips ? raw->nips : 1));
	pthread_mutex_lock(&st->mu);
	st->stats.resolve_ns += dt;
	i = stk_find(st, j->id);
	if (i >= 0) {
		struct stk *s = &st->stks[i];
		if (ips) {
			memcpy(ips, raw->ips, sizeof(*ips) * raw->nips);
			s->ips = ips;
			s->nips = raw->nips;
			ips = NULL;
		}
		publish(s, &b);
		b.blob = NULL;
	}
	pthread_mutex_unlock(&st->mu);
	free(ips);
	free(b.blob);
	free(raw);
}

static void do_job(struct stacks *st, const struct job *j)
{
	struct rproc *p;

	switch (j->type) {
	case J_STACK:
		job_stack(st, j);
		break;
	case J_PROC:
		p = proc_get(st, j->pid, true);
		if (!p->exited)
			capture(st, p);
		if (p->py_state == PYS_UNKNOWN || p->py_state == PYS_AGAIN)
			detect_python(st, p);
		break;
	case J_EXEC:
		/* A new program: stacks queued after this belong to it. */
		p = proc_get(st, j->pid, true);
		sym_proc_free(p->maps);
		p->maps = NULL;
		py_proc_free(p->py);
		p->py = NULL;
		p->py_state = PYS_UNKNOWN;
		p->py_tries = 0;
		p->note[0] = 0;
		pthread_mutex_lock(&st->mu);
		post(st, (struct job){
			     .type = J_PROC, .pid = j->pid, .due_ns = mono_ns() + EXEC_DELAY_NS});
		pthread_mutex_unlock(&st->mu);
		break;
	case J_EXIT:
		if ((p = proc_get(st, j->pid, false)))
			p->exited = true;
		break;
	}
}

static void *resolver_main(void *arg)
{
	struct stacks *st = arg;
	struct job j;

	pthread_mutex_lock(&st->mu);
	while (!st->stop) {
		uint64_t now = mono_ns();
		if (pop(st, &j, now)) {
			st->busy = true;
			pthread_mutex_unlock(&st->mu);
			do_job(st, &j);
			pthread_mutex_lock(&st->mu);
			st->busy = false;
			pthread_cond_broadcast(&st->idle);
			continue;
		}
		pthread_cond_broadcast(&st->idle);
		if (st->ndelayed) {
			uint64_t due = UINT64_MAX;
			for (unsigned i = 0; i < st->ndelayed; i++)
				if (st->delayed[i].due_ns < due)
					due = st->delayed[i].due_ns;
			struct timespec ts = {.tv_sec = (time_t)(due / NS),
					      .tv_nsec = (long)(due % NS)};
			pthread_cond_timedwait(&st->work, &st->mu, &ts);
		} else {
			pthread_cond_wait(&st->work, &st->mu);
		}
	}
	pthread_mutex_unlock(&st->mu);
	return NULL;
}

static void run_jobs_inline(struct stacks *st)
{
	struct job j;
	for (;;) {
		pthread_mutex_lock(&st->mu);
		bool got = pop(st, &j, mono_ns());
		pthread_mutex_unlock(&st->mu);
		if (!got)
			return;
		do_job(st, &j);
	}
}

int stacks_flush(struct stacks *st, int timeout_ms)
{
	uint64_t end = mono_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ull;
	int r = 0;

	if (!st->threaded) {
		run_jobs_inline(st);
		return 0;
	}
	pthread_mutex_lock(&st->mu);
	while (st->qlen || st->busy) {
		struct timespec ts = {.tv_sec = (time_t)(end / NS), .tv_nsec = (long)(end % NS)};
		if (pthread_cond_timedwait(&st->idle, &st->mu, &ts) == ETIMEDOUT) {
			r = (st->qlen || st->busy) ? -ETIMEDOUT : 0;
			break;
		}
	}
	pthread_mutex_unlock(&st->mu);
	return r;
}

/* ---- recordings: the stack_traces format (store/recfmt.h) ----------------------- */

/* A frame as the recording format has it; strings point into s. */
static struct rec_frame rec_frame_of(const struct stk *s, const struct iframe *f)
{
	const char *sym = s->blob + f->sym, *file = s->blob + f->file;
	switch (f->kind) {
	case STACKS_PY:
		return (struct rec_frame){
		    .kind = REC_FRAME_PY, .line = f->line, .sym = sym, .file = file, .note = ""};
	case STACKS_NOTE:
		return (struct rec_frame){
		    .kind = REC_FRAME_NOTE, .sym = "", .file = "", .note = s->blob + f->text};
	default:
		return (struct rec_frame){.kind = REC_FRAME_NATIVE,
					  .ip = f->ip,
					  .off = f->off,
					  .line = f->src ? f->line : 0,
					  .sym = sym,
					  .file = base_name(file),
					  .note = "",
					  .src = f->src ? s->blob + f->src : ""};
	}
}

/* *ips ("" when none) and *frames ("" while not resolved) as JSON,
 * malloc'd; NULL when out of memory. Called under st->mu. */
static void json_of(const struct stk *s, char **ips, char **frames)
{
	*ips = s->nips ? recfmt_ips_json(s->ips, (size_t)s->nips) : strdup("");
	if (s->state != STACKS_RESOLVED) {
		*frames = strdup("");
		return;
	}
	struct rec_frame *fr = malloc(sizeof(*fr) * (size_t)(s->nfr ? s->nfr : 1));
	*frames = NULL;
	if (!fr)
		return;
	for (int i = 0; i < s->nfr; i++)
		fr[i] = rec_frame_of(s, &s->fr[i]);
	*frames = recfmt_frames_json(fr, (size_t)s->nfr);
	free(fr);
}

/* One frame of a recording into the builder, with its display line.
 * Symbols are demangled (Ingero keeps them mangled). */
static int add_rec_frame(void *ctx, const struct rec_frame *f)
{
	struct builder *b = ctx;
	char text[320];

	switch (f->kind) {
	case REC_FRAME_PY:
		tfmt(text, sizeof(text), "[py] %s:%d in %s()", *f->file ? f->file : "?", f->line,
		     *f->sym ? f->sym : "?");
		badd(b, STACKS_PY, 0, 0, f->line, f->sym, f->file, text);
		return 0;
	case REC_FRAME_NOTE:
		badd(b, STACKS_NOTE, 0, 0, 0, NULL, NULL, f->note);
		return 0;
	}
	if (*f->sym) {
		char *dm = sym_demangle(f->sym);
		const char *sym = dm ? dm : f->sym;
		char src[128] = "";
		if (f->src && *f->src && f->line > 0)
			snprintf(src, sizeof(src), " %s:%d", f->src, f->line);
		tfmt(text, sizeof(text), "%s+0x%" PRIx64 "%s%s%s%s", sym, f->off,
		     *f->file ? " (" : "", f->file, *f->file ? ")" : "", src);
		badd_src(b, f->ip, f->off, sym, f->file, text, f->src, f->line);
		free(dm);
	} else if (f->off && *f->file) {
		tfmt(text, sizeof(text), "0x%" PRIx64 " (%s+0x%" PRIx64 ")", f->ip, f->file,
		     f->off);
		badd(b, STACKS_NATIVE, f->ip, f->off, 0, NULL, f->file, text);
	} else {
		tfmt(text, sizeof(text), "0x%" PRIx64 " (%s)", f->ip, *f->file ? f->file : "?");
		badd(b, STACKS_NATIVE, f->ip, f->off, 0, NULL, f->file, text);
	}
	return 0;
}

/* Parses a recording's row into b and ips: the frames when they parse,
 * else one unresolved frame per address. 0 or -EINVAL (neither parses). */
static int parse_rec_stack(struct builder *b, const char *ips_json, const char *frames_json,
			   uint64_t *ips, int *nips)
{
	uint64_t all[MAX_FRAMES];
	size_t n = 0;
	int r = -EINVAL;

	*nips = 0;
	if (frames_json && *frames_json)
		r = recfmt_frames_parse(frames_json, add_rec_frame, b);
	if (!ips_json || !*ips_json || recfmt_ips_parse(ips_json, all, MAX_FRAMES, &n))
		return r;
	if (r) { /* no frames: the addresses alone */
		b->n = 0;
		for (size_t i = 0; i < n; i++) {
			char text[96];
			snprintf(text, sizeof(text), "0x%" PRIx64 " (?)", all[i]);
			badd(b, STACKS_NATIVE, all[i], 0, 0, NULL, NULL, text);
		}
	}
	*nips = n < IGB_STACK_MAX ? (int)n : IGB_STACK_MAX;
	memcpy(ips, all, sizeof(*ips) * (size_t)*nips);
	return 0;
}

int stacks_add_json(struct stacks *st, uint64_t id, const char *ips_json, const char *frames_json)
{
	struct builder *b = malloc(sizeof(*b));
	uint64_t ips[IGB_STACK_MAX];
	int nips = 0, r;

	if (!b)
		return -ENOMEM;
	binit(b);
	r = parse_rec_stack(b, ips_json, frames_json, ips, &nips);
	if (r) {
		free(b->blob);
		free(b);
		return r;
	}
	pthread_mutex_lock(&st->mu);
	if (stk_find(st, id) >= 0) {
		pthread_mutex_unlock(&st->mu);
		free(b->blob);
		free(b);
		return -EEXIST;
	}
	struct stk *s = stk_insert(st, id, 0);
	if (!s) {
		r = -ENOMEM;
	} else {
		s->loaded = true;
		if (nips && (s->ips = malloc(sizeof(*ips) * (size_t)nips))) {
			memcpy(s->ips, ips, sizeof(*ips) * (size_t)nips);
			s->nips = nips;
		}
		publish(s, b);
		b->blob = NULL;
	}
	pthread_mutex_unlock(&st->mu);
	free(b->blob);
	free(b);
	return r;
}

/* ---- reading ---------------------------------------------------------------------- */

int stacks_frames(struct stacks *st, uint64_t id, struct stacks_frame *out, int max, int *state)
{
	int n = 0;

	pthread_mutex_lock(&st->mu);
	int i = stk_find(st, id);
	if (state)
		*state = i >= 0 ? st->stks[i].state : STACKS_UNKNOWN;
	if (i >= 0 && st->stks[i].state == STACKS_RESOLVED) {
		const struct stk *s = &st->stks[i];
		for (; n < s->nfr && n < max; n++) {
			const struct iframe *f = &s->fr[n];
			struct stacks_frame *o = &out[n];
			o->kind = f->kind;
			o->ip = f->ip;
			o->off = f->off;
			o->line = f->line;
			snprintf(o->sym, sizeof(o->sym), "%s", s->blob + f->sym);
			snprintf(o->file, sizeof(o->file), "%s", s->blob + f->file);
			snprintf(o->text, sizeof(o->text), "%s", s->blob + f->text);
		}
	}
	pthread_mutex_unlock(&st->mu);
	return n;
}

static void fill_stat(struct stacks *st, const struct series *se, struct stacks_stat *o)
{
	memset(o, 0, sizeof(*o));
	o->id = se->id;
	o->op = se->op;
	o->pid = se->pid;
	o->calls = se->calls;
	o->total_ns = se->total_ns;
	o->max_ns = se->max_ns;
	o->tail_calls = se->tail_calls;
	o->tail_ns = se->tail_ns;
	o->last_ns = se->last_ns;
	int i = stk_find(st, se->id);
	o->state = i >= 0 ? st->stks[i].state : STACKS_UNKNOWN;
	if (i >= 0 && st->stks[i].state == STACKS_RESOLVED && st->stks[i].headline >= 0) {
		const struct stk *s = &st->stks[i];
		snprintf(o->headline, sizeof(o->headline), "%s", s->blob + s->fr[s->headline].text);
	} else {
		snprintf(o->headline, sizeof(o->headline), "%s",
			 o->state == STACKS_PENDING ? "(resolving)" : "(stack not available)");
	}
}

static int cmp_stat(const void *a, const void *b, void *arg)
{
	const struct stacks_stat *x = a, *y = b;
	int order = *(const int *)arg;
	uint64_t kx = order == STACKS_BY_TAIL	 ? x->tail_ns
		      : order == STACKS_BY_TOTAL ? x->total_ns
						 : x->calls;
	uint64_t ky = order == STACKS_BY_TAIL	 ? y->tail_ns
		      : order == STACKS_BY_TOTAL ? y->total_ns
						 : y->calls;
	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (order == STACKS_BY_TAIL && x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int stacks_top(struct stacks *st, int op, int order, struct stacks_stat *out, int max)
{
	struct stacks_stat *all;
	int n = 0;

	if (max <= 0)
		return 0;
	pthread_mutex_lock(&st->mu);
	all = malloc(sizeof(*all) * (st->nser ? st->nser : 1));
	if (!all) {
		pthread_mutex_unlock(&st->mu);
		return 0;
	}
	for (unsigned i = 0; i < st->o.max_series; i++) {
		const struct series *se = &st->ser[i];
		if (se->id && (op < 0 || se->op == op) && se->calls)
			fill_stat(st, se, &all[n++]);
	}
	pthread_mutex_unlock(&st->mu);
	qsort_r(all, (size_t)n, sizeof(*all), cmp_stat, &order);
	if (n > max)
		n = max;
	memcpy(out, all, sizeof(*out) * (size_t)n);
	free(all);
	return n;
}

int stacks_series(struct stacks *st, int op, uint64_t id, struct stacks_stat *out)
{
	int r = -ENOENT;
	pthread_mutex_lock(&st->mu);
	int32_t i = ht_get(&st->ser_ht, series_key(op, id));
	if (i >= 0 && st->ser[i].id == id && st->ser[i].op == op) {
		fill_stat(st, &st->ser[i], out);
		r = 0;
	}
	pthread_mutex_unlock(&st->mu);
	return r;
}

int stacks_json(struct stacks *st, uint64_t id, char **ips, char **frames)
{
	int r = -ENOENT;
	*ips = *frames = NULL;
	pthread_mutex_lock(&st->mu);
	int i = stk_find(st, id);
	if (i >= 0) {
		json_of(&st->stks[i], ips, frames);
		r = *ips && *frames ? 0 : -ENOMEM;
	}
	pthread_mutex_unlock(&st->mu);
	if (r) {
		free(*ips);
		free(*frames);
		*ips = *frames = NULL;
	}
	return r;
}

int stacks_drain(struct stacks *st, stacks_json_fn fn, void *ctx)
{
	struct out {
		uint64_t id;
		char *ips, *frames;
	} *v = NULL;
	int n = 0, cap = 0;

	pthread_mutex_lock(&st->mu);
	for (unsigned i = 0; i < st->o.max_stacks; i++) {
		struct stk *s = &st->stks[i];
		if (!s->id || s->loaded || s->drained || s->state != STACKS_RESOLVED)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			struct out *nv = realloc(v, sizeof(*v) * (size_t)cap);
			if (!nv)
				break;
			v = nv;
		}
		json_of(s, &v[n].ips, &v[n].frames);
		if (!v[n].ips || !v[n].frames) {
			free(v[n].ips);
			free(v[n].frames);
			continue;
		}
		v[n].id = s->id;
		s->drained = true;
		n++;
	}
	pthread_mutex_unlock(&st->mu);
	for (int i = 0; i < n; i++) {
		fn(ctx, v[i].id, v[i].ips, v[i].frames);
		free(v[i].ips);
		free(v[i].frames);
	}
	free(v);
	return n;
}

void stacks_get_stats(struct stacks *st, struct stacks_stats *out)
{
	pthread_mutex_lock(&st->mu);
	*out = st->stats;
	out->stacks = st->nstks;
	out->resolved = out->pending = out->missing = 0;
	for (unsigned i = 0; i < st->o.max_stacks; i++) {
		const struct stk *s = &st->stks[i];
		if (!s->id)
			continue;
		out->resolved += s->state == STACKS_RESOLVED;
		out->pending += s->state == STACKS_PENDING;
		out->missing += s->state == STACKS_MISSING;
	}
	pthread_mutex_unlock(&st->mu);
}

void stacks_proc_note(struct stacks *st, uint32_t pid, char *buf, int len)
{
	if (len <= 0)
		return;
	buf[0] = 0;
	pthread_mutex_lock(&st->mu);
	for (unsigned i = 0; i < st->npnotes; i++)
		if (st->pnotes[i].pid == pid) {
			snprintf(buf, (size_t)len, "%s", st->pnotes[i].note);
			break;
		}
	pthread_mutex_unlock(&st->mu);
}
