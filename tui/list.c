/* Scrolling lists and tables: filter, sort, groups, a selection that follows
 * its row, and the column-title row; plus scrolling text for the help, log
 * and alert screens. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tui_int.h"

void list_init(struct tui_list *l, int sort_col, int sort_inv)
{
	uint64_t *keys = l->keys;
	memset(l, 0, sizeof(*l));
	l->keys = keys ? keys : calloc(TUI_MAX_ROWS, sizeof(*l->keys));
	l->sort_col = sort_col;
	l->sort_inv = sort_inv;
}

void list_free(struct tui_list *l)
{
	free(l->keys);
	l->keys = NULL;
}

uint64_t list_selected(const struct tui_list *l)
{
	if (l->text || l->n == 0 || l->sel < 0 || l->sel >= l->n || !l->keys)
		return 0;
	uint64_t k = l->keys[l->sel];
	return (k & ROW_GROUP) ? 0 : k;
}

static int selectable(const struct tui_list *l, int i)
{
	return i >= 0 && i < l->n && l->keys && !(l->keys[i] & ROW_GROUP);
}

int list_move(struct tui_list *l, int action)
{
	int page = l->page > 1 ? l->page - 1 : 1;
	if (l->text) {
		int top = l->top;
		int max = l->n - l->page > 0 ? l->n - l->page : 0;
		switch (action) {
		case ACT_UP:
			top--;
			break;
		case ACT_DOWN:
			top++;
			break;
		case ACT_PGUP:
			top -= page;
			break;
		case ACT_PGDN:
			top += page;
			break;
		case ACT_HOME:
			top = 0;
			break;
		case ACT_END:
			top = max;
			break;
		default:
			return 0;
		}
		if (top > max)
			top = max;
		if (top < 0)
			top = 0;
		if (top == l->top)
			return 0;
		l->top = top;
		return TF_REDRAW;
	}
	if (l->n == 0)
		return 0;
	int sel = l->sel, dir = 1;
	switch (action) {
	case ACT_UP:
		sel--, dir = -1;
		break;
	case ACT_DOWN:
		sel++;
		break;
	case ACT_PGUP:
		sel -= page, dir = -1;
		break;
	case ACT_PGDN:
		sel += page;
		break;
	case ACT_HOME:
		sel = 0;
		break;
	case ACT_END:
		sel = l->n - 1, dir = -1;
		break;
	default:
		return 0;
	}
	if (sel < 0)
		sel = 0, dir = 1;
	if (sel >= l->n)
		sel = l->n - 1, dir = -1;
	/* skip group titles in the direction of travel, else the other way */
	int s2 = sel;
	while (s2 >= 0 && s2 < l->n && !selectable(l, s2))
		s2 += dir;
	if (!selectable(l, s2)) {
		s2 = sel;
		while (s2 >= 0 && s2 < l->n && !selectable(l, s2))
			s2 -= dir;
	}
	if (!selectable(l, s2) || s2 == l->sel)
		return 0;
	l->sel = s2;
	l->sel_key = l->keys[s2];
	l->moved = 1;
	return TF_REDRAW;
}

/* --- tables ------------------------------------------------------------------ */

struct sort_ent {
	int row;
	int group;
	int has_num;
	double num;
	char text[48];
};

static int sort_inv_g;
static int cmp_ent(const void *a, const void *b)
{
	const struct sort_ent *x = a, *y = b;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	int c = 0;
	if (x->has_num && y->has_num) {
		/* numbers: largest first */
		c = x->num > y->num ? -1 : x->num < y->num ? 1 : 0;
	} else {
		c = strcasecmp(x->text, y->text);
	}
	if (sort_inv_g)
		c = -c;
	if (c)
		return c;
	return x->row < y->row ? -1 : x->row > y->row;
}

static int row_matches(struct tui_table *tb, int row, const char *filter)
{
	char buf[256];
	for (int c = 0; c < tb->ncols; c++) {
		int slot = TH_NORMAL;
		buf[0] = 0;
		tb->cell_w = 0;
		tb->cell(tb->ctx, row, c, buf, sizeof(buf), &slot);
		if (strcasestr(buf, filter))
			return 1;
	}
	return 0;
}

