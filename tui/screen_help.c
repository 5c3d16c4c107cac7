/* The help screen, generated from the key table (the same table as the
 * bindings, the hint bar and docs/keys.md), plus what the columns and colours
 * mean. Scrolls like text; Esc, Backspace or the help key close it. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

static struct tui_lines lines;

/* Wrapped text whose continuation lines start at column hang. */
static void wrap_hang(int width, const char *text, int hang)
{
	lines_wrap_hang(&lines, TH_NORMAL, 1, hang, width, text);
}

/* What every column of a pane means, from its column table. */
static void cols_help(const char *title, const struct tui_col *cols, int n, int width)
{
	lines_add(&lines, TH_SECTION, 0, "%s", title);
	for (int i = 0; i < n; i++) {
		char text[320];
		snprintf(text, sizeof(text), "%-13s %s", cols[i].title,
			 cols[i].help ? cols[i].help : "");
		wrap_hang(width, text, 15);
	}
}

/* The op names the GPU API column abbreviates when it is narrow. */
static void abbreviations(int width)
{
	char text[1024];
	size_t o = 0;
	o += (size_t)snprintf(text + o, sizeof(text) - o, "Abbreviations:");
	for (int op = 1; op < IG_OP_MAX && o < sizeof(text); op++) {
		const struct ig_op_info *oi = ig_op_info(op);
		if (oi && oi->name && strcmp(oi->name, oi->short_name))
			o += (size_t)snprintf(text + o, sizeof(text) - o, " %s = %s;",
					      oi->short_name, oi->name);
	}
	if (o > 0 && text[o - 1] == ';')
		text[o - 1] = 0;
	wrap_hang(width, text, 3);
}

/* Where a key means something else than in htop: the choice, said once
 * (issue 28; docs/tui.md, "htop habits"). */
static void htop_habits(int width)
{
	lines_add(&lines, TH_SECTION, 0, "Coming from htop");
	wrap_hang(width,
		  "htop: k kills. Here k moves up (vi, with j down); F9 kills, as htop's F9 does.",
		  1);
	wrap_hang(width,
		  "htop: t is the tree. Here F5 is the tree (as htop's F5); t and c change the "
		  "theme (in a replay t and T step a window, c changes the theme).",
		  1);
	wrap_hang(width,
		  "htop: Space tags. Here Space pauses, as p does: there is no tagging; F7, F8 "
		  "and F9 act on one process, the selected one or an alert's culprit.",
		  1);
	wrap_hang(width,
		  "htop: / searches. Here / (or F4) filters the focused table, as htop's \\ "
		  "does; F3 searches, as htop's F3 does.",
		  1);
	wrap_hang(width,
		  "M, P and T sort as in htop; the sorted column is shown at every width. The "
		  "focused table's title row ends with a marker (\u25c0, < in ASCII) besides its "
		  "colour.",
		  1);
}

static void build(struct tui *t, int width)
{
	const char *mode = session_status(t->s)->mode == IG_MODE_REPLAY ? "replay" : "live";
	lines_reset(&lines);
	lines_add(&lines, TH_TITLE, 0, " ingero-top %s  help (%s mode)", IG_VERSION, mode);
	lines_wrap(&lines, TH_NORMAL, 1, width,
		   "A live top for GPU workloads: CUDA API latency per op, where the feeding "
		   "threads' time goes (waiting for the GPU, on the CPU, preempted, asleep), and "
		   "alerts that name the host-side cause and who causes it. e explains the sorted "
		   "column of a table; F6 lists the columns with what they mean.");
	htop_habits(width);
	for (int i = 0; i < tui_nbindings; i++) {
		const struct tui_binding *b = &tui_bindings[i];
		char keys[64], text[320];
		if (b->section)
			lines_add(&lines, TH_SECTION, 0, "%s", b->section);
		tui_binding_keys(b, " ", keys, sizeof(keys));
		snprintf(text, sizeof(text), "%-22s %s%s", keys, b->help,
			 b->replay_only && strcmp(mode, "live") == 0 ? " [replay only]" : "");
		/* continuation lines line up under the description */
		lines_wrap_hang(&lines, TH_NORMAL, 1, 24, width, text);
	}
	cols_help("GPU API pane", ops_cols, ops_ncols, width);
	abbreviations(width);
	cols_help("Processes pane", procs_cols, procs_ncols, width);
	cols_help("Alerts pane", alerts_cols, alerts_ncols, width);
	lines_add(&lines, TH_SECTION, 0, "Where the time goes");
	wrap_hang(width,
		  "The wall time of the threads that call CUDA (the feeding threads) splits into "
		  "parts that add up to it; GPU% CPU% PRE% WAIT% group them:",
		  1);
	for (int k = 0; k < IG_PART_MAX; k++) {
		char text[256];
		snprintf(text, sizeof(text), "%-19s %s", gloss_part_label(k), gloss_part_help(k));
		wrap_hang(width, text, 21);
	}
	lines_add(&lines, TH_SECTION, 0, "Freezing");
	wrap_hang(width,
		  "p freezes every screen at one moment. When no CUDA call came for 2 s (the "
		  "target exited or went quiet), the screens stay at the last activity, marked "
		  "ENDED or IDLE in the header, until calls come again. z shows every figure "
		  "since the start instead of over the window.",
		  1);
	lines_add(&lines, TH_SECTION, 0, "Comparing two times");
	wrap_hang(
	    width,
	    "m marks the moment the main screen shows (MARK and its time in the header, M on "
	    "a replay's timeline); m again clears it. Then step, jump or seek (or, live, let "
	    "time go on): the GPU API pane shows CALLS/S MARK\u2192NOW and P99 MARK\u2192NOW "
	    "(yellow at 1.5x the mark's p99, red at 3x; '-' for an op of one time only), and "
	    "where the time goes shows each part as mark\u2192now, under the processes and on "
	    "the process screen (the mark's bar above the current one). The mark is a copy: "
	    "seeks, steps and r keep it.",
	    1);
	lines_add(&lines, TH_SECTION, 0, "Display");
	char why[96] = "";
	if (t->mono_why)
		snprintf(why, sizeof(why), " (colours off: %s)", t->mono_why);
	lines_add(&lines, TH_NORMAL, 1, "theme %s%s, %s characters, refresh every %.2g s",
		  t->theme.name, why, t->ascii ? "ASCII" : "UTF-8", t->interval_ms / 1000.0);
	lines_add(&lines, TH_DIM, 1, "%s", "Esc, Backspace or h closes this help.");
}

static void help_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r)
{
	build(t, r->w - 1);
	v->nfocus = 1;
	v->focus = 0;
	lines_draw(t, &lines, &v->lists[0], r);
}

const struct tui_screen screen_help = {
    .name = "help",
    .id = SCR_HELP,
    .where = KC_TEXT,
    .min_w = TUI_FLOOR_W,
    .min_h = TUI_FLOOR_H,
    .update = NULL,
    .draw = help_draw,
    .key = NULL,
};
