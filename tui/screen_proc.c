/* The process screen (Enter on a process): where its feeding threads' wall
 * time went (CUDA, preempted, blocked, busy between calls), who preempted
 * and who woke them, its per-op table, its threads with their off-CPU split,
 * and its chains. */
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "tui_int.h"

/* --- threads ------------------------------------------------------------------ */

/* clang-format off */
enum { T_TID, T_NAME, T_RATE, T_MAINOP, T_CUDA, T_OFF, T_PRE, T_BLK, T_BETWEEN, T_SW, T_SYNC,
       T_LAST, T_N };

static const struct tui_col tcols[T_N] = {
	[T_TID] = { "TID", 7, 0, 0, 'r' },
	[T_NAME] = { "THREAD", 15, 0, 1, 'l' },
	[T_RATE] = { "CALLS/S", 7, 0, 0, 'r' },
	[T_MAINOP] = { "MAIN OP", 15, 4, 1, 'l' },
	[T_CUDA] = { "CUDA%", 5, 0, 1, 'r' },
	[T_OFF] = { "OFF%", 5, 0, 2, 'r' },
	[T_PRE] = { "PRE%", 5, 0, 0, 'r' },
	[T_BLK] = { "BLK%", 5, 0, 0, 'r' },
	[T_BETWEEN] = { "BETWEEN", 7, 0, 1, 'r' },
	[T_SW] = { "SW", 5, 0, 3, 'r' },
	[T_SYNC] = { "SYNCS", 6, 0, 4, 'r' },
	[T_LAST] = { "LAST PREEMPTOR", 16, 6, 2, 'l' },
};
/* clang-format on */

static double frac(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : -1;
}

static uint64_t t_key(void *ctx, int row)
{
	return ((const struct ig_thread_stats *)ctx)[row].tid;
}

static void t_cell(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	const struct ig_thread_stats *th = &((const struct ig_thread_stats *)ctx)[row];
	switch (col) {
	case T_TID:
		snprintf(buf, n, "%u", th->tid);
		break;
	case T_NAME:
		snprintf(buf, n, "%.*s", IG_COMM_LEN, th->comm[0] ? th->comm : "-");
		break;
	case T_RATE:
		fmt_rate(buf, n, th->calls_per_s);
		break;
	case T_MAINOP:
		if (th->main_op > 0 && ig_op_info(th->main_op))
			snprintf(buf, n, "%s", ig_op_info(th->main_op)->short_name);
		else
			snprintf(buf, n, "-");
		break;
	case T_CUDA:
		fmt_pct(buf, n, th->wall_ns ? th->cuda_pct / 100 : -1);
		break;
	case T_OFF:
		fmt_pct(buf, n, th->wall_ns ? th->off_pct / 100 : -1);
		break;
	case T_PRE:
		fmt_pct(buf, n, frac(th->off_preempt_ns, th->wall_ns));
		if (frac(th->off_preempt_ns, th->wall_ns) >= 0.1)
			*slot = TH_PREEMPTED;
		break;
	case T_BLK:
		fmt_pct(buf, n, frac(th->off_blocked_ns, th->wall_ns));
		if (frac(th->off_blocked_ns, th->wall_ns) >= 0.5)
			*slot = TH_BLOCKED;
		break;
	case T_BETWEEN:
		fmt_pct(buf, n, th->wall_ns ? th->between_pct / 100 : -1);
		break;
	case T_SW:
		fmt_count(buf, n, th->switches, 5);
		break;
	case T_SYNC:
		fmt_count(buf, n, th->sync_calls_win, 6);
		break;
	case T_LAST:
		if (th->last_preemptor_pid)
			fmt_proc(buf, n, th->last_preemptor_comm, th->last_preemptor_pid);
		else
			snprintf(buf, n, "-"), *slot = TH_DIM;
		break;
	}
}

static double t_num(void *ctx, int row, int col, int *ok)
{
	const struct ig_thread_stats *th = &((const struct ig_thread_stats *)ctx)[row];
	*ok = 1;
	switch (col) {
	case T_TID:
		return -(double)th->tid;
	case T_RATE:
		return th->calls_per_s;
	case T_CUDA:
		return th->cuda_pct;
	case T_OFF:
		return th->off_pct;
	case T_PRE:
		return frac(th->off_preempt_ns, th->wall_ns);
	case T_BLK:
		return frac(th->off_blocked_ns, th->wall_ns);
	case T_BETWEEN:
		return th->between_pct;
	case T_SW:
		return th->switches;
	case T_SYNC:
		return (double)th->sync_calls_win;
	}
	*ok = 0;
	return 0;
}

