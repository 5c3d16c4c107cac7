/* The op screen (Enter on an op): the window's latency histogram as bars,
 * p99 per second over the window, the per-process breakdown (per-thread
 * when opened for one process), and the slowest calls in the window with
 * the time they spent preempted and blocked and who preempted them, and the
 * op's top user stacks by tail time (Enter opens one; Enter on a slow call
 * opens its stack, o its thread's off-CPU timeline). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "tui_int.h"

/* --- breakdown: one row per process (or per thread) ---------------------------- */

/* clang-format off */
enum { B_ID, B_NAME, B_RATE, B_P50, B_P99, B_MAX, B_RATIO, B_TAILPRE, B_PREEMPTOR, B_N };

static const struct tui_col bcols_proc[B_N] = {
	[B_ID] = { "PID", 7, 0, 0, 'r' },
	[B_NAME] = { "PROCESS", 15, 5, 0, 'l' },
	[B_RATE] = { "CALLS/S", 7, 0, 0, 'r' },
	[B_P50] = { "P50", 6, 0, 1, 'r' },
	[B_P99] = { "P99", 6, 0, 0, 'r' },
	[B_MAX] = { "MAX", 6, 0, 2, 'r' },
	[B_RATIO] = { "P99/P50", 7, 0, 1, 'r' },
	[B_TAILPRE] = { "TAILPRE", 7, 0, 1, 'r' },
	[B_PREEMPTOR] = { "TOP PREEMPTOR", 17, 10, 2, 'l' },
};
/* clang-format on */
/* clang-format off */
static const struct tui_col bcols_thread[B_N] = {
	[B_ID] = { "TID", 7, 0, 0, 'r' },
	[B_NAME] = { "THREAD", 15, 5, 0, 'l' },
	[B_RATE] = { "CALLS/S", 7, 0, 0, 'r' },
	[B_P50] = { "P50", 6, 0, 1, 'r' },
	[B_P99] = { "P99", 6, 0, 0, 'r' },
	[B_MAX] = { "MAX", 6, 0, 2, 'r' },
	[B_RATIO] = { "P99/P50", 7, 0, 1, 'r' },
	[B_TAILPRE] = { "PREEMPT", 7, 0, 1, 'r' },
	[B_PREEMPTOR] = { "TOP PREEMPTOR", 17, 10, 2, 'l' },
};
/* clang-format on */

/* Per-thread series keep no tail or preemptor accounting (memory): their
 * PREEMPT column is the preempted share of all their calls in the window. */
static double thread_preempt_share(const struct ig_series_stats *s)
{
	return s->time_win_ns ? (double)s->preempt_ns_win / (double)s->time_win_ns : -1;
}

struct bctx {
	const struct ig_series_stats *rows;
	int threads;
	const struct ig_detect *det;
};

static uint64_t b_key(void *ctx, int row)
{
	const struct bctx *c = ctx;
	return c->threads ? c->rows[row].tid : c->rows[row].pid;
}

