/* The detector's decisions: for every CUDA process in the window, what took
 * its feeding threads' wall time (the parts the model measured) and how
 * much; each cause that takes at least sev_low of it becomes a chain whose
 * impact is that share and whose severity follows impact and confidence.
 * Tail classes (allocator spikes, cold start) and the evidence-gated ones
 * (sync storm, copies) have rules of their own. docs/detection.md. */
#include "detect/detect_int.h"

#include <math.h>
#include <string.h>

#include "core/ops.h"

static int has_tail(const struct ctx *x, const struct ig_series_stats *s)
{
	return s->calls_win >= x->cfg->min_calls && s->win.p50 &&
	       s->tail_ratio >= x->cfg->tail_ratio;
}

static const struct ig_win_series *wseries(const struct ctx *x, int op)
{
	for (int i = 0; i < x->wp->nops; i++)
		if (x->wp->ops[i].s.op == op)
			return &x->wp->ops[i];
	return NULL;
}

/* The tail of the window is only the first (cold) calls of this series. */
static int cold_explains(const struct ctx *x, const struct ig_series_stats *s)
{
	if (s->cold_n < x->cfg->cold_calls || s->cold_end_ns < x->ws)
		return 0;
	const struct ig_win_series *ws = wseries(x, s->op);
	if (!ws || !ws->win)
		return 0;
	uint64_t thr = (uint64_t)((double)s->win.p50 * x->cfg->tail_ratio);
	/* only slow first calls explain a tail: with fast ones, the first few
	 * outliers of a periodic spike would pass for a cold start */
	if (s->cold_max_ns < thr)
		return 0;
	return hist_count_above(ws->win, thr) <= s->cold_n + s->calls_win / 200;
}

static void set_culprit(struct cause *c, const struct ctx *x, const struct ig_culprit *k)
{
	c->culprit_pid = k->pid;
	memcpy(c->culprit_comm, k->comm, sizeof(c->culprit_comm));
	c->culprit_share = k->share;
	c->culprit_self = k->pid == x->p->pid;
}

/* The culprit is the process itself (its own work, waits or sleeps). */
static void set_self(struct cause *c, const struct ctx *x)
{
	c->culprit_pid = x->p->pid;
	memcpy(c->culprit_comm, x->p->comm, sizeof(c->culprit_comm));
	c->culprit_self = 1;
}

static void emit(struct ctx *x, struct cause *c, int op)
{
	struct finding f;
	detect_finding_init(&f, c->cls, c->sev, op, x->p);
	f.c.tid = x->feeder ? x->feeder->tid : 0;
	f.c.impact = c->impact;
	f.c.culprit_pid = c->culprit_pid;
	f.c.culprit_tid = c->culprit_tid;
	memcpy(f.c.culprit_comm, c->culprit_comm, sizeof(f.c.culprit_comm));
	if (c->tail) {
		f.c.p50_ns = c->tail->win.p50;
		f.c.p99_ns = c->tail->win.p99;
		f.c.tail_ratio = c->tail->tail_ratio;
	}
	detect_words_time_cause(x, c, &f);
	detect_fire(x->d, &f, x->now);
}

/* The copies of the window (outer calls) and what the copy rule claims. */
struct copies {
	uint64_t own_ns;  /* in copy calls, not preempted */
	uint64_t wait_ns; /* of which in copies that wait for the GPU (sync copies) */
	uint64_t all_ns;  /* in every outer CUDA call: the share's denominator */
	uint64_t calls, bytes, top_ns;
	int top;     /* the copy op with the most time */
	int claimed; /* the copy rule makes a chain of them */
};

static void copies_of(const struct ctx *x, struct copies *k)
{
	memset(k, 0, sizeof(*k));
	for (int i = 0; i < x->wp->nops; i++) {
		const struct ig_series_stats *s = &x->wp->ops[i].s;
		const struct ig_op_info *oi = ig_op_info(s->op);
		if (nested(s))
			continue;
		k->all_ns += s->time_win_ns;
		if (!oi || !(oi->kind & IG_OPK_COPY))
			continue;
		k->own_ns += op_own_ns(s);
		if (oi->kind & (IG_OPK_SYNC | IG_OPK_IMPLICIT_SYNC))
			k->wait_ns += op_own_ns(s);
		k->calls += s->calls_win;
		k->bytes += s->bytes_win;
		if (s->time_win_ns > k->top_ns) {
			k->top_ns = s->time_win_ns;
			k->top = s->op;
		}
	}
	/* Large copies are the cause; small ones that wait (a loss.item() of 4
	 * bytes) are synchronisations, the GPU wait's or a storm's. */
	const struct ig_time_parts *P = x->parts;
	k->claimed = k->calls >= x->cfg->min_calls && P->wall_ns &&
		     (double)k->bytes / (double)k->calls >= (double)x->cfg->copy_min_bytes &&
		     (double)k->own_ns / (double)P->wall_ns >= x->cfg->sev_low;
	if (k->wait_ns > P->ns[IG_PART_GPU_WAIT])
		k->wait_ns = P->ns[IG_PART_GPU_WAIT];
}

/* The op whose tail was spent preempted the most: what CPU contention did
 * to the calls, beside what it did to the time between them. */
