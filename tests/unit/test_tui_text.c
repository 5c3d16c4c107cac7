/* The viewer's pure text helpers: screen-safe strings and ASCII fallbacks,
 * number columns, column fitting, sparklines, bars, container names. */
#include "check.h"

#include <locale.h>
#include <string.h>

#include "../../tui/text.c"
#include "core/fmt.h"

static int all_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

static char wrapped[8][64];
static int nwrapped;
static void wrap_line(void *ctx, const char *p, size_t n)
{
	(void)ctx;
	if (nwrapped < 8)
		snprintf(wrapped[nwrapped++], 64, "%.*s", (int)n, p);
}

int main(void)
{
	char b[256];

	setlocale(LC_ALL, "C.UTF-8");
	/* cleaning */
	CHECK(tui_text_clean(b, sizeof(b), "abc", -1, 0) == 3 && strcmp(b, "abc") == 0);
	CHECK(tui_text_clean(b, sizeof(b), "p99 \u2192 CPU \u00d78 12\u00b5s", -1, 1) ==
	      (int)strlen(b));
	CHECK(strcmp(b, "p99 -> CPU x8 12us") == 0);
	CHECK(tui_text_clean(b, sizeof(b), "p99 \u2192 CPU", -1, 0) == 9 &&
	      strcmp(b, "p99 \u2192 CPU") == 0);
	CHECK(tui_text_clean(b, sizeof(b), "a\tb\nc\x01\x7f", -1, 0) == 7 &&
	      strcmp(b, "a b c??") == 0);
	CHECK(tui_text_clean(b, sizeof(b), "bad\xff\xfe utf8\xc3", -1, 0) == 11 &&
	      strcmp(b, "bad?? utf8?") == 0);
	CHECK(tui_text_clean(b, sizeof(b), "\xe4\xb8\xad", -1, 0) == 1 && strcmp(b, "?") == 0);
	CHECK(tui_text_clean(b, sizeof(b), "\xe4\xb8\xad wide", -1, 1) == 6 && all_ascii(b));
	CHECK(tui_text_clean(b, sizeof(b), "abcdef", 4, 0) == 4 && strcmp(b, "abcd") == 0);
	CHECK(tui_text_clean(b, sizeof(b), "ab\u2192cd", 3, 1) == 2 && strcmp(b, "ab") == 0);
	CHECK(tui_text_clean(b, 4, "abcdef", -1, 0) == 3 && strcmp(b, "abc") == 0);
	CHECK(tui_text_clean(b, sizeof(b), NULL, -1, 0) == 0 && b[0] == 0);
	CHECK(tui_text_cols("a\u2192b\u2588") == 4);
	CHECK(tui_text_prefix("a\u2192b", 2) == 4);
	CHECK(tui_text_prefix("ab", 5) == 2);

	/* wrapping */
	nwrapped = 0;
	CHECK(tui_text_wrap("the quick brown fox jumps", 10, wrap_line, NULL) == 3);
	CHECK(strcmp(wrapped[0], "the quick") == 0 && strcmp(wrapped[1], "brown fox") == 0 &&
	      strcmp(wrapped[2], "jumps") == 0);
	nwrapped = 0;
	CHECK(tui_text_wrap("abcdefghijkl x", 5, wrap_line, NULL) == 3);
	CHECK(strcmp(wrapped[0], "abcde") == 0 && strcmp(wrapped[2], "kl x") == 0);

	/* numbers never overflow their column */
	CHECK(strcmp(fmt_count(b, sizeof(b), 123456, 6), "123456") == 0);
	CHECK(strcmp(fmt_count(b, sizeof(b), 1234567, 6), "1.23M") == 0);
	CHECK(strcmp(fmt_count(b, sizeof(b), 12345, 4), "12k") == 0 || strcmp(b, "12.3k") == 0);
	for (uint64_t v = 1; v < 20000000000000ull; v = v * 3 + 7)
		for (int w = 4; w <= 8; w++)
			CHECKF((int)strlen(fmt_count(b, sizeof(b), v, w)) <= w,
			       "%llu in %d: %s", (unsigned long long)v, w, b);
	CHECK(strcmp(fmt_rate(b, sizeof(b), 0.5), "0.50") == 0);
	CHECK(strcmp(fmt_rate(b, sizeof(b), 39.84), "39.8") == 0);
	CHECK(strcmp(fmt_rate(b, sizeof(b), 1234.4), "1234") == 0);
	CHECK(strlen(fmt_rate(b, sizeof(b), 1234567.0)) <= 6);
	CHECK(strcmp(fmt_pct(b, sizeof(b), 0.71), "71%") == 0);
	CHECK(strcmp(fmt_pct(b, sizeof(b), 0.004), "0.4%") == 0);
	CHECK(strcmp(fmt_pct(b, sizeof(b), -1), "-") == 0);
	CHECK(strcmp(fmt_pct(b, sizeof(b), 0.0000001), "<0.1%") == 0);
	CHECK(strcmp(fmt_ratio(b, sizeof(b), 3.24), "3.2x") == 0);
	CHECK(strcmp(fmt_ratio(b, sizeof(b), 140), "140x") == 0);
	CHECK(strcmp(fmt_ratio(b, sizeof(b), 0), "-") == 0);
	CHECK(strcmp(fmt_age(b, sizeof(b), 5000000000ull), "5s") == 0);
	CHECK(strcmp(fmt_age(b, sizeof(b), 123000000000ull), "2m03s") == 0);
	/* the span rates are over (issue 28): the window, or less while it fills */
	CHECK(strcmp(fmt_window_span(b, sizeof(b), 9060000000ull, 10), "9.06s") == 0);
	CHECK(strcmp(fmt_window_span(b, sizeof(b), 3920000000ull, 10), "3.92s of 10s") == 0);
	CHECK(strcmp(fmt_window_span(b, sizeof(b), 400000000ull, 10), "1.00s of 10s") == 0);
	CHECK(strcmp(fmt_window_span(b, sizeof(b), 0, 10), "0s of 10s") == 0);
	CHECK(strcmp(fmt_age(b, sizeof(b), 3720000000000ull), "1h02m") == 0);
	CHECK(strcmp(fmt_clock(b, sizeof(b), 0), "--:--:--") == 0);

	/* column fitting */
	const struct tui_col cols[] = {
	    {"F", 1, 0, 0, 'l', 0, ""},	  {"OP", 14, 8, 0, 'l', 0, ""},
	    {"CALLS", 6, 0, 1, 'r', 0, ""}, {"P99", 7, 0, 0, 'r', 0, ""},
	    {"MAX", 7, 0, 3, 'r', 0, ""},	  {"SPARK", 10, 50, 5, 'l', 0, ""},
	};
	short x[6], w[6];
	int used = tui_cols_fit(cols, 6, 200, x, w);
	CHECK(used <= 200 && x[5] >= 0 && w[1] == 22 && w[5] == 60);
	for (int width = 0; width <= 120; width++) {
		used = tui_cols_fit(cols, 6, width, x, w);
		CHECKF(used <= width || width < 24, "width %d used %d", width, used);
		int last_end = -1;
		for (int i = 0; i < 6; i++) {
			if (x[i] < 0)
				continue;
			CHECKF(x[i] > last_end, "width %d col %d overlaps", width, i);
			last_end = x[i] + w[i];
			CHECKF(x[i] + w[i] <= width, "width %d col %d outside", width, i);
			CHECK(w[i] >= cols[i].width);
		}
		/* a lower-priority column never shows while a higher one is hidden */
		if (x[4] >= 0)
			CHECK(x[2] >= 0);
		if (x[5] >= 0)
			CHECK(x[4] >= 0);
	}
	tui_cols_fit(cols, 6, 30, x, w);
	CHECK(x[0] == 0 && x[1] == 2 && x[3] >= 0 && x[4] < 0 && x[5] < 0);
	/* a fit column (a name[pid]) is as wide as its widest cell, or hidden;
	 * a hidden column stays out */
	const struct tui_col fc[] = {
	    {"PID", 7, 0, 0, 'r', 0, ""},
	    {"PROCESS", 8, 0, 0, 'l', 1, ""},
	    {"TOP PREEMPTOR", 13, 10, 2, 'l', 1, ""},
	    {"THR", 4, 0, 3, 'r', 0, ""},
	};
	short nat[4] = {-1, 15, 22, -1};
	short fx[4], fw[4];
	tui_cols_fit2(fc, 4, 80, nat, 0, fx, fw);
	CHECK(fw[1] == 15 && fw[2] == 22 && fx[3] >= 0);
	tui_cols_fit2(fc, 4, 40, nat, 0, fx, fw);
	CHECK(fw[1] == 15 && fx[2] < 0 && fx[3] >= 0); /* the culprit does not fit: hidden */
	tui_cols_fit2(fc, 4, 80, nat, 1u << 3, fx, fw);
	CHECK(fx[3] < 0 && fx[2] >= 0);

	/* clipping at a word: never inside a name[pid] */
	const char *sum = "CPU contention by ig-hog[2771]: workload[2769] runnable 42%";
	CHECK(tui_clip_words(b, sizeof(b), sum, 100, 0) == (int)strlen(sum) && !strcmp(b, sum));
	int cw = tui_clip_words(b, sizeof(b), sum, 40, 1);
	CHECK(cw <= 40 && !strcmp(b, "CPU contention by ig-hog[2771]:..."));
	cw = tui_clip_words(b, sizeof(b), sum, 40, 0);
	CHECK(cw <= 40 && !strcmp(b, "CPU contention by ig-hog[2771]:\u2026"));
	for (int c = 0; c < 70; c++) {
		cw = tui_clip_words(b, sizeof(b), sum, c, 0);
		CHECKF(cw <= c, "clip %d gave %d", c, cw);
	}
	/* a number is never cut: one long word loses its number whole, a
	 * name[pid] its [pid], and a cut always shows its mark (issue 28) */
	CHECK(tui_clip_words(b, sizeof(b), "4.36ms", 4, 0) == 1 && !strcmp(b, "\u2026"));
	CHECK(tui_clip_words(b, sizeof(b), "ig-hog[28662]", 10, 0) == 7 &&
	      !strcmp(b, "ig-hog\u2026"));
	CHECK(tui_clip_words(b, sizeof(b), "switches 1222", 12, 0) == 9 &&
	      !strcmp(b, "switches\u2026"));
	CHECK(tui_clip_words(b, sizeof(b), "kdamond.0[77] 29%, ?[1] 3%", 20, 0) &&
	      !strcmp(b, "kdamond.0[77] 29%\u2026"));
	CHECK(tui_clip_words(b, sizeof(b), "ab \u2026 cd", 6, 0) == 3 && !strcmp(b, "ab\u2026"));
	CHECK(tui_clip_words(b, sizeof(b), "1222", 1, 0) == 1 && !strcmp(b, "\u2026"));
	CHECK(tui_clip_words(b, sizeof(b), "1222", 2, 1) == 0 && !b[0]);
	for (int c = 0; c < 14; c++) {
		tui_clip_words(b, sizeof(b), "p99 4.49ms max 4.94ms", c, 0);
		size_t l = strlen(b);
		CHECKF(!l || strstr(b, "\u2026") || !strcmp(b, "p99 4.49ms max 4.94ms"),
		       "clip %d: no mark in '%s'", c, b);
		CHECKF(!strstr(b, "4.4\u2026") && !strstr(b, "4.\u2026"),
		       "clip %d cut a number: '%s'", c, b);
	}

	/* bar columns of parts: they add up to the bar when the parts add up */
	uint64_t parts[4] = {613, 30, 200, 157};
	signed char own[200];
	for (int c = 1; c < 200; c++) {
		CHECKF(tui_parts_cols(parts, 4, 1000, c, own) == c, "parts cols %d", c);
		int cnt[4] = {0};
		for (int k = 0; k < c; k++)
			cnt[own[k]]++;
		for (int i = 0; i < 4; i++)
			CHECKF(cnt[i] <= (int)(parts[i] * (uint64_t)c / 1000) + 1 &&
				   cnt[i] + 1 >= (int)(parts[i] * (uint64_t)c / 1000),
			       "part %d: %d of %d", i, cnt[i], c);
	}
	uint64_t half[2] = {250, 250};
	CHECK(tui_parts_cols(half, 2, 1000, 10, own) == 5 && own[4] == 1 && own[5] == -1);
	CHECK(tui_parts_cols(half, 2, 0, 10, own) == 0 && own[0] == -1);

	/* sparklines and bars */
	uint64_t v[5] = {0, 10, 50, 100, 25};
	tui_spark(b, sizeof(b), v, 5, 5, 0, 1);
	CHECK(strcmp(b, " _+@-") == 0);
	tui_spark(b, sizeof(b), v, 5, 8, 0, 1);
	CHECK(strcmp(b, "    _+@-") == 0);
	tui_spark(b, sizeof(b), v, 5, 2, 0, 1);
	CHECK(strcmp(b, "@-") == 0);
	tui_spark(b, sizeof(b), v, 5, 5, 0, 0);
	CHECK(tui_text_cols(b) == 5 && strstr(b, "\u2588"));
	tui_bar(b, sizeof(b), 0.5, 10, 1);
	CHECK(strcmp(b, "#####") == 0);
	tui_bar(b, sizeof(b), 1.5, 4, 0);
	CHECK(tui_text_cols(b) == 4);
	tui_bar(b, sizeof(b), 0.55, 10, 0);
	CHECK(tui_text_cols(b) == 6);
	tui_bar(b, sizeof(b), 0, 10, 0);
	CHECK(b[0] == 0);

	return check_done("test_tui_text");
}
