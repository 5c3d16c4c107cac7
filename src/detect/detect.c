/* The causal-chain detector: rules over the window snapshot the model hands
 * over once per second (model/window.h) that name the cause of a latency tail, and the bookkeeping that keeps one chain per
 * (class, op, process) alive, updated and finally resolved. The rules and
 * their thresholds are explained in docs/detection.md; keep the two in step. */
#include "detect/detect.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fmt.h"
#include "core/ops.h"
#include "model/window.h"

#define NS 1000000000ull

struct ig_detect {
	struct ig_detect_cfg cfg;
	struct ig_chain c[IG_CHAIN_MAX];
	int n;
	int order[IG_CHAIN_MAX];
	uint8_t fired_now[IG_CHAIN_MAX];
	uint32_t next_id;
	uint64_t gen;
};

static const char *const class_names[IG_CC_MAX] = {
    "cpu_contention", "gpu_bound",	 "host_starvation", "sync_storm", "copy_dominated",
    "alloc_spikes",   "memory_pressure", "block_io",	    "cold_start",
};
static const char *const class_titles[IG_CC_MAX] = {
    "CPU contention",	"GPU-bound wait",  "host starvation", "sync storm", "copy-dominated",
    "allocator spikes", "memory pressure", "block I/O",	      "cold start",
};
static const char *const sev_names[] = {"INFO", "LOW", "MEDIUM", "HIGH"};

const char *detect_class_name(int cls)
{
	return cls >= 0 && cls < IG_CC_MAX ? class_names[cls] : "?";
}

const char *detect_class_title(int cls)
{
	return cls >= 0 && cls < IG_CC_MAX ? class_titles[cls] : "?";
}

const char *detect_sev_name(int sev)
{
	return sev >= IG_SEV_INFO && sev <= IG_SEV_HIGH ? sev_names[sev] : "?";
}

int detect_class_by_name(const char *name)
{
	for (int i = 0; i < IG_CC_MAX; i++)
		if (!strcmp(name, class_names[i]) || !strcmp(name, class_titles[i]))
			return i;
	return -1;
}

double detect_evidence(const struct ig_chain *c, const char *key, double def)
{
	for (int i = 0; i < c->nevidence; i++)
		if (!strcmp(c->ev[i].key, key))
			return c->ev[i].value;
	return def;
}

void detect_cfg_default(struct ig_detect_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->tail_ratio = 3.0;
	c->min_calls = 10;
	c->min_switches = 5;
	c->preempt_low = 0.10;
	c->preempt_med = 0.25;
	c->preempt_high = 0.50;
	c->gpu_blocked = 0.60;
	c->gpu_wall = 0.50;
	c->starve_between = 0.50;
	c->starve_between_high = 0.70;
	c->sync_rate = 200;
	c->sync_wall = 0.25;
	c->copy_share = 0.50;
	c->copy_min_bytes = 65536;
	c->alloc_min_outliers = 3;
	c->alloc_outlier_x = 5.0;
	c->alloc_period_tol = 0.25;
	c->page_bytes = 1ull << 30;
	c->mem_pct = 95;
	c->cpu_pct = 90;
	c->io_ops = 200;
	c->io_total_ns = NS;
	c->io_peak_ns = 50000000ull;
	c->cold_x = 10;
	c->cold_calls = 5;
	c->cold_s = 60;
	c->hold_s = 3;
	c->keep_s = 120;
}

struct ig_detect *detect_new(const struct ig_detect_cfg *cfg)
{
	struct ig_detect *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	if (cfg && cfg->min_calls)
		d->cfg = *cfg;
	else
		detect_cfg_default(&d->cfg);
	return d;
}

void detect_free(struct ig_detect *d)
{
	free(d);
}

void detect_reset(struct ig_detect *d)
{
	d->n = 0;
	d->gen++;
}

int detect_count(const struct ig_detect *d)
{
	return d ? d->n : 0;
}

const struct ig_chain *detect_chain(const struct ig_detect *d, int i)
{
	return d && i >= 0 && i < d->n ? &d->c[d->order[i]] : NULL;
}

const struct ig_chain *detect_find(const struct ig_detect *d, uint32_t id)
{
	for (int i = 0; d && i < d->n; i++)
		if (d->c[i].id == id)
			return &d->c[i];
	return NULL;
}

uint64_t detect_generation(const struct ig_detect *d)
{
	return d ? d->gen : 0;
}

/* --- formatting helpers ------------------------------------------------------- */

/* snprintf without the compiler's truncation warnings: summaries are
 * deliberately cut at their buffer size. */
__attribute__((format(printf, 3, 4))) static int put(char *dst, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vsnprintf(dst, n, fmt, ap);
	va_end(ap);
	return r;
}

/* Durations and sizes are spelt as everywhere else (core/fmt.h). */
static char *fdur(char *b, size_t n, uint64_t ns)
{
	return fmt_ns(b, n, ns);
}

static char *fbytes(char *b, size_t n, double v)
{
	return fmt_bytes(b, n, v > 0 ? (uint64_t)(v + 0.5) : 0);
}

static char *fratio(char *b, size_t n, double r)
{
	put(b, n, r < 10 ? "%.1f" : "%.0f", r);
	return b;
}

static char *who(char *b, size_t n, const char *comm, uint32_t pid)
{
	put(b, n, "%s[%u]", comm && comm[0] ? comm : "?", pid);
	return b;
}

/* --- a finding: what one rule concluded this run ------------------------------- */

struct finding {
	struct ig_chain c; /* content fields only */
	int nsteps;	   /* contributing events to add to the timeline */
	struct ig_tl_entry steps[IG_CHAIN_MAX_TIMELINE];
};

static void f_init(struct finding *f, int cls, int sev, int op, const struct ig_proc_stats *p)
{
	memset(f, 0, sizeof(*f));
	f->c.cls = cls;
	f->c.severity = sev;
	f->c.op = op;
	f->c.pid = p ? p->pid : 0;
	if (p)
		memcpy(f->c.comm, p->comm, IG_COMM_LEN);
}

static void ev(struct finding *f, const char *key, double v, const char *unit)
{
	if (f->c.nevidence >= IG_CHAIN_MAX_EVIDENCE)
		return;
	struct ig_evidence *e = &f->c.ev[f->c.nevidence++];
	put(e->key, sizeof(e->key), "%s", key);
	e->value = v;
	put(e->unit, sizeof(e->unit), "%s", unit);
}

__attribute__((format(printf, 2, 3))) static void rec(struct finding *f, const char *fmt, ...)
{
	if (f->c.nrecs >= IG_CHAIN_MAX_RECS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->c.recs[f->c.nrecs++], sizeof(f->c.recs[0]), fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 3, 4))) static void step(struct finding *f, uint64_t ts,
						       const char *fmt, ...)
{
	if (f->nsteps >= IG_CHAIN_MAX_TIMELINE)
		return;
	struct ig_tl_entry *t = &f->steps[f->nsteps++];
	t->ts_ns = ts;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->text, sizeof(t->text), fmt, ap);
	va_end(ap);
}

static void culprit(struct finding *f, uint32_t pid, const char *comm)
{
	f->c.culprit_pid = pid;
	if (comm)
		put(f->c.culprit_comm, sizeof(f->c.culprit_comm), "%s", comm);
}

static int raise(int sev)
{
	return sev < IG_SEV_HIGH ? sev + 1 : sev;
}