static void preempted_tail(const struct ctx *x, struct cause *c)
{
	uint64_t best = 0;
	for (int i = 0; i < x->wp->nops; i++) {
		const struct ig_series_stats *s = &x->wp->ops[i].s;
		if (nested(s) || !has_tail(x, s) || cold_explains(x, s))
			continue;
		if (s->tail_preempt_share < 0.10 || s->tail_preempt_ns <= best)
			continue;
		best = s->tail_preempt_ns;
		c->tail = s;
		c->tail_ws = &x->wp->ops[i];
	}
}

/* A culprit from a table of threads (ig_culprit: pid the tid, aux its
 * process). */
static void set_thread(struct cause *c, const struct ctx *x, const struct ig_culprit *k)
{
	/* a process's main thread (or a waker whose thread was not recorded) is
	 * the process */
	c->culprit_tid = k->aux && k->aux != k->pid ? k->pid : 0;
	c->culprit_pid = k->aux ? k->aux : k->pid;
	memcpy(c->culprit_comm, k->comm, sizeof(c->culprit_comm));
	c->culprit_share = k->share;
	c->culprit_self = k->aux == x->p->pid;
}

/* The tracer itself: ingero-top (this run's, or the recording's by its
 * name) and its hold guardian. It wakes a process it held while it
 * attached to a library it loaded (docs/collector.md): its cost, not the
 * process's input. */
static int tracer(const struct ctx *x, const struct ig_culprit *k)
{
	uint32_t pid = k->aux ? k->aux : k->pid;
	return (x->cfg->self_pid && pid == x->cfg->self_pid) ||
	       !strncmp(k->comm, "ingero-top", IG_COMM_LEN) ||
	       !strncmp(k->comm, "ingero-top-hold", IG_COMM_LEN);
}

static const struct ig_win_proc *win_proc(const struct ig_window *w, uint32_t pid)
{
	for (int i = 0; i < w->nprocs; i++)
		if (w->procs[i].p->pid == pid)
			return &w->procs[i];
	return NULL;
}

/* A culprit process that has exited names a past cause: a chain it already
 * has keeps firing while its evidence leaves the window, but none opens (a
 * share that crosses a threshold after the exit is the window sliding, not
 * the culprit acting). At the end the run is judged whole, exits and all. */
static int culprit_gone(const struct ctx *x, const struct cause *c, int cls)
{
	if (x->d->end || !c->culprit_pid || c->culprit_self)
		return 0;
	const struct ig_win_proc *cp = win_proc(x->w, c->culprit_pid);
	return cp && cp->p->exited && !detect_active(x->d, cls, 0, x->p->pid);
}

/* Who is behind each time class (rules below). */
enum {
	WHO_SELF,
	WHO_PREEMPTOR,
	WHO_WAKER,
	WHO_THREAD,
	WHO_STOPPER,
	WHO_PEER,
	WHO_CGROUP,
	WHO_NONE
};

static const struct tclass {
	int cls, who;
} tclasses[] = {
    {IG_CC_CPU_CONTENTION, WHO_PREEMPTOR},
    {IG_CC_CPU_QUOTA, WHO_CGROUP},
    {IG_CC_LOADER_WAIT, WHO_WAKER},
    {IG_CC_LOCK_WAIT, WHO_THREAD},
    {IG_CC_GIL_WAIT, WHO_THREAD},
    {IG_CC_BACKPRESSURE, WHO_THREAD},
    {IG_CC_STOPPED, WHO_STOPPER},
    {IG_CC_NET_WAIT, WHO_PEER},
    {IG_CC_BLOCK_IO, WHO_SELF},
    {IG_CC_FILE_IO, WHO_SELF},
    {IG_CC_COLD_READ, WHO_SELF},
    {IG_CC_PAGE_FAULTS, WHO_SELF},
    {IG_CC_HOST_WORK, WHO_SELF},
    {IG_CC_TIMER_SLEEP, WHO_SELF},
    {IG_CC_OFFCPU_WAIT, WHO_NONE},
};

/* The threads a thread class names: who let go of the lock, the GIL, who
 * drained the pipe. */
static const struct ig_culprit *thread_table(const struct ig_proc_stats *p, int cls, int *n)
{
	*n = cls == IG_CC_LOCK_WAIT ? p->nlockers : cls == IG_CC_GIL_WAIT ? p->ngil : p->ndrainers;
	return cls == IG_CC_LOCK_WAIT  ? p->lockers
	       : cls == IG_CC_GIL_WAIT ? p->gil_holders
				       : p->drainers;
}

/* The feeding thread sleeps poll_sleeps times or more between two calls,
 * where it sleeps: it checks something between its sleeps. */
static int polls(const struct ctx *x)
{
	const struct ig_thread_stats *t = x->feeder;
	return t && t->slept_gaps_win >= x->cfg->min_calls &&
	       (double)t->gap_sleeps_win >= x->cfg->poll_sleeps * (double)t->slept_gaps_win;
}

/* The causes that are a part of the wall time, one chain each: the part
 * is the impact; the culprit and the confidence decide the severity. */
