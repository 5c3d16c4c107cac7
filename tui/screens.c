/* The screen stack and the frame: which screen is on top, opening and
 * closing drill-downs (each keeps its lists, so Back returns to where the
 * user was), the focus on the main screen, the layout of the main screen
 * and the one frame function that draws everything and calls doupdate()
 * once. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

const struct tui_pane *const tui_panes[] = {&pane_ops, &pane_procs, &pane_alerts, &pane_gpu, NULL};

struct tui_view *tui_top(struct tui *t)
{
	return &t->stack[t->depth - 1];
}

const struct tui_screen *tui_screen_ops(int id)
{
	switch (id) {
	case SCR_OP:
		return &screen_op;
	case SCR_PROC:
		return &screen_proc;
	case SCR_THREAD:
		return &screen_thread;
	case SCR_ALERT:
		return &screen_alert;
	case SCR_STACK:
		return &screen_stack;
	case SCR_HELP:
		return &screen_help;
	case SCR_LOG:
		return &screen_log;
	case SCR_SETUP:
		return &screen_setup;
	default:
		return NULL;
	}
}

unsigned tui_context(struct tui *t)
{
	if (t->ctx)
		return t->ctx;
	const struct tui_screen *sc = tui_screen_ops(tui_top(t)->screen);
	return sc ? sc->where : KC_MAIN;
}

void tui_view_update(struct tui *t, struct tui_view *v)
{
	const struct tui_screen *sc = tui_screen_ops(v->screen);
	tui_spans(t);
	if (sc && sc->update)
		sc->update(t, v);
}

/* Default sort of each list of each screen: (column, inverted). */
void tui_view_init_lists(struct tui_view *v)
{
	static const int sorts[SCR_MAX][TUI_LISTS] = {
	    [SCR_MAIN] = {1, 3, 0, 0}, /* ops: API order; procs: calls/s; alerts: detector order */
	    [SCR_OP] = {2, 3, 0, 0},   /* breakdown: calls/s; slow calls: duration; stacks: tail */
	    [SCR_PROC] = {1, 1, 0, 0}, /* ops: API order; threads: calls/s; chains */
	    [SCR_THREAD] = {0, 0, 0, 0},
	};
	for (int i = 0; i < TUI_LISTS; i++)
		list_init(&v->lists[i], sorts[v->screen][i], 0);
}

int tui_push(struct tui *t, const struct tui_view *nv)
{
	if (t->depth >= TUI_STACK) {
		/* keep the main screen and drop the oldest drill-down */
		for (int i = 0; i < TUI_LISTS; i++)
			list_free(&t->stack[1].lists[i]);
		memmove(&t->stack[1], &t->stack[2], sizeof(t->stack[0]) * (TUI_STACK - 2));
		t->depth--;
		memset(&t->stack[t->depth], 0, sizeof(t->stack[0]));
	}
	struct tui_view *v = &t->stack[t->depth++];
	*v = *nv;
	memset(v->lists, 0, sizeof(v->lists));
	tui_view_init_lists(v);
	v->focus = 0;
	tui_view_update(t, v);
	return TF_REDRAW;
}

int tui_pop(struct tui *t)
{
	if (t->depth <= 1)
		return 0;
	struct tui_view *v = &t->stack[t->depth - 1];
	for (int i = 0; i < TUI_LISTS; i++)
		list_free(&v->lists[i]);
	t->depth--;
	t->modal = MODAL_NONE;
	tui_view_update(t, tui_top(t)); /* its data is one screen's worth old */
	return TF_REDRAW;
}

/* --- main-screen focus ------------------------------------------------------------- */

/* List index of each main pane (ops 0, procs 1, alerts 2) and its area. */
static int main_focusable(struct tui *t, int *lists)
{
	int n = 0;
	for (int i = 0; tui_panes[i]; i++)
		if (t->lay.visible[tui_panes[i]->area] && tui_panes[i]->key) /* lists only */
			lists[n++] = i;
	return n;
}

static void main_fix_focus(struct tui *t, struct tui_view *v)
{
	int lists[4], n = main_focusable(t, lists);
	v->nfocus = n;
	for (int i = 0; i < n; i++)
		if (lists[i] == v->focus)
			return;
	v->focus = n ? lists[0] : 0;
}

int tui_focus_move(struct tui *t, struct tui_view *v, int dir)
{
	if (v->screen == SCR_MAIN) {
		int lists[4], n = main_focusable(t, lists), cur = 0;
		if (n <= 1)
			return 0;
		for (int i = 0; i < n; i++)
			if (lists[i] == v->focus)
				cur = i;
		v->focus = lists[(cur + dir + n) % n];
		return TF_REDRAW;
	}
	if (v->nfocus <= 1)
		return 0;
	v->focus = (v->focus + dir + v->nfocus) % v->nfocus;
	return TF_REDRAW;
}

/* --- frame --------------------------------------------------------------------------- */

void tui_layout(struct tui *t)
{
	int want[AREA_MAX] = {0};
	want[AREA_HEADER] = pane_header.want(t); /* 4 in a replay: its timeline */
	for (int i = 0; tui_panes[i]; i++)
		if (tui_panes[i]->want)
			want[tui_panes[i]->area] = tui_panes[i]->want(t);
	tui_layout_main(COLS, LINES, want, &t->lay);
	t->cols = COLS;
	t->lines = LINES;
}