/* Adds the slowest calls of a series in the window as timeline steps. */
static void slow_steps(struct finding *f, const struct ig_win_series *ws, int op, uint64_t min_dur,
		       int max)
{
	const struct ig_call_rec *r = ws ? ws->slow : NULL;
	int n = ws ? (ws->nslow < max ? ws->nslow : max) : 0;
	for (int i = 0; i < n; i++) {
		if (r[i].dur_ns < min_dur)
			break;
		char d[24], pre[24], blk[24], w[40];
		fdur(d, sizeof(d), r[i].dur_ns);
		if (r[i].flags & IG_F_NO_SPLIT)
			step(f, r[i].ts_ns, "%s %s (tid %u), off-CPU split unknown", ig_op_name(op),
			     d, r[i].tid);
		else if (r[i].preempt_ns && r[i].other_pid)
			step(f, r[i].ts_ns, "%s %s (tid %u): %s preempted by %s, %s blocked",
			     ig_op_name(op), d, r[i].tid, fdur(pre, sizeof(pre), r[i].preempt_ns),
			     who(w, sizeof(w), r[i].other_comm, r[i].other_pid),
			     fdur(blk, sizeof(blk), r[i].blocked_ns));
		else
			step(f, r[i].ts_ns, "%s %s (tid %u): %s preempted, %s blocked",
			     ig_op_name(op), d, r[i].tid, fdur(pre, sizeof(pre), r[i].preempt_ns),
			     fdur(blk, sizeof(blk), r[i].blocked_ns));
	}
}

/* --- chain bookkeeping ----------------------------------------------------------- */

/* Per-op classes are one chain per (class, op, process); the process-wide
 * ones one per (class, process), whichever op their summary names: the op
 * of a sync storm or the tail during block I/O may change while the cause
 * stays the same, and must not open a second chain. */
static uint64_t chain_key(int cls, int op, uint32_t pid)
{
	int per_op =
	    cls == IG_CC_CPU_CONTENTION || cls == IG_CC_GPU_BOUND || cls == IG_CC_ALLOC_SPIKES;
	return ((uint64_t)(unsigned)cls << 48) | ((uint64_t)(unsigned)(per_op ? op : 0) << 32) |
	       pid;
}

static void tl_add(struct ig_chain *c, uint64_t ts, const char *text)
{
	/* same event twice (it stays the slowest call for several runs): once */
	for (int i = 0; i < c->ntimeline; i++)
		if (c->timeline[i].ts_ns == ts && !strcmp(c->timeline[i].text, text))
			return;
	if (c->ntimeline == IG_CHAIN_MAX_TIMELINE) {
		memmove(&c->timeline[0], &c->timeline[1],
			sizeof(c->timeline[0]) * (IG_CHAIN_MAX_TIMELINE - 1));
		c->ntimeline--;
	}
	/* keep the timeline in time order */
	int i = c->ntimeline;
	while (i > 0 && c->timeline[i - 1].ts_ns > ts) {
		c->timeline[i] = c->timeline[i - 1];
		i--;
	}
	c->timeline[i].ts_ns = ts;
	put(c->timeline[i].text, sizeof(c->timeline[i].text), "%s", text);
	c->ntimeline++;
}

static int content_differs(const struct ig_chain *a, const struct ig_chain *b)
{
	return a->severity != b->severity || strcmp(a->summary, b->summary) ||
	       a->culprit_pid != b->culprit_pid || a->tid != b->tid ||
	       strcmp(a->lacking, b->lacking);
}

static void fire(struct ig_detect *d, struct finding *f, uint64_t now)
{
	uint64_t key = chain_key(f->c.cls, f->c.op, f->c.pid);
	int i;
	for (i = 0; i < d->n; i++)
		if (d->c[i].key == key)
			break;
	struct ig_chain *c;
	if (i == d->n) {
		if (d->n == IG_CHAIN_MAX) { /* replace the least important, oldest */
			int v = 0;
			for (int k = 1; k < d->n; k++) {
				const struct ig_chain *x = &d->c[k], *y = &d->c[v];
				if (x->active != y->active ? !x->active
				    : x->severity != y->severity
					? x->severity < y->severity
					: x->last_seen_ns < y->last_seen_ns)
					v = k;
			}
			i = v;
		} else {
			d->n++;
		}
		c = &d->c[i];
		memset(c, 0, sizeof(*c));
		c->id = ++d->next_id;
		put(c->id_str, sizeof(c->id_str), "chain-%04u", c->id);
		c->key = key;
		c->first_seen_ns = now;
		c->updated_ns = now;
		d->gen++;
	} else {
		c = &d->c[i];
	}
	struct ig_chain old = *c;
	int was_active = c->active || !c->fired;
	/* copy content, keep identity and history */
	c->cls = f->c.cls;
	c->severity = f->c.severity;
	c->op = f->c.op;
	c->pid = f->c.pid;
	c->tid = f->c.tid;
	memcpy(c->comm, f->c.comm, IG_COMM_LEN);
	c->culprit_pid = f->c.culprit_pid;
	memcpy(c->culprit_comm, f->c.culprit_comm, IG_COMM_LEN);
	c->p50_ns = f->c.p50_ns;
	c->p99_ns = f->c.p99_ns;
	c->tail_ratio = f->c.tail_ratio;
	c->nevidence = f->c.nevidence;
	memcpy(c->ev, f->c.ev, sizeof(c->ev));
	memcpy(c->summary, f->c.summary, sizeof(c->summary));
	memcpy(c->explanation, f->c.explanation, sizeof(c->explanation));
	c->nrecs = f->c.nrecs;
	memcpy(c->recs, f->c.recs, sizeof(c->recs));
	memcpy(c->lacking, f->c.lacking, sizeof(c->lacking));
	if (!old.fired || c->severity > c->max_severity)
		c->max_severity = c->severity;
	char t[112];
	if (!c->fired) {
		put(t, sizeof(t), "%s %s detected", detect_sev_name(c->severity),
		    detect_class_name(c->cls));
		tl_add(c, now, t);
	} else if (!was_active) {
		put(t, sizeof(t), "%s again (%s)", detect_class_name(c->cls),
		    detect_sev_name(c->severity));
		tl_add(c, now, t);
	} else if (c->severity != old.severity) {
		put(t, sizeof(t), "severity %s -> %s", detect_sev_name(old.severity),
		    detect_sev_name(c->severity));
		tl_add(c, now, t);
	}
	for (int k = 0; k < f->nsteps; k++)
		tl_add(c, f->steps[k].ts_ns, f->steps[k].text);
	c->last_seen_ns = now;
	c->active = 1;
	c->fired++;
	if (old.fired == 0 || content_differs(&old, c) || old.ntimeline != c->ntimeline ||
	    !was_active) {
		c->updated_ns = now;
		d->gen++;
	}
	d->fired_now[i] = 1;
}

/* Chains that did not fire: active for hold_s after the last firing, then
 * resolved, then dropped after keep_s. Functions of last_seen only, so the
 * result does not depend on how often the detector ran in between. */
static void age(struct ig_detect *d, uint64_t now)
{
	uint64_t hold = (uint64_t)d->cfg.hold_s * NS, keep = (uint64_t)d->cfg.keep_s * NS;
	for (int i = 0; i < d->n;) {
		struct ig_chain *c = &d->c[i];
		if (!d->fired_now[i] && now > c->last_seen_ns + keep) {
			d->c[i] = d->c[d->n - 1];
			d->fired_now[i] = d->fired_now[d->n - 1];
			d->n--;
			d->gen++;
			continue;
		}
		if (!d->fired_now[i] && c->active && now > c->last_seen_ns + hold) {
			c->active = 0;
			c->updated_ns = c->last_seen_ns + hold;
			tl_add(c, c->last_seen_ns + hold, "resolved: stopped firing");
			d->gen++;
		}
		i++;
	}
}

