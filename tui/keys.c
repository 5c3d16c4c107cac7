/* The key table (see keys.h). Order matters: the help screen, the hint bar
 * and docs/keys.md list bindings in this order. */
#include "keys.h"

#include <curses.h>
#include <errno.h>
#include <string.h>

#ifndef CTRL
#define CTRL(c) ((c)&0x1f)
#endif

/* clang-format off */
const struct tui_binding tui_bindings[] = {
	/* general */
	{ ACT_HELP, { 'h', '?', KEY_F(1) }, KC_ALL | KC_FLEET, 0, "General", "Help",
	  "Show this help: the keys, what every column means (any list key scrolls it; Esc "
	  "closes it)" },
	{ ACT_QUIT, { 'q', KEY_F(10) }, KC_ALL | KC_FLEET, 0, NULL, "Quit",
	  "Quit and restore the terminal" },
	{ ACT_PAUSE, { 'p', ' ' }, KC_ALL, 0, NULL, "Pause",
	  "Pause or resume: every screen, drill-downs included, shows one frozen moment (live: "
	  "collection continues; replay: playback stops)" },
	{ ACT_LIFETIME, { 'z' }, KC_ALL, 0, NULL, "Session",
	  "Figures over the rolling window, or over the whole session since the start, on "
	  "every screen (as perf top's z)" },
	{ ACT_MARK, { 'm' }, KC_ALL, 0, NULL, "Mark",
	  "Mark this moment (m again clears the mark): then, live or after a step, a jump or a "
	  "seek, the op table shows CALLS/S and P99 as mark\u2192now, and where the time goes "
	  "each part as mark\u2192now" },
	{ ACT_NEXT_ALERT, { 'n' }, KC_ALL, 0, NULL, "Alert",
	  "Open the top alert, from anywhere; on an alert screen, the next alert" },
	{ ACT_PREV_ALERT, { 'N' }, KC_ALL, 0, NULL, NULL,
	  "On an alert screen, the previous alert (elsewhere: the top alert)" },
	{ ACT_SETUP, { KEY_F(2) }, KC_ALL, 0, NULL, "Setup",
	  "Setup: theme, refresh interval, window or session, tree, the columns of each pane" },
	{ ACT_RESET, { 'r' }, KC_ALL, 0, NULL, "Reset",
	  "Reset the statistics and the alerts, after asking (y); names of known processes are "
	  "kept, the recording keeps everything" },
	{ ACT_THEME, { 't', 'c' }, KC_ALL | KC_FLEET, 0, NULL, NULL,
	  "Next theme: default, light, high-contrast, monochrome (colour themes are "
	  "disabled by NO_COLOR and --no-color; in a replay t steps, c still changes the "
	  "theme)" },
	{ ACT_FLIGHT, { 'w' }, KC_ALL, 0, NULL, "Save",
	  "Save the flight recorder (the last minutes of events) in your state directory "
	  "(--flight-dir, $XDG_STATE_HOME/ingero-top, ~/.local/state/ingero-top or "
	  "/var/tmp); the header and the log say where" },
	{ ACT_LOG, { 'l' }, KC_ALL, 0, NULL, "Log",
	  "Show the message log (ingero-top and libbpf messages and every notice; they never "
	  "go over the screen)" },
	{ ACT_REDRAW, { CTRL('L') }, KC_ALL | KC_FLEET, 0, NULL, NULL, "Redraw the whole screen" },
	/* moving around */
	{ ACT_FOCUS_NEXT, { '\t' }, KC_MAIN | KC_DRILL, 0, "Moving around", "Pane",
	  "Focus the next pane (main screen) or list (details screens)" },
	{ ACT_FOCUS_PREV, { KEY_BTAB }, KC_MAIN | KC_DRILL, 0, NULL, NULL,
	  "Focus the previous pane or list" },
	{ ACT_UP, { KEY_UP, 'k' }, KC_ALL | KC_FLEET, 0, NULL, NULL, "Move the selection up one row" },
	{ ACT_DOWN, { KEY_DOWN, 'j' }, KC_ALL | KC_FLEET, 0, NULL, NULL, "Move the selection down one row" },
	{ ACT_PGUP, { KEY_PPAGE, CTRL('B') }, KC_ALL | KC_FLEET, 0, NULL, NULL, "Up one page" },
	{ ACT_PGDN, { KEY_NPAGE, CTRL('F') }, KC_ALL | KC_FLEET, 0, NULL, NULL, "Down one page" },
	{ ACT_HOME, { KEY_HOME, 'g' }, KC_ALL | KC_FLEET, 0, NULL, NULL, "First row of the list" },
	{ ACT_END, { KEY_END, 'G' }, KC_ALL | KC_FLEET, 0, NULL, NULL, "Last row of the list" },
	{ ACT_ENTER, { '\n', '\r', KEY_ENTER }, KC_MAIN | KC_DRILL | KC_FLEET, 0, NULL, "Details",
	  "Open the selected op, process, thread, alert or stack (on a slow call: its stack; "
	  "on the folded helpers: unfold them)" },
	{ ACT_OFFCPU, { 'o' }, KC_DRILL, 0, NULL, NULL,
	  "On a slow call of the op screen: its thread's off-CPU intervals during that call" },
	{ ACT_BACK, { 27, KEY_BACKSPACE, 127, '\b' }, KC_ALL | KC_FLEET, 0, NULL, "Back",
	  "Back to the previous screen, where the selection was left; on the main screen, "
	  "clear the filter" },
	/* tables */
	{ ACT_SORT_PREV, { '<', ',' }, KC_MAIN | KC_DRILL, 0, "Tables", NULL,
	  "Sort the focused table by the column to the left (and say what it means)" },
	{ ACT_SORT_NEXT, { '>', '.' }, KC_MAIN | KC_DRILL, 0, NULL, NULL,
	  "Sort the focused table by the column to the right (and say what it means)" },
	{ ACT_SORT_MENU, { KEY_F(6) }, KC_MAIN | KC_DRILL, 0, NULL, "Sort",
	  "Choose the sort column of the focused table from a menu that explains each" },
	{ ACT_SORT_INVERT, { 'I' }, KC_MAIN | KC_DRILL, 0, NULL, NULL,
	  "Invert the sort order of the focused table" },
	{ ACT_SORT_MEM, { 'M' }, KC_MAIN | KC_DRILL, 0, NULL, NULL,
	  "Sort by memory, as in htop: PGALLOC (bytes of pages allocated, not RSS), BYTES/S" },
	{ ACT_SORT_CPU, { 'P' }, KC_MAIN | KC_DRILL, 0, NULL, NULL,
	  "Sort by processor (CPU%), or by P99 in op tables, as in htop" },
	{ ACT_SORT_TIME, { 'T' }, KC_MAIN | KC_DRILL, 0, NULL, NULL,
	  "Sort by time (WALL, GPU%, DURATION), as in htop" },
	{ ACT_EXPLAIN, { 'e' }, KC_MAIN | KC_DRILL, 0, NULL, NULL,
	  "Explain the sorted column of the focused table in one line" },
	{ ACT_FILTER, { '/', KEY_F(4) }, KC_MAIN | KC_DRILL | KC_FLEET, 0, NULL, "Filter",
	  "Filter the focused table by text (Enter keeps the filter, Esc clears it)" },
	{ ACT_SEARCH, { KEY_F(3) }, KC_MAIN | KC_DRILL, 0, NULL, "Search",
	  "Search the focused table: the selection jumps to the next row that contains the "
	  "text as you type; F3 again, the next one" },
	/* processes */
	{ ACT_TREE, { KEY_F(5) }, KC_MAIN, 0, "Processes", NULL,
	  "Processes as a tree (children under their parent) or a flat list" },
	{ ACT_KILL, { KEY_F(9) }, KC_MAIN | KC_DRILL, 0, NULL, NULL,
	  "Send a signal to the selected process (on an alert: its culprit), after choosing it "
	  "and saying y (live; refused when the pid is no longer that process)" },
	{ ACT_NICE_DOWN, { KEY_F(7) }, KC_MAIN | KC_DRILL, 0, NULL, NULL,
	  "Renice the selected process (on an alert: its culprit) by -1 (higher priority), "
	  "after asking (live)" },
	{ ACT_NICE_UP, { KEY_F(8) }, KC_MAIN | KC_DRILL, 0, NULL, NULL,
	  "Renice the selected process (on an alert: its culprit) by +1 (lower priority), "
	  "after asking (live)" },
	/* replay */
	{ ACT_STEP_BACK, { 't' }, KC_MAIN | KC_DRILL, 1, "Replay", "Step-",
	  "Step one window back (the op table's window, 10 s unless --window says), and "
	  "pause there: the screen shows the previous window's numbers" },
	{ ACT_STEP_FWD, { 'T' }, KC_MAIN | KC_DRILL, 1, NULL, "Step+",
	  "Step one window forward, and pause there" },
	{ ACT_JUMP, { 'j' }, KC_MAIN | KC_DRILL, 1, NULL, "Jump",
	  "Jump to a time, and pause there: 14:02 or 14:02:05 (the clock of the header), +30s "
	  "from the start, -5m before the end, ISO 8601 or Unix ns" },
	{ ACT_REPLAY_START, { KEY_HOME }, KC_MAIN | KC_DRILL, 1, NULL, "Start",
	  "Go to the start of the replay (of its --since/--until range), paused" },
	{ ACT_REPLAY_END, { KEY_END }, KC_MAIN | KC_DRILL, 1, NULL, "End",
	  "Go to the end of the replay (of its range), paused" },
	{ ACT_SPEED_UP, { '+', '=' }, KC_ALL, 1, NULL, "Faster", "Replay twice as fast" },
	{ ACT_SPEED_DOWN, { '-', '_' }, KC_ALL, 1, NULL, "Slower", "Replay half as fast" },
	{ ACT_SEEK_FWD, { ']' }, KC_ALL, 1, NULL, "Seek", "Seek 10 s forward" },
	{ ACT_SEEK_BACK, { '[' }, KC_ALL, 1, NULL, NULL, "Seek 10 s back" },
	{ ACT_SEEK_ALERT_NEXT, { '}' }, KC_ALL, 1, NULL, NULL,
	  "Seek to where the next alert was first detected" },
	{ ACT_SEEK_ALERT_PREV, { '{' }, KC_ALL, 1, NULL, NULL,
	  "Seek to where the previous alert was first detected" },
	/* the fleet screen (--ssh) */
	{ ACT_FLEET_SORT, { 's' }, KC_FLEET, 0, "Fleet screen (--ssh)", "Sort",
	  "Sort the hosts: worst first (the straggler, then by chain impact, then hosts not "
	  "live), by name, by p99; a click on a column title sorts by that column" },
};
/* clang-format on */
const int tui_nbindings = (int)(sizeof(tui_bindings) / sizeof(tui_bindings[0]));

