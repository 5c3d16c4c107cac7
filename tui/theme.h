/* Themes: semantic colour slots (TH_P99_CRIT, TH_ALERT_HIGH, ...) read from
 * themes/NAME.theme files, one "slot = fg bg attrs" line each. Parsing and the
 * search path are pure (no curses); tui/draw.c turns a theme into curses
 * attributes. Unit-tested in tests/unit/test_tui_theme.c. */
#ifndef TUI_THEME_H
#define TUI_THEME_H

#include <stddef.h>

enum tui_slot {
	TH_NORMAL = 0,	    /* table text */
	TH_DIM,		    /* secondary text, units, resolved alerts */
	TH_HEADER,	    /* header lines */
	TH_HEADER_LABEL,    /* "CPU", "ev/s" labels in the header */
	TH_HEADER_VALUE,    /* their values */
	TH_MODE_LIVE,	    /* "LIVE" badge */
	TH_MODE_REPLAY,	    /* "REPLAY x8" badge */
	TH_PAUSED,	    /* "PAUSED" badge */
	TH_RECORDING,	    /* "REC file" */
	TH_METER_OK,	    /* meter bars below 70 % */
	TH_METER_WARN,	    /* 70..90 % */
	TH_METER_CRIT,	    /* above 90 % */
	TH_DROPS_OK,	    /* drops 0 */
	TH_DROPS_BAD,	    /* drops > 0 */
	TH_COL_TITLE,	    /* column-title row of an unfocused pane */
	TH_COL_TITLE_FOCUS, /* column-title row of the focused pane */
	TH_COL_SORTED,	    /* the sorted column's title */
	TH_CURSOR,	    /* selected row of the focused list */
	TH_CURSOR_DIM,	    /* selected row of an unfocused list */
	TH_GROUP,	    /* group rows: "runtime API", "driver API" */
	TH_P99_OK,	    /* p99 cells: tail ratio below 3 */
	TH_P99_WARN,	    /* tail ratio 3..10 */
	TH_P99_CRIT,	    /* tail ratio 10 and more */
	TH_SPARK,	    /* sparklines */
	TH_ALERT_INFO,	    /* severities */
	TH_ALERT_LOW,
	TH_ALERT_MEDIUM,
	TH_ALERT_HIGH,
	TH_PREEMPTED,  /* off-CPU preempted (CPU contention) */
	TH_BLOCKED,    /* off-CPU blocked (sleeping) */
	TH_BAR,	       /* histogram bars */
	TH_BAR_TAIL,   /* histogram bars at or above p99 */
	TH_TITLE,      /* drill-down screen title */
	TH_SECTION,    /* section headings in drill-down screens */
	TH_HINT_KEY,   /* hint bar: the key */
	TH_HINT_LABEL, /* hint bar: what it does */
	TH_MESSAGE,    /* one-line notices */
	TH_ERROR,      /* errors, "terminal too small" */
	TH_PROMPT,     /* filter prompt and sort menu */
	TH_ENDED,      /* "ENDED 2m ago" badge: the view stays at the last activity */
	/* where the time goes: the parts of a bar (preempted parts use TH_PREEMPTED) */
	TH_PART_GPU,	 /* waiting for the GPU */
	TH_PART_API,	 /* CUDA API work on the CPU */
	TH_PART_HOST,	 /* the host's own work between calls */
	TH_PART_IO,	 /* block I/O wait */
	TH_PART_WAIT,	 /* waiting for another task (a data loader, a lock) */
	TH_PART_SLEEP,	 /* sleeping on a timer */
	TH_PART_FAULT,	 /* page-fault stalls */
	TH_PART_UNKNOWN, /* off CPU, reason not recorded */
	TH_COUNT,
};

/* attributes */
#define TUI_A_BOLD 0x1
#define TUI_A_DIM 0x2
#define TUI_A_REVERSE 0x4
#define TUI_A_UNDERLINE 0x8
#define TUI_A_ITALIC 0x10
#define TUI_A_BLINK 0x20

#define TUI_COLOR_DEFAULT (-1)

struct tui_style {
	short fg, bg;	/* TUI_COLOR_DEFAULT or 0..255 */
	unsigned attrs; /* TUI_A_* */
};

struct tui_theme {
	char name[32];
	char path[256]; /* file it came from, "" for a built-in copy */
	int mono;	/* uses no colours at all */
	struct tui_style s[TH_COUNT];
};

/* "normal" for TH_NORMAL, ...; NULL when out of range. */
const char *tui_slot_name(int slot);
/* Slot by name: "p99_crit" or "TH_P99_CRIT"; -1 when unknown. */
int tui_slot_by_name(const char *name);

/* Parses theme text. Unset slots inherit from a parent slot (TH_P99_OK from
 * TH_NORMAL, ...). Returns 0, or -EINVAL with "line N: why" in err. */
int tui_theme_parse(struct tui_theme *t, const char *text, char *err, size_t errlen);

/* Loads a theme by name ("light") or path ("./my.theme"): a path is read as
 * is; a name is looked up as NAME.theme in $INGERO_THEME_DIR, the themes/
 * directory next to the executable (../themes, ../share/ingero-top/themes),
 * /usr/local/share/ingero-top/themes, /usr/share/ingero-top/themes and
 * ./themes, then among the built-in copies of the standard themes.
 * Returns 0 or -errno with a reason in err. */
int tui_theme_load(struct tui_theme *t, const char *name_or_path, char *err, size_t errlen);

/* The standard themes, in the order `t` cycles through them. */
#define TUI_THEME_NSTD 4
extern const char *const tui_theme_std[TUI_THEME_NSTD]; /* "default", "light", ... */
/* Built-in text of a standard theme (a copy of themes/NAME.theme, checked
 * by the unit test), NULL when name is not standard. */
const char *tui_theme_builtin(const char *name);

#endif