static int cmp_order(const void *a, const void *b, void *arg)
{
	const struct ig_detect *d = arg;
	const struct ig_chain *x = &d->c[*(const int *)a], *y = &d->c[*(const int *)b];
	if (x->active != y->active)
		return y->active - x->active;
	if (x->severity != y->severity)
		return y->severity - x->severity;
	if (x->first_seen_ns != y->first_seen_ns)
		return x->first_seen_ns < y->first_seen_ns ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void sort_chains(struct ig_detect *d)
{
	for (int i = 0; i < d->n; i++)
		d->order[i] = i;
	qsort_r(d->order, (size_t)d->n, sizeof(d->order[0]), cmp_order, d);
}

/* --- the rules -------------------------------------------------------------------- */

struct ctx {
	struct ig_detect *d;
	const struct ig_window *w;
	const struct ig_win_proc *wp; /* the process being judged */
	const struct ig_detect_cfg *cfg;
	uint64_t now, ws; /* evaluation time, window start */
	double win_s;
	struct ig_host host;
	const struct ig_proc_stats *p;
	int nops;
	int nthr;
	int tail_op; /* op of the worst unexplained tail in the process, 0 none */
	double tail_op_ratio;
	int cpu_fired[IG_OP_MAX];
	int storm; /* sync storm fired for this process */
};

/* The window entry of the judged process's series of op, NULL if none. */
static const struct ig_win_series *wseries(const struct ctx *x, int op)
{
	for (int i = 0; i < x->wp->nops; i++)
		if (x->wp->ops[i].s.op == op)
			return &x->wp->ops[i];
	return NULL;
}

static const struct ig_win_thread *wthread(const struct ctx *x, uint32_t tid)
{
	for (int i = 0; i < x->wp->nthr; i++)
		if (x->wp->thr[i].t.tid == tid)
			return &x->wp->thr[i];
	return NULL;
}

/* An op called mostly from inside another traced call of the same thread: a
 * driver call made by the runtime (cuLaunchKernel in cudaLaunchKernel). Its
 * calls are the outer op's calls, so per-op rules leave it to the outer op
 * and process-wide sums skip it, instead of counting the time twice. */
static int nested(const struct ig_series_stats *s)
{
	return s->nested_life * 2 > s->calls_life;
}

static int has_tail(const struct ctx *x, const struct ig_series_stats *s)
{
	return s->calls_win >= x->cfg->min_calls && s->win.p50 &&
	       s->tail_ratio >= x->cfg->tail_ratio;
}

/* The tail of the window is only the first (cold) calls of this series. */
static int cold_explains(const struct ctx *x, const struct ig_series_stats *s)
{
	if (s->cold_n < x->cfg->cold_calls || s->cold_end_ns < x->ws)
		return 0;
	const struct ig_win_series *ws = wseries(x, s->op);
	const struct hist *h = ws ? ws->win : NULL;
	if (!h)
		return 0;
	uint64_t thr = (uint64_t)((double)s->win.p50 * x->cfg->tail_ratio);
	/* only slow first calls explain a tail: with fast ones, the first few
	 * outliers of a periodic spike would pass for a cold start */
	if (s->cold_max_ns < thr)
		return 0;
	return hist_count_above(h, thr) <= s->cold_n + s->calls_win / 200;
}

static const char *pname(const struct ctx *x, char *b, size_t n)
{
	return who(b, n, x->p->comm, x->p->pid);
}

/* " (name)" of a thread whose name is not the process's, else "". */
static const char *tname(const struct ctx *x, const struct ig_thread_stats *t, char *b, size_t n)
{
	b[0] = 0;
	if (t->comm[0] && strncmp(t->comm, x->p->comm, IG_COMM_LEN))
		snprintf(b, n, " (%.*s)", IG_COMM_LEN, t->comm);
	return b;
}

static void rule_cpu(struct ctx *x, const struct ig_series_stats *s)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	const struct ig_op_info *oi = ig_op_info(s->op);
	struct finding f;
	char p99[24], p50[24], r[16], pn[40], cn[40], off[24];
	int cpu_hot = x->host.valid && x->host.cpu_max_win > cfg->cpu_pct;
	double share = s->tail_preempt_share;

	if (share >= 0) { /* the source split preempted from blocked time */
		if (share < cfg->preempt_low || s->switches_win < cfg->min_switches)
			return;
		int sev = share >= cfg->preempt_high && s->tail_ratio >= 5 ? IG_SEV_HIGH
			  : share >= cfg->preempt_med			   ? IG_SEV_MEDIUM
									   : IG_SEV_LOW;
		if (cpu_hot)
			sev = raise(sev);
		f_init(&f, IG_CC_CPU_CONTENTION, sev, s->op, x->p);
		uint32_t cp = s->top_preemptor_pid;
		const char *cc = s->top_preemptor_comm;
		double cshare = s->top_preemptor_share;
		if (!cp && x->p->npreemptors) {
			cp = x->p->preemptors[0].pid;
			cc = x->p->preemptors[0].comm;
			cshare = x->p->preemptors[0].share;
		}
		culprit(&f, cp, cc);
		if (cp)
			put(f.c.summary, sizeof(f.c.summary),
			    "%s p99 %s (%s× p50) in %s: %.0f %% of tail time preempted by %s → CPU "
			    "contention",
			    ig_op_name(s->op), fdur(p99, sizeof(p99), s->win.p99),
			    fratio(r, sizeof(r), s->tail_ratio), pname(x, pn, sizeof(pn)),
			    share * 100, who(cn, sizeof(cn), cc, cp));
		else
			put(f.c.summary, sizeof(f.c.summary),
			    "%s p99 %s (%s× p50) in %s: %.0f %% of tail time preempted → CPU "
			    "contention",
			    ig_op_name(s->op), fdur(p99, sizeof(p99), s->win.p99),
			    fratio(r, sizeof(r), s->tail_ratio), pname(x, pn, sizeof(pn)),
			    share * 100);
		put(f.c.explanation, sizeof(f.c.explanation),
		    "The slowest %s calls (p99 %s against a p50 of %s) spent %.0f %% of their time "
		    "runnable but not running: another task held the CPU. The thread was not "
		    "waiting for the GPU (%.0f %% blocked), it was waiting for a core%s%s.%s",
		    ig_op_name(s->op), p99, fdur(p50, sizeof(p50), s->win.p50), share * 100,
		    s->tail_blocked_share * 100, cp ? "; the main preemptor was " : "",
		    cp ? cn : "",
		    cpu_hot
			? " The host CPU was above the busy threshold, which raised the severity."
			: "");
		ev(&f, "tail_preempt_pct", share * 100, "%");
		ev(&f, "tail_blocked_pct", s->tail_blocked_share * 100, "%");
		if (cp)
			ev(&f, "preemptor_share_pct", cshare * 100, "%");
		ev(&f, "switches", s->switches_win, "");
		if (cp) {
			rec(&f,
			    "Lower the priority of %s: renice -n 19 -p %u (or chrt --idle -p 0 "
			    "%u), "
			    "or cap its CPU with a cgroup quota",
			    cn, cp, cp);
			rec(&f,
			    "Pin %s to cores %s does not use: taskset -cp <cores> %u, or give the "
			    "job "
			    "a dedicated cpuset",
			    pn, cn, x->p->pid);
		} else {
			rec(&f,
			    "Pin %s to dedicated cores (taskset -cp <cores> %u or a cpuset) away "
			    "from "
			    "other busy tasks",
			    pn, x->p->pid);
		}
		rec(&f,
		    "Keep at least one core free per GPU-feeding thread: count the busy threads on "
		    "this host (ingero-top process pane) against the cores");
		slow_steps(&f, wseries(x, s->op), s->op, s->win.p99, 3);
	} else { /* no split: infer from off-CPU inside calls, say what is missing */
		if (x->p->switches < cfg->min_switches || !x->p->off_in_call_ns)
			return;
		int sync = oi && (oi->kind & IG_OPK_SYNC);
		if (sync && !cpu_hot)
			return; /* a sync that sleeps is normal: cannot tell GPU from CPU */
		int sev = cpu_hot ? IG_SEV_MEDIUM : IG_SEV_LOW;
		if (!sync && s->tail_ratio >= 10 && x->p->switches >= 4 * cfg->min_switches)
			sev = IG_SEV_MEDIUM;
		f_init(&f, IG_CC_CPU_CONTENTION, sev, s->op, x->p);
		put(f.c.summary, sizeof(f.c.summary),
		    "%s p99 %s (%s× p50) in %s: %u context switches, %s off-CPU inside calls "
		    "(preempted/blocked unknown)%s → CPU contention (unconfirmed)",
		    ig_op_name(s->op), fdur(p99, sizeof(p99), s->win.p99),
		    fratio(r, sizeof(r), s->tail_ratio), pname(x, pn, sizeof(pn)), x->p->switches,
		    fdur(off, sizeof(off), x->p->off_in_call_ns), cpu_hot ? ", host CPU busy" : "");
		put(f.c.explanation, sizeof(f.c.explanation),
		    "The %s tail coincides with the thread leaving the CPU inside CUDA calls. "
		    "This source does not say whether it was preempted (CPU contention) or went to "
		    "sleep (waiting), so the class is inferred: %s",
		    ig_op_name(s->op),
		    sync ? "the host CPU was saturated while the synchronisations were slow."
			 : "a launch, copy or allocation should not leave the CPU at all.");
		put(f.c.lacking, sizeof(f.c.lacking),
		    "preempted/blocked split and preemptor names (recorded without scheduler "
		    "state); re-record with ingero-top to confirm");
		ev(&f, "switches", x->p->switches, "");
		ev(&f, "off_in_call_ms", (double)x->p->off_in_call_ns / 1e6, "ms");
		rec(&f,
		    "Re-record with ingero-top (it tells preempted from blocked time and names the "
		    "preemptor) before acting");
		rec(&f,
		    "Pin %s to dedicated cores (taskset -cp <cores> %u or a cpuset) and check "
		    "what else runs there",
		    pn, x->p->pid);
		rec(&f,
		    "Lower the priority of background jobs on this host (nice -n 19, ionice -c3)");
		slow_steps(&f, wseries(x, s->op), s->op, s->win.p99, 3);
	}
	if (cpu_hot)
		ev(&f, "host_cpu_max_pct", x->host.cpu_max_win, "%");
	f.c.p50_ns = s->win.p50;
	f.c.p99_ns = s->win.p99;
	f.c.tail_ratio = s->tail_ratio;
	ev(&f, "p99_ms", (double)s->win.p99 / 1e6, "ms");
	ev(&f, "tail_ratio", s->tail_ratio, "x");
	ev(&f, "calls", (double)s->calls_win, "");
	x->cpu_fired[s->op] = 1;
	fire(x->d, &f, x->now);
}

