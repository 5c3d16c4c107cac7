/* Theme files: parsing, inheritance between slots, the search path and the
 * built-in copies of the standard themes (see theme.h). No curses. */
#include "theme.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "theme_builtin.h"

const char *const tui_theme_std[TUI_THEME_NSTD] = {"default", "light", "high-contrast",
						   "monochrome"};

/* clang-format off */
static const struct {
	const char *name;
	int parent; /* slot it inherits from when not set, -1 for TH_NORMAL */
} slots[TH_COUNT] = {
	[TH_NORMAL] = { "normal", -1 },
	[TH_DIM] = { "dim", TH_NORMAL },
	[TH_HEADER] = { "header", TH_NORMAL },
	[TH_HEADER_LABEL] = { "header_label", TH_HEADER },
	[TH_HEADER_VALUE] = { "header_value", TH_HEADER },
	[TH_MODE_LIVE] = { "mode_live", TH_HEADER_VALUE },
	[TH_MODE_REPLAY] = { "mode_replay", TH_MODE_LIVE },
	[TH_PAUSED] = { "paused", TH_MODE_LIVE },
	[TH_RECORDING] = { "recording", TH_HEADER_VALUE },
	[TH_METER_OK] = { "meter_ok", TH_NORMAL },
	[TH_METER_WARN] = { "meter_warn", TH_METER_OK },
	[TH_METER_CRIT] = { "meter_crit", TH_METER_WARN },
	[TH_DROPS_OK] = { "drops_ok", TH_HEADER_VALUE },
	[TH_DROPS_BAD] = { "drops_bad", TH_ERROR },
	[TH_COL_TITLE] = { "col_title", TH_NORMAL },
	[TH_COL_TITLE_FOCUS] = { "col_title_focus", TH_COL_TITLE },
	[TH_COL_SORTED] = { "col_sorted", TH_COL_TITLE_FOCUS },
	[TH_CURSOR] = { "cursor", TH_NORMAL },
	[TH_CURSOR_DIM] = { "cursor_dim", TH_CURSOR },
	[TH_GROUP] = { "group", TH_NORMAL },
	[TH_P99_OK] = { "p99_ok", TH_NORMAL },
	[TH_P99_WARN] = { "p99_warn", TH_P99_OK },
	[TH_P99_CRIT] = { "p99_crit", TH_P99_WARN },
	[TH_SPARK] = { "spark", TH_NORMAL },
	[TH_ALERT_INFO] = { "alert_info", TH_NORMAL },
	[TH_ALERT_LOW] = { "alert_low", TH_ALERT_INFO },
	[TH_ALERT_MEDIUM] = { "alert_medium", TH_ALERT_LOW },
	[TH_ALERT_HIGH] = { "alert_high", TH_ALERT_MEDIUM },
	[TH_PREEMPTED] = { "preempted", TH_NORMAL },
	[TH_BLOCKED] = { "blocked", TH_NORMAL },
	[TH_BAR] = { "bar", TH_NORMAL },
	[TH_BAR_TAIL] = { "bar_tail", TH_BAR },
	[TH_TITLE] = { "title", TH_COL_TITLE_FOCUS },
	[TH_SECTION] = { "section", TH_NORMAL },
	[TH_HINT_KEY] = { "hint_key", TH_NORMAL },
	[TH_HINT_LABEL] = { "hint_label", TH_COL_TITLE },
	[TH_MESSAGE] = { "message", TH_NORMAL },
	[TH_ERROR] = { "error", TH_NORMAL },
	[TH_PROMPT] = { "prompt", TH_CURSOR },
	[TH_ENDED] = { "ended", TH_PAUSED },
	[TH_PART_GPU] = { "part_gpu", TH_BAR },
	[TH_PART_API] = { "part_api", TH_NORMAL },
	[TH_PART_HOST] = { "part_host", TH_NORMAL },
	[TH_PART_IO] = { "part_io", TH_BLOCKED },
	[TH_PART_WAIT] = { "part_wait", TH_BLOCKED },
	[TH_PART_SLEEP] = { "part_sleep", TH_DIM },
	[TH_PART_FAULT] = { "part_fault", TH_BLOCKED },
	[TH_PART_UNKNOWN] = { "part_unknown", TH_DIM },
};
/* clang-format on */

