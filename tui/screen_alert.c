/* The alert screen (Enter on an alert, or n/N): the whole causal chain —
 * summary, the op and process it affects and the culprit, the explanation,
 * the evidence numbers, the call site (a paced loop's sleep), the timeline
 * and the recommendations. Scrolls like
 * text; Enter opens the affected op in its process. */
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "report/report_stacks.h"
#include "tui_int.h"

static struct tui_lines lines;

static void alert_update(struct tui *t, struct tui_view *v)
{
	struct tui_alertdata *d = t->ald;
	const struct ig_chain *c = snap_chain(t->snap, v->chain_id);
	if (c) {
		d->c = *c;
		d->valid = 1;
		d->gone = 0;
	} else if (d->valid && d->c.id == v->chain_id) {
		d->gone = 1;
	} else {
		d->valid = 0;
	}
}

/* A section of a chain's stack: a call site, or a waker's (waker). */
static void site_section(struct tui_lines *ls, struct tui *t, int width, const char *title,
			 uint64_t id, int waker)
{
	char site[4][REPORT_SITE_LEN];
	struct stacks *st = session_stacks(t->s);
	int ns = waker ? report_waker_site(st, id, site, 4) : report_call_site(st, id, site, 4);
	lines_add(ls, TH_SECTION, 0, "%s", title);
	for (int i = 0; i < ns; i++)
		lines_wrap(ls, TH_NORMAL, 1, width, site[i]);
	if (!ns)
		lines_add(ls, TH_DIM, 1, "stack 0x%016llx: frames not known (yet)",
			  (unsigned long long)id);
}

