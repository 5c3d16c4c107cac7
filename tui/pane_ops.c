/* The GPU API pane: one row per op, grouped runtime / driver / graph, with
 * latency percentiles, the tail ratio, the share of the calling threads'
 * wall time, the share of tail time spent preempted, a severity flag and a
 * p99 trend that uses the width it has; over the window, or since the
 * start (z). Op names are the real symbols, or the abbreviations the help
 * lists when the column is narrow. While a mark is set (m), CALLS/S and
 * P99 give way to mark→now columns, and an op of either time has a row.
 * Enter opens the op. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

/* clang-format off */
enum {
	C_FLAG, C_NAME, C_CALLS, C_RATE, C_RATE_CMP, C_P50, C_P95, C_P99, C_P99_CMP, C_MAX,
	C_RATIO, C_WALL, C_TAILPRE, C_BYTES, C_SPARK, C_N,
};
/* shown instead of each other, as a mark is set or not */
#define COLS_PLAIN ((1u << C_RATE) | (1u << C_P99))
#define COLS_CMP ((1u << C_RATE_CMP) | (1u << C_P99_CMP))

const struct tui_col ops_cols[C_N] = {
	[C_FLAG] = { "!", 1, 0, 0, 'l', 0,
		"worst active alert on the op: H(igh) M(edium) L(ow) I(nfo)" },
	[C_NAME] = { "GPU API", 17, 8, 0, 'l', 0,
		"the CUDA function (abbreviated when narrow: the help lists the abbreviations)" },
	[C_CALLS] = { "CALLS", 6, 0, 4, 'r', 0, "calls since the start (or the last reset)" },
	[C_RATE] = { "CALLS/S", 7, 0, 1, 'r', 0,
		"calls per second over the span the title shows (window 9.06s; 3.92s of 10s while "
		"it fills), the same for every rate on the screen; since the start with z" },
	[C_RATE_CMP] = { "CALLS/S MARK\u2192NOW", 17, 0, 1, 'r', 0,
		"calls per second at the mark (m) and now, over the window (since the start with "
		"z); '-' where the op had no row (only while a mark is set)" },
	[C_P50] = { "P50", 6, 0, 1, 'r', 0, "median latency (window, or since the start)" },
	[C_P95] = { "P95", 6, 0, 3, 'r', 0, "95th percentile latency" },
	[C_P99] = { "P99", 6, 0, 0, 'r', 0,
		"99th percentile latency: yellow at a 3x tail over p50, red at 10x" },
	[C_P99_CMP] = { "P99 MARK\u2192NOW", 14, 0, 0, 'r', 0,
		"99th percentile latency at the mark (m) and now: yellow at 1.5x the mark's, red "
		"at 3x; sorts by now/mark; '-': no call (only while a mark is set)" },
	[C_MAX] = { "MAX", 6, 0, 3, 'r', 0, "slowest call" },
	[C_RATIO] = { "P99/P50", 7, 0, 2, 'r', 0,
		"the tail ratio: how far p99 is from p50; \u2191 (^ in ASCII): the lifetime tail is "
		"far worse, 10x or more and 3x the window's (a burst of slow calls that has left "
		"the window): z shows it" },
	[C_WALL] = { "WALL", 5, 0, 2, 'r', 0,
		"share of the calling threads' wall time spent in this op (window only)" },
	[C_TAILPRE] = { "TAILPRE", 7, 0, 2, 'r', 0,
		"share of the tail calls' time (calls at or above p95) spent preempted: runnable "
		"but not running, CPU contention (window only)" },
	[C_BYTES] = { "BYTES/S", 11, 0, 6, 'r', 0,
		"bytes copied or allocated per second, over the span CALLS/S is over: CALLS/S x "
		"bytes per call (window only)" },
	[C_SPARK] = { "P99 TREND", 10, 110, 5, 'l', 0,
		"p99 of each second of the window, oldest on the left" },
};
const int ops_ncols = C_N;
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

/* The percentiles shown: the window's, or the lifetime's with z. */
static const struct ig_pcts *shown_pcts(struct tui *t, const struct ig_series_stats *s)
{
	return t->life ? &s->life : &s->win;
}

