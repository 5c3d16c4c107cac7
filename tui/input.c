/* Key handling: every key goes through the one key table (keys.c) to an
 * action; the handlers change state and return TF_* flags, they never
 * draw. Modal input (the filter prompt, the sort menu) comes first. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "tui_int.h"

#ifndef CTRL
#define CTRL(c) ((c)&0x1f)
#endif

int tui_set_theme(struct tui *t, const char *name)
{
	char err[256];
	struct tui_theme th;
	int r = tui_theme_load(&th, name, err, sizeof(err));
	if (r) {
		log_msg(LOG_WARN, "%s", err);
		tui_message(t, "%s", err);
		return r;
	}
	t->theme = th;
	t->theme_idx = -1;
	for (int i = 0; i < TUI_THEME_NSTD; i++)
		if (strcmp(th.name, tui_theme_std[i]) == 0)
			t->theme_idx = i;
	draw_apply_theme(t);
	return 0;
}

struct tui_list *tui_focused_list(struct tui *t)
{
	struct tui_view *v = tui_top(t);
	if (v->focus < 0 || v->focus >= TUI_LISTS)
		return NULL;
	return &v->lists[v->focus];
}

static int prompt_key(struct tui *t, int ch)
{
	struct tui_list *l = tui_focused_list(t);
	size_t n = strlen(t->prompt_buf);
	if (ch == 27) { /* Esc: clear and close */
		t->prompt_buf[0] = 0;
		t->prompt = 0;
	} else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		t->prompt = 0;
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == '\b') {
		if (n)
			t->prompt_buf[n - 1] = 0;
	} else if (ch == CTRL('u')) {
		t->prompt_buf[0] = 0;
	} else if (ch >= 0x20 && ch < 0x7f && n + 1 < sizeof(t->prompt_buf)) {
		t->prompt_buf[n] = (char)ch;
		t->prompt_buf[n + 1] = 0;
	} else if (ch == KEY_RESIZE) {
		return TF_RELAYOUT;
	} else {
		return 0;
	}
	if (l)
		snprintf(l->filter, sizeof(l->filter), "%s", t->prompt_buf);
	if (!t->prompt)
		curs_set(0);
	return TF_REDRAW;
}

static int menu_key(struct tui *t, int ch)
{
	struct tui_view *v = tui_top(t);
	struct tui_list *l = tui_focused_list(t);
	if (!l || !v->ft_cols) {
		t->menu = 0;
		return TF_REDRAW;
	}
	const struct tui_binding *b = tui_key_lookup(ch, KC_MAIN);
	int act = b ? b->action : ACT_NONE;
	if (act == ACT_UP || act == ACT_DOWN) {
		t->menu_sel += act == ACT_UP ? -1 : 1;
		t->menu_sel = (t->menu_sel + v->ft_ncols) % v->ft_ncols;
	} else if (act == ACT_HOME || act == ACT_PGUP) {
		t->menu_sel = 0;
	} else if (act == ACT_END || act == ACT_PGDN) {
		t->menu_sel = v->ft_ncols - 1;
	} else if (act == ACT_ENTER) {
		l->sort_col = t->menu_sel;
		t->menu = 0;
		tui_message(t, "sorted by %s", v->ft_cols[l->sort_col].title);
	} else if (act == ACT_SORT_INVERT) {
		l->sort_inv = !l->sort_inv;
	} else if (act == ACT_BACK || act == ACT_SORT_MENU) {
		t->menu = 0;
	} else if (act == ACT_QUIT) {
		return TF_QUIT;
	} else if (ch == KEY_RESIZE) {
		return TF_RELAYOUT;
	}
	return TF_REDRAW;
}

static int replay_only(struct tui *t, int action)
{
	if (session_status(t->s)->mode == IG_MODE_REPLAY)
		return 0;
	char k[32];
	const struct tui_binding *b = tui_action_binding(action);
	tui_message(t, "%s: replay only", b ? tui_key_name(b->keys[0], k, sizeof(k)) : "key");
	return 1;
}

static int do_speed(struct tui *t, int up)
{
	double sp = session_status(t->s)->replay_speed;
	if (sp <= 0 && up) {
		tui_message(t, "already replaying as fast as possible");
		return TF_REDRAW;
	}
	if (sp <= 0)
		sp = 512;
	else if (up)
		sp = sp * 2 > 1024 ? 0 : sp * 2;
	else
		sp = sp / 2 < 1.0 / 16 ? 1.0 / 16 : sp / 2;
	int r = session_set_speed(t->s, sp);
	if (r)
		tui_message(t, "cannot change the speed: %s", strerror(-r));
	else if (sp <= 0)
		tui_message(t, "speed: as fast as possible");
	else
		tui_message(t, "speed: x%g", sp);
	return TF_REDRAW | TF_REFRESH;
}