/* --- data --------------------------------------------------------------------- */

static void proc_update(struct tui *t, struct tui_view *v)
{
	struct tui_procdata *d = t->procd;
	d->valid = model_proc(tui_model(t), v->pid, &d->p) == 0;
	d->nops = model_proc_ops(tui_model(t), v->pid, d->ops, IG_OP_MAX);
	d->nthreads = model_threads(tui_model(t), v->pid, d->threads, TUI_MAX_THREADS);
	d->nchains = 0;
	int nc = detect_count(tui_detect(t));
	for (int i = 0; i < nc && d->nchains < IG_CHAIN_MAX; i++) {
		const struct ig_chain *c = detect_chain(tui_detect(t), i);
		if (c && (c->pid == v->pid || c->culprit_pid == v->pid))
			d->chains[d->nchains++] = *c;
	}
}

/* --- drawing ------------------------------------------------------------------ */

/* One bar split in four: CUDA, preempted, blocked, on CPU between calls. */
static void wall_bar(struct tui *t, const struct tui_rect *r, int y, const struct ig_proc_stats *p)
{
	int x = 1 + draw_text(t, r, y, 1, -1, TH_NORMAL, "wall ");
	int legend_w = 53;
	int w = r->w - x - legend_w - 2;
	if (w > 60)
		w = 60;
	if (w < 10) {
		w = r->w - x - 1;
		legend_w = 0;
	}
	if (!p->wall_ns || w <= 0)
		return;
	uint64_t cuda_on = p->cuda_ns > p->off_in_call_ns ? p->cuda_ns - p->off_in_call_ns : 0;
	struct {
		uint64_t ns;
		int slot;
		const char *glyph, *ascii;
	} part[4] = {
	    /* disjoint: CUDA time on CPU (its off-CPU time is counted as
	     * preempted or blocked), off-CPU, busy between calls */
	    {cuda_on, TH_BAR, "\u2588", "C"},
	    {p->off_preempt_ns, TH_PREEMPTED, "\u2593", "P"},
	    {p->off_blocked_ns + p->off_unknown_ns, TH_BLOCKED, "\u2592", "B"},
	    {p->between_on_cpu_ns, TH_DIM, "\u2591", "."},
	};
	double total = 0;
	for (int i = 0; i < 4; i++)
		total += (double)part[i].ns;
	if (total < (double)p->wall_ns)
		total = (double)p->wall_ns;
	int cx = x;
	double acc = 0;
	for (int i = 0; i < 4; i++) {
		acc += (double)part[i].ns;
		int end = x + (int)(acc / total * w + 0.5);
		for (; cx < end && cx < x + w; cx++)
			draw_text(t, r, y, cx, 1, part[i].slot,
				  t->ascii ? part[i].ascii : part[i].glyph);
	}
	if (legend_w) {
		char a[16], b[16], c[16], d[16];
		int lx = x + w + 2;
		lx += draw_printf(t, r, y, lx, TH_BAR, "CUDA on CPU %s ",
				  fmt_pct(a, sizeof(a), frac(cuda_on, p->wall_ns)));
		lx += draw_printf(t, r, y, lx, TH_PREEMPTED, "preempted %s ",
				  fmt_pct(b, sizeof(b), p->off_preempt_pct / 100));
		lx += draw_printf(
		    t, r, y, lx, TH_BLOCKED, "blocked %s ",
		    fmt_pct(c, sizeof(c), (p->off_blocked_pct + p->off_unknown_pct) / 100));
		draw_printf(t, r, y, lx, TH_DIM, "busy %s",
			    fmt_pct(d, sizeof(d), frac(p->between_on_cpu_ns, p->wall_ns)));
	}
}

