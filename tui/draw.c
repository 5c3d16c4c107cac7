/* Drawing helpers: theme slots to curses attributes, and text, bars,
 * meters and sections clipped to a rectangle. Every write on the screen goes
 * through draw_text(), which cleans the text (one column per character,
 * ASCII when asked) and never passes the edge of its rectangle. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "detect/detect.h"
#include "tui_int.h"

/* The nearest of the 8 basic colours to a 256-colour index. */
static short basic_color(short c)
{
	if (c < 8)
		return c;
	if (c < 16)
		return (short)(c - 8);
	if (c >= 232) /* grey ramp */
		return c >= 244 ? COLOR_WHITE : COLOR_BLACK;
	int v = c - 16, r = v / 36, g = (v / 6) % 6, b = v % 6;
	int th = 2; /* components of 2+ out of 5 count as on */
	return (short)((r >= th ? 1 : 0) | (g >= th ? 2 : 0) | (b >= th ? 4 : 0));
}

void draw_apply_theme(struct tui *t)
{
	const struct tui_theme *th = &t->theme;
	for (int i = 0; i < TH_COUNT; i++) {
		const struct tui_style *s = &th->s[i];
		attr_t a = A_NORMAL;
		if (s->attrs & TUI_A_BOLD)
			a |= A_BOLD;
		if (s->attrs & TUI_A_DIM)
			a |= A_DIM;
		if (s->attrs & TUI_A_REVERSE)
			a |= A_REVERSE;
		if (s->attrs & TUI_A_UNDERLINE)
			a |= A_UNDERLINE;
		if (s->attrs & TUI_A_ITALIC)
			a |= A_ITALIC;
		if (s->attrs & TUI_A_BLINK)
			a |= A_BLINK;
		if (t->colors && !th->mono && i + 1 < COLOR_PAIRS) {
			short fg = s->fg, bg = s->bg;
			/* bright colours on 8-colour terminals: the base colour in bold */
			if (COLORS < 16 && fg >= 8 && fg < 16)
				a |= A_BOLD;
			if (fg >= COLORS)
				fg = basic_color(fg);
			if (bg >= COLORS)
				bg = basic_color(bg);
			init_pair((short)(i + 1), fg, bg);
			a |= COLOR_PAIR(i + 1);
		}
		t->attr[i] = a;
	}
	/* the background of the whole screen is the normal slot */
	bkgdset(' ' | t->attr[TH_NORMAL]);
}

attr_t draw_attr(struct tui *t, int slot)
{
	return slot >= 0 && slot < TH_COUNT ? t->attr[slot] : t->attr[TH_NORMAL];
}

int draw_text(struct tui *t, const struct tui_rect *r, int y, int x, int maxcols, int slot,
	      const char *s)
{
	char buf[1024];
	if (y < 0 || y >= r->h || x < 0 || x >= r->w)
		return 0;
	int room = r->w - x;
	if (maxcols >= 0 && maxcols < room)
		room = maxcols;
	if (room <= 0)
		return 0;
	int cols = tui_text_clean(buf, sizeof(buf), s, -1, t->ascii);
	if (cols > room) {
		/* what does not fit: blanks are dropped as they are; text is cut
		 * at a word, with an ellipsis, and never inside a number */
		size_t b = tui_text_prefix(buf, room);
		if (!buf[b + strspn(buf + b, " ")]) {
			buf[b] = 0;
			cols = room;
		} else {
			char cut[1024];
			cols = tui_clip_words(cut, sizeof(cut), buf, room, t->ascii);
			memcpy(buf, cut, strlen(cut) + 1);
		}
	}
	if (!cols)
		return 0;
	attrset(draw_attr(t, slot));
	mvaddnstr(r->y + y, r->x + x, buf, (int)strlen(buf));
	return cols;
}

int draw_printf(struct tui *t, const struct tui_rect *r, int y, int x, int slot, const char *fmt,
		...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return draw_text(t, r, y, x, -1, slot, buf);
}