static void b_cell(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	const struct bctx *c = ctx;
	const struct ig_series_stats *s = &c->rows[row];
	char b[64];
	switch (col) {
	case B_ID:
		snprintf(buf, n, "%u", c->threads ? s->tid : s->pid);
		break;
	case B_NAME: {
		const char *name = c->threads && s->tcomm[0] ? s->tcomm : s->comm;
		snprintf(buf, n, "%.*s", IG_COMM_LEN, name[0] ? name : "?");
		int sev = detect_severity(c->det, s->op, s->pid);
		if (sev >= 0)
			*slot = sev_slot(sev);
		break;
	}
	case B_RATE:
		fmt_rate(buf, n, s->calls_per_s);
		break;
	case B_P50:
	case B_P99:
	case B_MAX:
		if (!s->win.n) {
			snprintf(buf, n, "-");
			*slot = TH_DIM;
			break;
		}
		report_fmt_ns(buf, n,
			      col == B_P50   ? s->win.p50
			      : col == B_P99 ? s->win.p99
					     : s->win.max);
		if (col == B_P99)
			*slot = p99_slot(s->tail_ratio);
		break;
	case B_RATIO:
		fmt_ratio(buf, n, s->win.n ? s->tail_ratio : 0);
		*slot = p99_slot(s->tail_ratio);
		break;
	case B_TAILPRE: {
		double share = -1;
		if (c->threads)
			share = thread_preempt_share(s);
		else if (s->win.n && s->tail_calls)
			share = s->tail_preempt_share;
		fmt_pct(buf, n, share);
		if (share >= 0.25)
			*slot = TH_PREEMPTED;
		break;
	}
	case B_PREEMPTOR:
		if (s->top_preemptor_pid) {
			snprintf(
			    buf, n, "%s %.0f%%",
			    fmt_proc(b, sizeof(b), s->top_preemptor_comm, s->top_preemptor_pid),
			    s->top_preemptor_share * 100.0);
		} else {
			snprintf(buf, n, "-");
			*slot = TH_DIM;
		}
		break;
	}
}

static double b_num(void *ctx, int row, int col, int *ok)
{
	const struct bctx *c = ctx;
	const struct ig_series_stats *s = &c->rows[row];
	*ok = 1;
	switch (col) {
	case B_ID:
		return -(double)(c->threads ? s->tid : s->pid);
	case B_RATE:
		return s->calls_per_s;
	case B_P50:
		return (double)s->win.p50;
	case B_P99:
		return (double)s->win.p99;
	case B_MAX:
		return (double)s->win.max;
	case B_RATIO:
		return s->tail_ratio;
	case B_TAILPRE:
		return c->threads ? thread_preempt_share(s) : s->tail_preempt_share;
	case B_PREEMPTOR:
		return s->top_preemptor_share;
	}
	*ok = 0;
	return 0;
}

/* --- slowest calls ------------------------------------------------------------ */

/* clang-format off */
enum { S_TIME, S_PID, S_TID, S_DUR, S_PRE, S_BLK, S_SW, S_BY, S_BYTES, S_RET, S_N };

static const struct tui_col scols[S_N] = {
	[S_TIME] = { "SLOWEST AT", 12, 0, 1, 'l' },
	[S_PID] = { "PID", 7, 0, 2, 'r' },
	[S_TID] = { "TID", 7, 0, 0, 'r' },
	[S_DUR] = { "DURATION", 8, 0, 0, 'r' },
	[S_PRE] = { "PREEMPTED", 9, 0, 0, 'r' },
	[S_BLK] = { "BLOCKED", 8, 0, 0, 'r' },
	[S_SW] = { "SW", 4, 0, 3, 'r' },
	[S_BY] = { "PREEMPTED BY", 16, 8, 1, 'l' },
	[S_BYTES] = { "BYTES", 8, 0, 4, 'r' },
	[S_RET] = { "RET", 4, 0, 5, 'r' },
};
/* clang-format on */

static uint64_t s_key(void *ctx, int row)
{
	const struct ig_call_rec *c = &((const struct ig_call_rec *)ctx)[row];
	return (c->ts_ns ^ ((uint64_t)c->tid << 40)) & ~ROW_GROUP;
}

