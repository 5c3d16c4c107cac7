/* The window snapshot (model/window.h): built at a second boundary from
 * the same fill functions as the read API, with the window ending at the
 * boundary, into buffers the model allocates once when a hook is set. */
#include "model/model_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"

/* Series described at most: every (op, process) series the model holds. */
static unsigned series_cap(const struct ig_model *m)
{
	return m->cfg.max_op_procs;
}

int window_alloc(struct ig_model *m)
{
	if (m->win_procs)
		return 0;
	m->win_procs = calloc(IG_WIN_PROCS, sizeof(*m->win_procs));
	m->win_all = calloc(IG_WIN_PROCS, sizeof(*m->win_all));
	m->win_series = calloc(series_cap(m), sizeof(*m->win_series));
	m->win_threads = calloc((size_t)IG_WIN_PROCS * IG_WIN_THREADS, sizeof(*m->win_threads));
	m->win_nccl = calloc(NC_RANKS, sizeof(*m->win_nccl));
	m->win_gpus = calloc(IG_GPU_MAX_DEVS, sizeof(*m->win_gpus));
	if (!m->win_procs || !m->win_all || !m->win_series || !m->win_threads || !m->win_nccl ||
	    !m->win_gpus) {
		window_free(m);
		return -ENOMEM;
	}
	return 0;
}

void window_free(struct ig_model *m)
{
	free(m->win_procs);
	free(m->win_all);
	free(m->win_series);
	free(m->win_threads);
	free(m->win_nccl);
	free(m->win_gpus);
	m->win_nccl = NULL;
	m->win_gpus = NULL;
	m->win_procs = NULL;
	m->win_all = NULL;
	m->win_series = NULL;
	m->win_threads = NULL;
}

static int cmp_series_op(const void *a, const void *b)
{
	const struct ig_win_series *x = a, *y = b;
	return x->s.op - y->s.op;
}

/* The (op, process) series of pid, in op order, into out[max]. */
static int proc_series(const struct ig_model *m, uint64_t end, uint32_t pid,
		       struct ig_win_series *out, int max)
{
	int n = 0;
	for (unsigned k = 0; k < m->sp.t.n && n < max; k++) {
		const struct series *S = m->sp.s[k];
		if (S->pid != pid)
			continue;
		struct ig_win_series *o = &out[n++];
		series_fill(m, end, S, &o->s);
		o->win = &S->win;
		o->nslow = slow_calls(m, S->op, pid, o->slow, IG_SLOW_MAX);
	}
	qsort(out, (size_t)n, sizeof(*out), cmp_series_op);
	return n;
}

/* The busiest threads of pid with their off-CPU timelines, into out[max]. */
static int proc_threads(const struct ig_model *m, uint64_t end, uint32_t pid,
			struct ig_win_thread *out, int max)
{
	struct ig_thread_stats t[IG_WIN_THREADS];
	int n = threads_busiest(m, end, pid, t, max < IG_WIN_THREADS ? max : IG_WIN_THREADS);
	for (int i = 0; i < n; i++) {
		out[i].t = t[i];
		const struct thread *th = thread_find(m, t[i].tid);
		out[i].ntl = th ? thread_offcpu(th, out[i].tl, IG_TL_MAX) : 0;
	}
	return n;
}

void window_emit(struct ig_model *m, uint64_t k)
{
	if (window_alloc(m))
		return;
	struct ig_window *w = &m->win;
	uint64_t end = k * NS;
	unsigned ns = 0, cap = series_cap(m);

	memset(w, 0, sizeof(*w));
	w->now_ns = end;
	totals_fill(m, end, &w->tot);
	model_host(m, &w->host);
	w->nall = procs_sorted(m, end, m->win_all, IG_WIN_PROCS);
	w->all = m->win_all;
	w->procs = m->win_procs;
	for (int i = 0; i < w->nall; i++) {
		const struct ig_proc_stats *p = &m->win_all[i];
		if (!p->cuda || !p->calls_win)
			continue;
		struct ig_win_proc *wp = &m->win_procs[w->nprocs];
		wp->p = p;
		wp->ops = &m->win_series[ns];
		wp->nops = proc_series(m, end, p->pid, wp->ops, (int)(cap - ns));
		ns += (unsigned)wp->nops;
		wp->thr = &m->win_threads[(size_t)w->nprocs * IG_WIN_THREADS];
		wp->nthr = proc_threads(m, end, p->pid, wp->thr, IG_WIN_THREADS);
		w->nprocs++;
	}
	w->nnccl = nccl_window_ranks(m, end, m->win_nccl, NC_RANKS);
	w->nccl = m->win_nccl;
	w->ngpus = gpu_stats_at(m, end, m->win_gpus, IG_GPU_MAX_DEVS);
	w->gpus = m->win_gpus;
	m->win_fn(m->win_ctx, w);
}