static void time_causes(struct ctx *x)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	const struct ig_time_parts *P = x->parts;
	const struct ig_proc_stats *p = x->p;
	int split = !P->split_unknown;
	for (size_t i = 0; i < sizeof(tclasses) / sizeof(tclasses[0]); i++) {
		const struct tclass *tc = &tclasses[i];
		struct cause c;
		memset(&c, 0, sizeof(c));
		c.cls = tc->cls;
		c.impact = detect_class_share(tc->cls, P);
		/* with synchronous launches, the host work that the GPU's work
		 * would hide once they are queued is theirs */
		if (tc->cls == IG_CC_HOST_WORK && x->launch_sync)
			c.impact -= (double)x->lw->own_ns / (double)P->wall_ns;
		if (c.impact < cfg->sev_low)
			continue;
		int named = 1, confirmed = 1, n;
		const struct ig_culprit *k;
		switch (tc->who) {
		case WHO_PREEMPTOR:
			if (p->npreemptors) {
				set_culprit(&c, x, &p->preemptors[0]);
				c.culprit_policy = p->preemptors[0].aux;
			}
			preempted_tail(x, &c);
			named = c.culprit_pid != 0;
			confirmed = split;
			break;
		case WHO_WAKER: /* a thread (tid, its process in aux), not the tracer */
			for (int j = 0; j < p->nwakers; j++)
				if (!tracer(x, &p->wakers[j])) {
					set_thread(&c, x, &p->wakers[j]);
					break;
				}
			named = c.culprit_pid != 0;
			break;
		case WHO_THREAD:
			if ((k = thread_table(p, tc->cls, &n)) && n)
				set_thread(&c, x, k);
			named = c.culprit_pid != 0;
			break;
		case WHO_STOPPER: /* who let it go on, not the tracer's own holds */
			for (n = 0; n < p->nstoppers && tracer(x, &p->stoppers[n]);)
				n++;
			if (n == p->nstoppers && n)
				continue; /* only ingero-top's holds while it attached */
			if (n < p->nstoppers)
				set_thread(&c, x, &p->stoppers[n]);
			named = c.culprit_pid != 0;
			break;
		case WHO_PEER:
			named = p->npeers > 0; /* the address is said in the words */
			break;
		case WHO_SELF:
			set_self(&c, x);
			/* a fault of unrecorded kind (no wait evidence) */
			if (tc->cls == IG_CC_PAGE_FAULTS)
				c.unconfirmed = !P->waits_seen;
			/* without off-CPU states (Ingero) "running" is only "not seen
			 * off CPU" */
			if (tc->cls == IG_CC_HOST_WORK)
				c.unconfirmed =
				    !x->w->tot.by_kind[IG_EV_OFFCPU] ||
				    (p->off_unknown_ns && !p->off_preempt_ns && !p->off_blocked_ns);
			confirmed = !c.unconfirmed;
			break;
		case WHO_NONE:
			c.unconfirmed = 1;
			named = confirmed = 0;
			break;
		}
		if (culprit_gone(x, &c, tc->cls))
			continue;
		c.sev = sev_of(cfg, c.impact, named, confirmed);
		/* a loop paced by its own timer idles by design: said, never an
		 * alarm; one that sleeps again and again between two calls polls
		 * for something (what, the kernel does not see: none named) */
		if (tc->cls == IG_CC_TIMER_SLEEP && polls(x)) {
			c.cls = IG_CC_POLL_WAIT;
			c.sev = sev_of(cfg, c.impact, 0, confirmed);
		} else if (tc->cls == IG_CC_TIMER_SLEEP) {
			c.sev = IG_SEV_INFO;
		}
		emit(x, &c, c.tail ? c.tail->op : x->feeder->main_op);
	}
}

/* GPU-bound: the healthy case, said once it is a large part; the wait
 * inside large copies is the copy chain's when it makes one, and a sync
 * with nothing launched since the last one waited for no GPU work (a
 * storm's round trip: rt_sync_ns). Judged after the other rules: whether
 * the host keeps up is whether none of them fired for the process. */
static void rule_gpu_bound(struct ctx *x, const struct copies *k)
{
	const struct ig_time_parts *P = x->parts;
	struct cause c;
	memset(&c, 0, sizeof(c));
	c.cls = IG_CC_GPU_BOUND;
	c.impact = ig_part_share(P, IG_PART_GPU_WAIT);
	if (k->claimed && P->wall_ns)
		c.impact -= (double)k->wait_ns / (double)P->wall_ns;
	if (P->wall_ns) {
		c.impact = fmax(0, c.impact - (double)P->rt_sync_ns / (double)P->wall_ns);
		/* synchronous launches that waited for the GPU spinning, long
		 * enough that their own CPU work is a small part of it */
		if (x->lw->blocking && x->lw->longer)
			c.impact +=
			    (double)(x->lw->own_ns < P->ns[IG_PART_API] ? x->lw->own_ns
									: P->ns[IG_PART_API]) /
			    (double)P->wall_ns;
	}
	c.unconfirmed = P->split_unknown;
	c.sev = IG_SEV_INFO;
	if (c.impact < x->cfg->gpu_info)
		return;
	x->host_causes = 0;
	x->paced = 0;
	for (int i = 0; i < x->d->n; i++) {
		const struct ig_chain *o = &x->d->c[i];
		if (!x->d->fired_now[i] || o->pid != x->p->pid)
			continue;
		x->host_causes += o->severity >= IG_SEV_LOW;
		/* its own timers (INFO): the host sleeps, it does not keep up */
		if (o->cls == IG_CC_TIMER_SLEEP && o->impact >= x->cfg->sev_low)
			x->paced = o->impact;
	}
	emit(x, &c, x->feeder->main_op);
}