static void rule_gpu(struct ctx *x, const struct ig_series_stats *s,
		     const struct ig_thread_stats *t)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	const struct ig_op_info *oi = ig_op_info(s->op);
	if (!oi || !(oi->kind & IG_OPK_SYNC) || x->cpu_fired[s->op] || x->storm || nested(s))
		return;
	if (s->calls_win < cfg->min_calls || !s->time_win_ns)
		return;
	if (s->no_split_calls_win * 2 > s->calls_win)
		return; /* handled without the split below */
	double pre = (double)s->preempt_ns_win / (double)s->time_win_ns;
	double blk = (double)s->blocked_ns_win / (double)s->time_win_ns;
	if (pre >= cfg->preempt_low)
		return;
	int tail = has_tail(x, s) && !cold_explains(x, s);
	double wall = s->wall_share;
	int sev;
	if (tail && (blk >= cfg->gpu_blocked || wall >= cfg->gpu_wall))
		sev = IG_SEV_MEDIUM;
	else if (wall >= cfg->gpu_wall)
		sev = IG_SEV_INFO;
	else
		return;
	struct finding f;
	char p99[24], p50[24], r[16], pn[40];
	f_init(&f, IG_CC_GPU_BOUND, sev, s->op, x->p);
	f.c.tid = t ? t->tid : 0;
	put(f.c.summary, sizeof(f.c.summary),
	    "%s p99 %s (%s× p50) in %s: %.0f %% of sync time blocked, %.0f %% preempted; "
	    "syncs take %.0f %% of wall time → GPU-bound wait",
	    ig_op_name(s->op), fdur(p99, sizeof(p99), s->win.p99),
	    fratio(r, sizeof(r), s->tail_ratio), pname(x, pn, sizeof(pn)), blk * 100, pre * 100,
	    wall * 100);
	put(f.c.explanation, sizeof(f.c.explanation),
	    "The thread waits in %s for the GPU (p50 %s, p99 %s) and sleeps while it waits; "
	    "it is almost never preempted, so the host is keeping up and the GPU work itself is "
	    "the bottleneck%s.",
	    ig_op_name(s->op), fdur(p50, sizeof(p50), s->win.p50), p99,
	    tail ? ": the tail comes from GPU work that varies (bigger batches, other kernels "
		   "or tenants on the GPU, clocks)"
		 : "");
	ev(&f, "sync_blocked_pct", blk * 100, "%");
	ev(&f, "sync_preempt_pct", pre * 100, "%");
	ev(&f, "sync_wall_pct", wall * 100, "%");
	ev(&f, "p99_ms", (double)s->win.p99 / 1e6, "ms");
	ev(&f, "tail_ratio", s->tail_ratio, "x");
	rec(&f,
	    "Profile the GPU work behind %s (Nsight Systems timeline, then Nsight Compute on "
	    "the longest kernels); the host side is not the limit",
	    ig_op_name(s->op));
	rec(&f, "Overlap instead of waiting: enqueue the next batch and its copies on a second "
		"stream before synchronising, or synchronise every N steps");
	if (tail)
		rec(&f, "Check for GPU-side variance: clocks and throttling (nvidia-smi -q -d "
			"PERFORMANCE), other processes on the GPU, batch-size changes");
	f.c.p50_ns = s->win.p50;
	f.c.p99_ns = s->win.p99;
	f.c.tail_ratio = s->tail_ratio;
	if (tail)
		slow_steps(&f, wseries(x, s->op), s->op, s->win.p99, 2);
	fire(x->d, &f, x->now);
}

