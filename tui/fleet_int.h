/* Internals of the fleet screen (--ssh), shared by tui/fleet.c (the loop,
 * the keys, a host's own viewer over ssh -t) and tui/fleet_table.c (the
 * header and the table of hosts). It draws with the viewer's helpers: the
 * same terminal, themes, tables, cuts and hint bar. */
#ifndef TUI_FLEET_INT_H
#define TUI_FLEET_INT_H

#include "fleet/fleet.h"
#include "tui_int.h"

/* s cycles through these. */
enum { FSORT_WORST = 0, FSORT_NAME, FSORT_P99, FSORT_N };

/* One row of the table: a host, or one of its traced processes (listed
 * under the host when it has several). */
struct fleet_row {
	int host; /* index into the fleet */
	int proc; /* -1: the host's own row */
};

struct fleet_ui {
	struct tui *t;
	struct fleet *f;
	const struct fleet_opts *o;
	int sort;		   /* FSORT_* */
	int help;		   /* the help screen is open */
	struct tui_list help_list; /* its scrolling */
	int rank[FLEET_MAX_HOSTS]; /* host -> position in the sort (0 first) */
	int nrows;
	struct fleet_row *rows;	   /* FLEET_MAX_HOSTS * (1 + FLEET_MAX_PROCS) */
	struct fleet_straggler sg; /* as of the last frame */
	int header_rows;	   /* rows the header took in the last layout */
};

/* Row keys: the host's index + 1 in the high bits, the process + 1 low. */
#define FLEET_ROW_KEY(h, p) (((uint64_t)(h) + 1) << 8 | (uint64_t)((p) + 1))
#define FLEET_KEY_HOST(k) ((int)((k) >> 8) - 1)

/* fleet_table.c */
extern const struct tui_col fleet_cols[];
extern const int fleet_ncols;
/* Reads the fleet: the rows in the sort's order, the straggler. */
void fleet_ui_rows(struct fleet_ui *u);
/* The header (counts of the states, the straggler line) on rows from y
 * of r, wrapped at its pieces; draw 0 only counts the rows it needs.
 * Returns the rows. */
int fleet_ui_header(struct fleet_ui *u, const struct tui_rect *r, int draw);
/* The table of hosts in r. */
void fleet_ui_table(struct fleet_ui *u, const struct tui_rect *r);
/* "worst first", "by name", "by p99". */
const char *fleet_sort_name(int sort);

#endif