static void build(struct tui *t, int width)
{
	const struct tui_alertdata *d = t->ald;
	const struct ig_chain *c = &d->c;
	uint64_t now = tui_alert_now_ns(t);
	char a[48], b[48], e[48], f[48];

	lines_reset(&lines);
	lines_add(&lines, TH_TITLE, 0, " [%s] %s  %s  %s%s", detect_sev_name(c->severity),
		  c->id_str, detect_class_title(c->cls), c->active ? "active" : "resolved",
		  d->gone ? " (no longer tracked)" : "");
	if (c->active && tui_provisional(t))
		lines_add(&lines, TH_DIM, 1,
			  "provisional: %s of the %s window so far; the severity may change",
			  fmt_age(a, sizeof(a), t->span_win_ns),
			  fmt_age(b, sizeof(b), t->snap->window_ns));
	lines_wrap(&lines, sev_slot(c->severity), 1, width, c->summary);
	lines_add(&lines, TH_NORMAL, 0, "%s", "");
	lines_add(&lines, TH_NORMAL, 1, "impact    %s of the feeding threads' wall time",
		  fmt_pct(e, sizeof(e), fig_share(c->impact)));
	lines_add(&lines, TH_NORMAL, 1, "op        %s", c->op > 0 ? ig_op_name(c->op) : "-");
	lines_add(&lines, TH_NORMAL, 1, "process   %s%s",
		  tui_fmt_proc(a, sizeof(a), c->comm, c->pid), c->tid ? "" : "");
	if (c->tid)
		lines_add(&lines, TH_NORMAL, 1, "thread    %u (feeding thread)", c->tid);
	if (c->culprit_pid)
		lines_add(&lines, TH_PREEMPTED, 1, "culprit   %s",
			  tui_fmt_culprit(b, sizeof(b), c->culprit_comm, c->culprit_pid, c->pid));
	if (c->p99_ns)
		lines_add(&lines, p99_slot(c->tail_ratio), 1,
			  "latency   p50 %s  p99 %s  p99/p50 %s", fmt_ns(a, sizeof(a), c->p50_ns),
			  fmt_ns(b, sizeof(b), c->p99_ns), fmt_ratio(e, sizeof(e), c->tail_ratio));
	lines_add(
	    &lines, TH_NORMAL, 1, "seen      %s to %s (first %s ago), fired %u time%s, highest %s",
	    fmt_clock(a, sizeof(a), c->first_seen_ns), fmt_clock(b, sizeof(b), c->last_seen_ns),
	    fmt_age(e, sizeof(e), now > c->first_seen_ns ? now - c->first_seen_ns : 0), c->fired,
	    c->fired == 1 ? "" : "s", detect_sev_name(c->max_severity));

	lines_add(&lines, TH_SECTION, 0, "Explanation");
	lines_wrap(&lines, TH_NORMAL, 1, width, c->explanation);

	lines_add(&lines, TH_SECTION, 0, "Evidence");
	for (int i = 0; i < c->nevidence && i < IG_CHAIN_MAX_EVIDENCE; i++) {
		char text[320];
		const char *what = gloss_evidence(c->ev[i].key);
		report_fmt_evidence(f, sizeof(f), &c->ev[i]);
		snprintf(text, sizeof(text), "%-22.22s %9s  %s", c->ev[i].key, f, what ? what : "");
		int first = lines.n;
		lines_wrap_hang(&lines, TH_NORMAL, 1, 35, width, text);
		for (int k = first + 1; k < lines.n; k++)
			lines.slot[k] = TH_DIM;
	}
	if (c->lacking[0]) {
		lines_add(&lines, TH_DIM, 1, "%s", "missing evidence:");
		lines_wrap(&lines, TH_DIM, 3, width, c->lacking);
	}

	/* where the cause happens (a paced loop's sleep, a lock wait), and
	 * where the threads that ended the lock waits were */
	if (c->stack_id)
		site_section(&lines, t, width, "Call site", c->stack_id, 0);
	if (c->wake_stack_id)
		site_section(&lines, t, width, "Waker at", c->wake_stack_id, 1);

	lines_add(&lines, TH_SECTION, 0, "Timeline");
	if (!c->ntimeline)
		lines_add(&lines, TH_DIM, 1, "%s", "nothing recorded");
	for (int i = 0; i < c->ntimeline && i < IG_CHAIN_MAX_TIMELINE; i++) {
		char text[160];
		snprintf(text, sizeof(text), "%s  %s",
			 fmt_clock(a, sizeof(a), c->timeline[i].ts_ns), c->timeline[i].text);
		lines_wrap_hang(&lines, TH_NORMAL, 1, 11, width, text);
	}

	lines_add(&lines, TH_SECTION, 0, "Recommendations");
	for (int i = 0; i < c->nrecs && i < IG_CHAIN_MAX_RECS; i++) {
		char text[220];
		snprintf(text, sizeof(text), "%d. %s", i + 1, c->recs[i]);
		int first = lines.n;
		lines_wrap(&lines, TH_NORMAL, 1, width - 3, text);
		for (int k = first + 1; k < lines.n; k++)
			lines.indent[k] = 4;
	}
	if (!c->nrecs)
		lines_add(&lines, TH_DIM, 1, "%s", "none");
	lines_add(&lines, TH_NORMAL, 0, "%s", "");
	if (c->op > 0)
		lines_add(&lines, TH_DIM, 1, "%s",
			  "Enter opens the op in this process; Esc goes back.");
}

static void alert_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r)
{
	if (!t->ald->valid) {
		draw_fill(t, r, 0, TH_TITLE);
		draw_printf(t, r, 0, 0, TH_TITLE, " alert %u", v->chain_id);
		draw_text(t, r, 2, 2, -1, TH_DIM,
			  "this alert is no longer tracked (reset or expired)");
		return;
	}
	build(t, r->w - 1);
	v->nfocus = 1;
	v->focus = 0;
	lines_draw(t, &lines, &v->lists[0], r);
}

static int alert_key(struct tui *t, struct tui_view *v, int action, int key)
{
	if (action != ACT_ENTER || !t->ald->valid)
		return 0;
	const struct ig_chain *c = &t->ald->c;
	struct tui_view nv = {0};
	if (c->op > 0)
		nv = (struct tui_view){.screen = SCR_OP, .op = c->op, .pid = c->pid};
	else if (c->pid)
		nv = (struct tui_view){.screen = SCR_PROC, .pid = c->pid};
	else
		return 0;
	return tui_push(t, &nv);
}

const struct tui_screen screen_alert = {
    .name = "alert",
    .id = SCR_ALERT,
    .where = KC_DRILL,
    .min_w = TUI_FLOOR_W,
    .min_h = TUI_FLOOR_H,
    .update = alert_update,
    .draw = alert_draw,
    .key = alert_key,
};