/* What one frame of a table lays out: display rows (data rows and group
 * titles), their tree depth, and the columns. */
struct layout_rows {
	int nd;
	int disp[TUI_MAX_ROWS];		 /* data row, or -1 - group for a group title */
	signed char depth[TUI_MAX_ROWS]; /* tree depth of a data row */
	short cx[32], cw[32];
	int ncols;
};

/* Rows in tree order: each root in sort order, then its children (in sort
 * order) under it. ents are sorted; out gets the same rows. */
static int tree_order(struct tui_table *tb, const struct sort_ent *ents, int n,
		      struct sort_ent *out, signed char *depth)
{
	static int parent_of[TUI_MAX_ROWS];
	static unsigned char done[TUI_MAX_ROWS];
	int k = 0;
	for (int i = 0; i < n; i++) {
		int p = tb->parent(tb->ctx, ents[i].row), root = 1;
		/* a parent that is not shown (filtered out) makes a root */
		for (int j = 0; p >= 0 && j < n; j++)
			if (ents[j].row == p) {
				root = 0, p = j;
				break; /* p is an index of ents now, no longer a row */
			}
		parent_of[i] = root ? -1 : p;
		done[i] = 0;
	}
	/* depth-first from each root; an explicit stack of (index, depth) */
	static int stk[TUI_MAX_ROWS], sdep[TUI_MAX_ROWS];
	for (int i = 0; i < n; i++) {
		if (parent_of[i] >= 0 || done[i])
			continue;
		int sp = 0;
		stk[sp] = i, sdep[sp++] = 0;
		while (sp && k < n) {
			int cur = stk[--sp], d = sdep[sp];
			if (done[cur])
				continue;
			done[cur] = 1;
			depth[k] = (signed char)(d > 20 ? 20 : d);
			out[k++] = ents[cur];
			/* children pushed last-first so they pop in sort order */
			for (int j = n - 1; j >= 0; j--)
				if (parent_of[j] == cur && !done[j] && sp < TUI_MAX_ROWS)
					stk[sp] = j, sdep[sp++] = d + 1;
		}
	}
	for (int i = 0; i < n && k < n; i++) /* a cycle: whatever is left */
		if (!done[i])
			depth[k] = 0, out[k++] = ents[i];
	return k;
}

/* Filters and sorts the rows (groups, tree) into L and the list's keys. */
static void rows_layout(struct tui_table *tb, struct tui_list *l, struct layout_rows *L)
{
	static struct sort_ent ents[TUI_MAX_ROWS], tree[TUI_MAX_ROWS];
	static signed char tdepth[TUI_MAX_ROWS];
	int n = 0;
	for (int i = 0; i < tb->nrows && n < TUI_MAX_ROWS; i++) {
		if (l->filter[0] && !row_matches(tb, i, l->filter))
			continue;
		struct sort_ent *e = &ents[n++];
		int slot = TH_NORMAL, ok = 0;
		e->row = i;
		e->group = tb->group ? tb->group(tb->ctx, i) : 0;
		e->num = tb->num ? tb->num(tb->ctx, i, l->sort_col, &ok) : 0;
		e->has_num = ok;
		e->text[0] = 0;
		if (!ok) {
			tb->cell_w = 0;
			tb->cell(tb->ctx, i, l->sort_col, e->text, sizeof(e->text), &slot);
		}
	}
	sort_inv_g = l->sort_inv;
	qsort(ents, (size_t)n, sizeof(ents[0]), cmp_ent);
	const struct sort_ent *rows = ents;
	if (tb->parent) {
		n = tree_order(tb, ents, n, tree, tdepth);
		rows = tree;
	}
	int nd = 0, last_group = -1;
	for (int i = 0; i < n && nd < TUI_MAX_ROWS; i++) {
		if (tb->group && rows[i].group != last_group && nd + 1 < TUI_MAX_ROWS) {
			last_group = rows[i].group;
			l->keys[nd] = ROW_GROUP | (uint64_t)(unsigned)last_group;
			L->depth[nd] = 0;
			L->disp[nd++] = -1 - last_group;
		}
		l->keys[nd] = tb->key(tb->ctx, rows[i].row) & ~ROW_GROUP;
		L->depth[nd] = tb->parent ? tdepth[i] : 0;
		L->disp[nd++] = rows[i].row;
	}
	L->nd = l->n = nd;
}

