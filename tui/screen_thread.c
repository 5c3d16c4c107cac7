/* The thread screen (Enter on a thread, o on a slow call): where the
 * thread's wall time goes (a bar of every part), and its off-CPU intervals:
 * when, how long, preempted or blocked, inside a CUDA call or between
 * calls, on which CPU, and who preempted or woke it. Opened from a slow
 * call, it shows the intervals during that call: those kept with it when
 * it entered a slowest-calls list (model/callev.c), else those still in
 * the thread's last IG_TL_MAX, saying so plainly when they are gone. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

/* clang-format off */
enum { O_WHEN, O_DUR, O_STATE, O_WHERE, O_CPU, O_BY, O_N };

static const struct tui_col ocols[O_N] = {
	[O_WHEN] = { "OFF-CPU AT", 12, 0, 0, 'l', 0, "when the thread left the CPU (local time)" },
	[O_DUR] = { "DURATION", 8, 0, 0, 'r', 0, "how long it stayed off the CPU" },
	[O_STATE] = { "STATE", 9, 0, 0, 'l', 0,
		"preempted (runnable, no CPU), blocked (asleep) or unknown (not recorded)" },
	[O_WHERE] = { "WHERE", 13, 0, 1, 'l', 0, "inside a CUDA call or between calls" },
	[O_CPU] = { "CPU", 4, 0, 2, 'r', 0, "the CPU it left" },
	[O_BY] = { "PREEMPTED / WOKEN BY", 20, 0, 1, 'l', 1,
		"who ran instead of it, or who woke it ([irq]: an interrupt, such as a timer)" },
};
/* clang-format on */

static struct ig_thread_stats scratch[TUI_MAX_THREADS];

struct octx {
	const struct ig_offcpu_rec *rows;
	uint32_t pid;
};

static uint64_t o_key(void *ctx, int row)
{
	return ((const struct octx *)ctx)->rows[row].ts_ns & ~ROW_GROUP;
}

static void o_cell(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	const struct octx *c = ctx;
	const struct ig_offcpu_rec *o = &c->rows[row];
	switch (col) {
	case O_WHEN:
		fmt_clock_ms(buf, n, o->ts_ns);
		break;
	case O_DUR:
		fmt_ns(buf, n, o->dur_ns);
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
			tui_fmt_culprit(buf, n, o->other_comm, o->other_pid, c->pid);
		else if (o->other_comm[0]) /* [irq], [idle]: no task */
			snprintf(buf, n, "%.*s", IG_COMM_LEN, o->other_comm), *slot = TH_DIM;
		else
			snprintf(buf, n, "-"), *slot = TH_DIM;
		break;
	}
}

static double o_num(void *ctx, int row, int col, int *ok)
{
	const struct ig_offcpu_rec *o = &((const struct octx *)ctx)->rows[row];
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
	struct ig_model *m = tui_model(t);
	int n = model_threads(m, v->pid, scratch, TUI_MAX_THREADS);
	d->found = 0;
	for (int i = 0; i < n; i++)
		if (scratch[i].tid == v->tid) {
			d->th = scratch[i];
			d->found = 1;
			break;
		}
	d->noff = model_thread_offcpu(m, v->tid, d->off, IG_TL_MAX);
	d->with_call = 0;
	int k = v->call_dur_ns
		    ? model_call_offcpu(m, v->tid, v->call_ts_ns, d->off, IG_TL_MAX, &d->call_cut)
		    : -1;
	if (k >= 0) { /* kept with the call when it was among the slowest */
		d->with_call = 1;
		d->noff_kept = k;
		d->oldest_ns = v->call_ts_ns;
		d->noff = fig_during_call(d->off, k, v->call_ts_ns, v->call_dur_ns, &d->in_call_pre,
					  &d->in_call_blk);
	} else if (v->call_dur_ns) {
		d->noff_kept = d->noff;
		d->oldest_ns = d->noff ? d->off[0].ts_ns : 0;
		d->noff = fig_during_call(d->off, d->noff, v->call_ts_ns, v->call_dur_ns,
					  &d->in_call_pre, &d->in_call_blk);
	}
	d->valid = 1;
}