const char *tui_slot_name(int slot)
{
	return slot >= 0 && slot < TH_COUNT ? slots[slot].name : NULL;
}

int tui_slot_by_name(const char *name)
{
	if (strncasecmp(name, "TH_", 3) == 0)
		name += 3;
	for (int i = 0; i < TH_COUNT; i++)
		if (strcasecmp(name, slots[i].name) == 0)
			return i;
	return -1;
}

static int parse_color(const char *w, short *out)
{
	static const char *const names[8] = {"black", "red",	 "green", "yellow",
					     "blue",  "magenta", "cyan",  "white"};
	if (strcasecmp(w, "default") == 0 || strcmp(w, "-1") == 0) {
		*out = TUI_COLOR_DEFAULT;
		return 0;
	}
	int bright = 0;
	if (strncasecmp(w, "bright-", 7) == 0)
		bright = 8, w += 7;
	for (int i = 0; i < 8; i++)
		if (strcasecmp(w, names[i]) == 0) {
			*out = (short)(i + bright);
			return 0;
		}
	if (bright)
		return -1;
	char *end;
	long v = strtol(w, &end, 10);
	if (*w && !*end && v >= 0 && v <= 255) {
		*out = (short)v;
		return 0;
	}
	return -1;
}

static int parse_attr(const char *w, unsigned *a)
{
	static const struct {
		const char *name;
		unsigned bit;
	} attrs[] = {
	    {"bold", TUI_A_BOLD},
	    {"dim", TUI_A_DIM},
	    {"reverse", TUI_A_REVERSE},
	    {"underline", TUI_A_UNDERLINE},
	    {"italic", TUI_A_ITALIC},
	    {"blink", TUI_A_BLINK},
	    {"none", 0},
	    {"normal", 0},
	};
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (strcasecmp(w, attrs[i].name) == 0) {
			*a |= attrs[i].bit;
			return 0;
		}
	return -1;
}

int tui_theme_parse(struct tui_theme *t, const char *text, char *err, size_t errlen)
{
	int set[TH_COUNT] = {0};
	int lineno = 0;
	const char *p = text;

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "unnamed");
	t->s[TH_NORMAL] = (struct tui_style){TUI_COLOR_DEFAULT, TUI_COLOR_DEFAULT, 0};
	set[TH_NORMAL] = 1;
	while (*p) {
		char line[256];
		size_t len = strcspn(p, "\n");
		lineno++;
		if (len >= sizeof(line)) {
			snprintf(err, errlen, "line %d: too long", lineno);
			return -EINVAL;
		}
		memcpy(line, p, len);
		line[len] = 0;
		p += len + (p[len] == '\n');
		line[strcspn(line, "#")] = 0;

		char *eq = strchr(line, '=');
		char *words[8];
		int nw = 0;
		if (!eq) {
			if (strtok(line, " \t\r"))
				goto bad_line;
			continue;
		}
		*eq = 0;
		char *key = strtok(line, " \t\r");
		if (!key || strtok(NULL, " \t\r"))
			goto bad_line;
		for (char *w = strtok(eq + 1, " \t\r,"); w; w = strtok(NULL, " \t\r,")) {
			if (nw == 8) {
				snprintf(err, errlen, "line %d: too many words", lineno);
				return -EINVAL;
			}
			words[nw++] = w;
		}
		if (strcasecmp(key, "name") == 0) {
			if (nw != 1)
				goto bad_line;
			snprintf(t->name, sizeof(t->name), "%s", words[0]);
			continue;
		}
		int slot = tui_slot_by_name(key);
		if (slot < 0) {
			snprintf(err, errlen, "line %d: unknown slot '%s'", lineno, key);
			return -EINVAL;
		}
		if (nw < 2) {
			snprintf(err, errlen, "line %d: '%s' needs a foreground and a background",
				 lineno, key);
			return -EINVAL;
		}
		struct tui_style st = {0, 0, 0};
		if (parse_color(words[0], &st.fg) || parse_color(words[1], &st.bg)) {
			snprintf(err, errlen, "line %d: bad colour in '%s'", lineno, key);
			return -EINVAL;
		}
		for (int i = 2; i < nw; i++)
			if (parse_attr(words[i], &st.attrs)) {
				snprintf(err, errlen, "line %d: unknown attribute '%s'", lineno,
					 words[i]);
				return -EINVAL;
			}
		t->s[slot] = st;
		set[slot] = 1;
		continue;
	bad_line:
		snprintf(err, errlen, "line %d: expected 'slot = fg bg [attrs]'", lineno);
		return -EINVAL;
	}
	/* inherit: parents may come later in the enum, so resolve to a fixpoint */
	for (int round = 0; round < TH_COUNT; round++) {
		int changed = 0;
		for (int i = 0; i < TH_COUNT; i++) {
			int par = slots[i].parent;
			if (set[i] || par < 0 || !set[par])
				continue;
			t->s[i] = t->s[par];
			set[i] = 1, changed = 1;
		}
		if (!changed)
			break;
	}
	t->mono = 1;
	for (int i = 0; i < TH_COUNT; i++)
		if (t->s[i].fg != TUI_COLOR_DEFAULT || t->s[i].bg != TUI_COLOR_DEFAULT)
			t->mono = 0;
	return 0;
}

