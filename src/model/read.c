/* The read API of model.h: statistics of ops, (op, process) and (op,
 * thread) series, processes and threads over the rolling window and since
 * the start. The fill functions take the end of the window explicitly: the
 * clock for the public calls, a second boundary for the window snapshot. */
#include "model/model_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"

uint64_t win_start_sec(const struct ig_model *m)
{
	return m->cur_sec + 1 >= m->W ? m->cur_sec + 1 - m->W : 0;
}

/* Length of the window covered since `since` (first event of the thing). */
uint64_t span_since(const struct ig_model *m, uint64_t we, uint64_t since)
{
	uint64_t ws = win_start_sec(m) * NS;
	if (since < m->first_ns)
		since = m->first_ns;
	if (since > ws)
		ws = since;
	uint64_t s = we > ws ? we - ws : 0;
	return s < MIN_SPAN_NS ? MIN_SPAN_NS : s;
}

/* What every rate is divided by (calls, bytes per second of an op, a
 * process, a thread): the span the window covers, the same for all, so
 * that a process's rate is the sum of its ops' and rate x span = calls;
 * a span under a second counts as a second, so that a first call does not
 * show as 1000/s (tui/figures.h's fig_rate does the same). */
uint64_t rate_span(const struct ig_model *m, uint64_t end)
{
	uint64_t s = span_since(m, end, m->first_ns);
	return s > NS ? s : NS;
}

int in_window(const struct ig_model *m, uint64_t sec)
{
	return sec >= win_start_sec(m) && sec <= m->cur_sec;
}

uint64_t model_now(const struct ig_model *m)
{
	return m->clock_ns;
}

void totals_fill(const struct ig_model *m, uint64_t end, struct ig_model_totals *t)
{
	*t = m->tot;
	t->now_ns = m->clock_ns;
	t->first_ns = m->started ? m->first_ns : 0;
	t->win_start_ns = m->started ? win_start_sec(m) * NS : 0;
	if (t->win_start_ns < t->first_ns)
		t->win_start_ns = t->first_ns;
	t->win_span_ns = m->started ? span_since(m, end, m->first_ns) : 0;
	t->procs = m->ph.n;
	t->threads = m->th.n;
	t->op_procs = m->sp.t.n;
	t->op_threads = m->st.t.n;
}

void model_totals(const struct ig_model *m, struct ig_model_totals *t)
{
	totals_fill(m, m->clock_ns, t);
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

/* Percentiles within [min, max] once those are exact. */
static void pcts_clamp(struct ig_pcts *p)
{
	uint64_t *v[] = {&p->p50, &p->p90, &p->p95, &p->p99, &p->p999};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (*v[i] > p->max)
			*v[i] = p->max;
		if (*v[i] < p->min)
			*v[i] = p->min;
	}
}

static uint64_t series_time_win(const struct ig_model *m, const struct series *S)
{
	uint64_t s = 0;
	for (unsigned j = 0; j < m->W; j++)
		if (S->sl[j].h.n)
			s += S->sl[j].dur;
	return s;
}

static uint64_t thread_span(const struct ig_model *m, uint64_t end, uint32_t tid)
{
	const struct thread *t = thread_find(m, tid);
	return span_since(m, end, t ? t->first_ns : m->first_ns);
}

/* p50 of quarter-octave counts: the middle of the bucket it falls in. */
static uint64_t cold_p50(const uint32_t *sb, uint64_t n)
{
	uint64_t seen = 0;
	for (unsigned c = 0; c < TAILB; c++) {
		seen += sb[c];
		if (seen * 2 >= n && sb[c])
			return hist_bucket_mid((c << TAIL_SHIFT) | (1u << (TAIL_SHIFT - 1)));
	}
	return 0;
}

/* The cold-start key the rule judges (model.h, cold_dir). An op with one
 * key keeps its exact lifetime p50. */
