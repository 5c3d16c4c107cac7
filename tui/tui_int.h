/* Internals of the full-screen viewer, shared by the files in tui/: the
 * viewer state, the pane and screen ops tables, scrolling lists and tables,
 * and the clipped drawing helpers. Only tui/ includes curses. */
#ifndef TUI_INT_H
#define TUI_INT_H

#include <curses.h>
#include <stdint.h>

#include "session/cli.h"
#include "keys.h"
#include "layout.h"
#include "detect/detect.h"
#include "model/model.h"
#include "core/fmt.h"
#include "core/ops.h"
#include "session/session.h"
#include "stacks/stacks.h"
#include "core/status.h"
#include "text.h"
#include "theme.h"

/* What a key handler asks the loop to do (handlers never draw). */
#define TF_REDRAW 0x1	/* draw a frame */
#define TF_RELAYOUT 0x2 /* sizes changed: lay out again */
#define TF_QUIT 0x4
#define TF_REFRESH 0x8 /* read the model again now */

#define TUI_MAX_ROWS 1200 /* rows of any one table */
#define TUI_MAX_PROCS 256
#define TUI_MAX_THREADS 1024
#define TUI_MAX_STACKS 64   /* stacks listed on the op screen */
#define TUI_MAX_FRAMES 128  /* frames shown on the stack screen */
#define TUI_STACK 8	       /* screens open at once */
#define TUI_LISTS 4	       /* lists per screen */
#define ROW_GROUP (1ull << 63) /* key bit of group title rows (not selectable) */

/* A scrolling list. The selection follows the item (its key) when rows move,
 * and the whole state stays in its screen so Back returns to it. */
struct tui_list {
	int sel, top;	  /* selected and first shown display row */
	uint64_t sel_key; /* key of the selected row */
	int sort_col;	  /* column index in its table */
	int sort_inv;	  /* reversed from the column's natural order */
	char filter[64];
	int page;	/* data rows shown by the last frame */
	int n;		/* display rows of the last frame */
	uint64_t *keys; /* their keys (owned, TUI_MAX_ROWS) */
	int text;	/* scrolling text: moves scroll, no selection */
};

/* A table over some rows of data: columns, cells and sort keys. */
struct tui_table {
	const struct tui_col *cols;
	int ncols;
	void *ctx;
	int nrows;
	uint64_t (*key)(void *ctx, int row);
	/* The text of a cell (clean or not: it is cleaned when drawn) and its
	 * colour slot (preset to TH_NORMAL). */
	void (*cell)(void *ctx, int row, int col, char *buf, size_t n, int *slot);
	/* Numeric sort key of a cell; NULL or returning 0 in *ok sorts by text.
	 * Numeric columns sort largest first, text columns A to Z. */
	double (*num)(void *ctx, int row, int col, int *ok);
	/* Optional grouping: rows are shown under the title of their group. */
	int (*group)(void *ctx, int row);
	const char *(*group_title)(void *ctx, int g);
	const char *empty; /* text shown when there are no rows */
	int cell_w;	   /* width of the cell being drawn (0 when not drawing) */
};

enum tui_screen_id {
	SCR_MAIN = 0,
	SCR_OP,	    /* one op (pid 0: all processes) */
	SCR_PROC,   /* one process */
	SCR_THREAD, /* one thread's off-CPU timeline */
	SCR_ALERT,  /* one chain */
	SCR_STACK,  /* one user stack (its frames) */
	SCR_HELP,
	SCR_LOG,
	SCR_MAX,
};

/* One open screen and everything needed to come back to it. */
struct tui_view {
	int screen;	   /* enum tui_screen_id */
	int op;		   /* SCR_OP */
	uint32_t pid, tid; /* SCR_OP (0 = all), SCR_PROC, SCR_THREAD */
	uint32_t chain_id; /* SCR_ALERT */
	uint64_t stack_id; /* SCR_STACK (op: its op, -1 when none) */
	int focus;	   /* focused list */
	int nfocus;	   /* focusable lists shown by the last frame */
	struct tui_list lists[TUI_LISTS];
	/* the focused table, as drawn by the last frame (for sort and filter) */
	const struct tui_col *ft_cols;
	int ft_ncols;
};

struct tui;

/* A pane of the main screen. Each pane file ends in one of these. */
struct tui_pane {
	const char *name;
	int area; /* enum tui_area */
	int min_w, min_h;
	/* Rows it would like (for the layout), 0 = any. */
	int (*want)(struct tui *t);
	void (*draw)(struct tui *t, struct tui_view *v, const struct tui_rect *r, int focused);
	/* Screen-specific keys (Enter); returns TF_* flags. */
	int (*key)(struct tui *t, struct tui_view *v, int action, int key);
};