static void s_cell(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	const struct ig_call_rec *c = &((const struct ig_call_rec *)ctx)[row];
	char b[64];
	int nosplit = (c->flags & IG_F_NO_SPLIT) != 0;
	switch (col) {
	case S_TIME:
		fmt_clock(b, sizeof(b), c->ts_ns);
		snprintf(buf, n, "%s.%03llu", b,
			 (unsigned long long)(c->ts_ns % 1000000000ull / 1000000ull));
		break;
	case S_PID:
		snprintf(buf, n, "%u", c->pid);
		break;
	case S_TID:
		snprintf(buf, n, "%u", c->tid);
		break;
	case S_DUR:
		report_fmt_ns(buf, n, c->dur_ns);
		break;
	case S_PRE:
		if (nosplit) {
			snprintf(buf, n, "?");
			*slot = TH_DIM;
			break;
		}
		report_fmt_ns(buf, n, c->preempt_ns);
		if (c->preempt_ns * 4 >= c->dur_ns && c->preempt_ns)
			*slot = TH_PREEMPTED;
		break;
	case S_BLK:
		if (nosplit) {
			snprintf(buf, n, "?");
			*slot = TH_DIM;
			break;
		}
		report_fmt_ns(buf, n, c->blocked_ns);
		if (c->blocked_ns * 2 >= c->dur_ns && c->blocked_ns)
			*slot = TH_BLOCKED;
		break;
	case S_SW:
		snprintf(buf, n, "%u", c->switches);
		break;
	case S_BY:
		if (c->other_pid)
			fmt_proc(buf, n, c->other_comm, c->other_pid);
		else
			snprintf(buf, n, "-");
		break;
	case S_BYTES:
		if (c->arg0 && ig_op_info(c->op) &&
		    (ig_op_info(c->op)->kind & (IG_OPK_COPY | IG_OPK_ALLOC)))
			report_fmt_bytes(buf, n, c->arg0);
		else
			snprintf(buf, n, "-");
		break;
	case S_RET:
		snprintf(buf, n, "%d", c->ret);
		if (c->ret)
			*slot = TH_ERROR;
		break;
	}
}

static double s_num(void *ctx, int row, int col, int *ok)
{
	const struct ig_call_rec *c = &((const struct ig_call_rec *)ctx)[row];
	*ok = 1;
	switch (col) {
	case S_TIME:
		return -(double)c->ts_ns;
	case S_PID:
		return -(double)c->pid;
	case S_TID:
		return -(double)c->tid;
	case S_DUR:
		return (double)c->dur_ns;
	case S_PRE:
		return (double)c->preempt_ns;
	case S_BLK:
		return (double)c->blocked_ns;
	case S_SW:
		return c->switches;
	case S_BYTES:
		return (double)c->arg0;
	case S_RET:
		return c->ret;
	}
	*ok = 0;
	return 0;
}

/* --- top stacks by tail time ------------------------------------------------- */

/* clang-format off */
enum { K_TAILNS, K_TAIL, K_CALLS, K_MAX, K_ID, K_FRAME, K_N };

static const struct tui_col kcols[K_N] = {
	[K_TAILNS] = { "TAIL TIME", 9, 0, 0, 'r' },
	[K_TAIL] = { "TAIL", 6, 0, 1, 'r' },
	[K_CALLS] = { "CALLS", 7, 0, 0, 'r' },
	[K_MAX] = { "MAX", 7, 0, 1, 'r' },
	[K_ID] = { "STACK", 18, 0, 3, 'l' },
	[K_FRAME] = { "HEADLINE FRAME", 30, 200, 0, 'l' },
};
/* clang-format on */

static uint64_t k_key(void *ctx, int row)
{
	uint64_t id = ((const struct stacks_stat *)ctx)[row].id & ~ROW_GROUP;
	return id ? id : 1;
}

static void k_cell(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	const struct stacks_stat *k = &((const struct stacks_stat *)ctx)[row];
	switch (col) {
	case K_TAILNS:
		report_fmt_ns(buf, n, k->tail_ns);
		if (!k->tail_calls)
			*slot = TH_DIM;
		break;
	case K_TAIL:
		snprintf(buf, n, "%llu", (unsigned long long)k->tail_calls);
		break;
	case K_CALLS:
		snprintf(buf, n, "%llu", (unsigned long long)k->calls);
		break;
	case K_MAX:
		report_fmt_ns(buf, n, k->max_ns);
		break;
	case K_ID:
		snprintf(buf, n, "0x%llx", (unsigned long long)k->id);
		*slot = TH_DIM;
		break;
	case K_FRAME:
		if (k->headline[0])
			snprintf(buf, n, "%s", k->headline);
		else if (k->state == STACKS_PENDING)
			snprintf(buf, n, "(resolving)"), *slot = TH_DIM;
		else
			snprintf(buf, n, "(frames not available)"), *slot = TH_DIM;
		break;
	}
}