static void cold_fill(const struct ig_model *m, const struct series *S, struct ig_series_stats *o)
{
	const struct ig_op_info *oi = ig_op_info(S->op);
	int copy = oi && (oi->kind & IG_OPK_COPY);
	o->cold_dir = -1;
	o->cold_key_n = 0;
	o->cold_key_max_ns = o->cold_key_net_ns = o->cold_key_mean_ns = 0;
	o->cold_key_calls = o->cold_key_p50_ns = 0;
	if (!S->ck)
		return;
	int keys = 0;
	for (int k = 0; k < COLD_KEYS; k++)
		keys += S->ck[k].calls > 0;
	double best = -1;
	for (int k = 0; k < COLD_KEYS; k++) {
		const struct coldk *c = &S->ck[k];
		if (!c->n)
			continue;
		uint64_t p50 = keys == 1 ? o->life.p50 : cold_p50(c->sb, c->calls);
		int full = c->n >= m->cfg.cold_calls;
		double r = p50 ? (double)c->net_max / (double)p50 : 0;
		/* a key with all its first calls beats one without */
		if (full)
			r += 1e9;
		if (r <= best)
			continue;
		best = r;
		o->cold_dir = copy ? k : -1;
		o->cold_key_n = c->n;
		o->cold_key_max_ns = c->max;
		o->cold_key_net_ns = c->net_max;
		o->cold_key_mean_ns = c->sum / c->n;
		o->cold_key_calls = c->calls;
		o->cold_key_p50_ns = p50;
	}
}

void series_fill(const struct ig_model *m, uint64_t end, const struct series *S,
		 struct ig_series_stats *o)
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
		pcts_clamp(&o->win); /* a bucket's middle may lie past the exact max */
	}
	o->calls_per_s = (double)o->calls_win * 1e9 / (double)rate_span(m, end);
	o->bytes_per_s = (double)o->bytes_win * 1e9 / (double)rate_span(m, end);
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
	for (unsigned k = 0; k < m->st.t.n; k++) {
		const struct series *T = m->st.s[k];
		if (T->op != S->op || !T->win.n)
			continue;
		if (S->level == LV_PROC && T->pid != S->pid)
			continue;
		if (S->level == LV_THREAD && T != S)
			continue;
		t_op += series_time_win(m, T);
		t_wall += thread_span(m, end, T->tid);
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
	o->first_ns = S->first_ns;
	o->cold_n = S->cold_n;
	o->cold_max_ns = S->cold_max;
	o->cold_mean_ns = S->cold_n ? S->cold_sum / S->cold_n : 0;
	o->cold_end_ns = S->cold_end;
	cold_fill(m, S, o);
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
	series_fill(m, m->clock_ns, m->ops[op], out);
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
	for (unsigned k = 0; k < m->sp.t.n && n < max; k++)
		if (m->sp.s[k]->op == op)
			series_fill(m, m->clock_ns, m->sp.s[k], &out[n++]);
	qsort(out, (size_t)n, sizeof(*out), cmp_series_pid);
	return n;
}

int model_op_threads(const struct ig_model *m, int op, uint32_t pid, struct ig_series_stats *out,
		     int max)
{
	int n = 0;
	for (unsigned k = 0; k < m->st.t.n && n < max; k++) {
		const struct series *S = m->st.s[k];
		if (S->op == op && (!pid || S->pid == pid))
			series_fill(m, m->clock_ns, S, &out[n++]);
	}
	qsort(out, (size_t)n, sizeof(*out), cmp_series_pid);
	return n;
}

int model_proc_ops(const struct ig_model *m, uint32_t pid, struct ig_series_stats *out, int max)
{
	int n = 0;
	for (unsigned k = 0; k < m->sp.t.n && n < max; k++)
		if (m->sp.s[k]->pid == pid)
			series_fill(m, m->clock_ns, m->sp.s[k], &out[n++]);
	qsort(out, (size_t)n, sizeof(*out), cmp_series_pid);
	return n;
}

