/* What the screens read: the model of the moment on screen (the session's,
 * or a copy freeze.c took), the rates and ages against it; the main
 * screen's copy of the model's numbers and the chains, taken once per
 * refresh interval (freeze.c hands it the model and the chains); the
 * processes' container names as the model carries them. Nothing here
 * calls back into the viewer: screens, panes and freeze.c call down. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

struct ig_model *tui_model(struct tui *t)
{
	if (t->paused && t->pause.m)
		return t->pause.m;
	if (t->ended && t->last.m)
		return t->last.m;
	return session_model(t->s);
}

const struct tui_frozen *tui_frozen_now(struct tui *t)
{
	if (t->paused && t->pause.m)
		return &t->pause;
	if (t->ended && t->last.m)
		return &t->last;
	return NULL;
}

double tui_rate(struct tui *t, uint64_t calls_win, uint64_t calls_life)
{
	return t->life ? fig_rate(calls_life, t->span_life_ns)
		       : fig_rate(calls_win, t->span_win_ns);
}

uint64_t tui_ended_ago_ns(struct tui *t)
{
	uint64_t now = model_now(session_model(t->s));
	return t->ended && now > t->active_ns ? now - t->active_ns : 0;
}

uint64_t tui_alert_now_ns(struct tui *t)
{
	return model_now(tui_model(t)) + tui_ended_ago_ns(t);
}

int tui_provisional(struct tui *t)
{
	/* the current second is partial: a full window spans 9 to 10 s */
	uint64_t win = t->snap->window_ns;
	return win && t->span_win_ns + 1000000000ull < win;
}

/* --- the main screen's snapshot ----------------------------------------------- */

void snap_take(struct tui_snap *sn, struct ig_model *m, const struct tui_frozen *f,
	       const struct ig_detect *d)
{
	int ops[IG_OP_MAX];

	model_totals(m, &sn->tot);
	model_host(m, &sn->host);
	sn->window_ns = (uint64_t)model_cfg(m)->window_s * 1000000000ull;

	int n = model_ops(m, ops, IG_OP_MAX);
	sn->nops = 0;
	for (int i = 0; i < n; i++)
		if (model_op_stats(m, ops[i], &sn->ops[sn->nops]) == 0)
			sn->nops++;

	sn->nprocs = model_procs(m, sn->procs, TUI_MAX_PROCS);

	sn->nchains = 0;
	if (f) {
		for (int i = 0; i < f->nchains; i++)
			sn->chains[sn->nchains++] = f->chains[i];
		return;
	}
	int nc = detect_count(d);
	for (int i = 0; i < nc && sn->nchains < IG_CHAIN_MAX; i++) {
		const struct ig_chain *c = detect_chain(d, i);
		if (c)
			sn->chains[sn->nchains++] = *c;
	}
}

const struct ig_chain *snap_chain(const struct tui_snap *sn, uint32_t id)
{
	for (int i = 0; i < sn->nchains; i++)
		if (sn->chains[i].id == id)
			return &sn->chains[i];
	return NULL;
}

int snap_severity(const struct tui_snap *sn, int op, uint32_t pid)
{
	int sev = -1;
	for (int i = 0; i < sn->nchains; i++) {
		const struct ig_chain *c = &sn->chains[i];
		if (!c->active || (op && c->op != op) || (pid && c->pid != pid))
			continue;
		if (c->severity > sev)
			sev = c->severity;
	}
	return sev;
}

/* The process's container or service as the collector named it (carried
 * by the model, so batch, JSON and recordings have the same), "?" when
 * unknown. */
const char *tui_container(const struct ig_proc_stats *p)
{
	return p->container[0] ? p->container : "?";
}