/* The op that synchronises most often (outer calls): what a storm names. */
static int sync_op(const struct ctx *x)
{
	int op = x->feeder->main_op;
	uint64_t most = 0;
	for (int i = 0; i < x->wp->nops; i++) {
		const struct ig_series_stats *s = &x->wp->ops[i].s;
		const struct ig_op_info *oi = ig_op_info(s->op);
		if (nested(s) || !oi || !(oi->kind & (IG_OPK_SYNC | IG_OPK_IMPLICIT_SYNC)))
			continue;
		if (s->calls_win > most) {
			most = s->calls_win;
			op = s->op;
		}
	}
	return op;
}

/* Syncs that cost GPU work: many short round trips (outer synchronisations
 * per second, each with little GPU wait and host time around it) during
 * which the GPU idles: the time of the calls made with nothing queued
 * (rt_idle_ns: the first launch after a sync until it is queued, a sync
 * that waits for nothing, their traps) is the impact. Without a storm, a
 * large API share is launch overhead. */
static void api_causes(struct ctx *x)
{
	if (x->lw->blocking) /* synchronous launches: every launch a round trip */
		return;
	const struct ig_detect_cfg *cfg = x->cfg;
	const struct ig_time_parts *P = x->parts;
	const struct ig_thread_stats *t = x->feeder;
	/* slow first calls still in the window are the cold start's, not launch
	 * overhead */
	uint64_t cold = 0;
	for (int i = 0; i < x->wp->nops; i++) {
		const struct ig_series_stats *s = &x->wp->ops[i].s;
		if (nested(s) || s->cold_end_ns < x->ws)
			continue;
		if (s->calls_win < s->cold_n + cfg->min_calls)
			cold += s->time_win_ns; /* still warming up: none of it is overhead */
		else if (s->cold_mean_ns > s->win.p50)
			cold += s->cold_n * (s->cold_mean_ns - s->win.p50);
	}
	/* copies that do not wait for the GPU and allocations are API time too:
	 * theirs are the copy and allocation rules' to judge */
	for (int i = 0; i < x->wp->nops; i++) {
		const struct ig_series_stats *s = &x->wp->ops[i].s;
		const struct ig_op_info *oi = ig_op_info(s->op);
		if (nested(s) || !oi)
			continue;
		if (((oi->kind & IG_OPK_COPY) &&
		     !(oi->kind & (IG_OPK_SYNC | IG_OPK_IMPLICIT_SYNC))) ||
		    (oi->kind & IG_OPK_ALLOC))
			cold += op_own_ns(s);
	}
	uint64_t api_ns = P->ns[IG_PART_API] > cold ? P->ns[IG_PART_API] - cold : 0;
	double api = P->wall_ns ? (double)api_ns / (double)P->wall_ns : 0;
	uint64_t syncs =
	    t->sync_calls_win > t->sync_nested_win ? t->sync_calls_win - t->sync_nested_win : 0;
	double wall_s = (double)P->wall_ns / 1e9;
	double rate = wall_s > 0 ? (double)syncs / wall_s : 0;
	double rt = P->wall_ns ? (double)P->rt_idle_ns / (double)P->wall_ns : 0;
	if (api < cfg->sev_low && rt < cfg->sev_low)
		return;
	struct cause c;
	memset(&c, 0, sizeof(c));
	c.impact = api;
	set_self(&c, x);
	c.unconfirmed = P->split_unknown;
	c.sev = sev_of(cfg, c.impact, 1, !c.unconfirmed);
	if (syncs && rate >= cfg->storm_rate) {
		double gpu_per = (double)P->ns[IG_PART_GPU_WAIT] / (double)syncs;
		double work_per = (double)(P->wall_ns - P->ns[IG_PART_GPU_WAIT]) / (double)syncs;
		/* How much of the round trips the GPU idled: at least the calls
		 * made with nothing queued (rt_idle_ns); all the API work when
		 * each sync finds little GPU work against the rest of the time
		 * (short kernels: the GPU idles through every launch), and the
		 * return half of each sync's probe traps (it runs once the GPU
		 * has finished); only those calls when the GPU wait dominates
		 * (after the first launch the GPU is busy) */
		double idle = rt;
		double short_k = api + (double)(P->sync_trap_ns / 2) / (double)P->wall_ns;
		int by_api = gpu_per < cfg->storm_gpu_ratio * work_per && short_k > idle;
		if (by_api)
			idle = short_k;
		if (idle >= cfg->sev_low && gpu_per < (double)cfg->storm_gpu_max_ns &&
		    work_per < (double)cfg->storm_host_max_ns) {
			c.cls = IG_CC_SYNC_STORM;
			c.impact = idle;
			c.sev = sev_of(cfg, c.impact, 1, !c.unconfirmed);
			struct finding f;
			detect_finding_init(&f, c.cls, c.sev, sync_op(x), x->p);
			f.c.tid = t->tid;
			f.c.impact = c.impact;
			f.c.culprit_pid = c.culprit_pid;
			memcpy(f.c.culprit_comm, c.culprit_comm, sizeof(f.c.culprit_comm));
			struct storm_words sw = {rate, syncs, gpu_per, work_per, rt, by_api};
			detect_words_sync_storm(x, &c, &f, &sw);
			detect_fire(x->d, &f, x->now);
			return;
		}
	}
	if (api >= cfg->launch_api) {
		c.cls = IG_CC_LAUNCH_BOUND;
		emit(x, &c, t->main_op);
	}
}