static void culprits(struct tui *t, const struct tui_rect *r, int y, const char *what,
		     const struct ig_culprit *c, int n)
{
	char a[48], b[32];
	int x = 1 + draw_text(t, r, y, 1, -1, TH_NORMAL, what);
	if (!n) {
		draw_text(t, r, y, x, -1, TH_DIM, "nobody");
		return;
	}
	for (int i = 0; i < n && x < r->w; i++)
		x += draw_printf(t, r, y, x, i == 0 ? TH_PREEMPTED : TH_NORMAL, "%s%s %.0f%% (%s)",
				 i ? ", " : "", fmt_proc(a, sizeof(a), c[i].comm, c[i].pid),
				 c[i].share * 100, report_fmt_ns(b, sizeof(b), c[i].ns));
}

static void proc_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r)
{
	const struct tui_procdata *d = t->procd;
	const struct ig_proc_stats *p = &d->p;
	char a[48], b[48], c2[48], line[256];

	draw_fill(t, r, 0, TH_TITLE);
	if (!d->valid) {
		snprintf(line, sizeof(line), " process %u", v->pid);
		draw_text(t, r, 0, 0, -1, TH_TITLE, line);
		draw_text(t, r, 2, 2, -1, TH_DIM, "not in the model (evicted, or reset)");
		return;
	}
	char gm[48] = ""; /* NVML's GPU memory of the process */
	if (p->gpu_mem_known)
		snprintf(gm, sizeof(gm), "  GPU mem %s",
			 report_fmt_bytes(b, sizeof(b), p->gpu_mem_bytes));
	snprintf(line, sizeof(line), " %s  container %s  ppid %u  threads %u%s%s",
		 fmt_proc(a, sizeof(a), p->comm, p->pid), tui_container(t, p->pid, p->cgroup_id),
		 p->ppid, p->threads, gm, p->exited ? "  (exited)" : "");
	draw_text(t, r, 0, 0, -1, TH_TITLE, line);
	int sev = detect_severity(tui_detect(t), 0, p->pid);
	if (sev >= 0)
		draw_text_right(t, r, 0, 0, r->w - 1, sev_slot(sev), sev_short(sev));
	snprintf(line, sizeof(line),
		 "CUDA calls %llu (%s/s)  off-CPU %.1f%% of wall: in calls %s, between calls %s  "
		 "switches %u",
		 (unsigned long long)p->calls_life, fmt_rate(a, sizeof(a), p->calls_per_s),
		 p->off_pct, report_fmt_ns(b, sizeof(b), p->off_in_call_ns),
		 report_fmt_ns(c2, sizeof(c2), p->off_between_ns), p->switches);
	draw_text(t, r, 1, 1, -1, TH_NORMAL, line);
	wall_bar(t, r, 2, p);
	culprits(t, r, 3, "preempted by: ", p->preemptors, p->npreemptors);
	culprits(t, r, 4, "woken by (between calls): ", p->wakers, p->nwakers);
	int y0 = 5;
	if (p->page_bytes_win || p->io_ops_win) {
		char c[32], e[32];
		draw_printf(
		    t, r, 5, 1, TH_NORMAL,
		    "page allocations %s  block I/O %llu requests %s, latency %s total, %s max",
		    report_fmt_bytes(a, sizeof(a), p->page_bytes_win),
		    (unsigned long long)p->io_ops_win,
		    report_fmt_bytes(b, sizeof(b), p->io_bytes_win),
		    report_fmt_ns(c, sizeof(c), p->io_lat_ns_win),
		    report_fmt_ns(e, sizeof(e), p->io_max_ns_win));
		y0 = 6;
	}

	struct tui_rect body = {r->y + y0, r->x, r->h - y0, r->w};
	enum { S_OPS, S_THREADS, S_CHAINS, S_NSEC };
	int min[S_NSEC] = {4, 4, 3};
	int want[S_NSEC] = {d->nops + 2, d->nthreads + 2, d->nchains + 2};
	int prio[S_NSEC] = {0, 1, 2};
	int h[S_NSEC];
	if (want[S_CHAINS] < 3)
		want[S_CHAINS] = 3;
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
		struct tui_table tb = {
		    .cols = tcols,
		    .ncols = T_N,
		    .ctx = (void *)d->threads,
		    .nrows = d->nthreads,
		    .key = t_key,
		    .cell = t_cell,
		    .num = t_num,
		    .empty = "no threads seen",
		};
		struct tui_rect tr =
		    draw_section_top(t, &sr[S_THREADS], "threads (off-CPU: % of wall time)");
		table_draw(t, v, &tb, &v->lists[1], &tr, v->focus == 1, NULL);
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
