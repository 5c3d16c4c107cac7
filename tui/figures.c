/* The viewer's computed numbers (see figures.h). */
#include "figures.h"

#include "core/fmt.h"

#include <stdio.h>
#include <string.h>

int fig_part_group(int part)
{
	return model_split_group(part);
}

/* The model's split (model_split), so that the panes and the stream agree. */
void fig_split(const struct ig_time_parts *p, struct fig_split *out)
{
	struct ig_split s;
	model_split(p, &s);
	out->valid = s.valid;
	out->pre_unknown = s.pre_unknown;
	for (int k = 0; k < FIG_NSPLIT; k++)
		out->share[k] = s.share[k];
}

char *fig_split_cell(char *buf, size_t n, const struct fig_split *sp, int k)
{
	if (k == FIG_PRE && sp->pre_unknown)
		snprintf(buf, n, "?");
	else
		fmt_pct(buf, n, sp->valid ? sp->share[k] : -1);
	return buf;
}

double fig_rate(uint64_t calls, uint64_t span_ns)
{
	double span = (double)span_ns / 1e9;
	if (span < 1)
		span = 1; /* a first second is a second */
	return (double)calls / span;
}

int fig_life_tail_far(const struct ig_series_stats *s)
{
	if (!s->win.n || !s->life.p50)
		return 0;
	double life = (double)s->life.p99 / (double)s->life.p50;
	return life >= FIG_LIFE_TAIL_X && life >= FIG_LIFE_TAIL_OVER_WIN * s->tail_ratio;
}

double fig_share(double frac)
{
	if (frac < 0)
		return -1;
	return frac > 1 ? 1 : frac;
}

int fig_during_call(struct ig_offcpu_rec *off, int n, uint64_t ts_ns, uint64_t dur_ns,
		    uint64_t *pre, uint64_t *blk)
{
	int k = 0;
	*pre = *blk = 0;
	for (int i = 0; i < n; i++) {
		const struct ig_offcpu_rec o = off[i];
		if (o.ts_ns >= ts_ns + dur_ns || o.ts_ns + o.dur_ns <= ts_ns)
			continue;
		if (o.state == IG_OFF_PREEMPTED)
			*pre += o.dur_ns;
		else if (o.state == IG_OFF_BLOCKED)
			*blk += o.dur_ns;
		off[k++] = o;
	}
	return k;
}

int fig_ops_union(const struct ig_series_stats *now, int n, const struct ig_series_stats *then,
		  int m, struct ig_series_stats *out, int max)
{
	int i = 0, j = 0, k = 0;
	while (k < max && (i < n || j < m)) {
		if (j >= m || (i < n && now[i].op <= then[j].op)) {
			if (j < m && now[i].op == then[j].op)
				j++;
			out[k++] = now[i++];
		} else {
			memset(&out[k], 0, sizeof(out[k]));
			out[k].op = then[j].op;
			out[k].pid = then[j].pid;
			k++, j++;
		}
	}
	return k;
}

static double part_share(const struct ig_time_parts *p, int part)
{
	return p && p->wall_ns ? ig_part_share(p, part) : 0;
}

int fig_parts_order(const struct ig_time_parts *then, const struct ig_time_parts *now,
		    int order[IG_PART_MAX])
{
	double big[IG_PART_MAX];
	int n = 0;
	for (int k = 0; k < IG_PART_MAX; k++) {
		double a = part_share(then, k), b = part_share(now, k);
		big[k] = a > b ? a : b;
		if ((then && then->wall_ns && then->ns[k]) || (now && now->wall_ns && now->ns[k]))
			order[n++] = k;
	}
	for (int i = 1; i < n; i++) /* stable: enum order among equals */
		for (int j = i; j > 0 && big[order[j]] > big[order[j - 1]]; j--) {
			int tmp = order[j];
			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	return n;
}

double fig_change(double then, double now)
{
	return then > 0 && now > 0 ? now / then : 0;
}
