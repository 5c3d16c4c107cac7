/* The device meters in the layout of the main screen, over a sweep of
 * terminal sizes: at the top of the body, never more rows than wanted,
 * the other panes keep their minimum (and all of them show at 80x24 and
 * above), no overlap, every row used once; without devices the layout is
 * the one without the pane. */
#include "check.h"

#include "../../tui/layout.c"

static void check(int cols, int lines, int gpu, int big)
{
	int want[AREA_MAX] = {[AREA_OPS] = big ? 30 : 5,
			      [AREA_PROCS] = big ? 300 : 2,
			      [AREA_ALERTS] = big ? 64 : 1,
			      [AREA_GPU] = gpu};
	struct tui_layout l, l0;
	tui_layout_main(cols, lines, want, &l);
	want[AREA_GPU] = 0;
	tui_layout_main(cols, lines, want, &l0);
	if (l.too_small)
		return;
	const struct tui_rect *g = &l.r[AREA_GPU], *b = &l.r[AREA_BODY];
	if (!gpu) {
		CHECKF(!memcmp(&l, &l0, sizeof(l)), "%dx%d: no devices changes the layout", cols,
		       lines);
		return;
	}
	CHECKF(l.visible[AREA_OPS] && l.r[AREA_OPS].h >= OPS_MIN_H, "%dx%d ops", cols, lines);
	if (cols >= TUI_FULL_W && lines >= TUI_FULL_H)
		CHECKF(l.visible[AREA_PROCS] && l.visible[AREA_ALERTS], "%dx%d gpu %d: all panes",
		       cols, lines, gpu);
	if (!l.visible[AREA_GPU])
		return;
	CHECKF(g->y == b->y && g->h >= 1 && g->h <= gpu && g->w == cols, "%dx%d gpu rect %d,%d h%d",
	       cols, lines, g->y, g->x, g->h);
	int used = l.r[AREA_HEADER].h + l.r[AREA_HINT].h;
	for (int a = AREA_OPS; a <= AREA_ALERTS; a++) {
		if (!l.visible[a])
			continue;
		used += l.r[a].h;
		CHECKF(l.r[a].y >= g->y + g->h, "%dx%d %s above the meters", cols, lines,
		       tui_area_name(a));
		CHECKF(l.r[a].y + l.r[a].h <= b->y + b->h, "%dx%d %s below the body", cols, lines,
		       tui_area_name(a));
	}
	CHECKF(used + g->h == lines, "%dx%d gpu %d: rows used %d + %d", cols, lines, gpu, used,
	       g->h);
	/* on a full-size screen the meters leave the others GPU_RESERVE rows */
	if (cols >= TUI_FULL_W && lines >= TUI_FULL_H)
		CHECKF(g->h == gpu || b->h - g->h == GPU_RESERVE, "%dx%d gpu %d got %d", cols,
		       lines, gpu, g->h);
}

int main(void)
{
	static const int gpus[] = {0, 1, 2, 3, 5, 8, 9, 40};
	for (int cols = 30; cols <= 220; cols += 3)
		for (int lines = 5; lines <= 80; lines++)
			for (size_t k = 0; k < sizeof(gpus) / sizeof(gpus[0]); k++) {
				check(cols, lines, gpus[k], 0);
				check(cols, lines, gpus[k], 1);
			}
	struct tui_layout l;
	int want[AREA_MAX] = {[AREA_GPU] = 8};
	/* 80x24: two devices in full (8 rows), the other panes in 12 */
	tui_layout_main(80, 24, want, &l);
	CHECK(l.visible[AREA_GPU] && l.r[AREA_GPU].y == 3 && l.r[AREA_GPU].h == 8 &&
	      l.r[AREA_OPS].y == 11 && l.visible[AREA_PROCS]);
	/* 60x20: not full size, the meters get what the minimums leave */
	want[AREA_GPU] = 2;
	tui_layout_main(60, 20, want, &l);
	CHECK(l.visible[AREA_GPU] && l.r[AREA_GPU].h == 2);
	/* the floor: no room for them */
	tui_layout_main(TUI_FLOOR_W, TUI_FLOOR_H, want, &l);
	CHECK(!l.too_small && l.visible[AREA_OPS]);
	return check_done("test_gpu_layout");
}
