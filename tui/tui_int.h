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
#include "figures.h"
#include "glossary.h"
#include "pidcheck.h"
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
#define TUI_MAX_STACKS 64      /* stacks listed on the op screen */
#define TUI_MAX_FRAMES 128     /* frames shown on the stack screen */
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
	int page;	 /* data rows shown by the last frame */
	int n;		 /* display rows of the last frame */
	uint64_t *keys;	 /* their keys (owned, TUI_MAX_ROWS) */
	int text;	 /* scrolling text: moves scroll, no selection */
	char search[64]; /* F3: the text searched for */
	int search_go;	 /* the next frame moves the selection to the next match */
	int search_miss; /* the last search found nothing */
	int moved;	 /* the user moved the selection (a key, a click, F3) */
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
	/* Optional tree: the row of a row's parent, -1 for a root. Rows are
	 * then shown depth-first, siblings in sort order. */
	int (*parent)(void *ctx, int row);
	/* Optional: the column from which a row is one cell to the end of the
	 * row (its text from cell() of that column), -1 for a row of cells: a
	 * host that is not live says why across its number columns. */
	int (*span)(void *ctx, int row);
	unsigned hide;	/* columns (bit i) left out: the user's (t->hidden) and the table's */
	int cell_w;	/* width of the cell being drawn (0 when not drawing) */
	int cell_depth; /* tree depth of the row being drawn */
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
	SCR_SETUP, /* F2: theme, columns, refresh */
	SCR_MAX,
};