static double shown_rate(struct tui *t, const struct ig_series_stats *s)
{
	return tui_rate(t, s->calls_win, s->calls_life);
}

static double shown_ratio(struct tui *t, const struct ig_series_stats *s)
{
	const struct ig_pcts *pc = shown_pcts(t, s);
	if (!t->life)
		return s->tail_ratio;
	return pc->p50 ? (double)pc->p99 / (double)pc->p50 : 0;
}

static void latency_cell(struct tui *t, const struct ig_series_stats *s, int col, char *buf,
			 size_t n, int *slot)
{
	const struct ig_pcts *pc = shown_pcts(t, s);
	uint64_t v = col == C_P50   ? pc->p50
		     : col == C_P95 ? pc->p95
		     : col == C_P99 ? pc->p99
				    : pc->max;
	if (!pc->n) {
		snprintf(buf, n, "-");
		*slot = TH_DIM;
		return;
	}
	fmt_ns(buf, n, v);
	if (col == C_P99)
		*slot = p99_slot(shown_ratio(t, s));
}

/* The marked and the current value of a mark→now cell: p99 (latency) or
 * calls per second; *ok_* is 0 for no value. */
static void cmp_values(struct tui *t, const struct ig_series_stats *s, int col, double *then,
		       int *ok_then, double *now, int *ok_now)
{
	const struct ig_series_stats *m = mark_op(t, s->op);
	if (col == C_P99_CMP) {
		*ok_then = m && shown_pcts(t, m)->n;
		*then = *ok_then ? (double)shown_pcts(t, m)->p99 : 0;
		*ok_now = s->calls_life && shown_pcts(t, s)->n;
		*now = *ok_now ? (double)shown_pcts(t, s)->p99 : 0;
	} else {
		*ok_then = m != NULL;
		*then = m ? mark_rate(t, m) : 0;
		*ok_now = s->calls_life > 0;
		*now = *ok_now ? shown_rate(t, s) : 0;
	}
}

/* "1.20ms→8.40ms", "1000→250", "-→8.40ms" (no value at the mark: an op
 * of one time only, no call in the window), "-" when neither time has a
 * value; p99 in the colour of its change. */
static void cmp_cell(struct tui *t, const struct ig_series_stats *s, int col, char *buf, size_t n,
		     int *slot)
{
	double then, now;
	int ok_then, ok_now;
	char a[24] = "-", b[24] = "-";
	cmp_values(t, s, col, &then, &ok_then, &now, &ok_now);
	if (ok_then)
		col == C_P99_CMP ? fmt_ns(a, sizeof(a), (uint64_t)then)
				 : fmt_rate(a, sizeof(a), then);
	if (ok_now)
		col == C_P99_CMP ? fmt_ns(b, sizeof(b), (uint64_t)now)
				 : fmt_rate(b, sizeof(b), now);
	if (ok_then || ok_now)
		snprintf(buf, n, "%s\u2192%s", a, b);
	else
		snprintf(buf, n, "-");
	double x = fig_change(then, now);
	if (!ok_now)
		*slot = TH_DIM;
	else if (col == C_P99_CMP && x >= 3)
		*slot = TH_P99_CRIT;
	else if (col == C_P99_CMP && x >= 1.5)
		*slot = TH_P99_WARN;
}

/* Columns kept for the window only: "-" since the start. */
static int window_only(struct tui *t, char *buf, size_t n, int *slot)
{
	if (!t->life)
		return 0;
	snprintf(buf, n, "-");
	*slot = TH_DIM;
	return 1;
}

