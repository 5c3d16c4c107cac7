/* The process screen (Enter on a process): where its feeding threads' wall
 * time goes (a bar of every part, with a legend), who preempted and who
 * woke them, page allocations and block I/O, its per-op table, its threads
 * with the same four shares as the processes pane, and its alerts; over
 * the window or since the start (z). */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

/* --- threads ------------------------------------------------------------------ */

/* clang-format off */
enum { T_TID, T_NAME, T_RATE, T_MAINOP, T_GPU, T_CPU, T_PRE, T_WAIT, T_SW, T_SYNC, T_LAST, T_N };

static const struct tui_col tcols[T_N] = {
	[T_TID] = { "TID", 7, 0, 0, 'r', 0, "thread id" },
	[T_NAME] = { "THREAD", 6, 0, 1, 'l', 1, "thread name (its comm, from its latest event)" },
	[T_RATE] = { "CALLS/S", 7, 0, 0, 'r', 0, "CUDA calls per second" },
	[T_MAINOP] = { "MAIN OP", 15, 6, 1, 'l', 0, "the op it spent most time in (window)" },
	[T_GPU] = { "GPU%", 5, 0, 0, 'r', 0, "share of the thread's wall time waiting for the GPU" },
	[T_CPU] = { "CPU%", 5, 0, 0, 'r', 0,
		"share of its wall time running: CUDA API work and its own work" },
	[T_PRE] = { "PRE%", 5, 0, 0, 'r', 0, "share of its wall time runnable but not running; ? when not known" },
	[T_WAIT] = { "WAIT%", 5, 0, 0, 'r', 0,
		"share of its wall time asleep between calls (I/O, another task, timers, faults)" },
	[T_SW] = { "SW", 5, 0, 3, 'r', 0, "context switches (window)" },
	[T_SYNC] = { "SYNCS", 6, 0, 4, 'r', 0,
		"syncs and synchronous copies (window; a driver sync inside a runtime sync counts "
		"once)" },
	[T_LAST] = { "LAST PREEMPTOR", 14, 0, 2, 'l', 1, "who preempted it last" },
};
/* clang-format on */

static const struct ig_time_parts *tparts(struct tui *t, const struct ig_thread_stats *th)
{
	return t->life ? &th->life_parts : &th->parts;
}

struct tctx {
	struct tui *t;
	const struct ig_thread_stats *rows;
};

static uint64_t t_key(void *ctx, int row)
{
	return ((const struct tctx *)ctx)->rows[row].tid;
}

static void t_cell(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	const struct tctx *c = ctx;
	const struct ig_thread_stats *th = &c->rows[row];
	struct fig_split sp;
	switch (col) {
	case T_TID:
		snprintf(buf, n, "%u", th->tid);
		break;
	case T_NAME:
		snprintf(buf, n, "%.*s", IG_COMM_LEN, th->comm[0] ? th->comm : "-");
		break;
	case T_RATE:
		fmt_rate(buf, n, tui_rate(c->t, th->calls_win, th->calls_life));
		break;
	case T_MAINOP:
		if (th->main_op > 0 && ig_op_info(th->main_op))
			snprintf(buf, n, "%s", ig_op_info(th->main_op)->short_name);
		else
			snprintf(buf, n, "-");
		break;
	case T_GPU:
	case T_CPU:
	case T_PRE:
	case T_WAIT: {
		int k = col == T_GPU   ? FIG_GPU
			: col == T_CPU ? FIG_CPU
			: col == T_PRE ? FIG_PRE
				       : FIG_WAIT;
		fig_split(tparts(c->t, th), &sp);
		fig_split_cell(buf, n, &sp, k);
		if (k == FIG_PRE && sp.pre_unknown)
			*slot = TH_DIM;
		else if (k == FIG_PRE && sp.share[k] >= 0.1)
			*slot = TH_PREEMPTED;
		else if (k == FIG_WAIT && sp.share[k] >= 0.25)
			*slot = TH_BLOCKED;
		break;
	}
	case T_SW:
		fmt_count(buf, n, th->switches, 5);
		break;
	case T_SYNC:
		fmt_count(buf, n, th->sync_calls_win - th->sync_nested_win, 6);
		break;
	case T_LAST:
		if (th->last_preemptor_pid)
			tui_fmt_culprit(buf, n, th->last_preemptor_comm, th->last_preemptor_pid,
					th->pid);
		else
			snprintf(buf, n, "-"), *slot = TH_DIM;
		break;
	}
}