/* Median gap between outliers and whether all gaps are within tolerance. */
static int period_of(const struct ig_series_stats *s, double tol, double *period_s, int *n_in)
{
	int n = s->noutliers;
	if (n < 2)
		return 0;
	double gaps[IG_OUTLIERS], sorted[IG_OUTLIERS];
	for (int i = 1; i < n; i++)
		gaps[i - 1] = (double)(s->outlier_ts[i] - s->outlier_ts[i - 1]) / 1e9;
	int ng = n - 1;
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

static void rule_alloc(struct ctx *x, const struct ig_series_stats *s)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	const struct ig_op_info *oi = ig_op_info(s->op);
	if (!oi || !(oi->kind & IG_OPK_ALLOC) || x->cpu_fired[s->op] || nested(s))
		return;
	if (!has_tail(x, s) || cold_explains(x, s))
		return;
	if ((int)s->noutliers < (int)cfg->alloc_min_outliers ||
	    s->outlier_ts[s->noutliers - 1] < x->ws)
		return;
	double period = 0;
	int n = 0;
	int periodic = period_of(s, cfg->alloc_period_tol, &period, &n);
	uint64_t omax = 0;
	for (int i = 0; i < s->noutliers; i++)
		if (s->outlier_dur[i] > omax)
			omax = s->outlier_dur[i];
	struct finding f;
	char p99[24], p50[24], r[16], pn[40], mx[24];
	f_init(&f, IG_CC_ALLOC_SPIKES, periodic ? IG_SEV_MEDIUM : IG_SEV_LOW, s->op, x->p);
	if (periodic)
		put(f.c.summary, sizeof(f.c.summary),
		    "%s p99 %s (%s× p50) in %s: %d outliers up to %s, every ~%.1f s → "
		    "allocator spikes",
		    ig_op_name(s->op), fdur(p99, sizeof(p99), s->win.p99),
		    fratio(r, sizeof(r), s->tail_ratio), pname(x, pn, sizeof(pn)), n,
		    fdur(mx, sizeof(mx), omax), period);
	else
		put(f.c.summary, sizeof(f.c.summary),
		    "%s p99 %s (%s× p50) in %s: %d outliers up to %s, no regular period → "
		    "allocator spikes",
		    ig_op_name(s->op), fdur(p99, sizeof(p99), s->win.p99),
		    fratio(r, sizeof(r), s->tail_ratio), pname(x, pn, sizeof(pn)), n,
		    fdur(mx, sizeof(mx), omax));
	put(f.c.explanation, sizeof(f.c.explanation),
	    "Most %s calls take %s, but some take up to %s%s. Allocation outliers come from "
	    "the driver mapping new memory (the caching allocator growing, or freeing and "
	    "re-allocating), not from the host being busy: the tail calls were %.0f %% "
	    "preempted.",
	    ig_op_name(s->op), fdur(p50, sizeof(p50), s->win.p50), mx,
	    periodic ? " at a regular interval, so something in the loop allocates periodically"
		     : "",
	    s->tail_preempt_share > 0 ? s->tail_preempt_share * 100 : 0);
	ev(&f, "outliers", n, "");
	if (periodic)
		ev(&f, "period_s", period, "s");
	ev(&f, "outlier_max_ms", (double)omax / 1e6, "ms");
	ev(&f, "p99_ms", (double)s->win.p99 / 1e6, "ms");
	ev(&f, "tail_ratio", s->tail_ratio, "x");
	if (periodic)
		rec(&f,
		    "Find what runs every ~%.1f s (checkpoint, evaluation, logging, a growing "
		    "batch) and allocate its buffers once, outside the loop",
		    period);
	rec(&f,
	    "Pre-allocate and reuse device buffers instead of %s inside the step; with "
	    "PyTorch, do not call torch.cuda.empty_cache() in the loop",
	    ig_op_name(s->op));
	rec(&f,
	    "Tune the caching allocator: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, or a "
	    "CUDA memory pool with a high release threshold (cudaMemPoolAttrReleaseThreshold)");
	f.c.p50_ns = s->win.p50;
	f.c.p99_ns = s->win.p99;
	f.c.tail_ratio = s->tail_ratio;
	for (int i = s->noutliers > 3 ? s->noutliers - 3 : 0; i < s->noutliers; i++) {
		char d[24];
		step(&f, s->outlier_ts[i], "%s outlier %s", ig_op_name(s->op),
		     fdur(d, sizeof(d), s->outlier_dur[i]));
	}
	fire(x->d, &f, x->now);
}

static void rule_starvation(struct ctx *x, const struct ig_thread_stats *t)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	const struct ig_proc_stats *p = x->p;
	if (!t || t->calls_win < cfg->min_calls || t->wall_ns < NS)
		return;
	/* preempted time between calls is CPU contention, not starvation */
	uint64_t off_btw = t->between_blocked_ns + t->between_unknown_ns;
	uint64_t idle = off_btw + t->between_on_cpu_ns;
	double share = (double)idle / (double)t->wall_ns;
	if (share < cfg->starve_between || t->switches < cfg->min_switches)
		return;
	double off_share = (double)off_btw / (double)t->wall_ns;
	double busy = (double)t->between_on_cpu_ns / (double)t->wall_ns;
	int workers = p->nwakers > 0 && (p->wakers[0].pid != p->pid || p->nwakers > 1);
	int sev;
	if (off_share >= 0.3 && workers)
		sev = share >= cfg->starve_between_high ? IG_SEV_HIGH : IG_SEV_MEDIUM;
	else if (off_share >= 0.3)
		sev = x->tail_op ? IG_SEV_MEDIUM : IG_SEV_LOW;
	else if (busy >= cfg->starve_between_high) /* the feeder itself is the bottleneck */
		sev = IG_SEV_MEDIUM;
	else
		sev = x->tail_op ? IG_SEV_MEDIUM : IG_SEV_LOW; /* busy on CPU between calls */
	struct finding f;
	char pn[40], wn[40], wl[160] = "", tn[24];
	f_init(&f, IG_CC_HOST_STARVATION, sev, t->main_op, p);
	f.c.tid = t->tid;
	size_t o = 0;
	for (int i = 0; i < p->nwakers && i < 3; i++) {
		int k = put(wl + o, sizeof(wl) - o, "%s%s %.0f %%", i ? ", " : "",
			    who(wn, sizeof(wn), p->wakers[i].comm, p->wakers[i].pid),
			    p->wakers[i].share * 100);
		if (k < 0 || (size_t)k >= sizeof(wl) - o)
			break;
		o += (size_t)k;
	}
	if (p->nwakers)
		culprit(&f, p->wakers[0].pid, p->wakers[0].comm);
	double blk = (double)t->between_blocked_ns / (double)t->wall_ns;
	double unk = (double)t->between_unknown_ns / (double)t->wall_ns;
	if (off_share >= busy)
		put(f.c.summary, sizeof(f.c.summary),
		    "%s tid %u%s spends %.0f %% of wall time off-CPU between CUDA calls%s%s%s, "
		    "%.0f %% in CUDA → host starvation",
		    pname(x, pn, sizeof(pn)), t->tid, tname(x, t, tn, sizeof(tn)), off_share * 100,
		    p->nwakers ? " (waiting on " : "", wl, p->nwakers ? ")" : "", t->cuda_pct);
	else
		put(f.c.summary, sizeof(f.c.summary),
		    "%s tid %u%s spends %.0f %% of wall time busy on the CPU between CUDA calls, "
		    "%.0f %% in CUDA → host starvation",
		    pname(x, pn, sizeof(pn)), t->tid, tname(x, t, tn, sizeof(tn)), busy * 100,
		    t->cuda_pct);
	put(f.c.explanation, sizeof(f.c.explanation),
	    "The thread that feeds the GPU spends only %.0f %% of its time in CUDA calls. "
	    "The rest goes %s, so the GPU sits idle waiting for work. %s",
	    t->cuda_pct,
	    off_share >= busy ? "to waiting off-CPU between calls (for data, a pipe, a lock)"
			      : "to CPU work between calls (decoding, augmentation, Python)",
	    workers ? "The feeder is woken by the processes listed: they produce its input, "
		      "and if they are more than the cores they also preempt each other."
		    : "");
	if (unk > 0 && !t->between_blocked_ns && !t->off_preempt_ns)
		put(f.c.lacking, sizeof(f.c.lacking),
		    "off-CPU state and waker (recorded without scheduler state): "
		    "cannot tell waiting on workers from preemption");
	ev(&f, "between_pct", share * 100, "%");
	ev(&f, "off_between_pct", off_share * 100, "%");
	ev(&f, "busy_between_pct", busy * 100, "%");
	ev(&f, "cuda_pct", t->cuda_pct, "%");
	ev(&f, "blocked_pct", blk * 100, "%");
	if (unk > 0)
		ev(&f, "unknown_off_pct", unk * 100, "%");
	ev(&f, "switches", t->switches, "");
	if (p->nwakers)
		ev(&f, "top_waker_share_pct", p->wakers[0].share * 100, "%");
	if (workers) {
		rec(&f,
		    "Reduce data-loader workers to the free cores (they preempt each other when "
		    "they outnumber the cores); the feeder waits for %s",
		    who(wn, sizeof(wn), p->wakers[0].comm, p->wakers[0].pid));
		rec(&f, "Keep batches ready before the GPU asks: persistent_workers=True, "
			"prefetch_factor >= 2, pin_memory=True");
	} else {
		rec(&f,
		    "Move the per-step CPU work off the feeding thread: a DataLoader with "
		    "num_workers > 0 (at most the free cores), or a producer thread with a queue");
	}
	rec(&f, "Make each batch cheaper to produce: decode/augment on the GPU (DALI, "
		"torchvision.transforms.v2 on CUDA) or pre-process the dataset offline");
	{
		const struct ig_win_thread *wt = wthread(x, t->tid);
		struct ig_offcpu_rec r[IG_TL_MAX]; /* a copy: taken ones are zeroed */
		int n = wt ? wt->ntl : 0;
		if (n)
			memcpy(r, wt->tl, (size_t)n * sizeof(r[0]));
		/* the three longest between-call waits still in the window */
		for (int k = 0; k < 3; k++) {
			int best = -1;
			for (int i = 0; i < n; i++)
				if (!r[i].in_call && r[i].ts_ns >= x->ws && r[i].dur_ns &&
				    (best < 0 || r[i].dur_ns > r[best].dur_ns))
					best = i;
			if (best < 0)
				break;
			char d[24];
			if (r[best].other_pid)
				step(&f, r[best].ts_ns,
				     "off-CPU %s between calls (%s), woken by %s",
				     fdur(d, sizeof(d), r[best].dur_ns),
				     r[best].state == IG_OFF_BLOCKED	 ? "blocked"
				     : r[best].state == IG_OFF_PREEMPTED ? "preempted"
									 : "state unknown",
				     who(wn, sizeof(wn), r[best].other_comm, r[best].other_pid));
			else
				step(&f, r[best].ts_ns, "off-CPU %s between calls (%s)",
				     fdur(d, sizeof(d), r[best].dur_ns),
				     r[best].state == IG_OFF_BLOCKED	 ? "blocked"
				     : r[best].state == IG_OFF_PREEMPTED ? "preempted"
									 : "state unknown");
			r[best].dur_ns = 0;
		}
	}
	fire(x->d, &f, x->now);
}