static void ops_cell(struct tui *t, int cell_w, const struct ig_series_stats *s, int col, char *buf,
		     size_t n, int *slot)
{
	const struct ig_op_info *oi = ig_op_info(s->op);
	int win = shown_pcts(t, s)->n > 0;
	switch (col) {
	case C_FLAG: {
		int sev = snap_severity(t->snap, s->op, 0);
		if (sev >= 0) {
			snprintf(buf, n, "%c", "ILMH"[sev & 3]);
			*slot = sev_slot(sev);
		}
		break;
	}
	case C_NAME: /* the real symbol when it fits */
		snprintf(buf, n, "%s",
			 !oi						  ? "?"
			 : cell_w == 0 || (int)strlen(oi->name) <= cell_w ? oi->name
									  : oi->short_name);
		break;
	case C_CALLS:
		if (!s->calls_life) { /* a row of the mark only */
			snprintf(buf, n, "-");
			*slot = TH_DIM;
			break;
		}
		fmt_count(buf, n, s->calls_life, 6);
		break;
	case C_RATE_CMP:
	case C_P99_CMP:
		cmp_cell(t, s, col, buf, n, slot);
		break;
	case C_RATE:
		fmt_rate(buf, n, shown_rate(t, s));
		if (!win)
			*slot = TH_DIM;
		break;
	case C_P50:
	case C_P95:
	case C_P99:
	case C_MAX:
		latency_cell(t, s, col, buf, n, slot);
		break;
	case C_RATIO:
		fmt_ratio(buf, n, win ? shown_ratio(t, s) : 0);
		*slot = win ? p99_slot(shown_ratio(t, s)) : TH_DIM;
		if (!t->life && fig_life_tail_far(s)) { /* calm now, not since the start */
			size_t l = strlen(buf);
			snprintf(buf + l, n - l, "%s", t->ascii ? "^" : "\u2191");
		}
		break;
	case C_WALL:
		if (!window_only(t, buf, n, slot))
			fmt_pct(buf, n, win ? fig_share(s->wall_share) : -1);
		break;
	case C_TAILPRE:
		if (window_only(t, buf, n, slot))
			break;
		fmt_pct(buf, n, win && s->tail_calls ? fig_share(s->tail_preempt_share) : -1);
		if (win && s->tail_preempt_share >= 0.25)
			*slot = TH_PREEMPTED;
		break;
	case C_BYTES:
		if (window_only(t, buf, n, slot))
			break;
		if (s->bytes_win) { /* over the span CALLS/S is over */
			char b[24];
			snprintf(buf, n, "%s/s",
				 fmt_bytes(b, sizeof(b),
					   (uint64_t)fig_rate(s->bytes_win, t->span_win_ns)));
		} else {
			snprintf(buf, n, "-");
			*slot = TH_DIM;
		}
		break;
	case C_SPARK: {
		if (window_only(t, buf, n, slot))
			break;
		/* one sample per column, or several columns per sample on a
		 * wide terminal: the trend uses the width it has */
		int w = cell_w > 0 ? cell_w : s->spark_n;
		int per = s->spark_n > 0 ? w / s->spark_n : 1;
		if (per < 1)
			per = 1;
		if (per > 1) {
			uint64_t wide[IG_WIN_MAX * 12];
			int m = 0;
			for (int i = 0; i < s->spark_n; i++)
				for (int k = 0;
				     k < per && m < (int)(sizeof(wide) / sizeof(wide[0])); k++)
					wide[m++] = s->spark_p99[i];
			tui_spark(buf, n, wide, m, m, 0, t->ascii);
		} else {
			tui_spark(buf, n, s->spark_p99, s->spark_n, w < s->spark_n ? w : s->spark_n,
				  0, t->ascii);
		}
		*slot = TH_SPARK;
		break;
	}
	}
}