const struct tui_binding *tui_key_lookup(int key, unsigned where)
{
	if (key == 0)
		return NULL;
	/* first the bindings that win here (a replay's own in a replay, the
	 * others elsewhere), then the rest ("replay only" in live mode) */
	int replay = (where & KC_REPLAY) != 0;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < tui_nbindings; i++) {
			const struct tui_binding *b = &tui_bindings[i];
			if (!(b->where & where) || ((b->replay_only != 0) == replay) != (pass == 0))
				continue;
			for (int k = 0; k < KEYS_PER_ACTION && b->keys[k]; k++)
				if (b->keys[k] == key)
					return b;
		}
	return NULL;
}

const struct tui_binding *tui_action_binding(int action)
{
	for (int i = 0; i < tui_nbindings; i++)
		if (tui_bindings[i].action == action)
			return &tui_bindings[i];
	return NULL;
}

char *tui_key_name(int key, char *buf, size_t n)
{
	/* clang-format off */
	static const struct {
		int key;
		const char *name;
	} names[] = {
		{ ' ', "Space" },         { '\t', "Tab" },          { '\n', "Enter" },
		{ '\r', "Return" },       { KEY_ENTER, "KeypadEnter" }, { 27, "Esc" },
		{ KEY_BACKSPACE, "Backspace" }, { 127, "Del" },     { '\b', "Ctrl-H" },
		{ KEY_UP, "Up" },         { KEY_DOWN, "Down" },     { KEY_LEFT, "Left" },
		{ KEY_RIGHT, "Right" },   { KEY_PPAGE, "PgUp" },    { KEY_NPAGE, "PgDn" },
		{ KEY_HOME, "Home" },     { KEY_END, "End" },       { KEY_BTAB, "Shift-Tab" },
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].key == key) {
			snprintf(buf, n, "%s", names[i].name);
			return buf;
		}
	if (key >= KEY_F(1) && key <= KEY_F(24))
		snprintf(buf, n, "F%d", key - KEY_F0);
	else if (key > 0 && key < 0x20)
		snprintf(buf, n, "Ctrl-%c", key + '@');
	else if (key > 0x20 && key < 0x7f)
		snprintf(buf, n, "%c", key);
	else
		snprintf(buf, n, "key %d", key);
	return buf;
}