/* F3: moves the selection to the next row (after the selection, wrapping)
 * whose cells contain the search text. */
static void search_step(struct tui_table *tb, struct tui_list *l, const struct layout_rows *L)
{
	l->search_go = 0;
	l->search_miss = 1;
	for (int k = 1; k <= L->nd; k++) {
		int d = (l->sel + k) % L->nd;
		if (L->disp[d] < 0 || !row_matches(tb, L->disp[d], l->search))
			continue;
		l->sel = d;
		l->sel_key = l->keys[d];
		l->moved = 1;
		l->search_miss = 0;
		return;
	}
}

/* The selection follows its key (else stays at its index), and the list
 * scrolls so that it shows. */
static void rows_select(struct tui_list *l, const struct layout_rows *L, int page)
{
	int nd = L->nd, found = -1;
	for (int i = 0; i < nd; i++)
		if (!(l->keys[i] & ROW_GROUP) && l->keys[i] == l->sel_key) {
			found = i;
			break;
		}
	if (found >= 0) {
		l->sel = found;
	} else {
		if (l->sel >= nd)
			l->sel = nd - 1;
		if (l->sel < 0)
			l->sel = 0;
		while (l->sel < nd - 1 && !selectable(l, l->sel))
			l->sel++;
		while (l->sel > 0 && !selectable(l, l->sel))
			l->sel--;
		l->sel_key = selectable(l, l->sel) ? l->keys[l->sel] : 0;
	}
	l->page = page;
	if (l->sel < l->top)
		l->top = l->sel;
	if (page > 0 && l->sel >= l->top + page)
		l->top = l->sel - page + 1;
	if (l->top > nd - page)
		l->top = nd - page;
	if (l->top < 0)
		l->top = 0;
	if (l->top > 0 && l->top == l->sel && (l->keys[l->top - 1] & ROW_GROUP))
		l->top--; /* keep the group title of the first row in view */
}

/* The columns: fit columns are measured on the rows, hidden ones left out. */
/* Lays the columns out in w - reserve columns when that hides no column the
 * full width shows (drop_low: none of priority 0 or 1). Returns 1 when it
 * did. */
static int keep_room(const struct tui_col *cols, int ncols, int w, int reserve, const short *nat,
		     unsigned hidden, int drop_low, struct layout_rows *out)
{
	short x2[32], w2[32];
	if (reserve <= 0 || reserve >= w)
		return 0;
	tui_cols_fit2(cols, ncols, w - reserve, nat, hidden, x2, w2);
	for (int c = 0; c < ncols; c++)
		if (out->cx[c] >= 0 && x2[c] < 0 && (!drop_low || cols[c].prio < 2))
			return 0;
	memcpy(out->cx, x2, sizeof(x2[0]) * (size_t)ncols);
	memcpy(out->cw, w2, sizeof(w2[0]) * (size_t)ncols);
	return 1;
}

/* The sorted column is shown at every width (M sorts by PGALLOC: PGALLOC is on
 * the screen), unless F2 hid it: it takes the priority of the columns always
 * shown, and less important ones give way. */