/* Large copies take a real part of the wall time: the impact is the time
 * in them (not preempted), the waits of synchronous copies included. */
static void rule_copy(struct ctx *x, const struct copies *k)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	if (!k->claimed)
		return;
	struct cause c;
	memset(&c, 0, sizeof(c));
	c.cls = IG_CC_COPY_DOMINATED;
	c.impact = fmin(1.0, (double)k->own_ns / (double)x->parts->wall_ns);
	c.sev = sev_of(cfg, c.impact, 1, 1);
	/* loading weights and data right after start is expected: say it, low */
	if (x->p->first_ns >= x->ws && c.sev > IG_SEV_LOW)
		c.sev = IG_SEV_LOW;
	struct finding f;
	detect_finding_init(&f, c.cls, c.sev, k->top, x->p);
	f.c.tid = x->feeder->tid;
	f.c.impact = c.impact;
	double share = k->all_ns ? (double)k->own_ns / (double)k->all_ns : 0;
	double mean = (double)k->bytes / (double)k->calls;
	double bps = k->own_ns ? (double)k->bytes / ((double)k->own_ns / 1e9) : 0;
	detect_words_copy(x, &c, &f, k->top, share, mean, bps, k->calls);
	detect_fire(x->d, &f, x->now);
}

/* Median gap between the spikes and whether all gaps are within tolerance.
 * The spikes are the outliers within an order of magnitude of the largest
 * (PERIOD_SPIKE_DIV): a call stretched by a preemption or a fresh page is an
 * outlier of the op's p50 too, and would split one period in two. */
#define PERIOD_SPIKE_DIV 8
static int period_of(const struct ig_series_stats *s, double tol, double *period_s, int *n_in)
{
	int n = s->noutliers;
	if (n < 2)
		return 0;
	uint64_t omax = 0, ts[IG_OUTLIERS];
	for (int i = 0; i < n; i++)
		if (s->outlier_dur[i] > omax)
			omax = s->outlier_dur[i];
	int nts = 0;
	for (int i = 0; i < n; i++)
		if (s->outlier_dur[i] >= omax / PERIOD_SPIKE_DIV)
			ts[nts++] = s->outlier_ts[i];
	if (nts < 3) /* two gaps at least, as for the outliers themselves */
		return 0;
	double gaps[IG_OUTLIERS], sorted[IG_OUTLIERS];
	for (int i = 1; i < nts; i++)
		gaps[i - 1] = (double)(ts[i] - ts[i - 1]) / 1e9;
	int ng = nts - 1;
	memcpy(sorted, gaps, sizeof(double) * (size_t)ng);
	for (int i = 1; i < ng; i++)
		for (int j = i; j > 0 && sorted[j] < sorted[j - 1]; j--) {
			double t = sorted[j];
			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	double med = sorted[ng / 2];
	int ok = med > 0;
	for (int i = 0; i < ng && ok; i++)
		if (fabs(gaps[i] - med) > tol * med)
			ok = 0;
	*period_s = med;
	*n_in = n;
	return ok;
}

/* Allocations: the impact is the time in the op's calls (not preempted),
 * whether every call costs it (a loop that allocates each step) or a few
 * outliers do (spikes: the caching allocator growing); outliers alone are
 * said LOW however small, as a tail the user sees in the op table. */
static void rule_alloc(struct ctx *x, const struct ig_series_stats *s)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	const struct ig_op_info *oi = ig_op_info(s->op);
	if (!oi || !(oi->kind & IG_OPK_ALLOC) || nested(s) || !x->parts->wall_ns)
		return;
	if (s->calls_win < cfg->min_calls || cold_explains(x, s))
		return;
	double impact = fmin(1.0, (double)op_own_ns(s) / (double)x->parts->wall_ns);
	int spikes = has_tail(x, s) && (int)s->noutliers >= (int)cfg->alloc_min_outliers &&
		     s->outlier_ts[s->noutliers - 1] >= x->ws;
	if (!spikes && impact < cfg->sev_low)
		return;
	double period = 0;
	int n = 0, periodic = spikes && period_of(s, cfg->alloc_period_tol, &period, &n);
	uint64_t omax = 0;
	for (int i = 0; spikes && i < s->noutliers; i++)
		if (s->outlier_dur[i] > omax)
			omax = s->outlier_dur[i];
	/* every tail call of the window, from the window histogram: the outlier
	 * list keeps only the last IG_OUTLIERS */
	const struct ig_win_series *ws = wseries(x, s->op);
	uint64_t thr = (uint64_t)((double)s->win.p50 * cfg->tail_ratio), ntail = 0;
	for (unsigned b = hist_bucket(thr);
	     spikes && ws && ws->win && ws->win->n && b <= ws->win->hi; b++)
		if (ws->win->b[b] && hist_bucket_lo(b) >= thr)
			ntail += ws->win->b[b];
	if (ntail > (uint64_t)n)
		n = (int)ntail;
	struct cause c;
	memset(&c, 0, sizeof(c));
	c.cls = IG_CC_ALLOC_SPIKES;
	c.impact = impact;
	c.sev = sev_of(cfg, c.impact, 1, 1);
	if (spikes && c.sev < IG_SEV_LOW)
		c.sev = IG_SEV_LOW; /* a tail the user sees in the op table, explained */
	c.tail = s;
	struct finding f;
	detect_finding_init(&f, c.cls, c.sev, s->op, x->p);
	f.c.tid = x->feeder->tid;
	f.c.impact = c.impact;
	f.c.p50_ns = s->win.p50;
	f.c.p99_ns = s->win.p99;
	f.c.tail_ratio = s->tail_ratio;
	if (spikes)
		detect_words_alloc(x, &c, &f, s, periodic, period, n, omax);
	else
		detect_words_alloc_steady(x, &c, &f, s);
	detect_fire(x->d, &f, x->now);
}

