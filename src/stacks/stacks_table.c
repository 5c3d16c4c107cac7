/* The stacks module's tables, under stacks.mu: stacks by id and (op, stack)
 * series (both capped LRU tables, core/lru.h), the per-op tail thresholds,
 * the set of pids sent to the resolver, the frame lists of resolved stacks,
 * and the read API that copies them out. */
#include "stacks/stacks_int.h"

#include <errno.h>
#include <stdlib.h>

int stk_tab_init(struct stacks *st)
{
	st->stks = calloc(st->o.max_stacks, sizeof(*st->stks));
	st->ser = calloc(st->o.max_series, sizeof(*st->ser));
	st->tails = calloc(IG_OP_MAX, sizeof(*st->tails));
	st->pnotes = calloc(st->o.max_procs, sizeof(*st->pnotes));
	if (!st->stks || !st->ser || !st->tails || !st->pnotes ||
	    lru_init(&st->stk_lru, st->o.max_stacks) || lru_init(&st->ser_lru, st->o.max_series) ||
	    ht_init(&st->known, KNOWN_PIDS))
		return -ENOMEM;
	for (int i = 0; i < IG_OP_MAX; i++) {
		hist_clear(&st->tails[i].h);
		st->tails[i].thr = UINT64_MAX;
	}
	return 0;
}

static void stk_clear(struct stk *s)
{
	free(s->raw);
	free(s->ips);
	free(s->fr);
	free(s->blob);
	memset(s, 0, sizeof(*s));
}

void stk_tab_free(struct stacks *st)
{
	for (unsigned i = 0; st->stks && i < st->stk_lru.n; i++)
		stk_clear(&st->stks[i]);
	lru_free(&st->stk_lru);
	lru_free(&st->ser_lru);
	ht_free(&st->known);
	free(st->stks);
	free(st->ser);
	free(st->tails);
	free(st->pnotes);
}

/* ---- stacks and series ----------------------------------------------------- */

int stk_find(struct stacks *st, uint64_t id)
{
	return lru_find(&st->stk_lru, id);
}

int stk_insert(struct stacks *st, uint64_t id, uint32_t pid)
{
	int32_t i = lru_get(&st->stk_lru, id, NULL, NULL, NULL);
	struct stk *s = &st->stks[i];

	stk_clear(s); /* the evicted stack's, if any */
	s->id = id;
	s->pid = pid;
	s->headline = -1;
	stk_seen(st, i);
	return i;
}

void stk_seen(struct stacks *st, int i)
{
	lru_touch(&st->stk_lru, i, st->seq);
}

static uint64_t series_key(int op, uint64_t id)
{
	return id ^ ((uint64_t)(op + 1) * 0x9e3779b97f4a7c15ull);
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

void stk_series_count(struct stacks *st, const struct ig_event *e)
{
	int fresh;
	/* a 64-bit key collision is counted with the first series */
	int32_t i = lru_get(&st->ser_lru, series_key(e->op, e->stack_id), &fresh, NULL, NULL);
	struct series *se = &st->ser[i];
	uint64_t end = e->ts_ns + e->dur_ns;

	if (fresh) {
		memset(se, 0, sizeof(*se));
		se->id = e->stack_id;
		se->op = e->op;
		se->pid = e->pid;
	}
	se->calls++;
	se->total_ns += e->dur_ns;
	if (e->dur_ns > se->max_ns)
		se->max_ns = e->dur_ns;
	if (is_tail(st, e->op, end, e->dur_ns)) {
		se->tail_calls++;
		se->tail_ns += e->dur_ns;
	}
	if (end > se->last_ns)
		se->last_ns = end;
	lru_touch(&st->ser_lru, i, st->seq);
}

void stk_series_reset(struct stacks *st)
{
	lru_clear(&st->ser_lru);
	for (int i = 0; i < IG_OP_MAX; i++) {
		hist_clear(&st->tails[i].h);
		st->tails[i].thr = UINT64_MAX;
		st->tails[i].sec = 0;
	}
}

bool stk_pid_known(struct stacks *st, uint32_t pid, bool add)
{
	if (!pid) /* no process (a recording's stack) */
		return true;
	if (ht_get(&st->known, pid) >= 0)
		return true;
	if (add) {
		if (st->nknown ==
		    KNOWN_PIDS) { /* full: start over (a process is at worst read again) */
			ht_clear(&st->known);
			st->nknown = 0;
		}
		ht_put(&st->known, pid, 1);
		st->nknown++;
	}
	return false;
}

void stk_pid_forget(struct stacks *st, uint32_t pid)
{
	if (ht_get(&st->known, pid) < 0)
		return;
	ht_del(&st->known, pid);
	st->nknown--;
}

/* ---- frame lists ------------------------------------------------------------- */

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

void stk_binit(struct builder *b)
{
	b->n = 0;
	b->blob = NULL;
	b->len = b->cap = 0;
	bstr(b, ""); /* offset 0 */
}

void stk_badd(struct builder *b, int kind, uint64_t ip, uint64_t off, int line, const char *sym,
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

void stk_badd_src(struct builder *b, uint64_t ip, uint64_t off, const char *sym, const char *file,
		  const char *text, const char *src, int line)
{
	stk_badd(b, STACKS_NATIVE, ip, off, src && *src ? line : 0, sym, file, text);
	if (src && *src && line > 0 && b->n > 0)
		b->fr[b->n - 1].src = bstr(b, base_name(src));
}

void stk_bnote(struct builder *b, const char *fmt, const char *arg)
{
	char text[320];
	tfmt(text, sizeof(text), fmt, arg);
	stk_badd(b, STACKS_NOTE, 0, 0, 0, NULL, NULL, text);
}

void stk_publish(struct stk *s, struct builder *b)
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
	all = malloc(sizeof(*all) * (st->ser_lru.n ? st->ser_lru.n : 1));
	if (!all) {
		pthread_mutex_unlock(&st->mu);
		return 0;
	}
	for (unsigned i = 0; i < st->ser_lru.n; i++) {
		const struct series *se = &st->ser[i];
		if ((op < 0 || se->op == op) && se->calls)
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
	int32_t i = lru_find(&st->ser_lru, series_key(op, id));
	if (i >= 0 && st->ser[i].id == id && st->ser[i].op == op) {
		fill_stat(st, &st->ser[i], out);
		r = 0;
	}
	pthread_mutex_unlock(&st->mu);
	return r;
}

void stacks_get_stats(struct stacks *st, struct stacks_stats *out)
{
	pthread_mutex_lock(&st->mu);
	*out = st->stats;
	out->stacks = st->stk_lru.n;
	out->evicted = st->stk_lru.evicted;
	out->resolved = out->pending = out->missing = 0;
	for (unsigned i = 0; i < st->stk_lru.n; i++) {
		const struct stk *s = &st->stks[i];
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