static void cols_layout(struct tui *t, struct tui_table *tb, const struct layout_rows *L, int w,
			int reserve, int reserve_filter, int sort_col, struct layout_rows *out)
{
	struct tui_col cols[32];
	short nat[32];
	int ncols = out->ncols;
	for (int c = 0; c < ncols; c++) {
		nat[c] = -1;
		if (!tb->cols[c].fit)
			continue;
		int widest = tui_text_cols(tb->cols[c].title);
		for (int d = 0; d < L->nd; d++) {
			char buf[256];
			int slot = TH_NORMAL;
			if (L->disp[d] < 0)
				continue;
			buf[0] = 0;
			tb->cell_w = 0;
			tb->cell_depth = L->depth[d];
			tb->cell(tb->ctx, L->disp[d], c, buf, sizeof(buf), &slot);
			char clean[256];
			int cw = tui_text_clean(clean, sizeof(clean), buf, -1, t->ascii);
			if (cw > widest)
				widest = cw;
		}
		nat[c] = (short)(widest > 200 ? 200 : widest);
	}
	tb->cell_depth = 0;
	unsigned hidden = tb->hide;
	memcpy(cols, tb->cols, sizeof(cols[0]) * (size_t)ncols);
	if (sort_col >= 0 && sort_col < ncols)
		cols[sort_col].prio = 0;
	tui_cols_fit2(cols, ncols, w, nat, hidden, out->cx, out->cw);
	/* room for the title's text (the span, the position) when growable
	 * columns alone would take it; for a filter the user set, columns of
	 * priority 2 and more may make room too */
	if (!keep_room(cols, ncols, w, reserve, nat, hidden, 0, out) &&
	    !keep_room(cols, ncols, w, reserve_filter, nat, hidden, 1, out) && reserve > 1)
		keep_room(cols, ncols, w, 1, nat, hidden, 0, out); /* the marker alone */
}

/* The text at the right of the title row, most useful first (it is cut on
 * the right when room is short): the filter, the position, the title. */
static void title_info(const struct tui_list *l, int nd, const char *title, char *info, size_t n)
{
	size_t io = 0;
	int page = l->page;
	info[0] = 0;
	if (l->filter[0])
		io += (size_t)snprintf(info + io, n - io, "filter \"%s\" ", l->filter);
	if (page > 0 && nd > page && io < n)
		io += (size_t)snprintf(info + io, n - io, "%d-%d/%d ", l->top + 1,
				       l->top + page < nd ? l->top + page : nd, nd);
	if (title && *title && io < n)
		snprintf(info + io, n - io, "%s ", title);
}

/* The title row: column titles (the sorted one marked) and, right-aligned
 * where it covers no title, the filter, the position and the table's title,
 * cut at a word with an ellipsis (never "windo"). The focused table ends its
 * title row with a marker, so that focus shows without colour too. */
static void title_draw(struct tui *t, struct tui_table *tb, struct tui_list *l,
		       const struct tui_rect *r, const struct layout_rows *L, int focused,
		       const char *title)
{
	int tslot = focused ? TH_COL_TITLE_FOCUS : TH_COL_TITLE;
	draw_fill(t, r, 0, tslot);
	int used = 0;
	for (int c = 0; c < L->ncols; c++) {
		if (L->cx[c] < 0)
			continue;
		int slot = (c == l->sort_col) ? TH_COL_SORTED : tslot;
		if (tb->cols[c].align == 'r')
			draw_text_right(t, r, 0, L->cx[c], L->cw[c], slot, tb->cols[c].title);
		else
			draw_text(t, r, 0, L->cx[c], L->cw[c], slot, tb->cols[c].title);
		int end = tb->cols[c].align == 'r' ? L->cx[c] + L->cw[c]
						   : L->cx[c] + tui_text_cols(tb->cols[c].title);
		if (end > used)
			used = end;
	}
	int right = r->w - 1; /* the last column: the focus marker */
	if (focused && used < r->w)
		draw_text(t, r, 0, r->w - 1, 1, tslot, t->ascii ? "<" : "\u25c0");
	char info[160];
	title_info(l, L->nd, title, info, sizeof(info));
	int room = right - used - 1;
	if (!info[0] || room <= 4)
		return;
	char clean[160], cut[160];
	tui_text_clean(clean, sizeof(clean), info, -1, t->ascii);
	tui_clip_words(cut, sizeof(cut), clean, room, t->ascii);
	int cols = tui_text_cols(cut);
	draw_text(t, r, 0, right - cols, cols, l->filter[0] ? TH_COL_SORTED : tslot, cut);
}

/* A row that is one cell from column span on (tb->span): its text from
 * the first column shown at or after span to the end of the row. */