static double t_num(void *ctx, int row, int col, int *ok)
{
	const struct tctx *c = ctx;
	const struct ig_thread_stats *th = &c->rows[row];
	struct fig_split sp;
	fig_split(tparts(c->t, th), &sp);
	*ok = 1;
	switch (col) {
	case T_TID:
		return -(double)th->tid;
	case T_RATE:
		return tui_rate(c->t, th->calls_win, th->calls_life);
	case T_GPU:
		return sp.share[FIG_GPU];
	case T_CPU:
		return sp.share[FIG_CPU];
	case T_PRE:
		return sp.pre_unknown ? -1 : sp.share[FIG_PRE];
	case T_WAIT:
		return sp.share[FIG_WAIT];
	case T_SW:
		return th->switches;
	case T_SYNC:
		return (double)(th->sync_calls_win - th->sync_nested_win);
	}
	*ok = 0;
	return 0;
}

/* --- data --------------------------------------------------------------------- */

static void proc_update(struct tui *t, struct tui_view *v)
{
	struct tui_procdata *d = t->procd;
	struct ig_model *m = tui_model(t);
	d->valid = model_proc(m, v->pid, &d->p) == 0;
	d->nops = model_proc_ops(m, v->pid, d->ops, IG_OP_MAX);
	d->nthreads = model_threads(m, v->pid, d->threads, TUI_MAX_THREADS);
	d->nchains = 0;
	for (int i = 0; i < t->snap->nchains && d->nchains < IG_CHAIN_MAX; i++) {
		const struct ig_chain *c = &t->snap->chains[i];
		if (c->pid == v->pid || c->culprit_pid == v->pid)
			d->chains[d->nchains++] = *c;
	}
}

/* --- drawing ------------------------------------------------------------------ */

static void culprits(struct tui *t, const struct tui_rect *r, int y, const char *what,
		     const struct ig_proc_stats *p, const struct ig_culprit *c, int n)
{
	char a[48], b[32], pct[16];
	int x = 1 + draw_text(t, r, y, 1, -1, TH_NORMAL, what);
	if (t->life) {
		draw_text(t, r, y, x, -1, TH_DIM, "kept for the window only (z)");
		return;
	}
	if (!n) {
		draw_text(t, r, y, x, -1, TH_DIM, "nobody");
		return;
	}
	for (int i = 0; i < n && x < r->w; i++)
		x += draw_piecef(t, r, y, x, i == 0 ? TH_PREEMPTED : TH_NORMAL, "%s%s %s (%s)",
				 i ? ", " : "",
				 tui_fmt_culprit(a, sizeof(a), c[i].comm, c[i].pid, p->pid),
				 fmt_pct(pct, sizeof(pct), fig_share(c[i].share)),
				 fmt_ns(b, sizeof(b), c[i].ns));
}

/* The head of the screen: title, calls, where the time goes, culprits,
 * pages and I/O. Returns the rows used. */
static int proc_head(struct tui *t, const struct tui_rect *r)
{
	const struct ig_proc_stats *p = &t->procd->p;
	char a[48], b[48], c2[48], e[48], line[256];
	char gm[64] = ""; /* NVML's GPU memory of the process */
	if (p->gpu_mem_known)
		snprintf(gm, sizeof(gm), "  GPU mem %s", fmt_bytes(b, sizeof(b), p->gpu_mem_bytes));
	snprintf(line, sizeof(line), " %s  container %s  ppid %u  threads %u%s%s",
		 tui_fmt_proc(a, sizeof(a), p->comm, p->pid), tui_container(p), p->ppid, p->threads,
		 gm, p->exited ? "  (exited)" : "");
	draw_text(t, r, 0, 0, -1, TH_TITLE, line);
	int sev = snap_severity(t->snap, 0, p->pid);
	if (sev >= 0)
		draw_text_right(t, r, 0, 0, r->w - 1, sev_slot(sev), sev_short(sev));
	double rate = tui_rate(t, p->calls_win, p->calls_life);
	char span[48]; /* the span the rate is over: "in 9.06s" */
	t->life ? fmt_ns(span, sizeof(span), t->span_life_ns)
		: fmt_window_span(span, sizeof(span), t->span_win_ns,
				  (unsigned)(t->snap->window_ns / 1000000000ull));
	snprintf(line, sizeof(line), "%s: %llu CUDA calls in %s, %s/s  (%llu since the start)",
		 t->life ? "since the start" : "window",
		 (unsigned long long)(t->life ? p->calls_life : p->calls_win), span,
		 fmt_rate(a, sizeof(a), rate), (unsigned long long)p->calls_life);
	draw_text(t, r, 1, 1, -1, TH_NORMAL, line);
	char title[96];
	if (p->feeder_tid)
		snprintf(title, sizeof(title),
			 "where the time goes: the feeding threads (the busiest: tid %u)",
			 p->feeder_tid);
	else
		snprintf(title, sizeof(title), "where the time goes: its active threads");
	int y = 2 + timebar_lines(t, r, 2, title, t->life ? &p->life_parts : &p->parts,
				  mark_parts(t, p->pid), t->life);
	culprits(t, r, y++, "preempted by: ", p, p->preemptors, p->npreemptors);
	culprits(t, r, y++, "woken by (between calls): ", p, p->wakers, p->nwakers);
	if (p->page_bytes_win || p->io_ops_win) {
		int x = 1;
		if (p->page_bytes_win)
			x += draw_printf(t, r, y, x, TH_NORMAL, "window: page allocations %s  ",
					 fmt_bytes(a, sizeof(a), p->page_bytes_win));
		if (p->io_ops_win)
			draw_printf(t, r, y, x, TH_NORMAL,
				    "%sblock I/O %llu requests %s, latency %s total, %s max",
				    x == 1 ? "window: " : "", (unsigned long long)p->io_ops_win,
				    fmt_bytes(b, sizeof(b), p->io_bytes_win),
				    fmt_ns(c2, sizeof(c2), p->io_lat_ns_win),
				    fmt_ns(e, sizeof(e), p->io_max_ns_win));
		y++;
	}
	return y;
}

