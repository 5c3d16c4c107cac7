/* Pure layout of the main screen: terminal size (and how many rows each
 * pane would like) -> rectangles. No curses; unit-tested over a sweep of
 * sizes in tests/unit/test_layout.c. */
#ifndef TUI_LAYOUT_H
#define TUI_LAYOUT_H

/* Areas of the screen, in screen order. */
enum tui_area {
	AREA_HEADER = 0, /* status lines at the top */
	AREA_OPS,	 /* GPU API table */
	AREA_PROCS,	 /* processes / off-CPU */
	AREA_ALERTS,	 /* active chains */
	AREA_HINT,	 /* key hints, last line */
	AREA_BODY,	 /* everything between header and hint (drill-down screens) */
	AREA_GPU,	 /* device meters, at the top of the body (only with NVML samples) */
	AREA_MAX,
};

/* Below the floor only "terminal too small" is shown. */
#define TUI_FLOOR_W 40
#define TUI_FLOOR_H 10
/* At and above this size every pane is shown; below it panes are dropped
 * by priority (processes first, then alerts). */
#define TUI_FULL_W 80
#define TUI_FULL_H 24

/* Minimum sizes of the panes, including their column-title row. */
#define OPS_MIN_W 40
#define OPS_MIN_H 4
#define ALERTS_MIN_W 30
#define ALERTS_MIN_H 2
#define PROCS_MIN_W 40
#define PROCS_MIN_H 3
#define ALERTS_WANT_MAX 8 /* alert rows shown before the pane scrolls */
#define GPU_RESERVE 12	  /* body rows the device meters leave to the other panes (full size) */

struct tui_rect {
	int y, x, h, w;
};

struct tui_layout {
	int cols, lines;
	int too_small;	    /* 1: draw only the "too small" message */
	int need_w, need_h; /* the floor, for that message */
	int header_rows;    /* 1..3: how much the header may say */
	int visible[AREA_MAX];
	struct tui_rect r[AREA_MAX];
};

/* Lays out a cols x lines screen. want[] is the number of rows each of the
 * ops, processes and alerts panes would like (column-title row included;
 * 0 = no preference). Panes keep their minimum height; spare rows go by
 * priority (ops, alerts, processes) up to what they want, the rest to the
 * processes pane (or the ops pane when processes are hidden). The device
 * meters (want[AREA_GPU] rows, 0 = none) take the top of the body, up to
 * what leaves the other panes GPU_RESERVE rows (their minimum below full
 * size): fewer rows than wanted, and the meters pane says less. */
void tui_layout_main(int cols, int lines, const int want[AREA_MAX], struct tui_layout *out);

/* Splits h rows among n stacked sections (in screen order): by priority
 * (prio[], lower first; NULL = screen order) each gets its minimum while it
 * fits (else 0: dropped), then spare rows go by priority up to want[i]
 * (0 = any), and what is left to the last section shown. out[i] = rows of
 * section i. Returns the rows used (h when anything is shown). */
int tui_stack(int h, int n, const int *min, const int *want, const int *prio, int *out);

/* Pane priority: 1 = dropped last. */
int tui_area_prio(int area);
const char *tui_area_name(int area);

#endif