static double k_num(void *ctx, int row, int col, int *ok)
{
	const struct stacks_stat *k = &((const struct stacks_stat *)ctx)[row];
	*ok = 1;
	switch (col) {
	case K_TAILNS:
		return (double)k->tail_ns;
	case K_TAIL:
		return (double)k->tail_calls;
	case K_CALLS:
		return (double)k->calls;
	case K_MAX:
		return (double)k->max_ns;
	}
	*ok = 0;
	return 0;
}

/* --- data ------------------------------------------------------------------- */

static void op_update(struct tui *t, struct tui_view *v)
{
	struct tui_opdata *d = t->opd;
	int r = v->pid ? model_op_proc_stats(tui_model(t), v->op, v->pid, &d->st)
		       : model_op_stats(tui_model(t), v->op, &d->st);
	d->valid = r == 0;
	const struct hist *h = model_op_hist(tui_model(t), v->op, v->pid, 0);
	d->hist_life = 0;
	if (!h || h->n == 0) { /* an idle op (or a finished replay): show its whole life */
		h = model_op_hist(tui_model(t), v->op, v->pid, 1);
		d->hist_life = h != NULL;
	}
	d->hist_ok = h != NULL;
	if (h)
		d->hist = *h;
	if (v->pid)
		d->nprocs = model_op_threads(tui_model(t), v->op, v->pid, d->procs, TUI_MAX_PROCS);
	else
		d->nprocs = model_op_procs(tui_model(t), v->op, d->procs, TUI_MAX_PROCS);
	d->nslow = model_slow_calls(tui_model(t), v->op, v->pid, d->slow,
				    (int)(sizeof(d->slow) / sizeof(d->slow[0])));
	struct stacks *st = session_stacks(t->s);
	d->stacks_on = st != NULL;
	d->nstk = st ? stacks_top(st, v->op, STACKS_BY_TAIL, d->stk, TUI_MAX_STACKS) : 0;
	if (d->nstk < 0)
		d->nstk = 0;
}

/* --- drawing ------------------------------------------------------------------ */

static void draw_hist(struct tui *t, const struct tui_rect *r)
{
	const struct tui_opdata *d = t->opd;
	char a[32], b[32];
	draw_section(t, r, 0,
		     d->hist_life ? "latency histogram (since start: window empty)"
				  : "latency histogram (window)");
	int rows = r->h - 1;
	if (rows <= 0)
		return;
	if (!d->hist_ok || d->hist.n == 0) {
		draw_text(t, r, 1, 2, -1, TH_DIM, "no calls in the window");
		return;
	}
	uint64_t lo = d->hist.min_ns, hi = d->hist.max_ns + 1;
	if (lo < 1)
		lo = 1;
	if (hi <= lo)
		hi = lo + 1;
	int nbars = rows > 24 ? 24 : rows;
	uint64_t counts[24];
	uint64_t top = hist_bars(&d->hist, lo, hi, counts, nbars);
	uint64_t p99 = d->hist_life ? d->st.life.p99 : d->st.win.p99;
	int labw = 17, cntw = 7;
	int barw = r->w - labw - cntw - 2;
	double ratio = (double)hi / (double)lo;
	for (int i = 0; i < nbars; i++) {
		/* bar i covers [lo * ratio^(i/n), lo * ratio^((i+1)/n)) */
		double f0 = (double)i / nbars, f1 = (double)(i + 1) / nbars;
		uint64_t b0 = (uint64_t)((double)lo * pow(ratio, f0));
		uint64_t b1 = (uint64_t)((double)lo * pow(ratio, f1));
		char lab[48];
		snprintf(lab, sizeof(lab), "%s-%s", report_fmt_ns(a, sizeof(a), b0),
			 report_fmt_ns(b, sizeof(b), b1));
		int y = 1 + i;
		draw_text_right(t, r, y, 0, labw - 1, TH_DIM, lab);
		if (barw > 0)
			draw_bar(t, r, y, labw, barw, top ? (double)counts[i] / (double)top : 0,
				 b1 > p99 ? TH_BAR_TAIL : TH_BAR);
		if (counts[i]) {
			fmt_count(a, sizeof(a), counts[i], cntw - 1);
			draw_text_right(t, r, y, r->w - cntw, cntw, TH_NORMAL, a);
		}
	}
}