/* Page-fault stalls of the feeder, or the host short of memory. */
static void rule_memory(struct ctx *x)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	const struct ig_host *h = &x->w->host;
	double fault = ig_part_share(x->parts, IG_PART_MEM_PRESSURE);
	int full = h->valid && h->mem_max_win > cfg->mem_pct;
	/* page allocations alone (a checkpoint filling the page cache) are not
	 * pressure, nor page faults (a cold file, fresh memory): reclaim and
	 * swap-in are; without them, only a host short of memory is worth
	 * saying */
	if (fault < cfg->sev_low && !full) /* swap in use is no pressure: swap-in is */
		return;
	struct cause c;
	memset(&c, 0, sizeof(c));
	c.cls = IG_CC_MEMORY_PRESSURE;
	c.impact = fault;
	set_self(&c, x);
	/* without measured stalls the pressure is context, not a cause */
	c.sev = fault >= cfg->sev_low ? sev_of(cfg, fault, 1, 1) : IG_SEV_INFO;
	struct finding f;
	detect_finding_init(&f, c.cls, c.sev, x->feeder->main_op, x->p);
	f.c.tid = x->feeder->tid;
	f.c.impact = c.impact;
	f.c.culprit_pid = c.culprit_pid;
	memcpy(f.c.culprit_comm, c.culprit_comm, sizeof(f.c.culprit_comm));
	detect_words_memory(x, &c, &f);
	detect_fire(x->d, &f, x->now);
}

/* A burst of slow calls: at least burst_calls calls of an (op, process)
 * series, each burst_x times its settled (lifetime) p50 or more, within
 * burst_span_ms, costing burst_min_ns beyond the p50, holding burst_share of the window's calls
 * that slow (or all of the window's slowest calls: more may lie behind them): a stretch, not a
 * steady tail. The first calls alone are the cold start's. INFO when it began with the series
 * (warm-up) or costs less than sev_low. */
static void rule_burst(struct ctx *x, const struct ig_win_series *ws)
{
	const struct ig_series_stats *s = &ws->s;
	const struct ig_detect_cfg *cfg = x->cfg;
	uint64_t p50 = s->life.p50, span = (uint64_t)cfg->burst_span_ms * 1000000ull;
	if (nested(s) || !p50 || !ws->win || s->calls_life < cfg->min_calls ||
	    s->cold_n < cfg->cold_calls)
		return;
	uint64_t thr = (uint64_t)(cfg->burst_x * (double)p50);
	struct ig_call_rec r[IG_SLOW_MAX];
	int n = 0;
	for (int i = 0; i < ws->nslow; i++) {
		if (ws->slow[i].dur_ns < thr)
			continue;
		int j = n++; /* by entry time */
		while (j > 0 && r[j - 1].ts_ns > ws->slow[i].ts_ns) {
			r[j] = r[j - 1];
			j--;
		}
		r[j] = ws->slow[i];
	}
	int bi = 0, bn = 0;
	for (int i = 0, j = 0; i < n; i++) {
		while (r[i].ts_ns - r[j].ts_ns > span)
			j++;
		if (i - j + 1 > bn) {
			bn = i - j + 1;
			bi = j;
		}
	}
	uint64_t all = hist_count_above(ws->win, thr);
	int full = ws->nslow == IG_SLOW_MAX && bn == n;
	if (bn < (int)cfg->burst_calls || (!full && (double)bn < cfg->burst_share * (double)all))
		return;
	struct burst_words b = {.s = s, .n = bn, .more = full && all > (uint64_t)bn, .split = 1};
	int after_cold = 0;
	for (int k = bi; k < bi + bn; k++) {
		const struct ig_call_rec *c = &r[k];
		after_cold += c->ts_ns >= s->cold_end_ns;
		b.dur_ns += c->dur_ns;
		b.pre_ns += c->preempt_ns;
		b.blk_ns += c->blocked_ns;
		b.cost_ns += c->dur_ns - p50;
		b.split &= !(c->flags & IG_F_NO_SPLIT);
		if (c->dur_ns > b.max_ns) {
			b.max_ns = c->dur_ns;
			b.max_ts = c->ts_ns;
		}
	}
	if (!after_cold || b.cost_ns < cfg->burst_min_ns)
		return;
	b.first_ns = r[bi].ts_ns;
	b.last_ns = r[bi + bn - 1].ts_ns + r[bi + bn - 1].dur_ns;
	b.at_start = b.first_ns < s->first_ns + span;
	struct cause c;
	memset(&c, 0, sizeof(c));
	c.cls = IG_CC_SLOW_BURST;
	c.impact = x->parts->wall_ns ? fmin(1.0, (double)b.cost_ns / (double)x->parts->wall_ns) : 0;
	c.sev =
	    b.at_start || c.impact < cfg->sev_low ? IG_SEV_INFO : sev_of(cfg, c.impact, 0, b.split);
	struct finding f;
	detect_finding_init(&f, c.cls, c.sev, s->op, x->p);
	f.c.tid = x->feeder ? x->feeder->tid : 0;
	f.c.impact = c.impact;
	detect_words_burst(x, &c, &f, &b);
	detect_fire(x->d, &f, x->now);
}

