/* Clicks, htop's way: a click on a row focuses its table and selects the
 * row (a double click opens it), a click on a column title sorts by that
 * column (again: the other way), a click on a key of the hint bar does what
 * the key does, the wheel scrolls the focused list. The frame records where
 * it drew what; nothing here draws. */
#include <string.h>

#include "tui_int.h"

void tui_hits_reset(struct tui *t)
{
	t->nhits = 0;
}

static struct tui_hit *hit_new(struct tui *t, int kind)
{
	if (t->nhits >= TUI_MAX_HITS)
		return NULL;
	struct tui_hit *h = &t->hits[t->nhits++];
	memset(h, 0, sizeof(*h));
	h->kind = kind;
	h->screen_depth = t->depth - 1;
	return h;
}

void tui_hit_table(struct tui *t, struct tui_view *v, struct tui_list *l,
		   const struct tui_table_box *box)
{
	int focus = (int)(l - v->lists);
	if (focus < 0 || focus >= TUI_LISTS || v != tui_top(t))
		return;
	const struct tui_rect *r = &box->r;
	struct tui_hit *h = hit_new(t, HIT_TITLE);
	if (!h)
		return;
	h->r = (struct tui_rect){r->y, r->x, 1, r->w};
	h->focus = focus;
	h->ncols = box->ncols > 32 ? 32 : box->ncols;
	memcpy(h->cx, box->cx, (size_t)h->ncols * sizeof(h->cx[0]));
	memcpy(h->cw, box->cw, (size_t)h->ncols * sizeof(h->cw[0]));
	if (r->h > 1 && (h = hit_new(t, HIT_ROWS))) {
		h->r = (struct tui_rect){r->y + 1, r->x, r->h - 1, r->w};
		h->focus = focus;
		h->top = box->top;
	}
}

void tui_hit_key(struct tui *t, int y, int x, int w, int action)
{
	struct tui_hit *h = hit_new(t, HIT_KEY);
	if (h) {
		h->r = (struct tui_rect){y, x, 1, w};
		h->action = action;
	}
}

static int inside(const struct tui_rect *r, int y, int x)
{
	return y >= r->y && y < r->y + r->h && x >= r->x && x < r->x + r->w;
}

int tui_press(struct tui *t, int key)
{
	return t->on_key ? t->on_key(t, key) : tui_handle_key(t, key);
}

static int click_rows(struct tui *t, const struct tui_hit *h, int y, int dbl)
{
	struct tui_view *v = tui_top(t);
	struct tui_list *l = &v->lists[h->focus];
	int d = h->top + (y - h->r.y);
	v->focus = h->focus;
	if (!l->keys || d < 0 || d >= l->n || (l->keys[d] & ROW_GROUP))
		return TF_REDRAW;
	l->sel = d;
	l->sel_key = l->keys[d];
	l->moved = 1;
	if (!dbl)
		return TF_REDRAW;
	const struct tui_binding *b = tui_action_binding(ACT_ENTER);
	return TF_REDRAW | (b ? tui_press(t, b->keys[0]) : 0);
}

static int click_title(struct tui *t, const struct tui_hit *h, int x)
{
	struct tui_view *v = tui_top(t);
	struct tui_list *l = &v->lists[h->focus];
	v->focus = h->focus;
	for (int c = 0; c < h->ncols; c++) {
		if (h->cx[c] < 0 || x < h->r.x + h->cx[c] || x >= h->r.x + h->cx[c] + h->cw[c])
			continue;
		if (l->sort_col == c)
			l->sort_inv = !l->sort_inv;
		else
			l->sort_col = c, l->sort_inv = 0;
		tui_message(t, "sorted by %s%s",
			    v->ft_cols && c < v->ft_ncols ? v->ft_cols[c].title : "?",
			    l->sort_inv ? " (inverted)" : "");
		break;
	}
	return TF_REDRAW;
}

int tui_mouse(struct tui *t)
{
	MEVENT ev;
	if (getmouse(&ev) != OK)
		return 0;
	if (t->modal != MODAL_NONE)
		return 0; /* a prompt or a question: keys only */
	if (ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
		struct tui_list *l = tui_focused_list(t);
		int r = 0;
		for (int i = 0; l && i < 3; i++)
			r |= list_move(l, (ev.bstate & BUTTON4_PRESSED) ? ACT_UP : ACT_DOWN);
		return r;
	}
	int dbl = (ev.bstate & BUTTON1_DOUBLE_CLICKED) != 0;
	if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED)))
		return 0;
	for (int i = 0; i < t->nhits; i++) {
		const struct tui_hit *h = &t->hits[i];
		if (!inside(&h->r, ev.y, ev.x) ||
		    (h->kind != HIT_KEY && h->screen_depth != t->depth - 1))
			continue;
		switch (h->kind) {
		case HIT_ROWS:
			return click_rows(t, h, ev.y, dbl);
		case HIT_TITLE:
			return click_title(t, h, ev.x);
		case HIT_KEY: {
			const struct tui_binding *b = tui_action_binding(h->action);
			return b ? tui_press(t, b->keys[0]) : 0;
		}
		}
	}
	return 0;
}