static void span_draw(struct tui *t, struct tui_table *tb, const struct tui_rect *r, int y,
		      const struct layout_rows *L, int row, int c, int span, int cur)
{
	char buf[512];
	int slot = TH_NORMAL;
	buf[0] = 0;
	tb->cell_w = r->w - L->cx[c];
	tb->cell(tb->ctx, row, span, buf, sizeof(buf), &slot);
	tb->cell_w = 0;
	draw_text(t, r, y, L->cx[c], r->w - L->cx[c], cur >= 0 ? cur : slot, buf);
}

static void rows_draw(struct tui *t, struct tui_table *tb, struct tui_list *l,
		      const struct tui_rect *r, const struct layout_rows *L, int focused)
{
	for (int i = 0; i < l->page; i++) {
		int d = l->top + i;
		if (d >= L->nd)
			break;
		int y = i + 1;
		if (L->disp[d] < 0) {
			int g = -1 - L->disp[d];
			draw_fill(t, r, y, TH_NORMAL);
			draw_text(t, r, y, 0, -1, TH_GROUP,
				  tb->group_title ? tb->group_title(tb->ctx, g) : "");
			continue;
		}
		int row = L->disp[d];
		int cur = (d == l->sel) ? (focused ? TH_CURSOR : TH_CURSOR_DIM) : -1;
		if (cur >= 0)
			draw_fill(t, r, y, cur);
		int span = tb->span ? tb->span(tb->ctx, row) : -1, spanned = 0;
		for (int c = 0; c < L->ncols; c++) {
			if (L->cx[c] < 0)
				continue;
			if (span >= 0 && c >= span) { /* one cell to the end of the row */
				if (!spanned)
					span_draw(t, tb, r, y, L, row, c, span, cur);
				spanned = 1;
				continue;
			}
			char buf[512];
			int slot = TH_NORMAL;
			buf[0] = 0;
			tb->cell_w = L->cw[c];
			tb->cell_depth = L->depth[d];
			tb->cell(tb->ctx, row, c, buf, sizeof(buf), &slot);
			tb->cell_w = tb->cell_depth = 0;
			if (cur >= 0)
				slot = cur;
			if (tb->cols[c].align == 'r')
				draw_text_right(t, r, y, L->cx[c], L->cw[c], slot, buf);
			else
				draw_text(t, r, y, L->cx[c], L->cw[c], slot, buf);
		}
	}
	if (L->nd == 0 && l->page > 0)
		draw_text(t, r, 1, 1, -1, TH_DIM,
			  l->filter[0] ? "no rows match the filter (Esc clears it)"
				       : (tb->empty ? tb->empty : "nothing yet"));
}

struct tui_table_box table_draw(struct tui *t, struct tui_view *v, struct tui_table *tb,
				struct tui_list *l, const struct tui_rect *r, int focused,
				const char *title)
{
	static struct layout_rows L;
	L.ncols = tb->ncols > 32 ? 32 : tb->ncols;
	if (!l->keys)
		list_init(l, l->sort_col, l->sort_inv);
	if (l->sort_col < 0 || l->sort_col >= L.ncols)
		l->sort_col = 0;
	if (focused) {
		v->ft_cols = tb->cols;
		v->ft_ncols = L.ncols;
	}
	rows_layout(tb, l, &L);
	if (l->search_go && l->search[0] && L.nd)
		search_step(tb, l, &L);
	rows_select(l, &L, r->h - 1 > 0 ? r->h - 1 : 0);
	char info[160];
	title_info(l, L.nd, title, info, sizeof(info));
	char finfo[160];
	title_info(l, 0, NULL, finfo, sizeof(finfo)); /* the filter alone */
	/* and the last column for the focus marker, focused or not (the
	 * columns stay where they are when the focus moves) */
	cols_layout(t, tb, &L, r->w, (info[0] ? tui_text_cols(info) + 1 : 0) + 1,
		    finfo[0] ? tui_text_cols(finfo) + 2 : 0, l->sort_col, &L);
	title_draw(t, tb, l, r, &L, focused, title);
	rows_draw(t, tb, l, r, &L, focused);
	struct tui_table_box box = {.r = *r, .top = l->top, .ncols = L.ncols};
	memcpy(box.cx, L.cx, sizeof(box.cx[0]) * (size_t)L.ncols);
	memcpy(box.cw, L.cw, sizeof(box.cw[0]) * (size_t)L.ncols);
	return box;
}