/* The first calls of a series were slow, then it settled (INFO). Judged
 * per copy direction, and on the first calls' own time: a first call that
 * waited for a CPU another task held (or, synchronising, for the GPU) is
 * not warming anything up. */
static void rule_cold(struct ctx *x)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	const struct ig_series_stats *best = NULL;
	double best_x = 0;
	for (int i = 0; i < x->wp->nops; i++) {
		const struct ig_series_stats *s = &x->wp->ops[i].s;
		if (s->cold_key_n < cfg->cold_calls ||
		    s->cold_key_calls < s->cold_key_n + cfg->min_calls || nested(s))
			continue;
		if (x->now > s->first_ns + (uint64_t)cfg->cold_s * NS)
			continue;
		uint64_t settled = s->cold_key_p50_ns;
		if (!settled || (double)s->cold_key_net_ns < cfg->cold_x * (double)settled)
			continue;
		double r = (double)s->cold_key_max_ns / (double)settled;
		if (r > best_x) {
			best_x = r;
			best = s;
		}
	}
	if (!best)
		return;
	struct cause c;
	memset(&c, 0, sizeof(c));
	c.cls = IG_CC_COLD_START;
	uint64_t p50 = best->cold_key_p50_ns;
	uint64_t excess =
	    best->cold_key_n * (best->cold_key_mean_ns > p50 ? best->cold_key_mean_ns - p50 : 0);
	c.impact = x->parts->wall_ns ? fmin(1.0, (double)excess / (double)x->parts->wall_ns) : 0;
	c.sev = IG_SEV_INFO;
	struct finding f;
	detect_finding_init(&f, c.cls, c.sev, best->op, x->p);
	f.c.impact = c.impact;
	detect_words_cold(x, &c, &f, best, best_x);
	detect_fire(x->d, &f, x->now);
}

/* Whether the process is judged in this window: a feeding thread that made
 * calls recently and enough wall time to measure shares against (less in
 * the last window of a run: a run shorter than that is judged whole). */
static int judged(const struct ctx *x)
{
	const struct ig_thread_stats *t = x->feeder;
	uint64_t need = x->d->end ? x->cfg->min_wall_end_ns : x->cfg->min_wall_ns;
	if (!t || !t->calls_win || x->parts->wall_ns < need)
		return 0;
	return t->last_ns + (uint64_t)x->cfg->quiet_s * NS >= x->now;
}

/* Why the process was not judged, in x->d->why_none. */
static void not_judged(struct ctx *x)
{
	char w[40];
	const struct ig_thread_stats *t = x->feeder;
	uint64_t need = x->d->end ? x->cfg->min_wall_end_ns : x->cfg->min_wall_ns;
	detect_who(w, sizeof(w), x->p->comm, x->p->pid);
	if (!t || !t->calls_win)
		detect_put(x->d->why_none, sizeof(x->d->why_none),
			   "%s made no CUDA call in the window", w);
	else if (x->parts->wall_ns < need)
		detect_put(x->d->why_none, sizeof(x->d->why_none),
			   "%s's feeding thread ran %.2f s in the window: too short to judge (from "
			   "%.2f s)",
			   w, (double)x->parts->wall_ns / 1e9, (double)need / 1e9);
	else
		detect_put(x->d->why_none, sizeof(x->d->why_none),
			   "%s made no CUDA call in the last %u s", w, x->cfg->quiet_s);
}

void detect_set_end(struct ig_detect *d, int end)
{
	d->end = end;
}

const char *detect_why_none(const struct ig_detect *d)
{
	return d->why_none;
}

/* The NCCL op a process enqueued most in the window (ncclAllReduce when
 * none is known): what a straggler chain names. */
