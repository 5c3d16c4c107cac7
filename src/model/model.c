/* The model's life cycle and clock: configuration, creation, reset, and the
 * second boundaries at which the window snapshot goes to the hook and the
 * window rotates. Tables are fixed-capacity arrays found through capped
 * LRU tables (core/lru.h); 1-second slices are rings indexed by
 * second % window. Histogram series expire their oldest slice eagerly at
 * each second boundary (so the window histogram is always ready to read);
 * the small per-process and per-thread slices carry their second and are
 * filtered when read. */
#include "model/model_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"

void model_cfg_default(struct ig_model_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->window_s = 10;
	c->max_procs = 256;
	c->max_threads = 1024;
	c->max_op_procs = 256;
	c->max_op_threads = 256;
	c->cold_calls = 5;
	c->outlier_x = 5;
}

static unsigned clampu(unsigned v, unsigned lo, unsigned hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static void stab_free(struct stab *t)
{
	if (t->s)
		for (unsigned k = 0; k < t->t.cap; k++)
			free(t->s[k]);
	free(t->s);
	lru_free(&t->t);
}

void model_free(struct ig_model *m)
{
	if (!m)
		return;
	for (int op = 0; op < IG_OP_MAX; op++)
		free(m->ops[op]);
	stab_free(&m->sp);
	stab_free(&m->st);
	lru_free(&m->ph);
	lru_free(&m->th);
	free(m->procs);
	free(m->threads);
	free(m->psl);
	free(m->tsl);
	free(m->slow);
	free(m->slow_life);
	free(m->callev);
	free(m->gsl);
	free(m->scratch_p);
	free(m->nccl);
	free(m->gpu);
	window_free(m);
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
	c->cold_calls = clampu(c->cold_calls ? c->cold_calls : 5, 1, 1000);
	if (!(c->outlier_x >= 1.5 && c->outlier_x <= 1000)) /* also NaN */
		c->outlier_x = 5;
	m->W = c->window_s;
	if (lru_init(&m->sp.t, c->max_op_procs) || lru_init(&m->st.t, c->max_op_threads) ||
	    lru_init(&m->ph, c->max_procs) || lru_init(&m->th, c->max_threads))
		goto fail;
	m->sp.s = calloc(c->max_op_procs, sizeof(*m->sp.s));
	m->st.s = calloc(c->max_op_threads, sizeof(*m->st.s));
	m->procs = calloc(c->max_procs, sizeof(*m->procs));
	m->threads = calloc(c->max_threads, sizeof(*m->threads));
	m->psl = calloc((size_t)c->max_procs * m->W, sizeof(*m->psl));
	m->tsl = calloc((size_t)c->max_threads * m->W, sizeof(*m->tsl));
	m->slow = calloc((size_t)IG_OP_MAX * m->W, sizeof(*m->slow));
	m->slow_life = calloc(IG_OP_MAX, sizeof(*m->slow_life));
	m->callev = calloc(IG_CALLEV_MAX, sizeof(*m->callev));
	m->gsl = calloc(m->W, sizeof(*m->gsl));
	m->scratch_p = calloc(c->max_procs, sizeof(*m->scratch_p));
	m->nccl = calloc(1, sizeof(*m->nccl));
	m->gpu = calloc(1, sizeof(*m->gpu));
	if (!m->sp.s || !m->st.s || !m->procs || !m->threads || !m->psl || !m->tsl || !m->slow ||
	    !m->slow_life || !m->callev || !m->gsl || !m->scratch_p || !m->nccl || !m->gpu)
		goto fail;
	nccl_reset(m);
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
	for (unsigned k = 0; k < m->sp.t.n; k++)
		series_clear(m->sp.s[k], m->W, 1);
	for (unsigned k = 0; k < m->st.t.n; k++)
		series_clear(m->st.s[k], m->W, 0);
	lru_clear(&m->sp.t);
	lru_clear(&m->st.t);
	lru_clear(&m->th);
	memset(m->tsl, 0, (size_t)m->cfg.max_threads * m->W * sizeof(*m->tsl));
	for (unsigned k = 0; k < m->ph.n; k++) { /* keep names, drop numbers */
		struct proc *p = &m->procs[k];
		struct proc keep = *p;
		memset(p, 0, sizeof(*p));
		p->pid = keep.pid;
		p->ppid = keep.ppid;
		memcpy(p->comm, keep.comm, sizeof(p->comm));
		memcpy(p->container, keep.container, sizeof(p->container));
		p->cgroup_id = keep.cgroup_id;
		p->quota.quota_us = keep.quota.quota_us; /* the limit, not its counts */
		p->quota.period_us = keep.quota.period_us;
		p->quota.v2 = keep.quota.v2;
		p->env = keep.env;
		p->env_src = keep.env_src;
		p->env_initial = keep.env_initial;
		memcpy(p->quota.dir, keep.quota.dir, sizeof(p->quota.dir));
		p->exited = keep.exited;
		p->exit_ns = keep.exit_ns;
		p->first_ns = m->clock_ns;
		p->last_ns = keep.last_ns;
		p->sl = keep.sl;
		memset(p->sl, 0, m->W * sizeof(*p->sl));
	}
	memset(m->slow, 0, (size_t)IG_OP_MAX * m->W * sizeof(*m->slow));
	memset(m->slow_life, 0, IG_OP_MAX * sizeof(*m->slow_life));
	memset(m->callev, 0, IG_CALLEV_MAX * sizeof(*m->callev));
	m->callev_i = 0;
	memset(m->gsl, 0, m->W * sizeof(*m->gsl));
	memset(&m->tot, 0, sizeof(m->tot));
	nccl_reset(m);
	gpu_reset(m);
	if (m->started)
		m->first_ns = m->clock_ns;
}

/* The clock enters second k: the hook gets the window of the W complete
 * seconds before it; then the slice that leaves the window is dropped. */
static void tick(struct ig_model *m, uint64_t k)
{
	if (m->win_fn) {
		window_emit(m, k);
		m->tot.windows++;
	}
	model_thresholds(m, k);
	model_expire(m, k);
	m->cur_sec = k;
}

void model_advance_to(struct ig_model *m, uint64_t t)
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
	model_advance_to(m, now_ns);
}

void model_set_probe_ns(struct ig_model *m, uint32_t ns)
{
	m->probe_ns = ns;
}

void model_set_window_hook(struct ig_model *m, ig_window_fn fn, void *ctx)
{
	m->win_fn = fn;
	m->win_ctx = ctx;
	if (fn)
		window_alloc(m); /* or at the first boundary */
}