/* A full screen above the main one (drill-down, help, log). */
struct tui_screen {
	const char *name;
	int id;		/* enum tui_screen_id */
	unsigned where; /* KC_DRILL or KC_TEXT: which bindings apply */
	int min_w, min_h;
	/* Reads what it shows from the model (not called while paused). */
	void (*update)(struct tui *t, struct tui_view *v);
	void (*draw)(struct tui *t, struct tui_view *v, const struct tui_rect *r);
	int (*key)(struct tui *t, struct tui_view *v, int action, int key);
};

extern const struct tui_pane pane_header, pane_ops, pane_procs, pane_alerts, pane_hint, pane_gpu;
extern const struct tui_pane *const tui_panes[]; /* main-screen panes, NULL-terminated */
extern const struct tui_screen screen_op, screen_proc, screen_thread, screen_alert, screen_stack,
    screen_help, screen_log;
const struct tui_screen *tui_screen_ops(int id);

/* What the main screen shows, read from the model once per interval (and
 * kept while paused). */
struct tui_snap {
	struct ig_model_totals tot;
	struct ig_host host;
	int nops;
	struct ig_series_stats ops[IG_OP_MAX];
	int nprocs;
	struct ig_proc_stats procs[TUI_MAX_PROCS];
	int nchains;
	struct ig_chain chains[IG_CHAIN_MAX];
	struct ig_status st;
	uint64_t window_ns;
};

/* Data of the drill-down screens (one of each kind is on top at a time). */
struct tui_opdata {
	int valid;
	struct ig_series_stats st;
	struct hist hist; /* window histogram (lifetime when the window is empty) */
	int hist_ok;
	int hist_life; /* hist is the lifetime one */
	int nprocs;
	struct ig_series_stats procs[TUI_MAX_PROCS];
	int nslow;
	struct ig_call_rec slow[IG_SLOW_MAX * 4];
	int stacks_on; /* the session has stacks */
	int nstk;
	struct stacks_stat stk[TUI_MAX_STACKS]; /* top stacks of the op by tail time */
};

struct tui_procdata {
	int valid;
	struct ig_proc_stats p;
	int nops;
	struct ig_series_stats ops[IG_OP_MAX];
	int nthreads;
	struct ig_thread_stats threads[TUI_MAX_THREADS];
	int nchains;
	struct ig_chain chains[IG_CHAIN_MAX];
};

struct tui_threaddata {
	int valid;
	struct ig_thread_stats th;
	int found;
	int noff;
	struct ig_offcpu_rec off[IG_TL_MAX];
};

struct tui_stackdata {
	int on;	   /* the session has stacks */
	int state; /* enum stacks_state */
	int nframes;
	struct stacks_frame frames[TUI_MAX_FRAMES];
	int has_series; /* ser holds the (op, stack) counts */
	struct stacks_stat ser;
	char pnote[256]; /* the note about the interpreter of ser.pid */
};

struct tui_alertdata {
	int valid; /* c holds the chain */
	int gone;  /* no longer in the model: c is the last copy */
	struct ig_chain c;
};

#define CONT_CACHE 256
struct tui_cont {
	uint32_t pid;
	uint64_t start; /* when seen, to age entries out */
	char name[40];
};

struct tui {
	struct session *s;
	const struct cli *cli;
	int live; /* live mode: /proc is this host's */

	/* terminal */
	int cols, lines;
	int ascii;	      /* ASCII only */
	int colors;	      /* colours may be used */
	const char *mono_why; /* why colours are off, NULL when on */
	struct tui_theme theme;
	int theme_idx; /* index into tui_theme_std, -1 for a file */
	attr_t attr[TH_COUNT];
	struct tui_layout lay;

	/* screens */
	struct tui_view stack[TUI_STACK];
	int depth; /* stack[depth - 1] is on top; stack[0] is the main screen */

	/* data */
	struct tui_snap *snap;
	struct tui_opdata *opd;
	struct tui_procdata *procd;
	struct tui_threaddata *thd;
	struct tui_alertdata *ald;
	struct tui_stackdata *skd;
	struct tui_cont cont[CONT_CACHE];
	int paused;
	double speed; /* replay speed we asked for */

	/* modal input */
	int prompt; /* filter prompt open on the focused list */
	char prompt_buf[64];
	int menu; /* sort menu open */
	int menu_sel;

	/* timing */
	int interval_ms;
	uint64_t next_refresh_ms;
	uint64_t frames;
	char msg[160]; /* a notice in the hint line */
	uint64_t msg_until_ms;
	char last_status_msg[sizeof(((struct ig_status *)0)->message)];
};

/* The model of the session. Not cached: a replay seek backwards rebuilds
 * the model, so the pointer changes. */
static inline struct ig_model *tui_model(struct tui *t)
{
	return session_model(t->s);
}

/* The detector of the session: chains and their severities. */
static inline const struct ig_detect *tui_detect(struct tui *t)
{
	return session_detect(t->s);
}

