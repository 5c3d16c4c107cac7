/* The stack screen (Enter on a stack or a slow call of the op screen): the
 * frames of one user stack, innermost first: native frames as
 * "symbol+offset (file)", CPython frames as "[py] file.py:line in func()",
 * and notes where something could not be resolved; above them the counts
 * of the stack for its op. One line says so when stacks are off or the id
 * is not known. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

static struct tui_lines lines;

static void stack_update(struct tui *t, struct tui_view *v)
{
	struct tui_stackdata *d = t->skd;
	struct stacks *st = session_stacks(t->s);
	d->on = st != NULL;
	d->nframes = 0;
	d->state = STACKS_UNKNOWN;
	d->has_series = 0;
	d->pnote[0] = 0;
	if (!st || !v->stack_id)
		return;
	d->nframes = stacks_frames(st, v->stack_id, d->frames, TUI_MAX_FRAMES, &d->state);
	if (d->nframes < 0)
		d->nframes = 0;
	d->has_series = v->op > 0 && stacks_series(st, v->op, v->stack_id, &d->ser) == 0;
	uint32_t pid = d->has_series && d->ser.pid ? d->ser.pid : v->pid;
	if (pid)
		stacks_proc_note(st, pid, d->pnote, sizeof(d->pnote));
}

static int frame_slot(const struct stacks_frame *f)
{
	switch (f->kind) {
	case STACKS_PY:
		return TH_MESSAGE;
	case STACKS_NOTE:
		return TH_DIM;
	default:
		return f->sym[0] ? TH_NORMAL : TH_DIM;
	}
}

static void stack_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r)
{
	const struct tui_stackdata *d = t->skd;
	const struct ig_op_info *oi = v->op > 0 ? ig_op_info(v->op) : NULL;
	struct tui_list *l = &v->lists[0];
	char a[32], b[32], c[32];

	draw_fill(t, r, 0, TH_TITLE);
	draw_printf(t, r, 0, 0, TH_TITLE, " stack 0x%llx%s%s", (unsigned long long)v->stack_id,
		    oi ? " of " : "", oi ? oi->name : "");
	v->nfocus = 1;
	v->focus = 0;
	if (!d->on) {
		draw_text(
		    t, r, 1, 1, -1, TH_DIM,
		    "stacks are off (--no-stacks, or none in the recording): no frames to show");
		return;
	}
	if (!v->stack_id) {
		draw_text(t, r, 1, 1, -1, TH_DIM, "this call has no stack id: no frames to show");
		return;
	}
	if (d->state == STACKS_UNKNOWN) {
		draw_text(t, r, 1, 1, -1, TH_DIM,
			  "unknown stack id (never seen, or evicted): no frames to show");
		return;
	}

	lines_reset(&lines);
	if (d->has_series) {
		const struct stacks_stat *s = &d->ser;
		lines_add(&lines, TH_NORMAL, 1,
			  "calls %llu  total %s  max %s  tail calls %llu (%s)",
			  (unsigned long long)s->calls, fmt_ns(a, sizeof(a), s->total_ns),
			  fmt_ns(b, sizeof(b), s->max_ns), (unsigned long long)s->tail_calls,
			  fmt_ns(c, sizeof(c), s->tail_ns));
	}
	if (d->pnote[0])
		lines_add(&lines, TH_DIM, 1, "%s", d->pnote);
	if (d->state == STACKS_PENDING)
		lines_add(&lines, TH_DIM, 1, "%s", "being resolved: frames follow shortly");
	else if (d->state == STACKS_MISSING)
		lines_add(&lines, TH_DIM, 1, "%s",
			  "frames not available (gone from the kernel's map, or not in the "
			  "recording)");
	char title[64];
	snprintf(title, sizeof(title), "frames, innermost first (%d)", d->nframes);
	lines_add(&lines, TH_SECTION, 0, "%s", title);
	/* a frame longer than the row wraps under its text (the module and the
	 * source line at its end stay readable at 80 columns) */
	for (int i = 0; i < d->nframes; i++) {
		const struct stacks_frame *f = &d->frames[i];
		char text[sizeof(f->text) + 16];
		if (f->kind == STACKS_NOTE)
			snprintf(text, sizeof(text), "     %s", f->text);
		else
			snprintf(text, sizeof(text), "#%-3d %s", i, f->text);
		lines_wrap_hang(&lines, f->kind == STACKS_NOTE ? TH_DIM : frame_slot(f), 1, 6, r->w,
				text);
	}
	if (!d->nframes)
		lines_add(&lines, TH_DIM, 1, "%s", "no frames");
	struct tui_rect body = {r->y + 1, r->x, r->h - 1, r->w};
	if (body.h > 0)
		lines_draw(t, &lines, l, &body);
}

static int stack_key(struct tui *t, struct tui_view *v, int action, int key)
{
	if (action == ACT_ENTER) {
		tui_message(t, "this is the last level: Esc goes back");
		return TF_REDRAW;
	}
	if (action == ACT_OFFCPU && v->tid) {
		struct tui_view nv = {.screen = SCR_THREAD,
				      .pid = v->pid,
				      .tid = v->tid,
				      .call_ts_ns = v->call_ts_ns,
				      .call_dur_ns = v->call_dur_ns,
				      .call_op = v->call_op,
				      .call_stayed = v->call_stayed};
		return tui_push(t, &nv);
	}
	if (action == ACT_OFFCPU) { /* a stack of many calls (top stacks): no one thread */
		tui_message(t, "o: this stack is many calls' (top stacks); o on one of the "
			       "slowest calls shows its off-CPU intervals");
		return TF_REDRAW;
	}
	return 0;
}

const struct tui_screen screen_stack = {
    .name = "stack",
    .id = SCR_STACK,
    .where = KC_DRILL,
    .min_w = TUI_FLOOR_W,
    .min_h = TUI_FLOOR_H,
    .update = stack_update,
    .draw = stack_draw,
    .key = stack_key,
};