const char *tui_theme_builtin(const char *name)
{
	for (size_t i = 0; i < sizeof(theme_builtin) / sizeof(theme_builtin[0]); i++)
		if (strcmp(theme_builtin[i].name, name) == 0)
			return theme_builtin[i].text;
	return NULL;
}

static char *read_small_file(const char *path, int *err)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		*err = -errno;
		return NULL;
	}
	char *buf = malloc(65536);
	if (!buf) {
		fclose(f);
		*err = -ENOMEM;
		return NULL;
	}
	size_t n = fread(buf, 1, 65535, f);
	int too_big = !feof(f);
	fclose(f);
	if (too_big) {
		free(buf);
		*err = -EFBIG;
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

static int load_file(struct tui_theme *t, const char *path, char *err, size_t errlen)
{
	int e = 0;
	char *text = read_small_file(path, &e);
	if (!text) {
		snprintf(err, errlen, "cannot read theme %s: %s", path, strerror(-e));
		return e;
	}
	char why[160];
	int r = tui_theme_parse(t, text, why, sizeof(why));
	free(text);
	if (r) {
		snprintf(err, errlen, "theme %s: %s", path, why);
		return r;
	}
	snprintf(t->path, sizeof(t->path), "%s", path);
	return 0;
}

int tui_theme_load(struct tui_theme *t, const char *name, char *err, size_t errlen)
{
	char path[PATH_MAX + 64];

	if (!name || !*name)
		name = "default";
	if (strchr(name, '/') || strstr(name, ".theme"))
		return load_file(t, name, err, errlen);
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_')) {
			snprintf(err, errlen, "bad theme name '%s'", name);
			return -EINVAL;
		}

	char exe_dir[PATH_MAX] = "";
	ssize_t n = readlink("/proc/self/exe", exe_dir, sizeof(exe_dir) - 1);
	if (n > 0) {
		exe_dir[n] = 0;
		char *slash = strrchr(exe_dir, '/');
		if (slash)
			*slash = 0;
	}
	const char *env = getenv("INGERO_THEME_DIR");
	const char *dirs[8];
	char d1[PATH_MAX + 32], d2[PATH_MAX + 32];
	int nd = 0;
	if (env && *env)
		dirs[nd++] = env;
	if (exe_dir[0]) {
		snprintf(d1, sizeof(d1), "%s/../themes", exe_dir);
		snprintf(d2, sizeof(d2), "%s/../share/ingero-top/themes", exe_dir);
		dirs[nd++] = d1, dirs[nd++] = d2;
	}
	dirs[nd++] = "/usr/local/share/ingero-top/themes";
	dirs[nd++] = "/usr/share/ingero-top/themes";
	dirs[nd++] = "themes";
	for (int i = 0; i < nd; i++) {
		snprintf(path, sizeof(path), "%s/%s.theme", dirs[i], name);
		if (access(path, R_OK) == 0)
			return load_file(t, path, err, errlen);
	}
	const char *text = tui_theme_builtin(name);
	if (!text) {
		snprintf(err, errlen,
			 "unknown theme '%s': use default, light, high-contrast, monochrome, a "
			 "NAME.theme in $INGERO_THEME_DIR or themes/, or a path to a .theme file",
			 name);
		return -ENOENT;
	}
	int r = tui_theme_parse(t, text, err, errlen);
	t->path[0] = 0;
	return r;
}