static void rule_sync_storm(struct ctx *x, const struct ig_thread_stats *t)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	if (!t || t->calls_win < cfg->min_calls || !t->wall_ns)
		return;
	/* a runtime sync and the driver sync inside it are one synchronisation */
	uint64_t calls = t->sync_calls_win - t->sync_nested_win;
	uint64_t ns = t->sync_ns_win - t->sync_nested_ns_win;
	double rate = (double)calls * 1e9 / (double)t->wall_ns;
	double wall = (double)ns / (double)t->wall_ns;
	if (rate < cfg->sync_rate || wall < cfg->sync_wall)
		return;
	/* the sync-like op with the most calls in this process */
	int op = 0;
	uint64_t best = 0, bytes = 0;
	for (int i = 0; i < x->nops; i++) {
		const struct ig_series_stats *s = &x->wp->ops[i].s;
		const struct ig_op_info *oi = ig_op_info(s->op);
		if (!oi || !(oi->kind & (IG_OPK_SYNC | IG_OPK_IMPLICIT_SYNC | IG_OPK_COPY)) ||
		    nested(s))
			continue;
		if (s->calls_win > best) {
			best = s->calls_win;
			op = s->op;
			bytes = s->calls_win ? s->bytes_win / s->calls_win : 0;
		}
	}
	struct finding f;
	char pn[40], b[24], tn[24];
	f_init(&f, IG_CC_SYNC_STORM, wall >= 0.5 ? IG_SEV_HIGH : IG_SEV_MEDIUM, op, x->p);
	f.c.tid = t->tid;
	const struct ig_op_info *oi = ig_op_info(op);
	int copy = oi && (oi->kind & IG_OPK_COPY);
	put(f.c.summary, sizeof(f.c.summary),
	    "%s tid %u%s: %.0f synchronisations/s (mostly %s%s%s%s) take %.0f %% of wall time → "
	    "sync storm",
	    pname(x, pn, sizeof(pn)), t->tid, tname(x, t, tn, sizeof(tn)), rate, ig_op_name(op),
	    copy ? ", " : "", copy ? fbytes(b, sizeof(b), (double)bytes) : "", copy ? " avg" : "",
	    wall * 100);
	put(f.c.explanation, sizeof(f.c.explanation),
	    "The feeding thread stops and waits for the GPU %.0f times a second. Each "
	    "synchronisation (explicit, or hidden in a synchronous device-to-host copy such as "
	    "tensor.item(), .cpu() or .numpy()) drains the GPU queue, so the host and the GPU "
	    "take turns instead of overlapping.",
	    rate);
	ev(&f, "syncs_per_s", rate, "/s");
	ev(&f, "sync_wall_pct", wall * 100, "%");
	ev(&f, "sync_calls", (double)calls, "");
	if (copy)
		ev(&f, "mean_copy_bytes", (double)bytes, "B");
	rec(&f, "Remove per-step host round-trips: no .item(), .cpu(), .numpy() or printing of "
		"GPU tensors inside the loop; accumulate on the GPU and read once every N steps");
	rec(&f, "Replace synchronous device-to-host copies with cudaMemcpyAsync into pinned memory "
		"(non_blocking=True) and one event or stream sync where the value is needed");
	rec(&f, "Find the call sites: open %s in the op view and look at the stacks of its calls",
	    ig_op_name(op));
	x->storm = 1;
	fire(x->d, &f, x->now);
}

