/* Pure text helpers of the viewer: screen-safe strings (one column per
 * character, ASCII fallbacks), compact number columns, column fitting,
 * sparklines and bars, and the container name from a cgroup path. No curses;
 * unit-tested in tests/unit/test_tui_text.c. Durations and bytes use
 * report_fmt_ns/report_fmt_bytes (report/report.h). */
#ifndef TUI_TEXT_H
#define TUI_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Copies src into dst (capacity cap bytes, always NUL-terminated) so that
 * every output character takes exactly one screen column and nothing is a
 * control character: invalid UTF-8, control bytes and wide characters become
 * '?', tabs and newlines a space. In ascii mode only bytes 0x20..0x7e are
 * written and common symbols are spelled out ("→" as "->", "×" as "x",
 * "µ" as "u", "…" as "..."). At most max_cols columns are written (-1: no
 * limit). Returns the number of columns written. */
int tui_text_clean(char *dst, size_t cap, const char *src, int max_cols, int ascii);

/* Columns of a string produced by tui_text_clean (counts UTF-8 lead bytes). */
int tui_text_cols(const char *s);

/* Byte length of the first cols columns of a clean string. */
size_t tui_text_prefix(const char *s, int cols);

/* Greedy word wrap of a clean string into lines of at most width columns.
 * Calls line(ctx, start, bytes) for each line; returns the number of lines.
 * Words longer than width are cut. */
int tui_text_wrap(const char *s, int width, void (*line)(void *ctx, const char *p, size_t n),
		  void *ctx);

/* Column fitting for tables. */
struct tui_col {
	const char *title;
	short width; /* natural width in columns (>= title length) */
	short grow;  /* extra columns it may take when space is left (0: fixed) */
	short prio;  /* 0: always shown; larger values are dropped first */
	char align;  /* 'l' or 'r' */
	/* 1: a cell is never cut (a name[pid]): the column is as wide as its
	 * widest cell, or hidden when that does not fit */
	char fit;
	const char *help; /* one line: what the column means, of what it is a share */
};
/* Chooses the visible columns of a table for width columns of screen:
 * columns are taken by priority while they fit (one blank between columns),
 * spare space goes to growable columns in order, then x[] and w[] are set in
 * table order (x[i] = -1 for a hidden column). nat[i] (NULL: none; < 0: no
 * override) replaces the natural width of column i (the widest cell of a
 * fit column); bit i of hidden keeps column i out. Returns the width used. */
int tui_cols_fit2(const struct tui_col *c, int n, int width, const short *nat, unsigned hidden,
		  short *x, short *w);
int tui_cols_fit(const struct tui_col *c, int n, int width, short *x, short *w);

/* Copies the clean string src into dst within cols columns; when it is
 * longer, it is cut at the end of a word and ends in an ellipsis ("..."
 * in ascii), so that no name[pid] is cut in the middle. A word longer
 * than cols is cut before any number or "[pid" in it ("4.36ms" in 3
 * columns is "…"), never inside a number. Returns the columns written. */
int tui_clip_words(char *dst, size_t cap, const char *src, int cols, int ascii);

/* Splits cols columns among n parts in proportion to ns[i] of total (the
 * largest remainders round up), so that the columns add up to cols when
 * the parts add up to total. owner[c] = the part of column c, or -1 for a
 * column no part reaches. Returns the columns given to parts. */
int tui_parts_cols(const uint64_t *ns, int n, uint64_t total, int cols, signed char *owner);

/* A sparkline of the last cols values of v[0..n-1] (oldest first), scaled to
 * vmax (0: the largest of those values); a 0 value is a blank. Right-aligned
 * (padded with blanks on the left when n < cols). UTF-8 uses ▁▂▃▄▅▆▇█,
 * ascii uses "_.-=+*#@". Returns dst. */
char *tui_spark(char *dst, size_t cap, const uint64_t *v, int n, int cols, uint64_t vmax,
		int ascii);
/* A horizontal bar of frac (0..1) of cols columns: full blocks and an eighth
 * block in UTF-8, '#' in ascii, no padding. Returns dst. */
char *tui_bar(char *dst, size_t cap, double frac, int cols, int ascii);

#endif
