/* The GPU API pane: one row per op, grouped runtime / driver / graph, with
 * window latency percentiles, the tail ratio, the share of the feeding
 * threads' wall time, the share of tail time spent preempted, a severity
 * flag and a p99 sparkline where the width allows. Enter opens the op. */
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "tui_int.h"

/* clang-format off */
enum {
	C_FLAG, C_NAME, C_CALLS, C_RATE, C_P50, C_P95, C_P99, C_MAX, C_RATIO, C_WALL,
	C_TAILPRE, C_SPARK, C_N,
};
/* clang-format on */

/* clang-format off */
static const struct tui_col cols[C_N] = {
	[C_FLAG] = { "!", 1, 0, 0, 'l' },
	[C_NAME] = { "GPU API", 17, 6, 0, 'l' },
	[C_CALLS] = { "CALLS", 6, 0, 4, 'r' },
	[C_RATE] = { "CALLS/S", 7, 0, 1, 'r' },
	[C_P50] = { "P50", 6, 0, 1, 'r' },
	[C_P95] = { "P95", 6, 0, 3, 'r' },
	[C_P99] = { "P99", 6, 0, 0, 'r' },
	[C_MAX] = { "MAX", 6, 0, 3, 'r' },
	[C_RATIO] = { "P99/P50", 7, 0, 2, 'r' },
	[C_WALL] = { "WALL", 5, 0, 2, 'r' },
	[C_TAILPRE] = { "TAILPRE", 7, 0, 2, 'r' },
	[C_SPARK] = { "P99 TREND", 10, 50, 5, 'l' },
};
/* clang-format on */

struct ops_ctx {
	struct tui *t;
	struct tui_table *tb;
	const struct ig_series_stats *rows;
};

static uint64_t ops_key(void *ctx, int row)
{
	const struct ops_ctx *c = ctx;
	return (uint64_t)c->rows[row].op + 1;
}

static int ops_group(void *ctx, int row)
{
	const struct ops_ctx *c = ctx;
	const struct ig_op_info *oi = ig_op_info(c->rows[row].op);
	return oi ? oi->group : 0;
}

static const char *ops_group_title(void *ctx, int g)
{
	return ig_op_group_title(g); /* "Runtime API (libcudart)" ... "NCCL", "HIP API" */
}

static void ops_cell(struct tui *t, int cell_w, const struct ig_series_stats *s, int col, char *buf,
		     size_t n, int *slot)
{
	const struct ig_op_info *oi = ig_op_info(s->op);
	int win = s->win.n > 0;
	switch (col) {
	case C_FLAG:
		int sev = snap_severity(t->snap, s->op, 0);
		if (sev >= 0) {
			snprintf(buf, n, "%c", "ILMH"[sev & 3]);
			*slot = sev_slot(sev);
		}
		break;
	case C_NAME:
		snprintf(buf, n, "%s", oi ? oi->short_name : "?");
		break;
	case C_CALLS:
		fmt_count(buf, n, s->calls_life, 6);
		break;
	case C_RATE:
		fmt_rate(buf, n, s->calls_per_s);
		if (!win)
			*slot = TH_DIM;
		break;
	case C_P50:
	case C_P95:
	case C_P99:
	case C_MAX: {
		uint64_t v = col == C_P50   ? s->win.p50
			     : col == C_P95 ? s->win.p95
			     : col == C_P99 ? s->win.p99
					    : s->win.max;
		if (!win) {
			snprintf(buf, n, "-");
			*slot = TH_DIM;
			break;
		}
		report_fmt_ns(buf, n, v);
		if (col == C_P99)
			*slot = p99_slot(s->tail_ratio);
		break;
	}
	case C_RATIO:
		fmt_ratio(buf, n, win ? s->tail_ratio : 0);
		*slot = win ? p99_slot(s->tail_ratio) : TH_DIM;
		break;
	case C_WALL:
		fmt_pct(buf, n, win ? s->wall_share : -1);
		break;
	case C_TAILPRE:
		fmt_pct(buf, n, win && s->tail_calls ? s->tail_preempt_share : -1);
		if (win && s->tail_preempt_share >= 0.25)
			*slot = TH_PREEMPTED;
		break;
	case C_SPARK: {
		int w = cell_w > 0 ? cell_w : s->spark_n;
		if (w > s->spark_n)
			w = s->spark_n;
		tui_spark(buf, n, s->spark_p99, s->spark_n, w, 0, t->ascii);
		*slot = TH_SPARK;
		break;
	}
	}
}