static int do_alert_step(struct tui *t, int dir)
{
	if (session_status(t->s)->mode == IG_MODE_REPLAY) {
		int r = session_jump_chain(t->s, dir);
		if (r == -ENOENT || r == -ENODATA)
			tui_message(t, "no %s alert", dir > 0 ? "next" : "previous");
		else if (r < 0)
			tui_message(t, "cannot jump: %s", strerror(-r));
		else
			tui_message(t, "jumped to the %s alert", dir > 0 ? "next" : "previous");
		return TF_REDRAW | TF_REFRESH;
	}
	/* live: select the next alert in the alerts pane */
	while (t->depth > 1)
		tui_pop(t);
	struct tui_view *v = tui_top(t);
	if (!t->lay.visible[AREA_ALERTS]) {
		tui_message(t, "the alerts pane is hidden at this size");
		return TF_REDRAW;
	}
	if (!t->snap->nchains) {
		tui_message(t, "no alerts");
		return TF_REDRAW;
	}
	v->focus = 2;
	if (!list_move(&v->lists[2], dir > 0 ? ACT_DOWN : ACT_UP))
		tui_message(t, "no %s alert", dir > 0 ? "next" : "previous");
	return TF_REDRAW;
}

/* Keys that change the view or the session as a whole. */
static int general_action(struct tui *t, int action, int ch)
{
	struct tui_view *v = tui_top(t);
	const struct ig_status *st = session_status(t->s);
	int r;

	switch (action) {
	case ACT_QUIT:
		return TF_QUIT;
	case ACT_HELP:
		if (v->screen == SCR_HELP)
			return tui_pop(t);
		return tui_push(t, &(struct tui_view){.screen = SCR_HELP});
	case ACT_LOG:
		if (v->screen == SCR_LOG)
			return tui_pop(t);
		return tui_push(t, &(struct tui_view){.screen = SCR_LOG});
	case ACT_PAUSE:
		t->paused = !t->paused;
		session_set_paused(t->s, t->paused);
		tui_message(t, t->paused
				   ? (st->mode == IG_MODE_REPLAY
					  ? "paused: replay stopped (p resumes)"
					  : "paused: view frozen, collection continues (p resumes)")
				   : "resumed");
		return TF_REDRAW | (t->paused ? 0 : TF_REFRESH);
	case ACT_RESET:
		session_reset(t->s);
		tui_message(t, "statistics and alerts reset");
		return TF_REDRAW | TF_REFRESH;
	case ACT_THEME: {
		if (t->mono_why) {
			tui_message(t, "colours are off (%s): monochrome only", t->mono_why);
			return TF_REDRAW;
		}
		int next = (t->theme_idx + 1) % TUI_THEME_NSTD;
		if (tui_set_theme(t, tui_theme_std[next]) == 0)
			tui_message(t, "theme: %s", t->theme.name);
		return TF_REDRAW;
	}
	case ACT_FLIGHT:
		r = session_flight_save(t->s);
		if (r < 0)
			tui_message(t, "cannot save the flight recorder: %s", strerror(-r));
		else
			tui_message(t, "saving the flight recorder (the header says where)");
		return TF_REDRAW;
	case ACT_REDRAW:
		clearok(curscr, TRUE);
		return TF_REDRAW | TF_RELAYOUT;
	case ACT_SPEED_UP:
	case ACT_SPEED_DOWN:
		if (replay_only(t, action))
			return TF_REDRAW;
		return do_speed(t, action == ACT_SPEED_UP);
	case ACT_SEEK_FWD:
	case ACT_SEEK_BACK:
		if (replay_only(t, action))
			return TF_REDRAW;
		r = session_seek(t->s, action == ACT_SEEK_FWD ? 10000000000ll : -10000000000ll);
		if (r < 0)
			tui_message(t, "cannot seek: %s", strerror(-r));
		else
			tui_message(t, "seek %s 10 s", action == ACT_SEEK_FWD ? "forward" : "back");
		return TF_REDRAW | TF_REFRESH;
	case ACT_NEXT_ALERT:
	case ACT_PREV_ALERT:
		return do_alert_step(t, action == ACT_NEXT_ALERT ? 1 : -1);
	}
	return 0;
}