char *tui_binding_keys(const struct tui_binding *b, const char *sep, char *buf, size_t n)
{
	size_t o = 0;
	buf[0] = 0;
	for (int k = 0; k < KEYS_PER_ACTION && b->keys[k]; k++) {
		char name[24];
		/* Return and keypad Enter, DEL and Ctrl-H are the same keys to a user */
		if (k > 0 && (b->keys[k] == '\r' || b->keys[k] == KEY_ENTER || b->keys[k] == '\b' ||
			      b->keys[k] == 127))
			continue;
		tui_key_name(b->keys[k], name, sizeof(name));
		int w = snprintf(buf + o, n - o, "%s%s", o ? sep : "", name);
		if (w < 0 || (size_t)w >= n - o)
			break;
		o += (size_t)w;
	}
	return buf;
}

static const char *where_base(const struct tui_binding *b)
{
	if (b->replay_only)
		return "replay";
	switch (b->where & ~(unsigned)KC_FLEET) {
	case 0:
		return "fleet screen";
	case KC_ALL:
		return "everywhere";
	case KC_MAIN | KC_DRILL:
		return "main and details screens";
	case KC_MAIN:
		return "main screen";
	case KC_DRILL:
		return "details screens";
	default:
		return "some screens";
	}
}

/* Where a binding applies, the fleet screen (--ssh) said apart. */
static const char *where_text(const struct tui_binding *b, char *buf, size_t n)
{
	const char *base = where_base(b);
	if (!(b->where & KC_FLEET) || !(b->where & ~(unsigned)KC_FLEET))
		return base;
	snprintf(buf, n, "%s; fleet screen", base);
	return buf;
}