static double ops_num(struct tui *t, const struct ig_series_stats *s, int col, int *ok)
{
	*ok = 1;
	switch (col) {
	case C_FLAG:
		return snap_severity(t->snap, s->op, 0);
	case C_NAME:
		return -(double)s->op; /* API order */
	case C_CALLS:
		return (double)s->calls_life;
	case C_RATE:
		return s->calls_per_s;
	case C_P50:
		return (double)s->win.p50;
	case C_P95:
		return (double)s->win.p95;
	case C_P99:
		return (double)s->win.p99;
	case C_MAX:
		return (double)s->win.max;
	case C_RATIO:
		return s->tail_ratio;
	case C_WALL:
		return s->wall_share;
	case C_TAILPRE:
		return s->tail_preempt_share;
	case C_SPARK:
		return (double)s->win.p99;
	}
	*ok = 0;
	return 0;
}

static void cell_cb(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	struct ops_ctx *c = ctx;
	ops_cell(c->t, c->tb->cell_w, &c->rows[row], col, buf, n, slot);
}

static double num_cb(void *ctx, int row, int col, int *ok)
{
	struct ops_ctx *c = ctx;
	return ops_num(c->t, &c->rows[row], col, ok);
}

void ops_table(struct tui *t, struct tui_view *v, struct tui_list *l,
	       const struct ig_series_stats *rows, int nrows, int grouped, const struct tui_rect *r,
	       int focused, const char *title)
{
	struct tui_table tb = {
	    .cols = cols,
	    .ncols = C_N,
	    .nrows = nrows,
	    .key = ops_key,
	    .cell = cell_cb,
	    .num = num_cb,
	    .group = grouped ? ops_group : NULL,
	    .group_title = ops_group_title,
	    .empty = "no CUDA calls yet",
	};
	struct ops_ctx c = {t, &tb, rows};
	tb.ctx = &c;
	table_draw(t, v, &tb, l, r, focused, title);
}

static void ops_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r, int focused)
{
	struct tui_list *l = &v->lists[0];
	char title[64];
	snprintf(title, sizeof(title), "window %llus",
		 (unsigned long long)(t->snap->window_ns / 1000000000ull));
	ops_table(t, v, l, t->snap->ops, t->snap->nops, 1, r, focused, title);
}

static int ops_want(struct tui *t)
{
	int groups = 0, seen[IG_GRP_MAX] = {0};
	for (int i = 0; i < t->snap->nops; i++) {
		const struct ig_op_info *oi = ig_op_info(t->snap->ops[i].op);
		int g = oi ? oi->group : 0;
		if (g >= 0 && g < IG_GRP_MAX && !seen[g])
			seen[g] = 1, groups++;
	}
	int n = t->snap->nops + groups + 1;
	return n < OPS_MIN_H ? OPS_MIN_H : n;
}

static int ops_key_cb(struct tui *t, struct tui_view *v, int action, int key)
{
	if (action != ACT_ENTER)
		return 0;
	uint64_t k = list_selected(&v->lists[0]);
	if (!k)
		return 0;
	struct tui_view nv = {.screen = SCR_OP, .op = (int)(k - 1), .pid = 0};
	return tui_push(t, &nv);
}

const struct tui_pane pane_ops = {
    .name = "GPU API",
    .area = AREA_OPS,
    .min_w = OPS_MIN_W,
    .min_h = OPS_MIN_H,
    .want = ops_want,
    .draw = ops_draw,
    .key = ops_key_cb,
};