/* --- scrolling text ------------------------------------------------------------- */

void lines_reset(struct tui_lines *L)
{
	L->n = 0;
}

static void lines_grow(struct tui_lines *L)
{
	if (L->n < L->cap)
		return;
	int cap = L->cap ? L->cap * 2 : 256;
	void *a = realloc(L->line, (size_t)cap * sizeof(*L->line));
	void *b = realloc(L->slot, (size_t)cap * sizeof(*L->slot));
	void *c = realloc(L->indent, (size_t)cap * sizeof(*L->indent));
	if (a)
		L->line = a;
	if (b)
		L->slot = b;
	if (c)
		L->indent = c;
	if (a && b && c)
		L->cap = cap;
}

void lines_add(struct tui_lines *L, int slot, int indent, const char *fmt, ...)
{
	lines_grow(L);
	if (L->n >= L->cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(L->line[L->n], sizeof(L->line[0]), fmt, ap);
	va_end(ap);
	L->slot[L->n] = slot;
	L->indent[L->n] = indent;
	L->n++;
}

struct wrap_ctx {
	struct tui_lines *L;
	int slot, indent;
};

static void wrap_cb(void *ctx, const char *p, size_t n)
{
	struct wrap_ctx *w = ctx;
	lines_add(w->L, w->slot, w->indent, "%.*s", (int)n, p);
}

void lines_wrap(struct tui_lines *L, int slot, int indent, int width, const char *text)
{
	/* clean first so that wrapping counts screen columns */
	char clean[2048];
	struct wrap_ctx w = {L, slot, indent};
	tui_text_clean(clean, sizeof(clean), text, -1, 0);
	if (!clean[0])
		return;
	tui_text_wrap(clean, width - indent > 10 ? width - indent : 10, wrap_cb, &w);
}

struct first_ctx {
	const char *p;
	size_t n;
	int got;
};

static void first_cb(void *ctx, const char *p, size_t n)
{
	struct first_ctx *f = ctx;
	if (!f->got)
		*f = (struct first_ctx){p, n, 1};
}

void lines_wrap_hang(struct tui_lines *L, int slot, int indent, int hang, int width,
		     const char *text)
{
	char clean[2048];
	struct first_ctx f = {0};
	tui_text_clean(clean, sizeof(clean), text, -1, 0);
	if (!clean[0])
		return;
	tui_text_wrap(clean, width - indent > 10 ? width - indent : 10, first_cb, &f);
	if (!f.got)
		return;
	lines_add(L, slot, indent, "%.*s", (int)f.n, f.p);
	/* the rest is wrapped to the room left of the hanging indent */
	const char *rest = f.p + f.n;
	while (*rest == ' ')
		rest++;
	struct wrap_ctx w = {L, slot, hang};
	if (*rest)
		tui_text_wrap(rest, width - hang > 10 ? width - hang : 10, wrap_cb, &w);
}

void lines_free(struct tui_lines *L)
{
	free(L->line);
	free(L->slot);
	free(L->indent);
	memset(L, 0, sizeof(*L));
}

void lines_draw(struct tui *t, const struct tui_lines *L, struct tui_list *l,
		const struct tui_rect *r)
{
	l->text = 1;
	l->n = L->n;
	l->page = r->h;
	if (l->top > L->n - r->h)
		l->top = L->n - r->h;
	if (l->top < 0)
		l->top = 0;
	for (int i = 0; i < r->h; i++) {
		int k = l->top + i;
		if (k >= L->n)
			break;
		if (L->slot[k] == TH_SECTION && L->line[k][0]) {
			draw_section(t, r, i, L->line[k]);
			continue;
		}
		if (L->slot[k] == TH_TITLE)
			draw_fill(t, r, i, TH_TITLE);
		draw_text(t, r, i, L->indent[k], -1, L->slot[k], L->line[k]);
	}
}
