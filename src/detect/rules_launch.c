/* Launches that wait for their kernels (IG_CC_LAUNCH_BLOCKING): with
 * CUDA_LAUNCH_BLOCKING=1 every launch returns only once its kernel has
 * finished, so the feeding thread's own work and the GPU's take turns
 * instead of overlapping. The process's environment says so (collect/
 * procenv.c: confirmed); without it, launches that take launch_wait_ns or
 * more (their p50 and their mean), asleep most of it, while the
 * synchronisations after them find less than one launch's time to wait for,
 * say the same (unconfirmed). A launch's CPU work never sleeps: a launch
 * that spins as long is told from slow CPU work by the environment alone. A
 * full launch queue also makes launches sleep, but then the syncs drain
 * that queue and wait long too. docs/detection.md, "Synchronous
 * launches". */
#include "detect/detect_int.h"

#include <math.h>
#include <string.h>

#include "core/ops.h"

void detect_launch_waits(const struct ctx *x, struct launch_waits *lw)
{
	const struct ig_detect_cfg *cfg = x->cfg;
	memset(lw, 0, sizeof(*lw));
	for (int i = 0; i < x->wp->nops; i++) {
		const struct ig_series_stats *s = &x->wp->ops[i].s;
		const struct ig_op_info *oi = ig_op_info(s->op);
		if (nested(s) || !oi)
			continue;
		if (oi->kind & IG_OPK_SYNC) {
			lw->sync_ns += op_own_ns(s);
			lw->syncs += s->calls_win;
		}
		if (!(oi->kind & IG_OPK_LAUNCH))
			continue;
		uint64_t own = op_own_ns(s), cold = 0;
		/* the first calls' excess is the cold start's (module loads) */
		if (s->cold_end_ns >= x->ws) {
			if (s->calls_win < s->cold_n + cfg->min_calls)
				continue;
			if (s->cold_mean_ns > s->win.p50)
				cold = s->cold_n * (s->cold_mean_ns - s->win.p50);
		}
		lw->own_ns += own > cold ? own - cold : 0;
		lw->blk_ns += s->blocked_ns_win;
		lw->calls += s->calls_win;
		if (own > lw->top_ns) {
			lw->top_ns = own;
			lw->top_op = s->op;
			lw->top_p50 = s->win.p50;
		}
	}
	/* CUDA reads it once, at its start: set then, or started with it */
	lw->env = ((x->p->env | x->p->env_initial) & IG_ENV_LAUNCH_BLOCKING) != 0;
	if (lw->calls < cfg->min_calls)
		return;
	lw->mean_ns = (double)lw->own_ns / (double)lw->calls;
	/* most of them, not a few slow ones (lazy module loads), and asleep
	 * most of that time: a launch's CPU work never sleeps */
	lw->longer =
	    lw->mean_ns >= (double)cfg->launch_wait_ns && lw->top_p50 >= cfg->launch_wait_ns;
	lw->waits = lw->longer && lw->blk_ns * 2 >= lw->own_ns;
	lw->sync_per_ns = lw->syncs ? (double)lw->sync_ns / (double)lw->syncs : 0;
	lw->blocking =
	    lw->env || (lw->waits && lw->syncs >= cfg->min_calls && lw->sync_per_ns < lw->mean_ns);
}

/* The impact is what overlap would give back: the smaller of the time in
 * launches and the rest of the wall time (with launches queued, the host's
 * work and the GPU's run side by side). */
int detect_rule_launch_blocking(struct ctx *x, const struct launch_waits *lw)
{
	const struct ig_time_parts *P = x->parts;
	if (!lw->blocking || !P->wall_ns || !x->feeder)
		return 0;
	double in = fmin(1.0, (double)lw->own_ns / (double)P->wall_ns);
	struct cause c;
	memset(&c, 0, sizeof(c));
	c.cls = IG_CC_LAUNCH_BLOCKING;
	c.impact = fmin(in, 1.0 - in);
	c.unconfirmed = !lw->env;
	c.culprit_pid = x->p->pid;
	memcpy(c.culprit_comm, x->p->comm, sizeof(c.culprit_comm));
	c.culprit_self = 1;
	c.sev = sev_of(x->cfg, c.impact, 1, lw->env);
	if (c.impact < x->cfg->sev_low)
		return 0;
	struct finding f;
	detect_finding_init(&f, c.cls, c.sev, lw->top_op, x->p);
	f.c.tid = x->feeder->tid;
	f.c.impact = c.impact;
	f.c.culprit_pid = c.culprit_pid;
	memcpy(f.c.culprit_comm, c.culprit_comm, sizeof(f.c.culprit_comm));
	detect_words_launch_blocking(x, &c, &f, lw, in);
	detect_fire(x->d, &f, x->now);
	return 1;
}