static double ops_num(struct tui *t, const struct ig_series_stats *s, int col, int *ok)
{
	const struct ig_pcts *pc = shown_pcts(t, s);
	*ok = 1;
	if ((col == C_RATE_CMP || col == C_P99_CMP) && t->mark->set) {
		double then, now;
		int ok_then, ok_now;
		cmp_values(t, s, col, &then, &ok_then, &now, &ok_now);
		return fig_change(then, now); /* the largest growth first */
	}
	switch (col) {
	case C_FLAG:
		return snap_severity(t->snap, s->op, 0);
	case C_NAME:
		return -(double)s->op; /* API order */
	case C_CALLS:
		return (double)s->calls_life;
	case C_RATE:
	case C_RATE_CMP:
		return shown_rate(t, s);
	case C_P50:
		return (double)pc->p50;
	case C_P95:
		return (double)pc->p95;
	case C_P99:
	case C_P99_CMP:
	case C_SPARK:
		return (double)pc->p99;
	case C_MAX:
		return (double)pc->max;
	case C_RATIO:
		return shown_ratio(t, s);
	case C_WALL:
		return s->wall_share;
	case C_TAILPRE:
		return s->tail_preempt_share;
	case C_BYTES:
		return (double)s->bytes_win;
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
	       const struct ig_series_stats *rows, int nrows, unsigned flags,
	       const struct tui_rect *r, int focused, const char *title)
{
	int grouped = (flags & OPS_GROUPED) != 0;
	int cmp = (flags & OPS_MARK) && t->mark->set;
	struct tui_table tb = {
	    .cols = ops_cols,
	    .ncols = C_N,
	    .nrows = nrows,
	    .key = ops_key,
	    .cell = cell_cb,
	    .num = num_cb,
	    .group = grouped ? ops_group : NULL,
	    .group_title = ops_group_title,
	    .empty = "no CUDA calls yet",
	    .hide = (cmp ? COLS_PLAIN : COLS_CMP) | t->hidden[TBL_OPS],
	};
	struct ops_ctx c = {t, &tb, rows};
	tb.ctx = &c;
	const struct tui_table_box box = table_draw(t, v, &tb, l, r, focused, title);
	tui_hit_table(t, v, l, &box);
}

/* "window 9.06s", "window 3.40s of 10s" (filling), "since start 1m20s",
 * "window 9.06s at last activity": the span every rate is over. */
char *tui_span_title(struct tui *t, char *buf, size_t n)
{
	char a[48];
	struct ig_model_totals tot;
	model_totals(tui_model(t), &tot);
	if (t->life)
		snprintf(buf, n, "since start %s",
			 fmt_age(a, sizeof(a),
				 tot.now_ns > tot.first_ns && tot.first_ns
				     ? tot.now_ns - tot.first_ns
				     : 0));
	else
		snprintf(buf, n, "window %s%s",
			 fmt_window_span(a, sizeof(a), tot.first_ns ? tot.win_span_ns : 0,
					 (unsigned)(t->snap->window_ns / 1000000000ull)),
			 t->ended ? " at last activity" : "");
	return buf;
}

/* The rows: the snapshot's ops, and while a mark is set those of the
 * mark too (an op of one time only shows "-" for the other). */
static int shown_rows(struct tui *t, const struct ig_series_stats **rows)
{
	static struct ig_series_stats both[IG_OP_MAX];
	if (!t->mark->set) {
		*rows = t->snap->ops;
		return t->snap->nops;
	}
	*rows = both;
	return fig_ops_union(t->snap->ops, t->snap->nops, t->mark->ops, t->mark->nops, both,
			     IG_OP_MAX);
}

static void ops_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r, int focused)
{
	char title[64];
	const struct ig_series_stats *rows;
	int n = shown_rows(t, &rows);
	/* until the user moves it, the selection is on the op of the top
	 * alert: the row the H (or M, L) marker is on */
	for (int i = 0; i < t->snap->nchains && !v->lists[0].moved; i++)
		if (t->snap->chains[i].active && t->snap->chains[i].op) {
			v->lists[0].sel_key = (uint64_t)t->snap->chains[i].op + 1;
			break;
		}
	ops_table(t, v, &v->lists[0], rows, n, OPS_GROUPED | OPS_MARK, r, focused,
		  tui_span_title(t, title, sizeof(title)));
}

static int ops_want(struct tui *t)
{
	int groups = 0, seen[IG_GRP_MAX] = {0};
	const struct ig_series_stats *rows;
	int nrows = shown_rows(t, &rows);
	for (int i = 0; i < nrows; i++) {
		const struct ig_op_info *oi = ig_op_info(rows[i].op);
		int g = oi ? oi->group : 0;
		if (g >= 0 && g < IG_GRP_MAX && !seen[g])
			seen[g] = 1, groups++;
	}
	int n = nrows + groups + 1;
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
