/* When what every screen reads stops moving (the readers are in snap.c).
 * Live, the screens read the session's model and the detector's chains.
 * Paused (p), they read a copy of both taken at the pause: the main screen
 * and every drill-down show one moment. When the traced work stops (no
 * CUDA call for TUI_QUIET_S of event time: the target exited or went
 * quiet), they read the copy taken at the last refresh that saw new calls:
 * the window stays at the last activity, marked "ended 2m ago" in the
 * header, until calls come again. */
#include <stdlib.h>
#include <string.h>

#include "tui_int.h"

/* Copies the model and the chains of now into f. */
static void take(struct tui *t, struct tui_frozen *f, struct ig_model *m,
		 const struct ig_chain *chains, int nchains)
{
	struct ig_model *c = model_copy(f->m, m);
	if (!c) {
		f->m = NULL;
		tui_message(t, "out of memory: the view follows the live model");
		return;
	}
	f->m = c;
	f->at_ns = model_now(c);
	if (!f->chains)
		f->chains = calloc(IG_CHAIN_MAX, sizeof(*f->chains));
	f->nchains = 0;
	for (int i = 0; f->chains && i < nchains && i < IG_CHAIN_MAX; i++)
		f->chains[f->nchains++] = chains[i];
}

static void take_live(struct tui *t, struct tui_frozen *f)
{
	static struct ig_chain tmp[IG_CHAIN_MAX];
	const struct ig_detect *d = session_detect(t->s);
	int n = 0;
	for (int i = 0; i < detect_count(d) && n < IG_CHAIN_MAX; i++) {
		const struct ig_chain *c = detect_chain(d, i);
		if (c)
			tmp[n++] = *c;
	}
	take(t, f, session_model(t->s), tmp, n);
}

void tui_frozen_free(struct tui_frozen *f)
{
	model_free(f->m);
	free(f->chains);
	memset(f, 0, sizeof(*f));
}

/* Notes activity: a copy at each refresh that saw new calls (the window at
 * the last activity, when the work stops), and whether it stopped. Paused,
 * only the copy is kept up to date: the work may stop during the pause, and
 * the view after it must be the last activity's, not the model's at the
 * resume (its window moved on, its chains resolved); whether it stopped
 * is decided at the resume. */
static void track_activity(struct tui *t)
{
	struct ig_model_totals tot;
	model_totals(session_model(t->s), &tot);
	if (tot.calls != t->last_calls) { /* new calls (or a reset, or a seek back) */
		t->last_calls = tot.calls;
		t->active_ns = tot.now_ns;
		if (!t->paused)
			t->ended = 0;
		if (tot.calls)
			take_live(t, &t->last);
		return;
	}
	if (t->paused)
		return;
	int was = t->ended;
	t->ended =
	    t->last.m && tot.calls && tot.now_ns >= t->active_ns + TUI_QUIET_S * 1000000000ull;
	if (t->ended && !was && !session_done(t->s))
		tui_message(t,
			    "no CUDA calls for %d s: the view stays at the last activity "
			    "(z: since the start)",
			    TUI_QUIET_S);
}

void tui_spans(struct tui *t)
{
	struct ig_model_totals tot;
	model_totals(tui_model(t), &tot);
	t->span_win_ns = tot.win_span_ns;
	t->span_life_ns = tot.first_ns && tot.now_ns > tot.first_ns ? tot.now_ns - tot.first_ns : 0;
}

void tui_watch(struct tui *t)
{
	track_activity(t);
}

/* The start times of the pids the screens name, when first named: F7-F9
 * check them before acting (a pid may be another process's by then). */
static void note_pids(struct tui *t)
{
	const struct tui_snap *sn = t->snap;
	for (int i = 0; i < sn->nprocs; i++)
		if (!sn->procs[i].exited)
			pidseen_note(&t->seen, sn->procs[i].pid);
	for (int i = 0; i < sn->nchains; i++) {
		pidseen_note(&t->seen, sn->chains[i].pid);
		pidseen_note(&t->seen, sn->chains[i].culprit_pid);
	}
}

void tui_refresh(struct tui *t)
{
	if (!t->paused)
		track_activity(t);
	tui_spans(t);
	const struct tui_frozen *f = tui_frozen_now(t);
	snap_take(t->snap, tui_model(t), f, f ? NULL : session_detect(t->s));
	if (t->live)
		note_pids(t);
	if (t->depth > 1)
		tui_view_update(t, tui_top(t));
}

void tui_pause(struct tui *t, int on)
{
	t->paused = on;
	session_set_paused(t->s, on);
	if (on) {
		const struct tui_frozen *f = t->ended && t->last.m ? &t->last : NULL;
		if (f)
			take(t, &t->pause, f->m, f->chains, f->nchains);
		else
			take_live(t, &t->pause);
	}
	/* every screen reads the same moment: the one just taken, or live again */
	tui_refresh(t);
}