/* One open screen and everything needed to come back to it. */
struct tui_view {
	int screen;	   /* enum tui_screen_id */
	int op;		   /* SCR_OP */
	uint32_t pid, tid; /* SCR_OP (0 = all), SCR_PROC, SCR_THREAD */
	uint32_t chain_id; /* SCR_ALERT */
	uint64_t stack_id; /* SCR_STACK (op: its op, -1 when none) */
	/* SCR_THREAD opened from a slow call (o): the call, whose off-CPU
	 * intervals are shown; call_dur_ns 0 = the thread's latest intervals */
	uint64_t call_ts_ns, call_dur_ns;
	int call_op;
	int call_stayed; /* the call never left the CPU (no switch): none to show */
	int focus;  /* focused list */
	int nfocus; /* focusable lists shown by the last frame */
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
    screen_help, screen_log, screen_setup;
/* The columns of the main panes, for the setup screen and the help. */
extern const struct tui_col ops_cols[], procs_cols[], alerts_cols[];
extern const int ops_ncols, procs_ncols, alerts_ncols;
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

/* m: the main screen's numbers at one moment, copied (never read again
 * from the model, so that it survives seeks, steps, resets and live time
 * moving on), which the op table and the time split compare with what
 * they show now. */
struct tui_mark_proc {
	uint32_t pid;
	struct ig_time_parts parts, life_parts;
};
struct tui_mark {
	int set;
	uint64_t at_ns;			    /* model time of the marked moment */
	uint64_t span_win_ns, span_life_ns; /* the denominators of its rates */
	int nops;
	struct ig_series_stats ops[IG_OP_MAX]; /* in op order, as the snapshot */
	int nprocs;
	struct tui_mark_proc procs[TUI_MAX_PROCS];
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
	int life; /* every section since the start: z, or no call in the window */
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
	/* opened from a call: off[] keeps the intervals during it */
	int noff_kept;			   /* intervals the model kept for the thread */
	uint64_t oldest_ns;		   /* the oldest of them began then */
	uint64_t in_call_pre, in_call_blk; /* what off[] adds up to */
	int with_call;			   /* off[] came from those kept with the call */
	int call_cut;			   /* and its first ones were not kept */
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

/* A copy of the model and the chains of the same moment. */
struct tui_frozen {
	struct ig_model *m;
	struct ig_chain *chains; /* IG_CHAIN_MAX */
	int nchains;
	uint64_t at_ns; /* model time of the copy */
};

enum tui_modal {
	MODAL_NONE = 0,
	MODAL_FILTER,  /* / : the filter prompt of the focused table */
	MODAL_SEARCH,  /* F3: the search prompt */
	MODAL_SORT,    /* F6: the sort menu */
	MODAL_SIGNAL,  /* F9: which signal */
	MODAL_CONFIRM, /* y/N before something that cannot be undone */
	MODAL_JUMP,    /* j: the time to jump to in a replay */
};

/* A question waiting for y: what it asks and what y does. */
enum { CONFIRM_RESET = 1, CONFIRM_KILL, CONFIRM_NICE };
struct tui_confirm {
	int what;
	uint32_t pid;
	int sig;	/* CONFIRM_KILL */
	int nice;	/* CONFIRM_NICE: the new nice value */
	uint64_t start; /* pid's start time when asked (pidcheck.h) */
	char name[64];	/* "ig-hog[2771]" as the question names it */
	int culprit;	/* pid is the culprit of the alert on screen */
	char question[160];
};

/* Where table_draw drew a table: its title row at r.y, its rows below
 * from display row top, its visible columns at cx (relative to r.x, -1:
 * hidden) cw wide. The caller registers it for clicks (tui_hit_table). */
struct tui_table_box {
	struct tui_rect r;
	int top;
	int ncols;
	short cx[32], cw[32];
};

/* A region of the last frame a click may hit. */
enum { HIT_ROWS = 1, HIT_TITLE, HIT_KEY };
#define TUI_MAX_HITS 48
struct tui_hit {
	int kind;
	struct tui_rect r;    /* on the screen */
	int screen_depth;     /* the view it belongs to (t->stack index) */
	int focus;	      /* HIT_ROWS, HIT_TITLE: the list's index in its view */
	int top;	      /* HIT_ROWS: display row of r.y */
	short cx[32], cw[32]; /* HIT_TITLE: columns, relative to r.x */
	int ncols;
	int action; /* HIT_KEY */
};

/* Main panes whose columns the setup screen can hide. */
enum { TBL_OPS = 0, TBL_PROCS, TBL_ALERTS, TUI_NTABLES };

/* No CUDA call for this long (event time): the view stays at the last
 * activity. The detector stops judging a quiet feeder after as long. */
#define TUI_QUIET_S 2

struct tui {
	struct session *s; /* NULL on the fleet screen (tui/fleet*.c) */
	const struct cli *cli;
	const struct session_publish *pub; /* once per refresh (NULL: none) */
	int live;			   /* live mode: /proc is this host's */
	/* the fleet screen: KC_FLEET (the key context of every screen there)
	 * and its key handler (clicks on rows and hints press keys through it) */
	unsigned ctx;
	int (*on_key)(struct tui *t, int ch);

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
	struct tui_mark *mark; /* m: the marked moment (mark->set) */
	struct tui_opdata *opd;
	struct tui_procdata *procd;
	struct tui_threaddata *thd;
	struct tui_alertdata *ald;
	struct tui_stackdata *skd;
	int paused;
	double speed;		 /* replay speed we asked for */
	struct tui_frozen pause; /* what every screen reads while paused */
	struct tui_frozen last;	 /* the model at the last refresh that saw new calls */
	int ended;		 /* no calls for TUI_QUIET_S: the screens read `last` */
	uint64_t last_calls;	 /* calls counted at the last refresh */
	uint64_t active_ns;	 /* model time of the last refresh that saw new calls */
	int life;		 /* z: figures since the start instead of the window */
	uint64_t span_win_ns;	 /* the window the model covers: the rates' denominator */
	uint64_t span_life_ns;	 /* the time since the first event (z) */

	/* modal input: a prompt, a menu or a question in the hint line */
	int modal; /* enum tui_modal */
	char prompt_buf[64];
	char jump_err[160]; /* MODAL_JUMP: why the last entry was refused */
	int menu_sel;
	struct tui_confirm confirm; /* MODAL_CONFIRM: what y does */
	struct pidseen seen;	    /* live: start times of the pids named (F7-F9 check) */

	/* display settings (F2) */
	unsigned hidden[TUI_NTABLES]; /* columns hidden in the main panes */
	int tree;		      /* F5: processes as a tree */
	int unfold;		      /* helper processes shown, not folded */

	/* mouse: what the last frame drew where */
	int nhits;
	struct tui_hit hits[TUI_MAX_HITS];