int tui_keys_markdown(FILE *f)
{
	fprintf(f, "# ingero-top keys\n\n"
		   "Generated from the key table in tui/keys.c by\n"
		   "`build/tests/unit/test_tui_keys --write`; the unit test fails when this file\n"
		   "is stale. The help screen (`h`, `?` or F1) and the hint bar on the last\n"
		   "line come from the same table.\n");
	for (int i = 0; i < tui_nbindings; i++) {
		const struct tui_binding *b = &tui_bindings[i];
		char keys[96], where[64];
		if (b->section)
			fprintf(f, "\n## %s\n\n| Keys | Where | What it does |\n|---|---|---|\n",
				b->section);
		tui_binding_keys(b, "`, `", keys, sizeof(keys));
		fprintf(f, "| `%s` | %s | %s |\n", keys, where_text(b, where, sizeof(where)),
			b->help);
	}
	fprintf(f, "\nIn live mode the replay-only keys say \"replay only\" and do nothing.\n"
		   "In a replay, on the main and details screens, they win over the other\n"
		   "meaning of their key: `t`, `T`, `j`, Home and End walk the replay (the\n"
		   "theme is `c` there, sorting by time `<`/`>` or F6, Down and `g`/`G` move\n"
		   "the selection).\n\n"
		   "While the filter or search prompt is open, printable keys edit the text,\n"
		   "Backspace deletes, Enter keeps it and Esc clears it (F3 in the search\n"
		   "prompt: the next match). In the jump prompt (`j` in a replay), Enter\n"
		   "jumps or says why the time cannot be read, Esc cancels. In the sort and\n"
		   "signal menus, Up, Down and Enter choose and Esc cancels. A question\n"
		   "(reset, signal, renice) waits for y; any other key cancels.\n\n"
		   "The mouse: a click on a row selects it (a double click opens it), a click\n"
		   "on a column title sorts by that column (again: the other way), a click on\n"
		   "a key of the hint bar presses it, the wheel scrolls.\n");
	return ferror(f) ? -EIO : 0;
}
