/* The log screen (l): ingero-top's and libbpf's messages, which never go
 * over the screen. Follows new lines while scrolled to the end. */
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "tui_int.h"

static struct tui_lines lines;
static int was_at_end = 1;

static void log_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r)
{
	static const char *const lvl[] = {"debug", "info", "warn", "error"};
	static const int slot[] = {TH_DIM, TH_NORMAL, TH_MESSAGE, TH_ERROR};
	struct tui_list *l = &v->lists[0];
	struct tui_rect body = {r->y + 1, r->x, r->h - 1, r->w};

	/* where the user left it: at the end (follow) or somewhere above */
	if (l->n > 0)
		was_at_end = l->top >= l->n - l->page;
	lines_reset(&lines);
	int n = log_count();
	for (int i = 0; i < n; i++) {
		int level = 0;
		const char *s = log_line(i, &level);
		if (level < 0 || level > 3)
			level = 1;
		lines_add(&lines, slot[level], 1, "%-5s %s", lvl[level], s ? s : "");
	}
	if (!n)
		lines_add(&lines, TH_DIM, 1, "%s", "no messages");
	draw_fill(t, r, 0, TH_TITLE);
	draw_printf(t, r, 0, 0, TH_TITLE, " message log: %d lines (newest last)", n);
	if (was_at_end)
		l->top = lines.n;
	v->nfocus = 1;
	v->focus = 0;
	lines_draw(t, &lines, l, &body);
}

const struct tui_screen screen_log = {
    .name = "log",
    .id = SCR_LOG,
    .where = KC_TEXT,
    .min_w = TUI_FLOOR_W,
    .min_h = TUI_FLOOR_H,
    .update = NULL,
    .draw = log_draw,
    .key = NULL,
};
