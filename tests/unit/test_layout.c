/* Layout of the main screen over a sweep of terminal sizes: nothing outside
 * the screen, no overlap, minimum sizes kept, panes dropped by priority
 * below 80x24, "too small" below the floor. Sizes that once broke get their
 * own named checks at the end. */
#include "check.h"

#include "../../tui/layout.c"

static int inside(const struct tui_rect *r, int cols, int lines)
{
	return r->y >= 0 && r->x >= 0 && r->h >= 1 && r->w >= 1 && r->y + r->h <= lines &&
	       r->x + r->w <= cols;
}

static int overlap(const struct tui_rect *a, const struct tui_rect *b)
{
	return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

static const int min_h[AREA_MAX] = {
    [AREA_OPS] = OPS_MIN_H, [AREA_PROCS] = PROCS_MIN_H, [AREA_ALERTS] = ALERTS_MIN_H};

static void check_size(int cols, int lines, const int *want)
{
	struct tui_layout l;
	tui_layout_main(cols, lines, want, &l);
	int small = cols < TUI_FLOOR_W || lines < TUI_FLOOR_H;
	CHECKF(l.too_small == small, "%dx%d too_small=%d", cols, lines, l.too_small);
	if (small) {
		CHECK(l.need_w == TUI_FLOOR_W && l.need_h == TUI_FLOOR_H);
		for (int a = 0; a < AREA_MAX; a++)
			CHECKF(!l.visible[a], "%dx%d area %d visible when too small", cols, lines,
			       a);
		return;
	}
	CHECKF(l.visible[AREA_HEADER] && l.visible[AREA_HINT] && l.visible[AREA_OPS],
	       "%dx%d header, hint and ops must show", cols, lines);
	int full = cols >= TUI_FULL_W && lines >= TUI_FULL_H;
	if (full)
		CHECKF(l.visible[AREA_PROCS] && l.visible[AREA_ALERTS], "%dx%d all panes", cols,
		       lines);
	else
		CHECKF(!l.visible[AREA_PROCS], "%dx%d processes dropped below 80x24", cols, lines);
	/* alerts is dropped only after processes */
	if (l.visible[AREA_PROCS])
		CHECK(l.visible[AREA_ALERTS]);
	CHECK(l.header_rows >= 1 && l.header_rows <= 4);
	CHECK(l.r[AREA_HEADER].h == l.header_rows);

	int rows_used = 0;
	for (int a = 0; a < AREA_MAX; a++) {
		if (!l.visible[a])
			continue;
		CHECKF(inside(&l.r[a], cols, lines), "%dx%d area %s outside: %d,%d %dx%d", cols,
		       lines, tui_area_name(a), l.r[a].y, l.r[a].x, l.r[a].w, l.r[a].h);
		CHECKF(l.r[a].w == cols, "%dx%d area %s width %d", cols, lines, tui_area_name(a),
		       l.r[a].w);
		if (min_h[a])
			CHECKF(l.r[a].h >= min_h[a], "%dx%d area %s below its minimum", cols, lines,
			       tui_area_name(a));
		if (a == AREA_BODY)
			continue;
		rows_used += l.r[a].h;
		for (int b = a + 1; b < AREA_MAX; b++)
			if (b != AREA_BODY && l.visible[b])
				CHECKF(!overlap(&l.r[a], &l.r[b]), "%dx%d %s overlaps %s", cols,
				       lines, tui_area_name(a), tui_area_name(b));
	}
	/* every row belongs to exactly one area: nothing left stale */
	CHECKF(rows_used == lines, "%dx%d rows used %d", cols, lines, rows_used);
	/* the body is exactly the rows between header and hint */
	const struct tui_rect *b = &l.r[AREA_BODY];
	CHECK(b->y == l.header_rows && b->y + b->h == lines - 1);
	for (int a = AREA_OPS; a <= AREA_ALERTS; a++)
		if (l.visible[a])
			CHECK(l.r[a].y >= b->y && l.r[a].y + l.r[a].h <= b->y + b->h);
}

int main(void)
{
	int want_none[AREA_MAX] = {0};
	int want_small[AREA_MAX] = {[AREA_OPS] = 5, [AREA_PROCS] = 2, [AREA_ALERTS] = 1};
	int want_big[AREA_MAX] = {[AREA_OPS] = 30, [AREA_PROCS] = 300, [AREA_ALERTS] = 64};
	/* a replay: its header wants a row for the timeline */
	int want_replay[AREA_MAX] = {[AREA_HEADER] = 4, [AREA_OPS] = 30, [AREA_PROCS] = 300};

	for (int cols = 20; cols <= 300; cols++)
		for (int lines = 5; lines <= 100; lines++) {
			check_size(cols, lines, NULL);
			check_size(cols, lines, want_none);
			check_size(cols, lines, want_small);
			check_size(cols, lines, want_big);
			check_size(cols, lines, want_replay);
		}

	struct tui_layout l;
	/* 80x24 exactly: everything, three header rows */
	tui_layout_main(80, 24, want_big, &l);
	CHECK(!l.too_small && l.visible[AREA_PROCS] && l.visible[AREA_ALERTS] &&
	      l.header_rows == 3);
	/* a replay's timeline: a row of its own on a tall terminal; at 80x24
	 * it takes the header's last row and the panes keep theirs */
	tui_layout_main(80, 24, want_replay, &l);
	CHECK(l.header_rows == 3 && l.visible[AREA_PROCS]);
	tui_layout_main(120, 40, want_replay, &l);
	CHECK(l.header_rows == 4 && l.visible[AREA_PROCS]);
	tui_layout_main(120, 31, want_replay, &l);
	CHECK(l.header_rows == 3);
	/* 79x24 and 80x23: processes dropped */
	tui_layout_main(79, 24, want_big, &l);
	CHECK(!l.visible[AREA_PROCS] && l.visible[AREA_ALERTS]);
	tui_layout_main(80, 23, want_big, &l);
	CHECK(!l.visible[AREA_PROCS] && l.visible[AREA_ALERTS]);
	/* 60x20 (the resize test): ops and alerts */
	tui_layout_main(60, 20, want_big, &l);
	CHECK(!l.too_small && l.visible[AREA_OPS] && l.visible[AREA_ALERTS]);
	/* the floor itself works, one below does not */
	tui_layout_main(TUI_FLOOR_W, TUI_FLOOR_H, want_big, &l);
	CHECK(!l.too_small && l.visible[AREA_OPS]);
	tui_layout_main(TUI_FLOOR_W - 1, TUI_FLOOR_H, want_big, &l);
	CHECK(l.too_small);
	tui_layout_main(TUI_FLOOR_W, TUI_FLOOR_H - 1, want_big, &l);
	CHECK(l.too_small);
	/* a few ops rows: ops does not swallow the screen, processes get the rest */
	tui_layout_main(120, 40, want_small, &l);
	CHECK(l.r[AREA_OPS].h == 5 && l.r[AREA_ALERTS].h == ALERTS_MIN_H);
	CHECK(l.r[AREA_PROCS].h == 40 - 3 - 1 - 5 - ALERTS_MIN_H);
	/* many alerts: the alert pane stops growing at its cap */
	tui_layout_main(200, 60, want_big, &l);
	CHECK(l.r[AREA_ALERTS].h == ALERTS_WANT_MAX + 1);
	CHECK(l.r[AREA_OPS].h == 30);
	/* stacked sections of the details screens */
	for (int hh = 0; hh <= 60; hh++) {
		int mins[4] = {1, 4, 3, 3}, wants[4] = {1, 12, 6, 0}, out[4];
		int used = tui_stack(hh, 4, mins, wants, NULL, out);
		int sum = 0;
		for (int i = 0; i < 4; i++) {
			CHECK(out[i] == 0 || out[i] >= mins[i]);
			sum += out[i];
		}
		CHECKF(sum == used && used <= hh, "stack h=%d used %d sum %d", hh, used, sum);
		if (hh >= 11)
			CHECK(used == hh && out[3] >= 3);
	}
	{
		int mins[3] = {2, 2, 2}, wants[3] = {3, 3, 3}, out[3];
		CHECK(tui_stack(5, 3, mins, wants, NULL, out) == 5 && out[0] == 3 && out[1] == 2 &&
		      out[2] == 0);
		CHECK(tui_stack(20, 3, mins, wants, NULL, out) == 20 && out[0] == 3 &&
		      out[1] == 3 && out[2] == 14);
		/* priorities: the last section is kept first when rows are short */
		int prio[3] = {3, 2, 1};
		CHECK(tui_stack(5, 3, mins, wants, prio, out) == 5 && out[2] == 3 && out[1] == 2 &&
		      out[0] == 0);
		CHECK(tui_stack(7, 3, mins, wants, prio, out) == 7 && out[2] == 3 && out[1] == 2 &&
		      out[0] == 2);
	}
	return check_done("test_layout");
}