static int thread_head(struct tui *t, struct tui_view *v, const struct tui_rect *r)
{
	const struct tui_threaddata *d = t->thd;
	const struct ig_thread_stats *th = &d->th;
	char a[48], b[32], line[256];
	const char *tname = d->found ? th->comm : "";
	snprintf(line, sizeof(line), " thread %u%s%.*s%s of %s", v->tid, tname[0] ? " (" : "",
		 IG_COMM_LEN, tname, tname[0] ? ")" : "",
		 tui_fmt_proc(a, sizeof(a), model_comm(tui_model(t), v->pid), v->pid));
	draw_text(t, r, 0, 0, -1, TH_TITLE, line);
	if (!d->found) {
		draw_text(t, r, 1, 1, -1, TH_DIM,
			  "no statistics for this thread (evicted or reset)");
		return 2;
	}
	const struct ig_op_info *oi = th->main_op > 0 ? ig_op_info(th->main_op) : NULL;
	double rate = tui_rate(t, th->calls_win, th->calls_life);
	/* two pieces, each shown whole or marked cut (never "switches 122") */
	char span[48]; /* the span the rate is over: "in 9.06s" */
	t->life ? fmt_ns(span, sizeof(span), t->span_life_ns)
		: fmt_window_span(span, sizeof(span), t->span_win_ns,
				  (unsigned)(t->snap->window_ns / 1000000000ull));
	int x = 1 + draw_piecef(t, r, 1, 1, TH_NORMAL, "%s: %llu CUDA calls in %s, %s/s, mostly %s",
				t->life ? "since the start" : "window",
				(unsigned long long)(t->life ? th->calls_life : th->calls_win),
				span, fmt_rate(b, sizeof(b), rate), oi ? oi->name : "-");
	draw_piecef(t, r, 1, x, TH_NORMAL, "  window: switches %u, syncs %llu (%s)", th->switches,
		    (unsigned long long)(th->sync_calls_win - th->sync_nested_win),
		    fmt_ns(a, sizeof(a), th->sync_ns_win - th->sync_nested_ns_win));
	return 2 + timebar_lines(t, r, 2, "where the time goes",
				 t->life ? &th->life_parts : &th->parts, NULL, t->life);
}

/* Above the intervals of a call: the call, what the intervals add up to
 * next to the call's own split, and what is no longer kept. */
static int call_head(struct tui *t, struct tui_view *v, const struct tui_rect *r, int y)
{
	const struct tui_threaddata *d = t->thd;
	char a[32], b[32], c[32], e[32], f[32];
	const struct ig_op_info *oi = ig_op_info(v->call_op);
	draw_printf(t, r, y++, 1, TH_SECTION, "during %s at %s, %s", oi ? oi->name : "the call",
		    fmt_clock_ms(a, sizeof(a), v->call_ts_ns),
		    fmt_ns(b, sizeof(b), v->call_dur_ns));
	if (d->noff)
		draw_printf(t, r, y++, 1, TH_NORMAL,
			    "these intervals: preempted %s, blocked %s (they may begin before the "
			    "call or end after it)",
			    fmt_ns(c, sizeof(c), d->in_call_pre),
			    fmt_ns(e, sizeof(e), d->in_call_blk));
	if (d->with_call) {
		if (d->call_cut)
			draw_printf(t, r, y++, 1, TH_DIM,
				    "the last %d intervals of the call are kept with it; earlier "
				    "ones are gone",
				    IG_CALLEV_TL);
	} else if (v->call_stayed) {
		draw_text(t, r, y++, 1, -1, TH_DIM,
			  "the call never left the CPU (no context switch): time it lost was not "
			  "the scheduler's (the hypervisor's, or the probes')");
	} else if (!d->noff_kept)
		draw_text(t, r, y++, 1, -1, TH_DIM,
			  "no off-CPU interval of this thread is kept (evicted, or reset)");
	else if (d->oldest_ns > v->call_ts_ns)
		draw_printf(
		    t, r, y++, 1, TH_DIM,
		    "only a thread's last %d intervals are kept; the oldest began %s, after "
		    "this call began: %s",
		    IG_TL_MAX, fmt_clock_ms(f, sizeof(f), d->oldest_ns),
		    d->noff ? "earlier ones are gone" : "its intervals are gone");
	return y;
}

static void thread_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r)
{
	const struct tui_threaddata *d = t->thd;
	draw_fill(t, r, 0, TH_TITLE);
	int y = thread_head(t, v, r);
	if (v->call_dur_ns)
		y = call_head(t, v, r, y);
	struct tui_rect tr = {r->y + y, r->x, r->h - y, r->w};
	if (tr.h < 2)
		return;
	struct octx oc = {d->off, v->pid};
	struct tui_table tb = {
	    .cols = ocols,
	    .ncols = O_N,
	    .ctx = &oc,
	    .nrows = d->noff,
	    .key = o_key,
	    .cell = o_cell,
	    .num = o_num,
	    .empty = !v->call_dur_ns ? "no off-CPU intervals recorded for this thread"
		     : !d->with_call && !v->call_stayed &&
			     (d->oldest_ns > v->call_ts_ns || !d->noff_kept)
			 ? "none kept for this call (see above)"
			 : "no off-CPU interval during this call: it stayed on the CPU",
	};
	v->nfocus = 1;
	v->focus = 0;
	const struct tui_table_box box = table_draw(
	    t, v, &tb, &v->lists[0], &tr, 1,
	    v->call_dur_ns ? "off-CPU intervals during the call" : "last off-CPU intervals");
	tui_hit_table(t, v, &v->lists[0], &box);
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
