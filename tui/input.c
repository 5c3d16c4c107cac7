/* Key handling: every key goes through the one key table (keys.c) to an
 * action; the handlers (here and in actions.c) change state and return
 * TF_* flags, they never draw. Modal input comes first: the filter and
 * search prompts, the sort and signal menus, and the y/N questions asked
 * before anything that cannot be undone. */
#include <errno.h>
#include <signal.h>
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

void tui_modal_close(struct tui *t)
{
	t->modal = MODAL_NONE;
	curs_set(0);
}

/* The filter (/) and search (F3) prompts: printable keys edit the text. */
static int prompt_key(struct tui *t, int ch)
{
	struct tui_list *l = tui_focused_list(t);
	size_t n = strlen(t->prompt_buf);
	int search = t->modal == MODAL_SEARCH;
	if (ch == 27) { /* Esc: clear and close */
		t->prompt_buf[0] = 0;
		tui_modal_close(t);
	} else if (ch == KEY_F(3) && search) { /* the next match */
		if (l && l->search[0])
			l->search_go = 1;
		return TF_REDRAW;
	} else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		tui_modal_close(t); /* the search stays: F3 finds the next match */
		return TF_REDRAW;
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
	if (l && search) {
		/* as you type: the first match from the selection on */
		snprintf(l->search, sizeof(l->search), "%s", t->prompt_buf);
		if (l->search[0])
			l->search_go = 1, l->sel = l->sel > 0 ? l->sel - 1 : l->n - 1;
	} else if (l) {
		snprintf(l->filter, sizeof(l->filter), "%s", t->prompt_buf);
	}
	return TF_REDRAW;
}

/* The number of entries of the menu open now. */
static int menu_len(struct tui *t)
{
	if (t->modal == MODAL_SIGNAL)
		return tui_nsignals;
	return tui_top(t)->ft_ncols;
}

static int menu_choose(struct tui *t)
{
	struct tui_view *v = tui_top(t);
	struct tui_list *l = tui_focused_list(t);
	tui_modal_close(t);
	if (t->confirm.what == CONFIRM_KILL) { /* the signal menu: now ask */
		t->confirm.sig = tui_signals[t->menu_sel].sig;
		return tui_ask_kill(t);
	}
	if (!l || !v->ft_cols)
		return TF_REDRAW;
	l->sort_col = t->menu_sel;
	tui_message(t, "sorted by %s: %s", v->ft_cols[l->sort_col].title,
		    v->ft_cols[l->sort_col].help ? v->ft_cols[l->sort_col].help : "");
	return TF_REDRAW;
}

/* The sort (F6) and signal (F9) menus: Up, Down, Enter, Esc. */
static int menu_key(struct tui *t, int ch)
{
	int n = menu_len(t);
	if (n <= 0) {
		tui_modal_close(t);
		return TF_REDRAW;
	}
	const struct tui_binding *b = tui_key_lookup(ch, KC_MAIN);
	int act = b ? b->action : ACT_NONE;
	if (act == ACT_UP || act == ACT_DOWN) {
		t->menu_sel += act == ACT_UP ? -1 : 1;
		t->menu_sel = (t->menu_sel + n) % n;
	} else if (act == ACT_HOME || act == ACT_PGUP) {
		t->menu_sel = 0;
	} else if (act == ACT_END || act == ACT_PGDN) {
		t->menu_sel = n - 1;
	} else if (act == ACT_ENTER) {
		return menu_choose(t);
	} else if (act == ACT_SORT_INVERT && t->modal == MODAL_SORT) {
		struct tui_list *l = tui_focused_list(t);
		if (l)
			l->sort_inv = !l->sort_inv;
	} else if (act == ACT_BACK || act == ACT_SORT_MENU || act == ACT_KILL) {
		tui_modal_close(t);
		t->confirm.what = 0;
	} else if (act == ACT_QUIT) {
		return TF_QUIT;
	} else if (ch == KEY_RESIZE) {
		return TF_RELAYOUT;
	}
	return TF_REDRAW;
}

/* A y/N question: y does it, anything else cancels. */
static int confirm_key(struct tui *t, int ch)
{
	if (ch == KEY_RESIZE)
		return TF_RELAYOUT;
	if (ch == KEY_MOUSE)
		return 0;
	struct tui_confirm c = t->confirm;
	tui_modal_close(t);
	memset(&t->confirm, 0, sizeof(t->confirm));
	if (ch != 'y' && ch != 'Y') {
		tui_message(t, "cancelled");
		return TF_REDRAW;
	}
	return tui_confirmed(t, &c);
}

int tui_handle_key(struct tui *t, int ch)
{
	if (ch == KEY_RESIZE)
		return TF_RELAYOUT | TF_REDRAW;
	switch (t->modal) {
	case MODAL_FILTER:
	case MODAL_SEARCH:
		return prompt_key(t, ch);
	case MODAL_SORT:
	case MODAL_SIGNAL:
		return menu_key(t, ch);
	case MODAL_CONFIRM:
		return confirm_key(t, ch);
	case MODAL_JUMP:
		return tui_jump_key(t, ch);
	}
	if (ch == KEY_MOUSE)
		return t->lay.too_small ? 0 : tui_mouse(t);
	if (t->lay.too_small) {
		/* only quitting makes sense on a screen that shows nothing */
		const struct tui_binding *b = tui_key_lookup(ch, KC_ALL);
		return b && b->action == ACT_QUIT ? TF_QUIT : 0;
	}
	unsigned ctx = tui_context(t);
	if (t->s && session_status(t->s)->mode == IG_MODE_REPLAY)
		ctx |= KC_REPLAY; /* t steps, Home goes to the start */
	const struct tui_binding *b = tui_key_lookup(ch, ctx);
	if (!b) {
		char k[32];
		if (ch != ERR)
			tui_message(t, "%s: no such key here (h for help)",
				    tui_key_name(ch, k, sizeof(k)));
		return TF_REDRAW;
	}
	return tui_action(t, b->action, ch);
}
