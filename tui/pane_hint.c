/* The last line: key hints for the screen on top, generated from the key
 * table, always there (notices go to the header and the log); or, while
 * one is open, the filter or search prompt, the keys of a menu, or a y/N
 * question. Each hint is a click target. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

static void prompt_draw(struct tui *t, const struct tui_rect *r)
{
	struct tui_list *l = tui_focused_list(t);
	int search = t->modal == MODAL_SEARCH, x = 0;
	x += draw_text(t, r, 0, x, -1, TH_PROMPT, search ? "Search: " : "Filter: ");
	x += draw_text(t, r, 0, x, -1, TH_PROMPT, t->prompt_buf);
	int cx = x;
	x += draw_text(t, r, 0, x, -1, TH_HINT_KEY, " ");
	const char *keys = search ? "Enter keep  F3 next  Esc clear" : "Enter keep  Esc clear";
	if (search && l && l->search[0] && l->search_miss)
		keys = "not found  F3 again from the top  Esc clear";
	draw_text(t, r, 0, x + 1, -1, TH_HINT_LABEL, keys);
	move(r->y, r->x + (cx < r->w ? cx : r->w - 1));
}

/* The jump prompt (j in a replay): the text, and why it was refused. */
static void jump_draw(struct tui *t, const struct tui_rect *r)
{
	int x = draw_text(t, r, 0, 0, -1, TH_PROMPT, "Jump to: ");
	x += draw_text(t, r, 0, x, -1, TH_PROMPT, t->prompt_buf);
	int cx = x;
	x += draw_text(t, r, 0, x, -1, TH_HINT_KEY, " ");
	if (t->jump_err[0])
		draw_text(t, r, 0, x + 1, -1, TH_ERROR, t->jump_err);
	else
		draw_text(t, r, 0, x + 1, -1, TH_HINT_LABEL,
			  "14:02 +30s -5m ISO ns  Enter jump  Esc cancel");
	move(r->y, r->x + (cx < r->w ? cx : r->w - 1));
}

/* The label of a hint: some say what pressing the key gives now. */
static const char *hint_label(struct tui *t, const struct tui_binding *b, unsigned ctx)
{
	/* the fleet: Enter leaves for a host's own viewer; its q comes back */
	if (b->action == ACT_ENTER && ctx == KC_FLEET)
		return ": open host \u00b7 q in it: back";
	if (b->action == ACT_PAUSE && t->paused)
		return "Resume";
	if (b->action == ACT_LIFETIME && t->life)
		return "Window";
	if (b->action == ACT_MARK && t->mark->set)
		return "Unmark";
	return b->hint;
}

/* htop users look for F1, F6, F10: the F-key of a letter binding. */
static int hint_key(const struct tui_binding *b)
{
	int key = b->keys[0];
	int letter = (key >= 'a' && key <= 'z') || (key >= 'A' && key <= 'Z');
	for (int k = 0; letter && k < KEYS_PER_ACTION && b->keys[k]; k++)
		if (b->keys[k] >= KEY_F(1) && b->keys[k] <= KEY_F(12))
			return b->keys[k];
	return key;
}

/* The order of the bar, which is cut at the right: help and quit first;
 * on a details screen then the ways in and out (Esc, Enter), which an
 * 80-column bar must not lose; in a replay then its keys, pause and mark
 * (walking, and comparing where it went, is what a replay is for). */
static int hint_pass(const struct tui_binding *b, int replay, unsigned ctx)
{
	int way = ctx != KC_MAIN && (b->action == ACT_BACK || b->action == ACT_ENTER);
	if (ctx == KC_FLEET) { /* help, quit, Enter (and how to come back), then the rest */
		int a = b->action;
		return a == ACT_HELP || a == ACT_QUIT || a == ACT_ENTER ? 0 : 1;
	}
	if (!replay && ctx == KC_MAIN)
		return 0;
	int first = b->action == ACT_HELP || b->action == ACT_QUIT || way;
	if (replay)
		first = first || b->replay_only || b->action == ACT_PAUSE || b->action == ACT_MARK;
	return first ? 0 : 1;
}

static void hints_draw(struct tui *t, const struct tui_rect *r)
{
	char buf[64];
	int x = 0;
	unsigned ctx = tui_context(t);
	int replay = t->s && session_status(t->s)->mode == IG_MODE_REPLAY;
	for (int j = 0; j < 2 * tui_nbindings && x < r->w; j++) {
		const struct tui_binding *b = &tui_bindings[j % tui_nbindings];
		if (hint_pass(b, replay, ctx) != j / tui_nbindings)
			continue;
		if (!b->hint || !(b->where & ctx) || (b->replay_only && !replay))
			continue;
		/* Back is the way out of every screen but the main one (and
		 * the fleet, where it clears the filter) */
		if (b->action == ACT_BACK && (ctx == KC_MAIN || ctx == KC_FLEET))
			continue;
		if (b->action == ACT_ENTER && ctx == KC_TEXT)
			continue;
		tui_key_name(hint_key(b), buf, sizeof(buf));
		const char *label = hint_label(t, b, ctx);
		int kw = tui_text_cols(buf);
		int lw = tui_text_cols(label);
		if (x + kw + lw > r->w)
			break;
		int x0 = x;
		x += draw_text(t, r, 0, x, -1, TH_HINT_KEY, buf);
		x += draw_text(t, r, 0, x, -1, TH_HINT_LABEL, label);
		tui_hit_key(t, r->y, r->x + x0, x - x0, b->action);
		x += 1;
	}
}

static void hint_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r, int focused)
{
	draw_fill(t, r, 0, TH_HINT_LABEL);
	switch (t->modal) {
	case MODAL_FILTER:
	case MODAL_SEARCH:
		prompt_draw(t, r);
		return;
	case MODAL_JUMP:
		jump_draw(t, r);
		return;
	case MODAL_SORT:
		draw_text(t, r, 0, 0, -1, TH_HINT_LABEL,
			  " Sort by: Up/Down choose, Enter sort, I invert, Esc cancel");
		return;
	case MODAL_SIGNAL:
		draw_text(t, r, 0, 0, -1, TH_HINT_LABEL,
			  " Signal: Up/Down choose, Enter send (after y), Esc cancel");
		return;
	case MODAL_CONFIRM:
		draw_fill(t, r, 0, TH_PROMPT);
		draw_text(t, r, 0, 0, -1, TH_HINT_KEY, "y/N");
		draw_text(t, r, 0, 4, -1, TH_PROMPT, t->confirm.question);
		return;
	}
	hints_draw(t, r);
}

const struct tui_pane pane_hint = {
    .name = "hints",
    .area = AREA_HINT,
    .min_w = TUI_FLOOR_W,
    .min_h = 1,
    .want = NULL,
    .draw = hint_draw,
    .key = NULL,
};
