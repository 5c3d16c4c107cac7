/* Comparing two times: m marks the moment the main screen shows (a copy
 * of its numbers: the ops' rows and the processes' parts of the time, with
 * the spans their rates are over), m again clears it. While a mark is set
 * the op table and the time split show each figure as mark→now (drawn by
 * pane_ops.c, pane_procs.c and timebar.c from the lookups here). The copy
 * is never read from the model again: it survives a seek, a step, a reset
 * and, live, the window moving on. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

/* Copies what the main screen shows now (the snapshot: paused, ended or
 * live, the same numbers the panes draw). */
static void mark_take(struct tui *t)
{
	struct tui_mark *mk = t->mark;
	const struct tui_snap *sn = t->snap;
	mk->at_ns = sn->tot.now_ns;
	mk->span_win_ns = t->span_win_ns;
	mk->span_life_ns = t->span_life_ns;
	mk->nops = sn->nops;
	memcpy(mk->ops, sn->ops, sizeof(sn->ops[0]) * (size_t)sn->nops);
	mk->nprocs = 0;
	for (int i = 0; i < sn->nprocs && mk->nprocs < TUI_MAX_PROCS; i++) {
		struct tui_mark_proc *p = &mk->procs[mk->nprocs++];
		p->pid = sn->procs[i].pid;
		p->parts = sn->procs[i].parts;
		p->life_parts = sn->procs[i].life_parts;
	}
	mk->set = 1;
}

int tui_mark_action(struct tui *t)
{
	char a[16];
	if (t->mark->set) {
		fmt_clock(a, sizeof(a), t->mark->at_ns);
		t->mark->set = 0;
		tui_message(t, "mark %s cleared (m marks again)", a);
		return TF_REDRAW | TF_RELAYOUT;
	}
	if (!t->snap->tot.now_ns) {
		tui_message(t, "nothing to mark yet: no event seen");
		return TF_REDRAW;
	}
	mark_take(t);
	fmt_clock(a, sizeof(a), t->mark->at_ns);
	tui_message(t,
		    "marked %s: move on, the op table and where the time goes show mark%snow "
		    "(m clears)",
		    a, t->ascii ? "->" : "\u2192");
	return TF_REDRAW | TF_RELAYOUT;
}

const struct ig_series_stats *mark_op(const struct tui *t, int op)
{
	const struct tui_mark *mk = t->mark;
	if (!mk->set)
		return NULL;
	for (int i = 0; i < mk->nops; i++)
		if (mk->ops[i].op == op)
			return &mk->ops[i];
	return NULL;
}

double mark_rate(const struct tui *t, const struct ig_series_stats *s)
{
	return t->life ? fig_rate(s->calls_life, t->mark->span_life_ns)
		       : fig_rate(s->calls_win, t->mark->span_win_ns);
}

const struct ig_time_parts *mark_parts(const struct tui *t, uint32_t pid)
{
	static const struct ig_time_parts none;
	const struct tui_mark *mk = t->mark;
	if (!mk->set)
		return NULL;
	for (int i = 0; i < mk->nprocs; i++)
		if (mk->procs[i].pid == pid)
			return t->life ? &mk->procs[i].life_parts : &mk->procs[i].parts;
	return &none;
}

char *mark_badge(const struct tui *t, char *buf, size_t n)
{
	char a[16];
	snprintf(buf, n, " MARK %s ", fmt_clock(a, sizeof(a), t->mark->at_ns));
	return buf;
}