static void draw_p99_chart(struct tui *t, const struct tui_rect *r)
{
	const struct ig_series_stats *s = &t->opd->st;
	char a[32], title[96];
	uint64_t vmax = 0;
	for (int i = 0; i < s->spark_n; i++)
		if (s->spark_p99[i] > vmax)
			vmax = s->spark_p99[i];
	if (vmax)
		snprintf(title, sizeof(title), "p99 per second, last %d s (top %s)", s->spark_n,
			 report_fmt_ns(a, sizeof(a), vmax));
	else
		snprintf(title, sizeof(title), "p99 per second, last %d s", s->spark_n);
	draw_section(t, r, 0, title);
	int rows = r->h - 1, n = s->spark_n;
	if (rows <= 0 || n <= 0 || !vmax) {
		if (rows > 0)
			draw_text(t, r, 1, 2, -1, TH_DIM, "no calls in the window");
		return;
	}
	int colw = (r->w - 2) / n;
	if (colw < 1)
		colw = 1;
	if (colw > 6)
		colw = 6;
	int first = n - (r->w - 2) / colw;
	if (first < 0)
		first = 0;
	static const char *const eighth[9] = {" ",	"\u2581", "\u2582", "\u2583", "\u2584",
					      "\u2585", "\u2586", "\u2587", "\u2588"};
	for (int i = first; i < n; i++) {
		uint64_t v = s->spark_p99[i];
		int units = (int)((double)v / (double)vmax * rows * 8 + 0.5);
		if (v && units == 0)
			units = 1;
		int slot = v * 10 >= vmax * 9 ? TH_BAR_TAIL : TH_BAR;
		for (int k = 0; k < rows; k++) {
			int lvl = units - (rows - 1 - k) * 8;
			if (lvl > 8)
				lvl = 8;
			if (lvl <= 0)
				continue;
			const char *g = t->ascii ? (lvl >= 4 ? "#" : ".") : eighth[lvl];
			for (int c = 0; c < colw - (colw > 1 ? 1 : 0); c++)
				draw_text(t, r, 1 + k, 1 + (i - first) * colw + c, 1, slot, g);
		}
	}
}