int model_op_proc_stats(const struct ig_model *m, int op, uint32_t pid, struct ig_series_stats *out)
{
	const struct series *S = op_proc_find(m, op, pid);
	if (!S)
		return -ENOENT;
	series_fill(m, m->clock_ns, S, out);
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
		S = op_proc_find(m, op, pid);
	}
	return S ? (lifetime ? &S->life : &S->win) : NULL;
}

int slow_calls(const struct ig_model *m, int op, uint32_t pid, struct ig_call_rec *out, int max)
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
	uint32_t slept_gaps, gap_sleeps;
	uint64_t off[2][3];
	uint32_t sw;
	struct tparts_raw raw;
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
		s->slept_gaps += x->slept_gaps;
		s->gap_sleeps += x->gap_sleeps;
		for (int a = 0; a < 2; a++)
			for (int b = 0; b < 3; b++)
				s->off[a][b] += x->off[a][b];
		s->sw += x->sw[0] + x->sw[1];
		for (int k = 0; k < 2; k++) {
			s->raw.in_busy[k] += x->in_busy[k];
			s->raw.in_pre[k] += x->in_pre[k];
			s->raw.in_blk[k] += x->in_blk[k];
		}
		for (int k = 0; k < BW_N; k++)
			s->raw.bw[k] += x->bw[k];
		s->raw.nosplit += x->nosplit;
		s->raw.outer[0] += x->outer[0];
		s->raw.outer[1] += x->outer[1];
		s->raw.rt_idle += x->rt_idle;
		s->raw.rt_idle_n += x->rt_idle_n;
		s->raw.rt_sync += x->rt_sync;
		s->raw.rt_sync_n += x->rt_sync_n;
		s->raw.thr[0] += x->thr[0];
		s->raw.thr[1] += x->thr[1];
		s->raw.stop_in += x->stop_in;
		for (int k = 0; k < IG_K_N; k++)
			s->raw.kt[k] += x->kt[k];
		s->raw.timed += x->timed;
		s->raw.waits += x->waits;
	}
	for (int k = 0; k < 3; k++)
		s->raw.off_btw[k] = s->off[0][k];
}

/* Lifetime parts of a thread: from its first event to its last. */
static void life_parts(const struct thread *t, uint32_t probe_ns, struct ig_time_parts *out)
{
	struct tparts_raw raw = t->life_raw;
	uint64_t first = t->first_call_ns ? t->first_call_ns : t->first_ns;
	uint64_t last = t->last_ns > first ? t->last_ns : first;
	for (int k = 0; k < 3; k++)
		raw.off_btw[k] = t->life_off[0][k];
	parts_of(&raw, last - first, probe_ns, out);
}

/* Where a thread's wall time ends in a window ending at end: at its
 * process's exit when that came first (or at its own last event, if later). */
static uint64_t wall_end(const struct ig_model *m, const struct thread *t, uint64_t end)
{
	const struct proc *p = proc_find(m, t->pid);
	if (!p || !p->exited)
		return end;
	uint64_t x = p->exit_ns > t->last_ns ? p->exit_ns : t->last_ns;
	return x < end ? x : end;
}

static int thread_active(const struct ig_model *m, const struct thread *t)
{
	return t->last_ns >= win_start_sec(m) * NS;
}

/* The wall time of a thread in the window ending at end: from its first
 * CUDA call (it feeds the GPU from then; before, it was starting), or from
 * its first event for a thread that makes none, to end, or to its
 * process's exit. */
static uint64_t thread_wall(const struct ig_model *m, uint64_t end, const struct thread *t)
{
	if (!thread_active(m, t))
		return 0;
	return span_since(m, wall_end(m, t, end),
			  t->first_call_ns ? t->first_call_ns : t->first_ns);
}

/* The part of a thread's wall time that the parts judge: without the time
 * since its last event, which ends in a call, off CPU or in its own work,
 * and only a later event will say which (a 300 ms call in progress at the
 * window's end is not host work). */