/* --- tui.c ----------------------------------------------------------------- */
uint64_t tui_now_ms(void);
void tui_message(struct tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct tui_view *tui_top(struct tui *t);
/* Opens a screen above the current one (its lists start fresh) and reads
 * its data. Returns TF_REDRAW. */
int tui_push(struct tui *t, const struct tui_view *v);
/* The context of the screen on top: KC_MAIN, KC_DRILL or KC_TEXT. */
unsigned tui_context(struct tui *t);

/* --- draw.c ----------------------------------------------------------------- */
void draw_apply_theme(struct tui *t);
attr_t draw_attr(struct tui *t, int slot);
/* Writes s (cleaned) at row y, column x of r (relative), clipped to r and to
 * maxcols (-1: to the edge of r). Returns the columns written. */
int draw_text(struct tui *t, const struct tui_rect *r, int y, int x, int maxcols, int slot,
	      const char *s);
int draw_printf(struct tui *t, const struct tui_rect *r, int y, int x, int slot, const char *fmt,
		...) __attribute__((format(printf, 6, 7)));
/* Right-aligned in [x, x + w). */
void draw_text_right(struct tui *t, const struct tui_rect *r, int y, int x, int w, int slot,
		     const char *s);
/* Paints row y of r in slot (spaces). */
void draw_fill(struct tui *t, const struct tui_rect *r, int y, int slot);
/* A section heading: "── Slowest calls ─────" filling the row. */
void draw_section(struct tui *t, const struct tui_rect *r, int y, const char *title);
/* Draws a section heading on the first row of r and returns the rest. */
struct tui_rect draw_section_top(struct tui *t, const struct tui_rect *r, const char *title);
/* A horizontal bar (frac of w columns) in slot. */
void draw_bar(struct tui *t, const struct tui_rect *r, int y, int x, int w, double frac, int slot);
/* A meter "CPU [|||||     42%]" of w columns. */
void draw_meter(struct tui *t, const struct tui_rect *r, int y, int x, int w, const char *label,
		double pct, const char *value);
/* A box border around r (used by the sort menu). */
void draw_box(struct tui *t, const struct tui_rect *r, int slot);
int sev_slot(int sev);
const char *sev_short(int sev);
/* Slot of a p99 cell from its tail ratio. */
int p99_slot(double tail_ratio);
/* "python3[4821]", or "-" when pid is 0. */
char *fmt_proc(char *buf, size_t n, const char *comm, uint32_t pid);

/* --- list.c ------------------------------------------------------------------ */
void list_init(struct tui_list *l, int sort_col, int sort_inv);
void list_free(struct tui_list *l);
/* Up/down/page/home/end; returns TF_REDRAW when it moved. */
int list_move(struct tui_list *l, int action);
/* Lays the table's rows out (filter, sort, groups), resolves the
 * selection and draws the title row and the visible rows into r. With
 * focused the selection is highlighted and v's focus table is set. */
void table_draw(struct tui *t, struct tui_view *v, struct tui_table *tb, struct tui_list *l,
		const struct tui_rect *r, int focused, const char *title);
/* Key of the selected row, 0 when none. */
uint64_t list_selected(const struct tui_list *l);
/* Scrolling text (help, log, alert): lines via a callback. */
struct tui_lines {
	int n;
	int cap;
	char (*line)[256];
	int *slot;
	int *indent;
};
void lines_reset(struct tui_lines *L);
void lines_add(struct tui_lines *L, int slot, int indent, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Adds text wrapped to width (after indent). */
void lines_wrap(struct tui_lines *L, int slot, int indent, int width, const char *text);
void lines_free(struct tui_lines *L);
/* Draws L scrolled by l->top into r; l->n and l->page are set. */
void lines_draw(struct tui *t, const struct tui_lines *L, struct tui_list *l,
		const struct tui_rect *r);

/* --- tables shared between panes and screens ------------------------------------ */
/* Op rows (pane_ops.c): grouped by API on the main screen. */
void ops_table(struct tui *t, struct tui_view *v, struct tui_list *l,
	       const struct ig_series_stats *rows, int nrows, int grouped, const struct tui_rect *r,
	       int focused, const char *title);
/* Chain rows (pane_alerts.c). */
void chains_table(struct tui *t, struct tui_view *v, struct tui_list *l,
		  const struct ig_chain *rows, int nrows, const struct tui_rect *r, int focused,
		  const char *title);

/* --- snap.c ------------------------------------------------------------------ */
void snap_take(struct tui *t);
/* Highest severity of the snapshot's active chains on op (0 = any) in pid
 * (0 = any), -1 when none. */
int snap_severity(const struct tui_snap *sn, int op, uint32_t pid);
/* The container of pid: from /proc in live mode, else the cgroup id. */
const char *tui_container(struct tui *t, uint32_t pid, uint64_t cgroup_id);

#endif