/* Keys that move in or act on the focused list or table. */
static int list_action(struct tui *t, int action, int ch)
{
	struct tui_view *v = tui_top(t);
	struct tui_list *l = tui_focused_list(t);

	switch (action) {
	case ACT_FOCUS_NEXT:
	case ACT_FOCUS_PREV:
		return tui_focus_move(t, v, action == ACT_FOCUS_NEXT ? 1 : -1);
	case ACT_UP:
	case ACT_DOWN:
	case ACT_PGUP:
	case ACT_PGDN:
	case ACT_HOME:
	case ACT_END:
		return l ? list_move(l, action) : 0;
	case ACT_ENTER:
	case ACT_OFFCPU: {
		if (v->screen == SCR_MAIN) {
			const struct tui_pane *p = NULL;
			for (int i = 0; tui_panes[i]; i++)
				if (i == v->focus)
					p = tui_panes[i];
			return p && p->key ? p->key(t, v, action, ch) : 0;
		}
		const struct tui_screen *sc = tui_screen_ops(v->screen);
		return sc && sc->key ? sc->key(t, v, action, ch) : 0;
	}
	case ACT_BACK:
		if (t->depth > 1)
			return tui_pop(t);
		if (l && l->filter[0]) {
			l->filter[0] = 0;
			tui_message(t, "filter cleared");
			return TF_REDRAW;
		}
		return 0;
	}
	return 0;
}

/* Sorting and filtering of the focused table. */
static int table_action(struct tui *t, int action, int ch)
{
	struct tui_view *v = tui_top(t);
	struct tui_list *l = tui_focused_list(t);
	if (!l || !v->ft_cols)
		return 0;
	switch (action) {
	case ACT_SORT_PREV:
	case ACT_SORT_NEXT:
		l->sort_col =
		    (l->sort_col + (action == ACT_SORT_NEXT ? 1 : -1) + v->ft_ncols) % v->ft_ncols;
		tui_message(t, "sorted by %s",
			    v->ft_cols[l->sort_col].title[0] == '!'
				? "severity"
				: v->ft_cols[l->sort_col].title);
		return TF_REDRAW;
	case ACT_SORT_MENU:
		t->menu = 1;
		t->menu_sel = l->sort_col;
		return TF_REDRAW;
	case ACT_SORT_INVERT:
		l->sort_inv = !l->sort_inv;
		tui_message(t, "sort order inverted");
		return TF_REDRAW;
	case ACT_FILTER:
		t->prompt = 1;
		snprintf(t->prompt_buf, sizeof(t->prompt_buf), "%s", l->filter);
		curs_set(1);
		return TF_REDRAW;
	}
	return 0;
}

static int handle_action(struct tui *t, int action, int ch)
{
	switch (action) {
	case ACT_FOCUS_NEXT:
	case ACT_FOCUS_PREV:
	case ACT_UP:
	case ACT_DOWN:
	case ACT_PGUP:
	case ACT_PGDN:
	case ACT_HOME:
	case ACT_END:
	case ACT_ENTER:
	case ACT_OFFCPU:
	case ACT_BACK:
		return list_action(t, action, ch);
	case ACT_SORT_PREV:
	case ACT_SORT_NEXT:
	case ACT_SORT_MENU:
	case ACT_SORT_INVERT:
	case ACT_FILTER:
		return table_action(t, action, ch);
	}
	return general_action(t, action, ch);
}

int tui_handle_key(struct tui *t, int ch)
{
	if (ch == KEY_RESIZE)
		return TF_RELAYOUT | TF_REDRAW;
	if (t->prompt)
		return prompt_key(t, ch);
	if (t->menu)
		return menu_key(t, ch);
	if (t->lay.too_small) {
		/* only quitting makes sense on a screen that shows nothing */
		const struct tui_binding *b = tui_key_lookup(ch, KC_ALL);
		return b && b->action == ACT_QUIT ? TF_QUIT : 0;
	}
	const struct tui_binding *b = tui_key_lookup(ch, tui_context(t));
	if (!b) {
		char k[32];
		if (ch != ERR && ch != KEY_MOUSE)
			tui_message(t, "%s: no such key here (h for help)",
				    tui_key_name(ch, k, sizeof(k)));
		return TF_REDRAW;
	}
	return handle_action(t, b->action, ch);
}
