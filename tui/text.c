/* Pure text helpers of the viewer (see text.h): screen-safe strings, number
 * columns, column fitting, sparklines, bars, container names. */
#include "text.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

/* Decodes one UTF-8 sequence at s; returns its length and the code point in
 * *cp, or 0 when the bytes are not valid UTF-8. */
static int utf8_dec(const unsigned char *s, uint32_t *cp)
{
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	int len;
	uint32_t c, min;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2, c = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, c = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, c = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* ASCII spelling of the symbols our own texts and the detector use. */
/* clang-format off */
static const char *ascii_of(uint32_t cp)
{
	switch (cp) {
	case 0x2192: return "->";
	case 0x2190: return "<-";
	case 0x2191: return "^";
	case 0x2193: return "v";
	case 0x00d7: return "x";
	case 0x00b5: case 0x03bc: return "u";
	case 0x2026: return "...";
	case 0x2265: return ">=";
	case 0x2264: return "<=";
	case 0x2248: return "~";
	case 0x2013: case 0x2014: case 0x2212: return "-";
	case 0x00b7: return ".";
	case 0x2022: case 0x25cf: return "*";
	case 0x2018: case 0x2019: return "'";
	case 0x201c: case 0x201d: return "\"";
	case 0x00a0: return " ";
	case 0x2500: case 0x2501: case 0x2550: return "-";
	case 0x2502: case 0x2503: case 0x2551: return "|";
	}
	if (cp >= 0x2500 && cp <= 0x257f)
		return "+";
	if (cp >= 0x2580 && cp <= 0x259f)
		return "#";
	return "?";
}
/* clang-format on */

int tui_text_clean(char *dst, size_t cap, const char *src, int max_cols, int ascii)
{
	const unsigned char *s = (const unsigned char *)(src ? src : "");
	size_t o = 0;
	int cols = 0;

	if (!cap)
		return 0;
	while (*s && (max_cols < 0 || cols < max_cols)) {
		uint32_t cp;
		int len = utf8_dec(s, &cp);
		const char *rep = NULL;
		char one[2] = {0, 0};

		if (len == 0) {
			rep = "?", len = 1;
		} else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) {
			rep = (cp == '\t' || cp == '\n' || cp == '\r') ? " " : "?";
		} else if (cp < 0x80) {
			one[0] = (char)cp, rep = one;
		} else if (ascii) {
			rep = ascii_of(cp);
		} else if (wcwidth((wchar_t)cp) != 1) {
			rep = "?";
		}
		if (rep) {
			size_t rl = strlen(rep);
			if (max_cols >= 0 && cols + (int)rl > max_cols)
				break;
			if (o + rl >= cap)
				break;
			memcpy(dst + o, rep, rl);
			o += rl, cols += (int)rl;
		} else {
			if (o + (size_t)len >= cap)
				break;
			memcpy(dst + o, s, (size_t)len);
			o += (size_t)len, cols++;
		}
		s += len;
	}
	dst[o] = 0;
	return cols;
}

int tui_text_cols(const char *s)
{
	int n = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

size_t tui_text_prefix(const char *s, int cols)
{
	size_t i = 0;
	int c = 0;
	while (s[i]) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (c == cols)
				break;
			c++;
		}
		i++;
	}
	return i;
}

int tui_text_wrap(const char *s, int width, void (*line)(void *ctx, const char *p, size_t n),
		  void *ctx)
{
	int lines = 0;
	if (width < 1)
		width = 1;
	while (*s) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		/* the longest prefix of at most width columns that ends at a word end */
		size_t cut = tui_text_prefix(s, width);
		size_t end = cut;
		if (s[cut] && s[cut] != ' ') {
			size_t b = cut;
			while (b > 0 && s[b - 1] != ' ')
				b--;
			if (b > 0)
				end = b;
		}
		size_t n = end;
		while (n > 0 && s[n - 1] == ' ')
			n--;
		line(ctx, s, n);
		lines++;
		s += end;
	}
	return lines;
}

int tui_cols_fit2(const struct tui_col *c, int n, int width, const short *nat, unsigned hidden,
		  short *x, short *w)
{
	int used = 0, any = 0;

	for (int i = 0; i < n; i++)
		x[i] = -1, w[i] = 0;
	/* take columns by priority, lowest first; ties in table order */
	for (int p = 0; p <= 100; p++) {
		for (int i = 0; i < n; i++) {
			if (c[i].prio != p || (i < 32 && (hidden >> i) & 1))
				continue;
			int cw = nat && nat[i] >= 0 ? nat[i] : c[i].width;
			int need = cw + (any ? 1 : 0);
			if (used + need > width)
				continue;
			used += need, any = 1;
			x[i] = 0, w[i] = (short)cw;
		}
	}
	/* spare space to growable columns, in table order */
	for (int i = 0; i < n && used < width; i++) {
		if (x[i] < 0 || c[i].grow <= 0 || c[i].fit)
			continue;
		int g = c[i].grow;
		if (g > width - used)
			g = width - used;
		w[i] += (short)g, used += g;
	}
	int pos = 0;
	for (int i = 0; i < n; i++) {
		if (x[i] < 0)
			continue;
		x[i] = (short)pos;
		pos += w[i] + 1;
	}
	return used;
}

int tui_cols_fit(const struct tui_col *c, int n, int width, short *x, short *w)
{
	return tui_cols_fit2(c, n, width, NULL, 0, x, w);
}