	/* timing */
	int interval_ms;
	uint64_t next_refresh_ms;
	uint64_t frames;
	char msg[160]; /* a notice in the hint line */
	uint64_t msg_until_ms;
	uint32_t status_notes;	/* the session's notices shown (ig_status.notes_n) */
	uint64_t status_msg_ms; /* when the session's notice last changed */
};

/* --- snap.c: what the screens read; freeze.c: when it stops moving ---------------- */
/* The model the screens read: the session's, or the copy taken at the pause
 * or at the last activity. Not cached: a replay seek backwards rebuilds the
 * session's model, and a pause swaps in a copy. */
struct ig_model *tui_model(struct tui *t);
/* The copy the screens read now (its chains), NULL when live. */
const struct tui_frozen *tui_frozen_now(struct tui *t);
void tui_frozen_free(struct tui_frozen *f);
/* Reads the model again: activity, the main screen's snapshot, the screen
 * on top. */
void tui_refresh(struct tui *t);
/* Paused: keeps the copy of the last activity up to date (the periodic
 * refresh while the screens are frozen). */
void tui_watch(struct tui *t);
/* p: every screen freezes at one copy (on), or follows the live model. */
void tui_pause(struct tui *t, int on);

/* walk.c: t, T, j, Home and End in a replay (TF_* flags; each leaves the
 * replay paused where it went), and the keys of the jump prompt. */
int tui_walk_action(struct tui *t, int action);
int tui_jump_key(struct tui *t, int ch);
/* mark.c: m sets a mark on the moment the main screen shows, or clears
 * it (TF_* flags). */
int tui_mark_action(struct tui *t);
/* The marked row of op (whole op, all processes), NULL when the mark has
 * none or no mark is set. */
const struct ig_series_stats *mark_op(const struct tui *t, int op);
/* The marked calls per second of s, with the mark's denominator (window
 * or since the start, as z says now). */
double mark_rate(const struct tui *t, const struct ig_series_stats *s);
/* The marked parts of pid's wall time (window or since the start, as z
 * says now); a zeroed one (no value) when the mark has no such process;
 * NULL when no mark is set. */
const struct ig_time_parts *mark_parts(const struct tui *t, uint32_t pid);
/* " MARK 14:02:10 " (local time) for the header. */
char *mark_badge(const struct tui *t, char *buf, size_t n);

/* Notes the spans of tui_model() (the denominators of the rates; freeze.c). */
void tui_spans(struct tui *t);
/* snap.c: calls per second as the screens show them: calls_win over the window,
 * or calls_life since the start (z), over the same span for every row. */
double tui_rate(struct tui *t, uint64_t calls_win, uint64_t calls_life);
/* How long ago the work stopped, when the view stays at the last activity
 * (0 otherwise), in event time. */
uint64_t tui_ended_ago_ns(struct tui *t);
/* The now alerts' ages are read against: the screens' model time, plus the
 * time since the last activity when ENDED (ages and "ENDED 1m12s ago"
 * count to the same now). */
uint64_t tui_alert_now_ns(struct tui *t);
/* The window is not full yet (the first window of a run or a replay):
 * what the detector says may change as it fills; the screens say so. */
int tui_provisional(struct tui *t);

/* --- tui.c: the loop ------------------------------------------------------------ */
uint64_t tui_now_ms(void);
/* The theme the options ask for, or monochrome when colours are off. */
void tui_first_theme(struct tui *t);
void tui_message(struct tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- term.c: the terminal --------------------------------------------------------- */
#include <signal.h>
/* Set by the signal handlers, read and cleared by the loop. */
extern volatile sig_atomic_t term_sig_quit, term_sig_winch, term_sig_tstp, term_sig_cont;
/* Puts the terminal in curses mode (restored on every path, crashes
 * included) and sets t->ascii, t->colors and t->mono_why. -1 after printing
 * why the terminal cannot be used. */
int term_open(struct tui *t);
void term_close(void);
void term_resize(void);
/* Ctrl-Z: gives the screen back, stops, and takes it again on fg. */
void term_suspend(void);
/* Gives the terminal to another program (the fleet's ssh -t to a host's
 * viewer): the shell's modes, the cursor, no mouse. */
void term_leave(void);
/* Takes it back after term_leave: curses' modes, keypad and mouse again,
 * the size it has now, and a full redraw on the next frame. */
void term_resume(void);

/* --- screens.c: the screen stack and the frame ------------------------------------ */
struct tui_view *tui_top(struct tui *t);
/* Opens a screen above the current one (its lists start fresh) and reads
 * its data. Returns TF_REDRAW. */
int tui_push(struct tui *t, const struct tui_view *v);
/* Closes the screen on top (not the main one); returns TF_REDRAW or 0. */
int tui_pop(struct tui *t);
/* The context of the screen on top: KC_MAIN, KC_DRILL or KC_TEXT. */
unsigned tui_context(struct tui *t);
void tui_view_init_lists(struct tui_view *v);
/* Reads the data of a screen (its update function). */
void tui_view_update(struct tui *t, struct tui_view *v);
/* Tab / Shift-Tab: the next or previous pane or list. */
int tui_focus_move(struct tui *t, struct tui_view *v, int dir);
/* Lays the main screen out for the terminal's size. */
void tui_layout(struct tui *t);
/* Draws everything and calls doupdate() once. */
void tui_frame(struct tui *t);
/* "terminal too small (need WxH) q quits", centred (t->lay.need_w, need_h). */
void tui_draw_too_small(struct tui *t);

/* --- input.c: keys ---------------------------------------------------------------- */
/* One key: returns TF_* flags. */
int tui_handle_key(struct tui *t, int ch);
struct tui_list *tui_focused_list(struct tui *t);
/* Closes the prompt, menu or question. */
void tui_modal_close(struct tui *t);

/* --- actions.c: what the keys do ----------------------------------------------------- */
int tui_action(struct tui *t, int action, int ch);
/* The signals F9 offers. */
struct tui_signal {
	int sig;
	const char *name, *what;
};
extern const struct tui_signal tui_signals[];
extern const int tui_nsignals;
/* Asks "Send SIG to name[pid]? y/N" for t->confirm. */
int tui_ask_kill(struct tui *t);
/* Does what the question asked, after y. */
int tui_confirmed(struct tui *t, const struct tui_confirm *c);
/* Loads a theme by name or path; a notice and -errno when it cannot. */
int tui_set_theme(struct tui *t, const char *name);
/* t: the next standard theme (a notice says which, or that colours are
 * off). Returns TF_REDRAW. */
int tui_next_theme(struct tui *t);

/* --- mouse.c: clicks ---------------------------------------------------------------- */
/* Forgets the regions of the last frame (at the start of a frame). */
void tui_hits_reset(struct tui *t);
/* Records a table of v drawn with list l where box says (table_draw's
 * answer: its title row and its rows) for clicks. */
void tui_hit_table(struct tui *t, struct tui_view *v, struct tui_list *l,
		   const struct tui_table_box *box);
/* Records a key of the hint bar at columns [x, x + w) of row y. */
void tui_hit_key(struct tui *t, int y, int x, int w, int action);
/* A mouse event: returns TF_* flags. */
int tui_mouse(struct tui *t);
/* Presses a key for a click (t->on_key, else tui_handle_key). */
int tui_press(struct tui *t, int key);

/* --- timebar.c: where the time goes --------------------------------------------- */
int timebar_slot(int part);
/* The stacked bar of p's parts in w columns at (y, x) of r. */
void timebar_draw(struct tui *t, const struct tui_rect *r, int y, int x, int w,
		  const struct ig_time_parts *p);
/* The legend of the non-zero parts, largest first, within w columns;
 * compact: short labels. Returns the columns used. */
int timebar_legend(struct tui *t, const struct tui_rect *r, int y, int x, int w,
		   const struct ig_time_parts *p, int compact);
/* The legend of a comparison (m): each part not zero on either side as
 * "label 12%→50%" ("-" for a side without wall time), the largest first,
 * within w columns. Returns the columns used. */
int timebar_legend_cmp(struct tui *t, const struct tui_rect *r, int y, int x, int w,
		       const struct ig_time_parts *then, const struct ig_time_parts *now,
		       int compact);
/* A section title, the bar and its legend on rows y..y+2; returns 3. With
 * then (the mark's parts, m), the mark's bar and the current one, and the
 * legend as mark→now, on rows y..y+3; returns 4. */
int timebar_lines(struct tui *t, const struct tui_rect *r, int y, const char *title,
		  const struct ig_time_parts *p, const struct ig_time_parts *then, int life);

/* --- draw.c ----------------------------------------------------------------- */
void draw_apply_theme(struct tui *t);
attr_t draw_attr(struct tui *t, int slot);
/* Writes s (cleaned) at row y, column x of r (relative), clipped to r and to
 * maxcols (-1: to the edge of r): text that does not fit is cut at a word
 * and ends in an ellipsis, never inside a number (tui_clip_words); blanks
 * past the edge are dropped. Returns the columns written. */
int draw_text(struct tui *t, const struct tui_rect *r, int y, int x, int maxcols, int slot,
	      const char *s);
int draw_printf(struct tui *t, const struct tui_rect *r, int y, int x, int slot, const char *fmt,
		...) __attribute__((format(printf, 6, 7)));
/* One piece of a row of pieces (printf): drawn whole when it fits in the
 * row, else an ellipsis, and the rest of the row counts as used (returns
 * r->w - x) so that no later piece is drawn. */
int draw_piecef(struct tui *t, const struct tui_rect *r, int y, int x, int slot, const char *fmt,
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
/* "python3[4821]", or "-" when pid is 0; ingero-top's own process is
 * marked "ingero-top[812] (self)". */
char *tui_fmt_proc(char *buf, size_t n, const char *comm, uint32_t pid);
/* A culprit of process owner: tui_fmt_proc, or "own threads" when it is the
 * process itself (one of its threads preempted or woke another). */
char *tui_fmt_culprit(char *buf, size_t n, const char *comm, uint32_t pid, uint32_t owner);

/* --- list.c ------------------------------------------------------------------ */
void list_init(struct tui_list *l, int sort_col, int sort_inv);
void list_free(struct tui_list *l);
/* Up/down/page/home/end; returns TF_REDRAW when it moved. */
int list_move(struct tui_list *l, int action);
/* Lays the table's rows out (filter, sort, groups), resolves the
 * selection and draws the title row and the visible rows into r. With
 * focused the selection is highlighted and v's focus table is set.
 * Returns where it drew what; nothing here records clicks. */
struct tui_table_box table_draw(struct tui *t, struct tui_view *v, struct tui_table *tb,
				struct tui_list *l, const struct tui_rect *r, int focused,
				const char *title);
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
/* lines_wrap with continuation lines at column hang, each within width. */
void lines_wrap_hang(struct tui_lines *L, int slot, int indent, int hang, int width,
		     const char *text);
void lines_free(struct tui_lines *L);
/* Draws L scrolled by l->top into r; l->n and l->page are set. */
void lines_draw(struct tui *t, const struct tui_lines *L, struct tui_list *l,
		const struct tui_rect *r);

/* --- tables shared between panes and screens ------------------------------------ */
/* The pid selected in the processes pane (0: none, or the folded helpers). */
uint64_t procs_selected_pid(struct tui *t);
/* Op rows (pane_ops.c): grouped by API on the main screen (OPS_GROUPED);
 * with OPS_MARK (whole-op rows), mark→now columns while a mark is set. */
#define OPS_GROUPED 0x1
#define OPS_MARK 0x2
void ops_table(struct tui *t, struct tui_view *v, struct tui_list *l,
	       const struct ig_series_stats *rows, int nrows, unsigned flags,
	       const struct tui_rect *r, int focused, const char *title);
/* "window 10s", "since start 1m20s", "window 10s at last activity". */
char *tui_span_title(struct tui *t, char *buf, size_t n);
/* The op screen's tables (op_tables.c). */
void op_breakdown_table(struct tui *t, struct tui_view *v, struct tui_list *l,
			const struct ig_series_stats *rows, int n, int threads, int life,
			const struct tui_rect *r, int focused);
void op_slow_table(struct tui *t, struct tui_view *v, struct tui_list *l,
		   const struct ig_call_rec *calls, int n, int life, const struct tui_rect *r,
		   int focused);
void op_stacks_table(struct tui *t, struct tui_view *v, struct tui_list *l,
		     const struct stacks_stat *stk, int n, int stacks_on, const struct tui_rect *r,
		     int focused);
uint64_t op_slow_key(const struct ig_call_rec *c);
uint64_t op_stack_key(const struct stacks_stat *k);
/* "12:03:04.123" (local time). */
char *fmt_clock_ms(char *buf, size_t n, uint64_t ts_ns);
/* Chain rows (pane_alerts.c). */
void chains_table(struct tui *t, struct tui_view *v, struct tui_list *l,
		  const struct ig_chain *rows, int nrows, const struct tui_rect *r, int focused,
		  const char *title);

/* --- snap.c ------------------------------------------------------------------ */
/* The main screen's numbers into sn, from m (tui_model()) and the chains
 * of the same moment: f's when the view is frozen (tui_frozen_now()),
 * else the detector d's. */
void snap_take(struct tui_snap *sn, struct ig_model *m, const struct tui_frozen *f,
	       const struct ig_detect *d);
/* The chain with this id in the snapshot, NULL when none. */
const struct ig_chain *snap_chain(const struct tui_snap *sn, uint32_t id);
/* Highest severity of the snapshot's active chains on op (0 = any) in pid
 * (0 = any), -1 when none. */
int snap_severity(const struct tui_snap *sn, int op, uint32_t pid);
/* The container of pid: from /proc in live mode, else the cgroup id. */
const char *tui_container(const struct ig_proc_stats *p);

#endif