static int nccl_op(const struct ig_win_proc *wp)
{
	int op = IG_OP_NCCL_ALL_REDUCE;
	uint64_t most = 0;
	for (int i = 0; wp && i < wp->nops; i++) {
		const struct ig_series_stats *s = &wp->ops[i].s;
		const struct ig_op_info *oi = ig_op_info(s->op);
		if (oi && (oi->kind & IG_OPK_COLL) && s->calls_win > most) {
			most = s->calls_win;
			op = s->op;
		}
	}
	return op;
}

/* NCCL stragglers: collectives complete when the last rank arrives, so the
 * rank that waits least for them is the late one, and every rank of the
 * same communicator on this host that waits much longer waits for it. The
 * impact is the victim's extra time in the synchronisations that completed
 * its collectives, over its feeding threads' wall time. */
static void rule_straggler(struct ig_detect *d, const struct ig_window *w)
{
	const struct ig_detect_cfg *cfg = &d->cfg;
	for (int i = 0; i < w->nnccl; i++) {
		const struct ig_nccl_rank *v = &w->nccl[i], *s = NULL;
		if (!v->known || v->done_win < cfg->min_calls)
			continue;
		for (int j = 0; j < w->nnccl; j++) {
			const struct ig_nccl_rank *r = &w->nccl[j];
			if (r->known && r->key == v->key && r->pid != v->pid &&
			    r->done_win >= cfg->min_calls &&
			    (!s || r->wait_mean_ns < s->wait_mean_ns))
				s = r;
		}
		if (!s ||
		    (double)v->wait_mean_ns < cfg->straggler_ratio * (double)s->wait_mean_ns ||
		    v->wait_mean_ns < s->wait_mean_ns + cfg->straggler_min_ns)
			continue;
		const struct ig_win_proc *wp = win_proc(w, v->pid);
		if (!wp || wp->p->parts.wall_ns < cfg->min_wall_ns)
			continue; /* as judged() for the other rules */
		struct ctx x = {.d = d, .cfg = cfg, .w = w, .now = w->now_ns, .wp = wp, .p = wp->p};
		x.ws = w->tot.win_start_ns;
		x.parts = &wp->p->parts;
		x.feeder = wp->nthr && wp->thr[0].t.calls_win ? &wp->thr[0].t : NULL;
		/* the victim's sync time beyond the straggler's, per operation */
		double per_v = (double)v->sync_ns_win / (double)v->done_win;
		double per_s = (double)s->sync_ns_win / (double)s->done_win;
		double excess = (per_v - per_s) * (double)v->done_win;
		double impact = excess > 0 ? fmin(1.0, excess / (double)x.parts->wall_ns) : 0;
		struct cause c;
		memset(&c, 0, sizeof(c));
		c.cls = IG_CC_STRAGGLER;
		c.impact = impact;
		c.culprit_pid = s->pid;
		memcpy(c.culprit_comm, s->comm, sizeof(c.culprit_comm));
		c.sev = sev_of(cfg, impact, 1, 1);
		if (c.sev < IG_SEV_LOW)
			continue;
		struct finding f;
		detect_finding_init(&f, c.cls, c.sev, nccl_op(wp), wp->p);
		f.c.tid = x.feeder ? x.feeder->tid : 0;
		f.c.impact = impact;
		f.c.culprit_pid = s->pid;
		memcpy(f.c.culprit_comm, s->comm, sizeof(f.c.culprit_comm));
		detect_words_straggler(&x, &c, &f, v, s, win_proc(w, s->pid));
		detect_fire(d, &f, w->now_ns);
	}
}

void detect_run(struct ig_detect *d, const struct ig_window *w)
{
	memset(d->fired_now, 0, sizeof(d->fired_now));
	struct ctx x = {.d = d, .cfg = &d->cfg, .w = w, .now = w->now_ns};
	x.ws = w->tot.win_start_ns;
	x.win_s = (double)w->tot.win_span_ns / 1e9;
	int any = 0;
	d->why_none[0] = 0;
	for (int i = 0; i < w->nprocs; i++) {
		const struct ig_win_proc *wp = &w->procs[i];
		x.wp = wp;
		x.p = wp->p;
		x.parts = &wp->p->parts;
		x.feeder = wp->nthr && wp->thr[0].t.calls_win ? &wp->thr[0].t : NULL;
		if (!judged(&x)) {
			if (!any && !d->why_none[0])
				not_judged(&x);
			continue;
		}
		any = 1;
		d->why_none[0] = 0;
		struct copies cp;
		copies_of(&x, &cp); /* the copy chain's and GPU-bound's both */
		struct launch_waits lw;
		detect_launch_waits(&x, &lw);
		x.lw = &lw;
		x.launch_sync = detect_rule_launch_blocking(&x, &lw);
		time_causes(&x);
		api_causes(&x);
		rule_copy(&x, &cp);
		for (int k = 0; k < wp->nops; k++)
			rule_alloc(&x, &wp->ops[k].s);
		rule_memory(&x);
		for (int k = 0; k < wp->nops; k++)
			rule_burst(&x, &wp->ops[k]);
		rule_cold(&x);
		rule_gpu_bound(&x, &cp);
	}
	rule_straggler(d, w);
	detect_age_and_sort(d, w->now_ns);
}

void detect_window(void *ctx, const struct ig_window *w)
{
	detect_run(ctx, w);
}
