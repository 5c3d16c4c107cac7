/* The thread screen (Enter on a thread or a slow call): the thread's wall
 * time split, and its last off-CPU intervals: when, how long, preempted or
 * blocked, inside a CUDA call or between calls, on which CPU, and who
 * preempted or woke it. */
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "tui_int.h"

/* clang-format off */
enum { O_WHEN, O_DUR, O_STATE, O_WHERE, O_CPU, O_BY, O_N };

static const struct tui_col ocols[O_N] = {
	[O_WHEN] = { "OFF-CPU AT", 12, 0, 0, 'l' },
	[O_DUR] = { "DURATION", 8, 0, 0, 'r' },
	[O_STATE] = { "STATE", 9, 0, 0, 'l' },
	[O_WHERE] = { "WHERE", 13, 0, 1, 'l' },
	[O_CPU] = { "CPU", 4, 0, 2, 'r' },
	[O_BY] = { "PREEMPTED / WOKEN BY", 20, 10, 1, 'l' },
};
/* clang-format on */

static struct ig_thread_stats scratch[TUI_MAX_THREADS];

static uint64_t o_key(void *ctx, int row)
{
	return ((const struct ig_offcpu_rec *)ctx)[row].ts_ns & ~ROW_GROUP;
}

static void o_cell(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	const struct ig_offcpu_rec *o = &((const struct ig_offcpu_rec *)ctx)[row];
	char b[32];
	switch (col) {
	case O_WHEN:
		fmt_clock(b, sizeof(b), o->ts_ns);
		snprintf(buf, n, "%s.%03llu", b,
			 (unsigned long long)(o->ts_ns % 1000000000ull / 1000000ull));
		break;
	case O_DUR:
		report_fmt_ns(buf, n, o->dur_ns);
		break;
	case O_STATE:
		if (o->state == IG_OFF_PREEMPTED)
			snprintf(buf, n, "preempted"), *slot = TH_PREEMPTED;
		else if (o->state == IG_OFF_BLOCKED)
			snprintf(buf, n, "blocked"), *slot = TH_BLOCKED;
		else
			snprintf(buf, n, "unknown"), *slot = TH_DIM;
		break;
	case O_WHERE:
		snprintf(buf, n, "%s", o->in_call ? "in a CUDA call" : "between calls");
		break;
	case O_CPU:
		snprintf(buf, n, "%u", o->cpu);
		break;
	case O_BY:
		if (o->other_pid)
			fmt_proc(buf, n, o->other_comm, o->other_pid);
		else if (o->other_comm[0]) /* [irq], [idle]: no task */
			snprintf(buf, n, "%.*s", IG_COMM_LEN, o->other_comm), *slot = TH_DIM;
		else
			snprintf(buf, n, "-"), *slot = TH_DIM;
		break;
	}
}

static double o_num(void *ctx, int row, int col, int *ok)
{
	const struct ig_offcpu_rec *o = &((const struct ig_offcpu_rec *)ctx)[row];
	*ok = 1;
	switch (col) {
	case O_WHEN:
		return (double)o->ts_ns; /* newest first */
	case O_DUR:
		return (double)o->dur_ns;
	case O_CPU:
		return o->cpu;
	}
	*ok = 0;
	return 0;
}

static void thread_update(struct tui *t, struct tui_view *v)
{
	struct tui_threaddata *d = t->thd;
	int n = model_threads(tui_model(t), v->pid, scratch, TUI_MAX_THREADS);
	d->found = 0;
	for (int i = 0; i < n; i++)
		if (scratch[i].tid == v->tid) {
			d->th = scratch[i];
			d->found = 1;
			break;
		}
	d->noff = model_thread_offcpu(tui_model(t), v->tid, d->off, IG_TL_MAX);
	d->valid = 1;
}

static void thread_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r)
{
	const struct tui_threaddata *d = t->thd;
	const struct ig_thread_stats *th = &d->th;
	char a[48], b[32], c[32], e[32], line[256];

	draw_fill(t, r, 0, TH_TITLE);
	const char *tname = d->found ? th->comm : "";
	snprintf(line, sizeof(line), " thread %u%s%.*s%s of %s", v->tid, tname[0] ? " (" : "",
		 IG_COMM_LEN, tname, tname[0] ? ")" : "",
		 fmt_proc(a, sizeof(a), model_comm(tui_model(t), v->pid), v->pid));
	draw_text(t, r, 0, 0, -1, TH_TITLE, line);
	int y = 1;
	if (d->found) {
		const struct ig_op_info *oi = th->main_op > 0 ? ig_op_info(th->main_op) : NULL;
		draw_printf(t, r, y++, 1, TH_NORMAL,
			    "CUDA calls %llu (%s/s), mostly %s  CUDA %.0f%%  off-CPU %.0f%%  "
			    "between calls %.0f%%  switches %u",
			    (unsigned long long)th->calls_life,
			    fmt_rate(b, sizeof(b), th->calls_per_s), oi ? oi->name : "-",
			    th->cuda_pct, th->off_pct, th->between_pct, th->switches);
		int x = 1;
		x += draw_printf(t, r, y, x, TH_PREEMPTED, "preempted %s",
				 report_fmt_ns(b, sizeof(b), th->off_preempt_ns));
		x += draw_printf(t, r, y, x, TH_BLOCKED, "  blocked %s",
				 report_fmt_ns(c, sizeof(c), th->off_blocked_ns));
		x += draw_printf(t, r, y, x, TH_DIM, "  unknown %s",
				 report_fmt_ns(e, sizeof(e), th->off_unknown_ns));
		draw_printf(t, r, y++, x, TH_NORMAL, "  (in calls %s, between calls %s)",
			    report_fmt_ns(b, sizeof(b), th->off_in_call_ns),
			    report_fmt_ns(c, sizeof(c), th->off_between_ns));
		if (th->sync_calls_win)
			draw_printf(t, r, y++, 1, TH_NORMAL,
				    "syncs and synchronous copies %llu, %s",
				    (unsigned long long)th->sync_calls_win,
				    report_fmt_ns(b, sizeof(b), th->sync_ns_win));
	} else {
		draw_text(t, r, y++, 1, -1, TH_DIM, "no statistics for this thread in the window");
	}
	struct tui_rect tr = {r->y + y, r->x, r->h - y, r->w};
	if (tr.h < 2)
		return;
	struct tui_table tb = {
	    .cols = ocols,
	    .ncols = O_N,
	    .ctx = (void *)d->off,
	    .nrows = d->noff,
	    .key = o_key,
	    .cell = o_cell,
	    .num = o_num,
	    .empty = "no off-CPU intervals recorded for this thread",
	};
	v->nfocus = 1;
	v->focus = 0;
	table_draw(t, v, &tb, &v->lists[0], &tr, 1, "last off-CPU intervals");
}

static int thread_key(struct tui *t, struct tui_view *v, int action, int key)
{
	if (action == ACT_ENTER)
		tui_message(t, "this is the last level: Esc goes back");
	return action == ACT_ENTER ? TF_REDRAW : 0;
}

const struct tui_screen screen_thread = {
    .name = "thread",
    .id = SCR_THREAD,
    .where = KC_DRILL,
    .min_w = TUI_FLOOR_W,
    .min_h = TUI_FLOOR_H,
    .update = thread_update,
    .draw = thread_draw,
    .key = thread_key,
};