static uint64_t judged_wall(const struct ig_model *m, uint64_t end, const struct thread *t,
			    uint64_t wall)
{
	uint64_t e = wall_end(m, t, end);
	uint64_t pending = e > t->last_ns ? e - t->last_ns : 0;
	return wall > pending ? wall - pending : 0;
}

static double pct(uint64_t a, uint64_t b)
{
	double v = b ? 100.0 * (double)a / (double)b : 0;
	return v > 100 ? 100 : v;
}

/* The call site waited at most, 0 none. */
/* The site with the most time, and its time in *ns when asked. */
static uint64_t site_top(const struct wait_site at[4], uint64_t *ns)
{
	uint64_t most = 0, id = 0;
	for (int i = 0; i < 4; i++)
		if (at[i].id && at[i].ns > most) {
			most = at[i].ns;
			id = at[i].id;
		}
	if (ns)
		*ns = most;
	return id;
}

/* Its call sites (where its feeding threads slept, waited, ran), and the
 * children it forked that share its memory. */
static void proc_sites(const struct ig_model *m, const struct proc *p, struct ig_proc_stats *o)
{
	o->sleep_stack = site_top(p->sleep_at, NULL);
	o->host_stack = site_top(p->host_at, &o->host_stack_ns);
	o->host_sampled_ns = p->host_sampled;
	o->lock_stack = site_top(p->lock_at, NULL);
	o->gil_stack = site_top(p->gil_at, NULL);
	o->lock_wake_stack = site_top(p->wake_at, NULL);
	o->forks = p->forks;
	o->fork_pid = p->fork_pid;
	const struct proc *fc = p->fork_pid ? proc_find(m, p->fork_pid) : NULL;
	if (fc)
		copy_comm(o->fork_comm, fc->comm);
}

/* Who ended its feeding threads' waits, by kind of wait, and how they were
 * stopped most. */
static void proc_culprits(const struct ig_model *m, const struct proc *p, struct ig_proc_stats *o)
{
	o->nwakers = ctab_top(m, &p->wake, o->wakers, 4, 0);
	o->nlockers = ctab_top(m, &p->lock, o->lockers, 4, 0);
	o->ngil = ctab_top(m, &p->gil, o->gil_holders, 4, 0);
	o->ndrainers = ctab_top(m, &p->full, o->drainers, 4, 0);
	o->npeers = ctab_top(m, &p->net, o->peers, 4, 0);
	o->nstoppers = ctab_top(m, &p->stop, o->stoppers, 4, 0);
	o->feeder_sched = p->feed_sched;
	o->stop_kind = IG_STOP_SIGNAL;
	for (int k = IG_STOP_TRACED; k <= IG_STOP_FROZEN; k++)
		if (p->stop_ns[k] > p->stop_ns[o->stop_kind])
			o->stop_kind = k;
}