static void op_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r)
{
	const struct tui_opdata *d = t->opd;
	const struct ig_op_info *oi = ig_op_info(v->op);
	char a[32], b[32], c[32], e[32], g[32], h2[32], line[320];
	static const char *const grp[] = {"runtime API", "driver API", "CUDA Graphs", "NCCL",
					  "HIP API"};

	/* title and the numbers of the whole op */
	draw_fill(t, r, 0, TH_TITLE);
	if (v->pid) {
		char p[48];
		snprintf(line, sizeof(line), " %s  in %s", oi ? oi->name : "?",
			 fmt_proc(p, sizeof(p), model_comm(tui_model(t), v->pid), v->pid));
	} else {
		snprintf(line, sizeof(line), " %s  %s, all processes", oi ? oi->name : "?",
			 oi && oi->group < IG_GRP_MAX ? grp[oi->group] : "");
	}
	draw_text(t, r, 0, 0, -1, TH_TITLE, line);
	if (!d->valid) {
		draw_text(t, r, 2, 2, -1, TH_DIM,
			  "no calls of this op since the start or the reset");
		return;
	}
	const struct ig_series_stats *s = &d->st;
	const struct ig_pcts *pc = s->win.n ? &s->win : &s->life;
	double ratio = pc->p50 ? (double)pc->p99 / (double)pc->p50 : 0;
	snprintf(line, sizeof(line),
		 "calls %llu (%s/s)  %s p50 %s  p95 %s  p99 %s  max %s  p99/p50 %s",
		 (unsigned long long)s->calls_life, fmt_rate(a, sizeof(a), s->calls_per_s),
		 s->win.n ? "window" : "since start", report_fmt_ns(b, sizeof(b), pc->p50),
		 report_fmt_ns(c, sizeof(c), pc->p95), report_fmt_ns(e, sizeof(e), pc->p99),
		 report_fmt_ns(g, sizeof(g), pc->max), fmt_ratio(h2, sizeof(h2), ratio));
	draw_text(t, r, 1, 1, -1, p99_slot(ratio), line);
	char p[48];
	int x = 1;
	x += draw_printf(t, r, 2, x, TH_NORMAL, "wall %s  ",
			 fmt_pct(a, sizeof(a), s->wall_share));
	x += draw_printf(t, r, 2, x, TH_PREEMPTED, "tail preempted %s",
			 fmt_pct(a, sizeof(a), s->tail_calls ? s->tail_preempt_share : -1));
	x += draw_printf(t, r, 2, x, TH_NORMAL, "  ");
	x += draw_printf(t, r, 2, x, TH_BLOCKED, "blocked %s",
			 fmt_pct(a, sizeof(a), s->tail_calls ? s->tail_blocked_share : -1));
	if (s->top_preemptor_pid)
		x +=
		    draw_printf(t, r, 2, x, TH_NORMAL, "  top preemptor %s %.0f%%",
				fmt_proc(p, sizeof(p), s->top_preemptor_comm, s->top_preemptor_pid),
				s->top_preemptor_share * 100);
	if (s->bytes_win)
		draw_printf(t, r, 2, x, TH_NORMAL, "  moved %s",
			    report_fmt_bytes(a, sizeof(a), s->bytes_win));

	/* sections: [histogram | p99 chart], breakdown, slowest calls, stacks */
	struct tui_rect body = {r->y + 3, r->x, r->h - 3, r->w};
	int side = body.w >= 100;
	enum { S_HIST, S_CHART, S_BREAK, S_SLOW, S_STK, S_NSEC };
	int min[S_NSEC] = {4, side ? 0 : 4, 4, 4, 3};
	/* the stacks take what is left once the histogram has its rows */
	int want[S_NSEC] = {13, 7, d->nprocs + 2, d->nslow + 2 < 10 ? d->nslow + 2 : 10,
			    d->nstk + 2 < 10 ? d->nstk + 2 : 10};
	int prio[S_NSEC] = {3, 4, 2, 0, 1};
	int h[S_NSEC];
	tui_stack(body.h, S_NSEC, min, want, prio, h);
	int y = body.y;
	struct tui_rect sr[S_NSEC];
	for (int i = 0; i < S_NSEC; i++) {
		sr[i] = (struct tui_rect){y, body.x, h[i], body.w};
		y += h[i];
	}
	if (h[S_HIST]) {
		if (side) {
			struct tui_rect left = sr[S_HIST], right = sr[S_HIST];
			left.w = body.w / 2 - 1;
			right.x = body.x + body.w / 2 + 1;
			right.w = body.w - body.w / 2 - 1;
			draw_hist(t, &left);
			draw_p99_chart(t, &right);
		} else {
			draw_hist(t, &sr[S_HIST]);
		}
	}
	if (h[S_CHART])
		draw_p99_chart(t, &sr[S_CHART]);

	/* the focus moves between the three tables */
	v->nfocus = 3;
	if (v->focus > 2)
		v->focus = 0;
	if (h[S_BREAK]) {
		struct bctx bc = {d->procs, v->pid != 0, tui_detect(t)};
		struct tui_table tb = {
		    .cols = v->pid ? bcols_thread : bcols_proc,
		    .ncols = B_N,
		    .ctx = &bc,
		    .nrows = d->nprocs,
		    .key = b_key,
		    .cell = b_cell,
		    .num = b_num,
		    .empty = "no calls in the window",
		};
		struct tui_rect tr =
		    draw_section_top(t, &sr[S_BREAK], v->pid ? "per thread" : "per process");
		table_draw(t, v, &tb, &v->lists[0], &tr, v->focus == 0, NULL);
	}
	if (h[S_SLOW]) {
		struct tui_table tb = {
		    .cols = scols,
		    .ncols = S_N,
		    .ctx = (void *)d->slow,
		    .nrows = d->nslow,
		    .key = s_key,
		    .cell = s_cell,
		    .num = s_num,
		    .empty = "no calls in the window",
		};
		struct tui_rect tr =
		    draw_section_top(t, &sr[S_SLOW], "slowest calls in the window");
		table_draw(t, v, &tb, &v->lists[1], &tr, v->focus == 1, NULL);
	}
	if (h[S_STK]) {
		struct tui_table tb = {
		    .cols = kcols,
		    .ncols = K_N,
		    .ctx = (void *)d->stk,
		    .nrows = d->nstk,
		    .key = k_key,
		    .cell = k_cell,
		    .num = k_num,
		    .empty = d->stacks_on ? "no stacks of this op yet"
					  : "stacks are off (--no-stacks, or none in the recording)",
		};
		struct tui_rect tr = draw_section_top(t, &sr[S_STK], "top stacks by tail time");
		table_draw(t, v, &tb, &v->lists[2], &tr, v->focus == 2, NULL);
	}
}

