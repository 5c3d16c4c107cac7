/* The op screen (Enter on an op): its numbers, the latency histogram as
 * bars, p99 per second over the window, the per-process breakdown
 * (per-thread when opened for one process), the slowest calls with the
 * time they spent preempted and blocked and who preempted them, and the
 * op's top user stacks by tail time (Enter opens one; Enter on a slow call
 * opens its stack, o its thread's off-CPU intervals during the call). The
 * tables are in op_tables.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

/* --- data ------------------------------------------------------------------- */

static void op_update(struct tui *t, struct tui_view *v)
{
	struct tui_opdata *d = t->opd;
	struct ig_model *m = tui_model(t);
	int r = v->pid ? model_op_proc_stats(m, v->op, v->pid, &d->st)
		       : model_op_stats(m, v->op, &d->st);
	d->valid = r == 0;
	/* the window; since the start with z, or when the op made no call in
	 * the window (an idle op, a sparse recording): every section then */
	d->life = t->life || !d->valid || !d->st.win.n;
	const struct hist *h = model_op_hist(m, v->op, v->pid, d->life);
	d->hist_life = d->life;
	d->hist_ok = h != NULL;
	if (h)
		d->hist = *h;
	if (v->pid)
		d->nprocs = model_op_threads(m, v->op, v->pid, d->procs, TUI_MAX_PROCS);
	else
		d->nprocs = model_op_procs(m, v->op, d->procs, TUI_MAX_PROCS);
	int max = (int)(sizeof(d->slow) / sizeof(d->slow[0]));
	d->nslow = d->life ? model_slow_calls_life(m, v->op, v->pid, d->slow, max)
			   : model_slow_calls(m, v->op, v->pid, d->slow, max);
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
		     !d->hist_life ? "latency histogram (window)"
		     : t->life	   ? "latency histogram (since the start)"
				   : "latency histogram (since the start: the window is empty)");
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
	if ((double)hi <= (double)lo * 1.02)
		nbars = 1; /* one value: one bar */
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
		if (nbars == 1)
			b0 = d->hist.min_ns, b1 = d->hist.max_ns;
		snprintf(lab, sizeof(lab), "%s-%s", fmt_ns(a, sizeof(a), b0),
			 fmt_ns(b, sizeof(b), b1));
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
			 fmt_ns(a, sizeof(a), vmax));
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

static void op_title(struct tui *t, struct tui_view *v, const struct tui_rect *r)
{
	const struct ig_op_info *oi = ig_op_info(v->op);
	static const char *const grp[] = {"runtime API", "driver API", "CUDA Graphs", "NCCL",
					  "HIP API"};
	char line[320], p[48];
	draw_fill(t, r, 0, TH_TITLE);
	if (v->pid)
		snprintf(line, sizeof(line), " %s  in %s", oi ? oi->name : "?",
			 tui_fmt_proc(p, sizeof(p), model_comm(tui_model(t), v->pid), v->pid));
	else
		snprintf(line, sizeof(line), " %s  %s, all processes", oi ? oi->name : "?",
			 oi && oi->group < IG_GRP_MAX ? grp[oi->group] : "");
	draw_text(t, r, 0, 0, -1, TH_TITLE, line);
}

/* Two lines: the calls and latencies (window or since the start, said so),
 * then the window's shares: wall time, the tail's preempted and blocked
 * time, the top preemptor, the bytes. */
static void op_numbers(struct tui *t, const struct tui_rect *r)
{
	const struct ig_series_stats *s = &t->opd->st;
	char a[32], b[32], c[32], e[32], g[32], h2[32], p[48], line[320];
	int life = t->opd->life;
	const struct ig_pcts *pc = life ? &s->life : &s->win;
	double ratio = pc->p50 ? (double)pc->p99 / (double)pc->p50 : 0;
	double rate = life ? fig_rate(s->calls_life, t->span_life_ns)
			   : fig_rate(s->calls_win, t->span_win_ns);
	char span[48]; /* the span the rate is over: "in 9.06s" */
	life ? fmt_ns(span, sizeof(span), t->span_life_ns)
	     : fmt_window_span(span, sizeof(span), t->span_win_ns,
			       (unsigned)(t->snap->window_ns / 1000000000ull));
	snprintf(line, sizeof(line),
		 "%s: %llu calls in %s, %s/s  p50 %s  p95 %s  p99 %s  max %s  p99/p50 %s",
		 life ? "since the start" : "window",
		 (unsigned long long)(life ? s->calls_life : s->calls_win), span,
		 fmt_rate(a, sizeof(a), rate), fmt_ns(b, sizeof(b), pc->p50),
		 fmt_ns(c, sizeof(c), pc->p95), fmt_ns(e, sizeof(e), pc->p99),
		 fmt_ns(g, sizeof(g), pc->max), fmt_ratio(h2, sizeof(h2), ratio));
	draw_text(t, r, 1, 1, -1, p99_slot(ratio), line);
	int x = 1;
	if (life) {
		draw_text(t, r, 2, x, -1, TH_DIM,
			  t->life ? "wall share, tail and preemptors: kept for the window only (z)"
				  : "no calls in the window: figures since the start");
		return;
	}
	x += draw_piecef(t, r, 2, x, TH_NORMAL, "wall %s of the calling threads  ",
			 fmt_pct(a, sizeof(a), fig_share(s->wall_share)));
	x += draw_piecef(
	    t, r, 2, x, TH_PREEMPTED, "tail preempted %s",
	    fmt_pct(a, sizeof(a), s->tail_calls ? fig_share(s->tail_preempt_share) : -1));
	x += draw_piecef(t, r, 2, x, TH_NORMAL, "  ");
	x += draw_piecef(
	    t, r, 2, x, TH_BLOCKED, "blocked %s",
	    fmt_pct(a, sizeof(a), s->tail_calls ? fig_share(s->tail_blocked_share) : -1));
	if (s->top_preemptor_pid)
		x += draw_piecef(t, r, 2, x, TH_NORMAL, "  top preemptor %s %s",
				 tui_fmt_culprit(p, sizeof(p), s->top_preemptor_comm,
						 s->top_preemptor_pid, s->pid),
				 fmt_pct(a, sizeof(a), fig_share(s->top_preemptor_share)));
	if (s->bytes_win)
		draw_piecef(t, r, 2, x, TH_NORMAL, "  moved %s",
			    fmt_bytes(a, sizeof(a), s->bytes_win));
}

