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
	int first = lines.n;
	lines_wrap(&lines, TH_NORMAL, 1, width, text);
	for (int k = first + 1; k < lines.n; k++)
		lines.indent[k] = hang;
}

static void build(struct tui *t, int width)
{
	const char *mode = session_status(t->s)->mode == IG_MODE_REPLAY ? "replay" : "live";
	lines_reset(&lines);
	lines_add(&lines, TH_TITLE, 0, " ingero-top %s  help (%s mode)", IG_VERSION, mode);
	lines_wrap(&lines, TH_NORMAL, 1, width,
		   "A live top for GPU workloads: CUDA API latency per op, where the feeding "
		   "threads' time goes (CUDA, preempted, blocked, busy between calls), and "
		   "alerts that name the host-side cause of a latency tail.");
	for (int i = 0; i < tui_nbindings; i++) {
		const struct tui_binding *b = &tui_bindings[i];
		char keys[64], text[320];
		if (b->section)
			lines_add(&lines, TH_SECTION, 0, "%s", b->section);
		tui_binding_keys(b, " ", keys, sizeof(keys));
		snprintf(text, sizeof(text), "%-22s %s%s", keys, b->help,
			 b->replay_only && strcmp(mode, "live") == 0 ? " [replay only]" : "");
		struct tui_lines *L = &lines;
		int first = L->n;
		lines_wrap(L, TH_NORMAL, 1, width, text);
		/* continuation lines line up under the description */
		for (int k = first + 1; k < L->n; k++)
			L->indent[k] = 24;
		if (first < L->n)
			L->slot[first] = TH_NORMAL;
	}
	lines_add(&lines, TH_SECTION, 0, "GPU API pane");
	static const char *const ops_help[] = {
	    "!         severity of the worst active alert on the op: H(igh) M(edium) L(ow) "
	    "I(nfo)",
	    "CALLS     calls since the start (or the last reset)",
	    "CALLS/S   calls per second over the rolling window",
	    "P50..MAX  latency percentiles over the window; P99 and P99/P50 turn yellow at "
	    "a 3x tail, red at 10x",
	    "WALL      share of the calling threads' wall time spent in this op",
	    "TAILPRE   share of the tail calls' time (calls at or above p95) spent preempted, "
	    "i.e. runnable but not running: CPU contention",
	    "P99 TREND p99 of each second of the window, oldest on the left (wide terminals)",
	};
	for (size_t i = 0; i < sizeof(ops_help) / sizeof(ops_help[0]); i++)
		wrap_hang(width, ops_help[i], 11);
	lines_add(&lines, TH_SECTION, 0, "Processes pane");
	static const char *const procs_help[] = {
	    "CONTAINER     from /proc/PID/cgroup when live (docker:ID, cri:ID, a service), "
	    "the cgroup id when replaying",
	    "OFF%          off-CPU share of the feeding threads' wall time",
	    "PRE% BLK%     of which preempted (runnable, waiting for a CPU) and blocked "
	    "(asleep: GPU, lock, I/O)",
	    "BETWEEN       off-CPU between CUDA calls: the GPU waits for the host",
	    "TOP PREEMPTOR the process that took the CPU from them most, with its share",
	};
	for (size_t i = 0; i < sizeof(procs_help) / sizeof(procs_help[0]); i++)
		wrap_hang(width, procs_help[i], 15);
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