void tui_draw_too_small(struct tui *t)
{
	struct tui_rect all = {0, 0, LINES, COLS};
	char need[64];
	snprintf(need, sizeof(need), "(need %dx%d)", t->lay.need_w, t->lay.need_h);
	const char *msg[3] = {"terminal too small", need, "q quits"};
	int y0 = LINES / 2 - 1;
	if (y0 < 0)
		y0 = 0;
	for (int i = 0; i < 3; i++) {
		int len = (int)strlen(msg[i]);
		int x = (COLS - len) / 2;
		draw_text(t, &all, y0 + i, x < 0 ? 0 : x, -1, i ? TH_NORMAL : TH_ERROR, msg[i]);
	}
}

/* The box of a menu: over the focused pane on the main screen, else at
 * the top of the body; w columns, up to n entries and a line of help. */
static struct tui_rect menu_box(struct tui *t, struct tui_view *v, int n, int w)
{
	const struct tui_rect *body = &t->lay.r[AREA_BODY];
	if (v->screen == SCR_MAIN && v->focus >= 0 && v->focus < 3 &&
	    t->lay.visible[tui_panes[v->focus]->area]) {
		const struct tui_rect *pr = &t->lay.r[tui_panes[v->focus]->area];
		if (pr->h >= n + 4 || pr->h >= 12)
			body = pr;
	}
	int h = n + 4;
	if (h > body->h)
		h = body->h;
	struct tui_rect box = {body->y, body->x + 1, h, w};
	if (box.w > body->w - 1)
		box.w = body->w - 1;
	return box;
}

/* The sort menu (F6: the columns, with what the chosen one means) or the
 * signal menu (F9). */
static void draw_menu(struct tui *t, struct tui_view *v)
{
	int sig = t->modal == MODAL_SIGNAL;
	int n = sig ? tui_nsignals : v->ft_ncols;
	if (!sig && !v->ft_cols)
		return;
	struct tui_rect box = menu_box(t, v, n, t->lay.cols >= 100 ? 72 : 56);
	struct tui_rect inner = {box.y + 1, box.x + 1, box.h - 4, box.w - 2};
	for (int y = 0; y < box.h; y++)
		draw_fill(t, &box, y, TH_PROMPT);
	draw_box(t, &box, TH_PROMPT);
	draw_text(t, &box, 0, 2, box.w - 4, TH_PROMPT, sig ? " Send a signal " : " Sort by ");
	int top = t->menu_sel >= inner.h ? t->menu_sel - inner.h + 1 : 0;
	struct tui_list *l = tui_focused_list(t);
	const char *help = "";
	for (int i = 0; i < inner.h && top + i < n; i++) {
		int c = top + i;
		char line[96];
		if (sig)
			snprintf(line, sizeof(line), "  %-8s %s", tui_signals[c].name,
				 tui_signals[c].what);
		else
			snprintf(line, sizeof(line), "%c %s", l && l->sort_col == c ? '*' : ' ',
				 v->ft_cols[c].title[0] == '!' ? "! severity"
							       : v->ft_cols[c].title);
		if (c == t->menu_sel) {
			draw_fill(t, &inner, i, TH_CURSOR);
			if (!sig && v->ft_cols[c].help)
				help = v->ft_cols[c].help;
		}
		draw_text(t, &inner, i, 0, -1, c == t->menu_sel ? TH_CURSOR : TH_PROMPT, line);
	}
	/* what the chosen column means, wrapped on the last two rows */
	if (help[0] && box.h >= 5) {
		char clean[256];
		tui_clip_words(clean, sizeof(clean), help, 2 * (box.w - 2), t->ascii);
		size_t cut = tui_text_prefix(clean, box.w - 2);
		if (clean[cut]) {
			size_t b = cut;
			while (b > 0 && clean[b - 1] != ' ')
				b--;
			if (b)
				cut = b;
		}
		draw_printf(t, &box, box.h - 3, 1, TH_PROMPT, "%.*s", (int)cut, clean);
		draw_text(t, &box, box.h - 2, 1, box.w - 2, TH_PROMPT, clean + cut);
	}
}

void tui_frame(struct tui *t)
{
	struct tui_view *v = tui_top(t);
	erase();
	tui_hits_reset(t);
	if (t->lay.too_small) {
		tui_draw_too_small(t);
	} else {
		pane_header.draw(t, v, &t->lay.r[AREA_HEADER], 0);
		if (v->screen == SCR_MAIN) {
			main_fix_focus(t, v);
			for (int i = 0; tui_panes[i]; i++) {
				const struct tui_pane *p = tui_panes[i];
				if (t->lay.visible[p->area])
					p->draw(t, v, &t->lay.r[p->area], v->focus == i);
			}
		} else {
			const struct tui_screen *sc = tui_screen_ops(v->screen);
			const struct tui_rect *b = &t->lay.r[AREA_BODY];
			if (sc && b->w >= sc->min_w && b->h >= 3)
				sc->draw(t, v, b);
		}
		if (t->modal == MODAL_SORT || t->modal == MODAL_SIGNAL)
			draw_menu(t, v);
		pane_hint.draw(t, v, &t->lay.r[AREA_HINT], 0);
	}
	leaveok(stdscr,
		t->modal == MODAL_FILTER || t->modal == MODAL_SEARCH || t->modal == MODAL_JUMP
		    ? FALSE
		    : TRUE);
	wnoutrefresh(stdscr);
	doupdate();
	t->frames++;
}