/* The sections under the numbers: [histogram | p99 chart], the breakdown,
 * the slowest calls, the stacks. */
static void op_sections(struct tui *t, struct tui_view *v, const struct tui_rect *r)
{
	const struct tui_opdata *d = t->opd;
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
	if (h[S_HIST] && side) {
		struct tui_rect left = sr[S_HIST], right = sr[S_HIST];
		left.w = body.w / 2 - 1;
		right.x = body.x + body.w / 2 + 1;
		right.w = body.w - body.w / 2 - 1;
		draw_hist(t, &left);
		draw_p99_chart(t, &right);
	} else if (h[S_HIST]) {
		draw_hist(t, &sr[S_HIST]);
	}
	if (h[S_CHART])
		draw_p99_chart(t, &sr[S_CHART]);

	/* the focus moves between the three tables */
	v->nfocus = 3;
	if (v->focus > 2)
		v->focus = 0;
	if (h[S_BREAK]) {
		struct tui_rect tr =
		    draw_section_top(t, &sr[S_BREAK], v->pid ? "per thread" : "per process");
		op_breakdown_table(t, v, &v->lists[0], d->procs, d->nprocs, v->pid != 0, d->life,
				   &tr, v->focus == 0);
	}
	if (h[S_SLOW]) {
		struct tui_rect tr = draw_section_top(t, &sr[S_SLOW],
						      d->life ? "slowest calls since the start"
							      : "slowest calls in the window");
		op_slow_table(t, v, &v->lists[1], d->slow, d->nslow, d->life, &tr, v->focus == 1);
	}
	if (h[S_STK]) {
		struct tui_rect tr = draw_section_top(t, &sr[S_STK], "top stacks by tail time");
		op_stacks_table(t, v, &v->lists[2], d->stk, d->nstk, d->stacks_on, &tr,
				v->focus == 2);
	}
}

static void op_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r)
{
	op_title(t, v, r);
	if (!t->opd->valid) {
		draw_text(t, r, 2, 2, -1, TH_DIM,
			  "no calls of this op since the start or the reset");
		return;
	}
	op_numbers(t, r);
	op_sections(t, v, r);
}

static int op_key(struct tui *t, struct tui_view *v, int action, int key)
{
	const struct tui_opdata *d = t->opd;
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
		for (int i = 0; k && i < d->nstk; i++) {
			if (op_stack_key(&d->stk[i]) != k)
				continue;
			struct tui_view nv = {.screen = SCR_STACK,
					      .op = v->op,
					      .pid = d->stk[i].pid,
					      .stack_id = d->stk[i].id};
			return tui_push(t, &nv);
		}
		return 0;
	}
	if (v->focus != 1) {
		tui_message(t, "o: select a slow call first (Tab to the slowest calls)");
		return TF_REDRAW;
	}
	/* a slow call: its stack (Enter), or its thread's off-CPU intervals
	 * during the call (o) */
	uint64_t k = list_selected(&v->lists[1]);
	for (int i = 0; k && i < d->nslow; i++) {
		const struct ig_call_rec *c = &d->slow[i];
		if (op_slow_key(c) != k)
			continue;
		int stayed = !c->switches && !c->preempt_ns && !c->blocked_ns;
		struct tui_view nv = {.screen = SCR_THREAD,
				      .pid = c->pid,
				      .tid = c->tid,
				      .call_ts_ns = c->ts_ns,
				      .call_dur_ns = c->dur_ns,
				      .call_op = c->op,
				      .call_stayed = stayed};
		if (action == ACT_ENTER)
			nv = (struct tui_view){.screen = SCR_STACK,
					       .op = c->op,
					       .pid = c->pid,
					       .tid = c->tid,
					       .stack_id = c->stack_id,
					       .call_ts_ns = c->ts_ns,
					       .call_dur_ns = c->dur_ns,
					       .call_op = c->op,
					       .call_stayed = stayed};
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