static void rule_copy(struct ctx *x, const struct ig_thread_stats *t)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	if (x->storm)
		return;
	uint64_t copy_ns = 0, all_ns = 0, copy_calls = 0, copy_bytes = 0;
	int top = 0, tail = 0;
	uint64_t top_ns = 0;
	for (int i = 0; i < x->nops; i++) {
		const struct ig_series_stats *s = &x->wp->ops[i].s;
		const struct ig_op_info *oi = ig_op_info(s->op);
		if (nested(s))
			continue;
		all_ns += s->time_win_ns;
		if (!oi || !(oi->kind & IG_OPK_COPY))
			continue;
		copy_ns += s->time_win_ns;
		copy_calls += s->calls_win;
		copy_bytes += s->bytes_win;
		if (s->time_win_ns > top_ns) {
			top_ns = s->time_win_ns;
			top = s->op;
		}
		if (has_tail(x, s) && !cold_explains(x, s))
			tail = 1;
	}
	if (!all_ns || copy_calls < cfg->min_calls)
		return;
	double share = (double)copy_ns / (double)all_ns;
	double mean = (double)copy_bytes / (double)copy_calls;
	if (share < cfg->copy_share || mean < (double)cfg->copy_min_bytes)
		return;
	double wall = t && t->wall_ns ? (double)copy_ns / (double)x->p->wall_ns : 0;
	if (wall > 1)
		wall = 1;
	int sev = share >= 0.8 && wall >= 0.5 ? IG_SEV_HIGH
		  : wall >= 0.25 || tail      ? IG_SEV_MEDIUM
					      : IG_SEV_LOW;
	/* loading weights and data right after start is expected: say it, low */
	int startup = x->p->first_ns >= x->ws;
	if (startup && sev > IG_SEV_LOW)
		sev = IG_SEV_LOW;
	struct finding f;
	char pn[40], b[24], bw[24];
	f_init(&f, IG_CC_COPY_DOMINATED, sev, top, x->p);
	f.c.tid = t ? t->tid : 0;
	double gbps = copy_ns ? (double)copy_bytes / ((double)copy_ns / 1e9) : 0;
	put(f.c.summary, sizeof(f.c.summary),
	    "%s: copies take %.0f %% of CUDA time and %.0f %% of wall time (%s, %s avg, "
	    "%s/s while copying) → copy-dominated",
	    pname(x, pn, sizeof(pn)), share * 100, wall * 100, ig_op_name(top),
	    fbytes(b, sizeof(b), mean), fbytes(bw, sizeof(bw), gbps));
	put(f.c.explanation, sizeof(f.c.explanation),
	    "Moving data between host and device takes most of the time the process spends in "
	    "CUDA. At %s/s the copies run well below what PCIe can do when host buffers are "
	    "pageable, and while the thread copies it does not launch work.%s",
	    bw,
	    startup ? " The process started inside the window: this may be the initial load "
		      "of weights and data, hence the low severity."
		    : "");
	ev(&f, "copy_share_pct", share * 100, "%");
	ev(&f, "copy_wall_pct", wall * 100, "%");
	ev(&f, "mean_copy_bytes", mean, "B");
	ev(&f, "copy_bytes_per_s", gbps, "B/s");
	ev(&f, "copy_calls", (double)copy_calls, "");
	rec(&f, "Use pinned (page-locked) host buffers: pin_memory=True in the DataLoader or "
		"cudaHostAlloc, so copies run at full PCIe bandwidth");
	rec(&f, "Overlap copies with compute: non_blocking=True / cudaMemcpyAsync on a separate "
		"stream, double-buffering the next batch");
	rec(&f, "Move less data per step: keep tensors on the GPU between steps, send compact "
		"dtypes (uint8/fp16) and convert on the GPU");
	fire(x->d, &f, x->now);
}

static void tail_words(struct ctx *x, char *b, size_t n)
{
	char p99[24], r[16];
	if (!x->tail_op) {
		put(b, n, "no CUDA latency tail yet");
		return;
	}
	for (int i = 0; i < x->nops; i++)
		if (x->wp->ops[i].s.op == x->tail_op) {
			const struct ig_series_stats *s = &x->wp->ops[i].s;
			put(b, n, "a %s tail (p99 %s, %s× p50)", ig_op_name(s->op),
			    fdur(p99, sizeof(p99), s->win.p99),
			    fratio(r, sizeof(r), s->tail_ratio));
			return;
		}
	put(b, n, "a %s tail", ig_op_name(x->tail_op));
}

static void rule_memory(struct ctx *x)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	const struct ig_proc_stats *p = x->p;
	int pages = p->page_bytes_win > cfg->page_bytes;
	int swap = x->host.valid && x->host.swap_max_win > 0;
	int full = x->host.valid && x->host.mem_max_win > cfg->mem_pct;
	if (!pages && !swap && !full)
		return;
	int sev;
	if (!x->tail_op)
		sev = pages && (swap || full) ? IG_SEV_LOW : IG_SEV_INFO;
	else
		sev = (pages || swap) && full ? IG_SEV_HIGH : IG_SEV_MEDIUM;
	if (!pages && x->tail_op && !(swap && full))
		sev = IG_SEV_LOW; /* host-wide only, not this process */
	struct finding f;
	char pn[40], b[24], tw[96], parts[160] = "";
	f_init(&f, IG_CC_MEMORY_PRESSURE, sev, x->tail_op, p);
	size_t o = 0;
	if (pages)
		o += (size_t)put(parts + o, sizeof(parts) - o, "%s page allocations in %.0f s",
				 fbytes(b, sizeof(b), (double)p->page_bytes_win), x->win_s);
	if (swap && o < sizeof(parts))
		o += (size_t)put(parts + o, sizeof(parts) - o, "%sswap %lu MiB", o ? ", " : "",
				 (unsigned long)x->host.swap_max_win);
	if (full && o < sizeof(parts))
		put(parts + o, sizeof(parts) - o, "%smemory %.0f %%", o ? ", " : "",
		    x->host.mem_max_win);
	tail_words(x, tw, sizeof(tw));
	put(f.c.summary, sizeof(f.c.summary), "%s: %s during %s → memory pressure",
	    pname(x, pn, sizeof(pn)), parts, tw);
	put(f.c.explanation, sizeof(f.c.explanation),
	    "The host is short of memory while CUDA calls are slow: page allocation, reclaim "
	    "and swap-in run on the feeding thread (page faults in pageable buffers, the "
	    "allocator touching new pages), which stalls it inside and between calls.");
	ev(&f, "page_alloc_bytes", (double)p->page_bytes_win, "B");
	if (x->host.valid) {
		ev(&f, "swap_mb", (double)x->host.swap_max_win, "MiB");
		ev(&f, "mem_max_pct", x->host.mem_max_win, "%");
	}
	if (x->tail_op)
		ev(&f, "tail_op", x->tail_op, "");
	rec(&f,
	    "Reduce host memory use of %s: smaller prefetch and shuffle buffers, fewer "
	    "data-loader workers (each holds batches), or a host with more RAM",
	    pn);
	rec(&f, "Keep the job out of swap: memory.swap.max=0 in its cgroup or vm.swappiness=1, "
		"so the feeding thread never waits on swap-in");
	rec(&f, "Allocate and pin staging buffers once (pin_memory=True, cudaHostAlloc) so "
		"steady-state steps do not fault in new pages");
	fire(x->d, &f, x->now);
}