void proc_fill(const struct ig_model *m, uint64_t end, const struct proc *p,
	       struct ig_proc_stats *o)
{
	memset(o, 0, sizeof(*o));
	o->pid = p->pid;
	o->ppid = p->ppid;
	copy_comm(o->comm, p->comm);
	memcpy(o->container, p->container, sizeof(o->container));
	o->cgroup_id = p->cgroup_id;
	o->first_ns = p->first_ns;
	o->last_ns = p->last_ns;
	o->exited = p->exited;
	o->cuda = p->cuda;
	o->calls_life = p->calls_life;
	o->page_bytes_life = p->page_life;
	o->quota = p->quota;
	o->env = p->env;
	o->env_src = p->env_src;
	o->env_initial = p->env_initial;
	o->cpus_allowed = IG_CPUS_ALLOWED(p->cpus);
	o->cpus_online = IG_CPUS_ONLINE(p->cpus);
	o->cpus_cpuset = IG_CPUS_CPUSET(p->cpus);
	proc_sites(m, p, o);
	for (unsigned j = 0; j < m->W; j++) {
		const struct pslice *s = &p->sl[j];
		if (!in_window(m, s->sec))
			continue;
		o->quota.thr_ns += s->cg_thr_ns;
		o->quota.nr_thr += s->cg_nr_thr;
		o->quota.nr_per += s->cg_nr_per;
		o->calls_win += s->calls;
		o->page_bytes_win += s->page_bytes;
		o->io_ops_win += s->io_ops;
		o->io_bytes_win += s->io_bytes;
		o->io_lat_ns_win += s->io_lat;
		if (s->io_max > o->io_max_ns_win)
			o->io_max_ns_win = s->io_max;
	}
	o->calls_per_s = (double)o->calls_win * 1e9 / (double)rate_span(m, end);
	/* two passes: feeding threads (calls in the window), else all active */
	uint64_t pre_all = 0;
	int feeding = 0;
	uint64_t feeder_calls = 0, feeder_cuda = 0, feeder_life = 0;
	for (unsigned k = 0; k < m->th.n; k++) {
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
	for (unsigned k = 0; k < m->th.n; k++) {
		const struct thread *t = &m->threads[k];
		if (t->pid != p->pid || !thread_active(m, t))
			continue;
		struct tsum s;
		thread_sum(m, t, &s);
		if (feeding && !s.calls)
			continue;
		uint64_t span = thread_wall(m, end, t);
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
		struct ig_time_parts tp;
		parts_of(&s.raw, judged_wall(m, end, t, span), m->probe_ns, &tp);
		parts_add(&o->parts, &tp);
		if (s.calls > feeder_calls ||
		    (s.calls == feeder_calls && s.cuda_ns > feeder_cuda)) {
			feeder_calls = s.calls;
			feeder_cuda = s.cuda_ns;
			o->feeder_tid = t->tid;
		}
	}
	for (unsigned k = 0; k < m->th.n; k++) {
		const struct thread *t = &m->threads[k];
		if (t->pid != p->pid || (p->cuda && !t->calls_life))
			continue;
		o->life_cuda_ns += t->life_cuda;
		o->life_off_preempt_ns += t->life_off[0][ST_PRE] + t->life_off[1][ST_PRE];
		o->life_off_blocked_ns += t->life_off[0][ST_BLK] + t->life_off[1][ST_BLK];
		o->life_off_unknown_ns += t->life_off[0][ST_UNK] + t->life_off[1][ST_UNK];
		o->life_off_between_ns += t->life_off[0][0] + t->life_off[0][1] + t->life_off[0][2];
		struct ig_time_parts tp;
		life_parts(t, m->probe_ns, &tp);
		parts_add(&o->life_parts, &tp);
		o->life_wall_ns += tp.wall_ns;
		if (!feeder_calls && t->calls_life > feeder_life) { /* none in the window */
			feeder_life = t->calls_life;
			o->feeder_tid = t->tid;
		}
	}
	o->io_dev = p->io_dev;
	uint64_t off = o->off_preempt_ns + o->off_blocked_ns + o->off_unknown_ns;
	o->off_pct = pct(off, o->wall_ns);
	o->off_preempt_pct = pct(o->off_preempt_ns, o->wall_ns);
	o->off_blocked_pct = pct(o->off_blocked_ns, o->wall_ns);
	o->off_unknown_pct = pct(o->off_unknown_ns, o->wall_ns);
	o->between_pct = pct(o->off_between_ns, o->wall_ns);
	o->npreemptors = ctab_top(m, &p->pre, o->preemptors, 4, pre_all);
	proc_culprits(m, p, o);
	o->file_dev = p->file_dev;
	o->gpu_mem_known = gpu_proc_mem(m, p->pid, &o->gpu_mem_bytes, &o->gpu_devs) == 0;
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

int procs_sorted(const struct ig_model *m, uint64_t end, struct ig_proc_stats *out, int max)
{
	if (max <= 0)
		return 0;
	for (unsigned k = 0; k < m->ph.n; k++)
		proc_fill(m, end, &m->procs[k], &m->scratch_p[k]);
	qsort(m->scratch_p, m->ph.n, sizeof(*m->scratch_p), cmp_proc);
	int n = (int)m->ph.n < max ? (int)m->ph.n : max;
	memcpy(out, m->scratch_p, (size_t)n * sizeof(*out));
	return n;
}

int model_procs(const struct ig_model *m, struct ig_proc_stats *out, int max)
{
	return procs_sorted(m, m->clock_ns, out, max);
}

int model_proc(const struct ig_model *m, uint32_t pid, struct ig_proc_stats *out)
{
	const struct proc *p = proc_find(m, pid);
	if (!p)
		return -ENOENT;
	proc_fill(m, m->clock_ns, p, out);
	return 0;
}

void thread_fill(const struct ig_model *m, uint64_t end, const struct thread *t,
		 struct ig_thread_stats *o)
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
	o->calls_per_s = (double)s.calls * 1e9 / (double)rate_span(m, end);
	o->wall_ns = thread_wall(m, end, t);
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
	o->slept_gaps_win = s.slept_gaps;
	o->gap_sleeps_win = s.gap_sleeps;
	parts_of(&s.raw, judged_wall(m, end, t, o->wall_ns), m->probe_ns, &o->parts);
	life_parts(t, m->probe_ns, &o->life_parts);
	o->last_preemptor_pid = t->pre_pid;
	copy_comm(o->last_preemptor_comm, t->pre_comm);
	copy_comm(o->comm, t->comm);
	uint64_t best = 0;
	for (unsigned k = 0; k < m->st.t.n; k++) {
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

int threads_busiest(const struct ig_model *m, uint64_t end, uint32_t pid,
		    struct ig_thread_stats *out, int max)
{
	int n = 0;
	/* keep the busiest max: fill, then replace the least busy when better */
	for (unsigned k = 0; k < m->th.n; k++) {
		const struct thread *t = &m->threads[k];
		if (pid && t->pid != pid)
			continue;
		struct ig_thread_stats s;
		thread_fill(m, end, t, &s);
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

int thread_offcpu(const struct thread *t, struct ig_offcpu_rec *out, int max)
{
	int n = t->tl_n < max ? t->tl_n : max;
	for (int i = 0; i < n; i++)
		out[i] = t->tl[(t->tl_i - n + i + IG_TL_MAX) % IG_TL_MAX];
	return n;
}

void model_host(const struct ig_model *m, struct ig_host *o)
{
	memset(o, 0, sizeof(*o));
	o->valid = m->host_valid;
	o->self_cpu_pct =
	    m->host_valid && (m->host.flags & IG_SNAP_SELF) ? (double)m->host.arg2 / 10.0 : -1;
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

const char *model_comm(const struct ig_model *m, uint32_t pid)
{
	const struct proc *p = proc_find(m, pid);
	return p ? p->comm : "";
}

int model_threads(const struct ig_model *m, uint32_t pid, struct ig_thread_stats *out, int max)
{
	return threads_busiest(m, m->clock_ns, pid, out, max);
}

int model_thread_offcpu(const struct ig_model *m, uint32_t tid, struct ig_offcpu_rec *out, int max)
{
	const struct thread *t = thread_find(m, tid);
	return t ? thread_offcpu(t, out, max) : 0;
}

int model_slow_calls_life(const struct ig_model *m, int op, uint32_t pid, struct ig_call_rec *out,
			  int max)
{
	if (op <= 0 || op >= IG_OP_MAX || max <= 0)
		return 0;
	const struct slowslice *s = &m->slow_life[op];
	int n = 0;
	for (int k = 0; k < s->n && n < max; k++)
		if (!pid || s->r[k].pid == pid)
			out[n++] = s->r[k];
	return n;
}

int model_slow_calls(const struct ig_model *m, int op, uint32_t pid, struct ig_call_rec *out,
		     int max)
{
	return slow_calls(m, op, pid, out, max);
}