static int op_key(struct tui *t, struct tui_view *v, int action, int key)
{
	if (action != ACT_ENTER && action != ACT_OFFCPU)
		return 0;
	if (v->focus == 0 && action == ACT_ENTER) {
		uint64_t k = list_selected(&v->lists[0]);
		if (!k)
			return 0;
		struct tui_view nv = {.screen = v->pid ? SCR_THREAD : SCR_PROC,
				      .pid = v->pid ? v->pid : (uint32_t)k,
				      .tid = v->pid ? (uint32_t)k : 0};
		return tui_push(t, &nv);
	}
	if (v->focus == 2 && action == ACT_ENTER) {
		uint64_t k = list_selected(&v->lists[2]);
		for (int i = 0; k && i < t->opd->nstk; i++) {
			if (k_key(t->opd->stk, i) != k)
				continue;
			struct tui_view nv = {.screen = SCR_STACK,
					      .op = v->op,
					      .pid = t->opd->stk[i].pid,
					      .stack_id = t->opd->stk[i].id};
			return tui_push(t, &nv);
		}
		return 0;
	}
	if (v->focus != 1) {
		tui_message(t, "o: select a slow call first (Tab to the slowest calls)");
		return TF_REDRAW;
	}
	/* a slow call: its stack (Enter) or its thread's off-CPU timeline (o) */
	uint64_t k = list_selected(&v->lists[1]);
	for (int i = 0; k && i < t->opd->nslow; i++) {
		const struct ig_call_rec *c = &t->opd->slow[i];
		if (s_key(t->opd->slow, i) != k)
			continue;
		struct tui_view nv = {.screen = SCR_THREAD, .pid = c->pid, .tid = c->tid};
		if (action == ACT_ENTER)
			nv = (struct tui_view){.screen = SCR_STACK,
					       .op = c->op,
					       .pid = c->pid,
					       .tid = c->tid,
					       .stack_id = c->stack_id};
		return tui_push(t, &nv);
	}
	return 0;
}

const struct tui_screen screen_op = {
    .name = "op",
    .id = SCR_OP,
    .where = KC_DRILL,
    .min_w = TUI_FLOOR_W,
    .min_h = TUI_FLOOR_H,
    .update = op_update,
    .draw = op_draw,
    .key = op_key,
};