static void rule_block_io(struct ctx *x, const struct ig_proc_stats *top_io)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	const struct ig_proc_stats *p = x->p;
	/* the process's own I/O, else the host's with the busiest issuer named */
	uint64_t ops = p->io_ops_win, lat = p->io_lat_ns_win, peak = p->io_max_ns_win;
	uint64_t bytes = p->io_bytes_win;
	const struct ig_proc_stats *issuer = p;
	if (ops < cfg->io_ops && lat < cfg->io_total_ns && x->host.io_ops_win) {
		ops = x->host.io_ops_win;
		lat = x->host.io_lat_ns_win;
		peak = x->host.io_max_ns_win;
		bytes = x->host.io_bytes_win;
		issuer = top_io;
	}
	if (ops < cfg->io_ops && lat < cfg->io_total_ns)
		return;
	int sev = !x->tail_op ? IG_SEV_LOW : peak >= cfg->io_peak_ns ? IG_SEV_HIGH : IG_SEV_MEDIUM;
	struct finding f;
	char pn[40], in[40], b[24], l[24], pk[24], tw[96];
	f_init(&f, IG_CC_BLOCK_IO, sev, x->tail_op, p);
	if (issuer)
		culprit(&f, issuer->pid, issuer->comm);
	tail_words(x, tw, sizeof(tw));
	put(f.c.summary, sizeof(f.c.summary),
	    "%s: %lu block I/O requests by %s (%s, %s total, peak %s) during %s → block I/O",
	    pname(x, pn, sizeof(pn)), (unsigned long)ops,
	    issuer ? who(in, sizeof(in), issuer->comm, issuer->pid) : "the host",
	    fbytes(b, sizeof(b), (double)bytes), fdur(l, sizeof(l), lat),
	    fdur(pk, sizeof(pk), peak), tw);
	put(f.c.explanation, sizeof(f.c.explanation),
	    "Heavy or slow disk I/O overlaps the latency tail. Page-cache writeback and reads "
	    "compete with the job for the disk and memory bandwidth, and a thread that touches "
	    "a file (checkpoint, dataset, logs) can block for the whole I/O latency.");
	ev(&f, "io_ops", (double)ops, "");
	ev(&f, "io_total_ms", (double)lat / 1e6, "ms");
	ev(&f, "io_peak_ms", (double)peak / 1e6, "ms");
	ev(&f, "io_bytes", (double)bytes, "B");
	rec(&f, "Move checkpoint and log writes off the training path: write asynchronously "
		"from a separate process, to local NVMe, not the dataset disk");
	if (issuer && issuer->pid != p->pid)
		rec(&f, "Throttle the I/O of %s: ionice -c3 -p %u, or io.max in its cgroup", in,
		    issuer->pid);
	else
		rec(&f, "Lower the I/O priority of the job's background writers: ionice -c3, or "
			"io.max in a cgroup");
	rec(&f, "Stage the dataset in RAM or on local NVMe before the run so training reads do "
		"not wait on the disk");
	fire(x->d, &f, x->now);
}

static void rule_cold(struct ctx *x)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	const struct ig_series_stats *best = NULL;
	double best_x = 0;
	for (int i = 0; i < x->nops; i++) {
		const struct ig_series_stats *s = &x->wp->ops[i].s;
		if (s->cold_n < cfg->cold_calls || s->calls_life < s->cold_n + cfg->min_calls ||
		    nested(s))
			continue;
		if (x->now > s->first_ns + (uint64_t)cfg->cold_s * NS)
			continue;
		uint64_t settled = s->life.p50;
		if (!settled || (double)s->cold_max_ns < cfg->cold_x * (double)settled)
			continue;
		/* settled: the window tail is not still there after the first calls */
		if (has_tail(x, s) && !cold_explains(x, s))
			continue;
		double r = (double)s->cold_max_ns / (double)settled;
		if (r > best_x) {
			best_x = r;
			best = s;
		}
	}
	if (!best)
		return;
	struct finding f;
	char pn[40], mx[24], st[24], r[16];
	f_init(&f, IG_CC_COLD_START, IG_SEV_INFO, best->op, x->p);
	put(f.c.summary, sizeof(f.c.summary),
	    "%s: first %u %s calls up to %s (%s× the settled p50 %s), then normal → cold start",
	    pname(x, pn, sizeof(pn)), best->cold_n, ig_op_name(best->op),
	    fdur(mx, sizeof(mx), best->cold_max_ns), fratio(r, sizeof(r), best_x),
	    fdur(st, sizeof(st), best->life.p50));
	put(f.c.explanation, sizeof(f.c.explanation),
	    "The first calls of a process pay for context creation, module loading and "
	    "allocator warm-up; afterwards %s settles at %s. Not an incident, but it skews "
	    "percentiles taken over a short run.",
	    ig_op_name(best->op), st);
	ev(&f, "cold_calls", best->cold_n, "");
	ev(&f, "cold_max_ms", (double)best->cold_max_ns / 1e6, "ms");
	ev(&f, "settled_p50_us", (double)best->life.p50 / 1e3, "us");
	ev(&f, "ratio", best_x, "x");
	rec(&f, "Leave the first steps out of latency measurements and benchmarks (warm-up "
		"iterations)");
	rec(&f, "For services, warm up with a dummy request before taking traffic; "
		"CUDA_MODULE_LOADING=LAZY shortens context start-up");
	step(&f, best->first_ns, "first %s call", ig_op_name(best->op));
	fire(x->d, &f, x->now);
}

void detect_run(struct ig_detect *d, const struct ig_window *w)
{
	uint64_t now = w->now_ns;
	memset(d->fired_now, 0, sizeof(d->fired_now));
	struct ctx x = {.d = d, .w = w, .cfg = &d->cfg, .now = now};
	x.ws = w->tot.win_start_ns;
	x.win_s = (double)w->tot.win_span_ns / 1e9;
	x.host = w->host;
	const struct ig_proc_stats *top_io = NULL;
	for (int i = 0; i < w->nall; i++)
		if (w->all[i].io_ops_win && (!top_io || w->all[i].io_ops_win > top_io->io_ops_win))
			top_io = &w->all[i];
	for (int i = 0; i < w->nprocs; i++) {
		const struct ig_win_proc *wp = &w->procs[i];
		x.wp = wp;
		x.p = wp->p;
		memset(x.cpu_fired, 0, sizeof(x.cpu_fired));
		x.storm = 0;
		x.tail_op = 0;
		x.tail_op_ratio = 0;
		x.nops = wp->nops;
		x.nthr = wp->nthr;
		const struct ig_thread_stats *feeder =
		    x.nthr && wp->thr[0].t.calls_win ? &wp->thr[0].t : NULL;
		for (int k = 0; k < x.nops; k++) {
			const struct ig_series_stats *s = &wp->ops[k].s;
			if (has_tail(&x, s) && !cold_explains(&x, s) && !nested(s) &&
			    s->tail_ratio > x.tail_op_ratio) {
				x.tail_op = s->op;
				x.tail_op_ratio = s->tail_ratio;
			}
		}
		for (int k = 0; k < x.nops; k++) {
			const struct ig_series_stats *s = &wp->ops[k].s;
			if (has_tail(&x, s) && !cold_explains(&x, s) && !nested(s))
				rule_cpu(&x, s);
		}
		for (int k = 0; k < x.nthr && !x.storm; k++)
			if (wp->thr[k].t.calls_win)
				rule_sync_storm(&x, &wp->thr[k].t);
		for (int k = 0; k < x.nops; k++) {
			rule_gpu(&x, &wp->ops[k].s, feeder);
			rule_alloc(&x, &wp->ops[k].s);
		}
		rule_starvation(&x, feeder);
		rule_copy(&x, feeder);
		rule_memory(&x);
		rule_block_io(&x, top_io);
		rule_cold(&x);
	}
	age(d, now);
	sort_chains(d);
}

void detect_window(void *ctx, const struct ig_window *w)
{
	detect_run(ctx, w);
}

int detect_severity(const struct ig_detect *d, int op, uint32_t pid)
{
	int sev = -1;
	for (int i = 0; d && i < d->n; i++) {
		const struct ig_chain *c = &d->c[i];
		if (!c->active)
			continue;
		if ((op && c->op != op) || (pid && c->pid != pid))
			continue;
		if (c->severity > sev)
			sev = c->severity;
	}
	return sev;
}