int tui_clip_words(char *dst, size_t cap, const char *src, int cols, int ascii)
{
	const char *ell = ascii ? "..." : "\u2026";
	int ell_w = ascii ? 3 : 1;
	if (!cap)
		return 0;
	dst[0] = 0;
	if (cols <= 0)
		return 0;
	int total = tui_text_cols(src);
	if (total <= cols) {
		snprintf(dst, cap, "%s", src);
		return total;
	}
	if (cols <= ell_w) { /* room for the mark alone: never a cut prefix */
		if (cols == ell_w)
			snprintf(dst, cap, "%s", ell);
		return cols == ell_w ? ell_w : 0;
	}
	/* the longest prefix of words that leaves room for the ellipsis */
	size_t cut = tui_text_prefix(src, cols - ell_w);
	size_t end = cut;
	if (src[cut] != ' ') {
		while (end > 0 && src[end - 1] != ' ')
			end--;
		if (end == 0) {
			/* one long word: cut it, but never inside a number or a
			 * [pid]: "ig-hog[28662]" becomes "ig-hog…", "4.36ms" "…" */
			end = cut;
			while (end > 0 && strchr("0123456789.[(", src[end - 1]))
				end--;
		}
	}
	while (end > 0 && (src[end - 1] == ' ' || src[end - 1] == ','))
		end--;
	/* a text that already ends in a mark keeps one */
	size_t el = strlen(ell);
	if (end >= el && !memcmp(src + end - el, ell, el))
		end -= el;
	while (end > 0 && (src[end - 1] == ' ' || src[end - 1] == ','))
		end--;
	snprintf(dst, cap, "%.*s%s", (int)end, src, ell);
	return tui_text_cols(dst);
}

int tui_parts_cols(const uint64_t *ns, int n, uint64_t total, int cols, signed char *owner)
{
	int given[32] = {0}, sum = 0;
	double rem[32] = {0};
	if (n > 32)
		n = 32;
	for (int c = 0; c < cols; c++)
		owner[c] = -1;
	if (!total || cols <= 0)
		return 0;
	uint64_t all = 0;
	for (int i = 0; i < n; i++)
		all += ns[i];
	if (all > total)
		total = all; /* never more columns than the bar has */
	for (int i = 0; i < n; i++) {
		double exact = (double)ns[i] / (double)total * cols;
		given[i] = (int)exact;
		rem[i] = exact - given[i];
		sum += given[i];
	}
	/* the columns the parts fill together, rounded; then the largest
	 * remainders get the columns left */
	int want = (int)((double)all / (double)total * cols + 0.5);
	while (sum < want) {
		int best = -1;
		for (int i = 0; i < n; i++)
			if (ns[i] && (best < 0 || rem[i] > rem[best]))
				best = i;
		if (best < 0)
			break;
		given[best]++, rem[best] = -1, sum++;
	}
	int c = 0;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < given[i] && c < cols; k++)
			owner[c++] = (signed char)i;
	return c;
}

char *tui_spark(char *dst, size_t cap, const uint64_t *v, int n, int cols, uint64_t vmax, int ascii)
{
	static const char *const blocks[8] = {"\u2581", "\u2582", "\u2583", "\u2584",
					      "\u2585", "\u2586", "\u2587", "\u2588"};
	static const char asc[8] = {'_', '.', '-', '=', '+', '*', '#', '@'};
	size_t o = 0;
	int first = n > cols ? n - cols : 0;

	if (!cap)
		return dst;
	if (!vmax)
		for (int i = first; i < n; i++)
			if (v[i] > vmax)
				vmax = v[i];
	for (int i = 0; i < cols - (n - first); i++)
		if (o + 1 < cap)
			dst[o++] = ' ';
	for (int i = first; i < n; i++) {
		const char *g;
		char one[2] = {' ', 0};
		if (v[i] == 0 || vmax == 0) {
			g = " ";
		} else {
			uint64_t lv = v[i] >= vmax ? 7 : (v[i] * 8) / vmax;
			if (lv > 7)
				lv = 7;
			if (ascii)
				one[0] = asc[lv], g = one;
			else
				g = blocks[lv];
		}
		size_t gl = strlen(g);
		if (o + gl >= cap)
			break;
		memcpy(dst + o, g, gl);
		o += gl;
	}
	dst[o] = 0;
	return dst;
}

char *tui_bar(char *dst, size_t cap, double frac, int cols, int ascii)
{
	static const char *const eighths[8] = {"",	 "\u258f", "\u258e", "\u258d",
					       "\u258c", "\u258b", "\u258a", "\u2589"};
	size_t o = 0;
	if (!cap)
		return dst;
	if (frac < 0)
		frac = 0;
	if (frac > 1)
		frac = 1;
	int units = (int)(frac * cols * 8 + 0.5);
	int full = units / 8, part = units % 8;
	if (ascii) {
		if (part >= 4 && full < cols)
			full++;
		for (int i = 0; i < full && o + 1 < cap; i++)
			dst[o++] = '#';
	} else {
		for (int i = 0; i < full && o + 3 < cap; i++) {
			memcpy(dst + o, "\u2588", 3);
			o += 3;
		}
		if (part && full < cols && o + 3 < cap) {
			memcpy(dst + o, eighths[part], 3);
			o += 3;
		}
	}
	dst[o] = 0;
	return dst;
}
