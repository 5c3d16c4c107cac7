/* The setup screen (F2, as htop's): the theme, the refresh interval,
 * window or session figures, the processes as a tree, the helpers folded,
 * and which columns each main pane shows. Enter changes the selected
 * setting; Esc goes back. Settings last for the session. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

enum { S_THEME, S_REFRESH, S_LIFE, S_TREE, S_FOLD, S_NFIXED };

struct pane_cols {
	const char *pane;
	const struct tui_col *cols;
	const int *ncols;
	int table;  /* TBL_* */
	int locked; /* the column that names the row: always shown */
};

static const struct pane_cols panes[] = {
    {"GPU API", ops_cols, &ops_ncols, TBL_OPS, 1},
    {"processes", procs_cols, &procs_ncols, TBL_PROCS, 1},
    {"alerts", alerts_cols, &alerts_ncols, TBL_ALERTS, 3},
};
#define NPANES (int)(sizeof(panes) / sizeof(panes[0]))

static const double intervals[] = {0.5, 1, 2, 5, 10};

static int nitems(void)
{
	int n = S_NFIXED;
	for (int p = 0; p < NPANES; p++)
		n += *panes[p].ncols;
	return n;
}

/* Item i beyond the fixed ones: pane *p, column *c. */
static void item_col(int i, int *p, int *c)
{
	i -= S_NFIXED;
	for (*p = 0; *p < NPANES; (*p)++) {
		if (i < *panes[*p].ncols) {
			*c = i;
			return;
		}
		i -= *panes[*p].ncols;
	}
}

static uint64_t set_key(void *ctx, int row)
{
	return (uint64_t)row + 1;
}

/* The settings in their order, whatever the sort column. */
static double set_num(void *ctx, int row, int col, int *ok)
{
	*ok = 1;
	return -(double)row;
}

static void fixed_cell(struct tui *t, int row, int col, char *buf, size_t n)
{
	static const char *const names[] = {"Theme", "Refresh", "Figures", "Processes",
					    "Helper processes"};
	static const char *const what[] = {
	    "colours (t cycles them too)", "how often the screens read the model again",
	    "over the rolling window, or since the start (z)",
	    "a flat list, or children under their parent (F5)",
	    "processes with no CUDA call that nobody blames: one line, or listed"};
	if (col == 0)
		snprintf(buf, n, "%s", names[row]);
	else if (col == 2)
		snprintf(buf, n, "%s", what[row]);
	else if (row == S_THEME)
		snprintf(buf, n, "%s%s", t->theme.name, t->mono_why ? " (colours off)" : "");
	else if (row == S_REFRESH)
		snprintf(buf, n, "%.3g s", t->interval_ms / 1000.0);
	else if (row == S_LIFE)
		snprintf(buf, n, "%s", t->life ? "since the start" : "window");
	else if (row == S_TREE)
		snprintf(buf, n, "%s", t->tree ? "tree" : "list");
	else
		snprintf(buf, n, "%s", t->unfold ? "listed" : "folded");
}

static void set_cell(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	struct tui *t = ctx;
	if (row < S_NFIXED) {
		fixed_cell(t, row, col, buf, n);
		return;
	}
	int p = 0, c = 0;
	item_col(row, &p, &c);
	const struct tui_col *tc = &panes[p].cols[c];
	int hidden = (t->hidden[panes[p].table] >> c) & 1;
	if (col == 0)
		snprintf(buf, n, "%s: %s", panes[p].pane,
			 tc->title[0] == '!' ? "! (severity)" : tc->title);
	else if (col == 1)
		snprintf(buf, n, "%s",
			 c == panes[p].locked ? "always"
			 : hidden	      ? "hidden"
					      : "shown");
	else
		snprintf(buf, n, "%s", tc->help ? tc->help : "");
	if (col == 1 && hidden)
		*slot = TH_DIM;
}

/* clang-format off */
static const struct tui_col scols[] = {
	{ "SETTING", 10, 0, 0, 'l', 1, "what can be set" },
	{ "VALUE", 16, 0, 0, 'l', 0, "its value now: Enter changes it" },
	{ "WHAT IT MEANS", 20, 200, 1, 'l', 0, "what the setting or the column means" },
};
/* clang-format on */

static void setup_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r)
{
	struct tui_table tb = {
	    .cols = scols,
	    .ncols = 3,
	    .ctx = t,
	    .nrows = nitems(),
	    .key = set_key,
	    .cell = set_cell,
	    .num = set_num,
	    .empty = "",
	};
	draw_fill(t, r, 0, TH_TITLE);
	draw_text(t, r, 0, 0, -1, TH_TITLE,
		  " Setup: Enter changes the selected setting, Esc goes back (for this session)");
	struct tui_rect tr = {r->y + 1, r->x, r->h - 1, r->w};
	v->nfocus = 1;
	v->focus = 0;
	const struct tui_table_box box = table_draw(t, v, &tb, &v->lists[0], &tr, 1, NULL);
	tui_hit_table(t, v, &v->lists[0], &box);
}

static void change_fixed(struct tui *t, int row)
{
	if (row == S_THEME) {
		if (t->mono_why)
			tui_message(t, "colours are off (%s): monochrome only", t->mono_why);
		else
			tui_set_theme(t, tui_theme_std[(t->theme_idx + 1) % TUI_THEME_NSTD]);
	} else if (row == S_REFRESH) {
		int n = (int)(sizeof(intervals) / sizeof(intervals[0])), i = 0;
		while (i < n && intervals[i] * 1000 <= t->interval_ms + 1)
			i++;
		t->interval_ms = (int)(intervals[i % n] * 1000);
		t->next_refresh_ms = tui_now_ms() + (uint64_t)t->interval_ms;
	} else if (row == S_LIFE) {
		t->life = !t->life;
		tui_refresh(t);
	} else if (row == S_TREE) {
		t->tree = !t->tree;
	} else {
		t->unfold = !t->unfold;
	}
}

static int setup_key(struct tui *t, struct tui_view *v, int action, int key)
{
	if (action != ACT_ENTER)
		return 0;
	uint64_t k = list_selected(&v->lists[0]);
	if (!k)
		return 0;
	int row = (int)k - 1;
	if (row < S_NFIXED) {
		change_fixed(t, row);
		return TF_REDRAW | TF_RELAYOUT;
	}
	int p = 0, c = 0;
	item_col(row, &p, &c);
	if (c == panes[p].locked) {
		tui_message(t, "%s names the rows: it is always shown", panes[p].cols[c].title);
		return TF_REDRAW;
	}
	t->hidden[panes[p].table] ^= 1u << c;
	return TF_REDRAW | TF_RELAYOUT;
}

const struct tui_screen screen_setup = {
    .name = "setup",
    .id = SCR_SETUP,
    .where = KC_DRILL,
    .min_w = TUI_FLOOR_W,
    .min_h = TUI_FLOOR_H,
    .update = NULL,
    .draw = setup_draw,
    .key = setup_key,
};