int draw_piecef(struct tui *t, const struct tui_rect *r, int y, int x, int slot, const char *fmt,
		...)
{
	char buf[1024], clean[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	int room = r->w - x;
	if (room <= 0)
		return 0;
	if (tui_text_clean(clean, sizeof(clean), buf, -1, t->ascii) <= room)
		return draw_text(t, r, y, x, -1, slot, clean);
	/* the piece does not fit: a mark, and the rest of the row is taken */
	draw_text(t, r, y, x, -1, TH_DIM, t->ascii ? " ..." : " \u2026");
	return room;
}

void draw_text_right(struct tui *t, const struct tui_rect *r, int y, int x, int w, int slot,
		     const char *s)
{
	char buf[512], cut[512];
	tui_text_clean(buf, sizeof(buf), s, -1, t->ascii);
	int cols = tui_clip_words(cut, sizeof(cut), buf, w, t->ascii);
	draw_text(t, r, y, x + w - cols, w, slot, cut);
}

void draw_fill(struct tui *t, const struct tui_rect *r, int y, int slot)
{
	if (y < 0 || y >= r->h)
		return;
	attrset(draw_attr(t, slot));
	mvhline(r->y + y, r->x, ' ', r->w);
}

/* "── title ────": the title cut at a word (never "windo") when the row is
 * short. */
void draw_section(struct tui *t, const struct tui_rect *r, int y, const char *title)
{
	const char *dash = t->ascii ? "-" : "\u2500";
	char line[1024];
	size_t o = 0;
	int x = 0;
	line[0] = 0;
	if (y < 0 || y >= r->h)
		return;
	draw_fill(t, r, y, TH_NORMAL);
	for (int i = 0; i < 2 && o + 4 < sizeof(line); i++)
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s", dash);
	x += draw_text(t, r, y, x, -1, TH_DIM, line);
	/* a title too long for the row is cut at a word, with an ellipsis */
	char clean[512], cut[512];
	tui_text_clean(clean, sizeof(clean), title, -1, t->ascii);
	tui_clip_words(cut, sizeof(cut), clean, r->w - x - 2, t->ascii);
	x += draw_printf(t, r, y, x, TH_SECTION, " %s ", cut);
	o = 0;
	line[0] = 0;
	for (int i = x; i < r->w && o + 4 < sizeof(line); i++)
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s", dash);
	draw_text(t, r, y, x, -1, TH_DIM, line);
}

struct tui_rect draw_section_top(struct tui *t, const struct tui_rect *r, const char *title)
{
	draw_section(t, r, 0, title);
	return (struct tui_rect){r->y + 1, r->x, r->h > 0 ? r->h - 1 : 0, r->w};
}

void draw_bar(struct tui *t, const struct tui_rect *r, int y, int x, int w, double frac, int slot)
{
	char buf[1024];
	if (w <= 0)
		return;
	if (w > 300)
		w = 300;
	tui_bar(buf, sizeof(buf), frac, w, t->ascii);
	draw_text(t, r, y, x, w, slot, buf);
}

void draw_meter(struct tui *t, const struct tui_rect *r, int y, int x, int w, const char *label,
		double pct, const char *value)
{
	/* "CPU[||||||     42.0%]" like htop: the value sits inside the bar */
	int lw = draw_text(t, r, y, x, w, TH_HEADER_LABEL, label);
	x += lw, w -= lw;
	if (w < 4)
		return;
	draw_text(t, r, y, x, 1, TH_HEADER, "[");
	draw_text(t, r, y, x + w - 1, 1, TH_HEADER, "]");
	int inner = w - 2;
	int slot = pct >= 90 ? TH_METER_CRIT : pct >= 70 ? TH_METER_WARN : TH_METER_OK;
	int bars = pct <= 0 ? 0 : (int)(pct / 100.0 * inner + 0.5);
	if (bars > inner)
		bars = inner;
	char buf[512];
	int vl = (int)strlen(value);
	for (int i = 0; i < inner && i < (int)sizeof(buf) - 1; i++)
		buf[i] = i < bars ? '|' : ' ';
	buf[inner < (int)sizeof(buf) - 1 ? inner : (int)sizeof(buf) - 1] = 0;
	draw_text(t, r, y, x + 1, inner, slot, buf);
	if (vl <= inner)
		draw_text(t, r, y, x + 1 + inner - vl, vl, TH_HEADER_VALUE, value);
}

void draw_box(struct tui *t, const struct tui_rect *r, int slot)
{
	const char *h = t->ascii ? "-" : "\u2500", *v = t->ascii ? "|" : "\u2502";
	const char *c[4] = {t->ascii ? "+" : "\u250c", t->ascii ? "+" : "\u2510",
			    t->ascii ? "+" : "\u2514", t->ascii ? "+" : "\u2518"};
	char line[1024];
	size_t o = 0;
	if (r->w < 2 || r->h < 2)
		return;
	for (int i = 0; i < r->w - 2 && o + 4 < sizeof(line); i++)
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s", h);
	line[o] = 0;
	draw_text(t, r, 0, 0, 1, slot, c[0]);
	draw_text(t, r, 0, 1, r->w - 2, slot, line);
	draw_text(t, r, 0, r->w - 1, 1, slot, c[1]);
	for (int y = 1; y < r->h - 1; y++) {
		draw_text(t, r, y, 0, 1, slot, v);
		draw_text(t, r, y, r->w - 1, 1, slot, v);
	}
	draw_text(t, r, r->h - 1, 0, 1, slot, c[2]);
	draw_text(t, r, r->h - 1, 1, r->w - 2, slot, line);
	draw_text(t, r, r->h - 1, r->w - 1, 1, slot, c[3]);
}

int sev_slot(int sev)
{
	switch (sev) {
	case IG_SEV_HIGH:
		return TH_ALERT_HIGH;
	case IG_SEV_MEDIUM:
		return TH_ALERT_MEDIUM;
	case IG_SEV_LOW:
		return TH_ALERT_LOW;
	case IG_SEV_INFO:
		return TH_ALERT_INFO;
	default:
		return TH_NORMAL;
	}
}

const char *sev_short(int sev)
{
	switch (sev) {
	case IG_SEV_HIGH:
		return "HIGH";
	case IG_SEV_MEDIUM:
		return "MED";
	case IG_SEV_LOW:
		return "LOW";
	case IG_SEV_INFO:
		return "INFO";
	default:
		return "";
	}
}

int p99_slot(double ratio)
{
	return ratio >= 10 ? TH_P99_CRIT : ratio >= 3 ? TH_P99_WARN : TH_P99_OK;
}

char *tui_fmt_proc(char *buf, size_t n, const char *comm, uint32_t pid)
{
	if (!pid)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.*s[%u]%s", IG_COMM_LEN, comm && *comm ? comm : "?", pid,
			 pid == (uint32_t)getpid() ? " (self)" : "");
	return buf;
}

char *tui_fmt_culprit(char *buf, size_t n, const char *comm, uint32_t pid, uint32_t owner)
{
	if (pid && pid == owner)
		snprintf(buf, n, "own threads");
	else
		tui_fmt_proc(buf, n, comm, pid);
	return buf;
}
