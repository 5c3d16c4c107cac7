/* Pure layout of the main screen (see layout.h). */
#include "layout.h"

#include <string.h>

#define TIMELINE_ROW_H 32 /* from this height a replay's timeline has its own row */

/* clang-format off */
static const struct {
	const char *name;
	int prio, min_w, min_h;
} spec[AREA_MAX] = {
	[AREA_HEADER] = { "header", 0, TUI_FLOOR_W, 1 },
	[AREA_OPS] = { "ops", 1, OPS_MIN_W, OPS_MIN_H },
	[AREA_PROCS] = { "procs", 3, PROCS_MIN_W, PROCS_MIN_H },
	[AREA_ALERTS] = { "alerts", 2, ALERTS_MIN_W, ALERTS_MIN_H },
	[AREA_HINT] = { "hint", 0, TUI_FLOOR_W, 1 },
	[AREA_BODY] = { "body", 0, TUI_FLOOR_W, 1 },
	[AREA_GPU] = { "gpu", 0, TUI_FLOOR_W, 1 },
};
/* clang-format on */

int tui_area_prio(int area)
{
	return area >= 0 && area < AREA_MAX ? spec[area].prio : 99;
}

const char *tui_area_name(int area)
{
	return area >= 0 && area < AREA_MAX ? spec[area].name : "?";
}

void tui_layout_main(int cols, int lines, const int want[AREA_MAX], struct tui_layout *o)
{
	static const int by_prio[] = {AREA_OPS, AREA_ALERTS, AREA_PROCS};
	int h[AREA_MAX] = {0};

	memset(o, 0, sizeof(*o));
	o->cols = cols, o->lines = lines;
	o->need_w = TUI_FLOOR_W, o->need_h = TUI_FLOOR_H;
	if (cols < TUI_FLOOR_W || lines < TUI_FLOOR_H) {
		o->too_small = 1;
		return;
	}
	int full = cols >= TUI_FULL_W && lines >= TUI_FULL_H;
	o->header_rows = full ? 3 : lines >= 16 ? 2 : 1;
	/* a header that wants a row more (a replay's timeline) gets it on a
	 * tall terminal; below, the timeline takes the header's last row */
	if (want && want[AREA_HEADER] > 3 && full && lines >= TIMELINE_ROW_H)
		o->header_rows++;

	int body_y = o->header_rows, body_h = lines - o->header_rows - 1;
	o->visible[AREA_HEADER] = 1;
	o->r[AREA_HEADER] = (struct tui_rect){0, 0, o->header_rows, cols};
	o->visible[AREA_HINT] = 1;
	o->r[AREA_HINT] = (struct tui_rect){lines - 1, 0, 1, cols};
	o->visible[AREA_BODY] = 1;
	o->r[AREA_BODY] = (struct tui_rect){body_y, 0, body_h, cols};
	/* device meters first, at the top of the body */
	int g = want ? want[AREA_GPU] : 0, keep = full ? GPU_RESERVE : OPS_MIN_H + ALERTS_MIN_H;
	if (g > body_h - keep)
		g = body_h - keep;
	if (g > 0) {
		o->visible[AREA_GPU] = 1;
		o->r[AREA_GPU] = (struct tui_rect){body_y, 0, g, cols};
		body_y += g;
		body_h -= g;
	}

	/* which panes: by priority while their minimum fits; below the full
	 * size the lowest-priority pane (processes) is dropped */
	int used = 0;
	for (unsigned i = 0; i < sizeof(by_prio) / sizeof(by_prio[0]); i++) {
		int a = by_prio[i];
		if (!full && a == AREA_PROCS)
			continue;
		if (cols < spec[a].min_w || used + spec[a].min_h > body_h)
			continue;
		o->visible[a] = 1;
		h[a] = spec[a].min_h;
		used += spec[a].min_h;
	}
	/* spare rows by priority up to what each pane wants */
	int spare = body_h - used;
	for (unsigned i = 0; i < sizeof(by_prio) / sizeof(by_prio[0]) && spare > 0; i++) {
		int a = by_prio[i];
		if (!o->visible[a])
			continue;
		int w = want ? want[a] : 0;
		if (a == AREA_ALERTS && (w <= 0 || w > ALERTS_WANT_MAX + 1))
			w = ALERTS_WANT_MAX + 1;
		int more = w > 0 ? w - h[a] : spare;
		if (more > spare)
			more = spare;
		if (more > 0)
			h[a] += more, spare -= more;
	}
	if (spare > 0)
		h[o->visible[AREA_PROCS] ? AREA_PROCS : AREA_OPS] += spare;

	/* stack them in screen order */
	int y = body_y;
	for (int a = AREA_OPS; a <= AREA_ALERTS; a++) {
		if (!o->visible[a])
			continue;
		o->r[a] = (struct tui_rect){y, 0, h[a], cols};
		y += h[a];
	}
}

int tui_stack(int h, int n, const int *min, const int *want, const int *prio, int *out)
{
	int order[32], used = 0, last = -1;
	if (n > 32)
		n = 32;
	for (int i = 0; i < n; i++)
		order[i] = i;
	/* insertion sort by priority, stable */
	for (int i = 1; prio && i < n; i++)
		for (int j = i; j > 0 && prio[order[j]] < prio[order[j - 1]]; j--) {
			int tmp = order[j];
			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	for (int i = 0; i < n; i++)
		out[i] = 0;
	for (int k = 0; k < n; k++) {
		int i = order[k];
		if (min[i] <= 0 || used + min[i] > h)
			continue;
		out[i] = min[i];
		used += min[i];
	}
	for (int k = 0; k < n && used < h; k++) {
		int i = order[k];
		if (!out[i])
			continue;
		int more = want[i] > 0 ? want[i] - out[i] : h - used;
		if (more > h - used)
			more = h - used;
		if (more > 0)
			out[i] += more, used += more;
	}
	for (int i = 0; i < n; i++)
		if (out[i])
			last = i;
	if (last >= 0 && used < h) {
		out[last] += h - used;
		used = h;
	}
	return used;
}