static void proc_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r)
{
	const struct tui_procdata *d = t->procd;
	draw_fill(t, r, 0, TH_TITLE);
	if (!d->valid) {
		draw_printf(t, r, 0, 0, TH_TITLE, " process %u", v->pid);
		draw_text(t, r, 2, 2, -1, TH_DIM, "not in the model (evicted, or reset)");
		return;
	}
	int y0 = proc_head(t, r);
	struct tui_rect body = {r->y + y0, r->x, r->h - y0, r->w};
	enum { S_OPS, S_THREADS, S_CHAINS, S_NSEC };
	int min[S_NSEC] = {4, 4, 3};
	int want[S_NSEC] = {d->nops + 2, d->nthreads + 2, d->nchains + 2 < 3 ? 3 : d->nchains + 2};
	int prio[S_NSEC] = {0, 1, 2};
	int h[S_NSEC];
	tui_stack(body.h, S_NSEC, min, want, prio, h);
	struct tui_rect sr[S_NSEC];
	int y = body.y;
	for (int i = 0; i < S_NSEC; i++) {
		sr[i] = (struct tui_rect){y, body.x, h[i], body.w};
		y += h[i];
	}
	v->nfocus = 3;
	if (v->focus > 2)
		v->focus = 0;
	if (h[S_OPS]) {
		struct tui_rect tr = draw_section_top(t, &sr[S_OPS], "CUDA ops of this process");
		ops_table(t, v, &v->lists[0], d->ops, d->nops, 0, &tr, v->focus == 0, NULL);
	}
	if (h[S_THREADS]) {
		struct tctx tc = {t, d->threads};
		struct tui_table tb = {
		    .cols = tcols,
		    .ncols = T_N,
		    .ctx = &tc,
		    .nrows = d->nthreads,
		    .key = t_key,
		    .cell = t_cell,
		    .num = t_num,
		    .empty = "no threads seen",
		};
		struct tui_rect tr =
		    draw_section_top(t, &sr[S_THREADS], "threads (% of each thread's wall time)");
		const struct tui_table_box box =
		    table_draw(t, v, &tb, &v->lists[1], &tr, v->focus == 1, NULL);
		tui_hit_table(t, v, &v->lists[1], &box);
	}
	if (h[S_CHAINS]) {
		struct tui_rect tr = draw_section_top(t, &sr[S_CHAINS], "alerts on this process");
		chains_table(t, v, &v->lists[2], d->chains, d->nchains, &tr, v->focus == 2, NULL);
	}
}

static int proc_key(struct tui *t, struct tui_view *v, int action, int key)
{
	if (action != ACT_ENTER)
		return 0;
	uint64_t k = list_selected(&v->lists[v->focus]);
	if (!k)
		return 0;
	struct tui_view nv = {0};
	if (v->focus == 0)
		nv = (struct tui_view){.screen = SCR_OP, .op = (int)(k - 1), .pid = v->pid};
	else if (v->focus == 1)
		nv = (struct tui_view){.screen = SCR_THREAD, .pid = v->pid, .tid = (uint32_t)k};
	else
		nv = (struct tui_view){.screen = SCR_ALERT, .chain_id = (uint32_t)k};
	return tui_push(t, &nv);
}

const struct tui_screen screen_proc = {
    .name = "process",
    .id = SCR_PROC,
    .where = KC_DRILL,
    .min_w = TUI_FLOOR_W,
    .min_h = TUI_FLOOR_H,
    .update = proc_update,
    .draw = proc_draw,
    .key = proc_key,
};
