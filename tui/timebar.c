/* "Where the time goes": a stacked bar of the parts of a feeding thread's
 * (or a process's feeding threads') wall time, in the order of enum
 * ig_part, with a legend of the parts that are not zero. The process and
 * thread screens draw it full; the main screen draws a compact one for the
 * selected process under the processes pane. The bar's columns add up to
 * its width (tui_parts_cols). While a mark is set (m) the legend gives
 * each part as mark→now, and the process screen draws the mark's bar
 * above the current one. */
#include <stdio.h>
#include <string.h>

#include "figures.h"
#include "glossary.h"
#include "tui_int.h"

int timebar_slot(int part)
{
	static const int slots[IG_PART_MAX] = {
	    [IG_PART_GPU_WAIT] = TH_PART_GPU,	     [IG_PART_API] = TH_PART_API,
	    [IG_PART_CALL_PREEMPTED] = TH_PREEMPTED, [IG_PART_HOST_CPU] = TH_PART_HOST,
	    [IG_PART_PREEMPTED] = TH_PREEMPTED,	     [IG_PART_IO_WAIT] = TH_PART_IO,
	    [IG_PART_TASK_WAIT] = TH_PART_WAIT,	     [IG_PART_SLEEP] = TH_PART_SLEEP,
	    [IG_PART_FAULT] = TH_PART_FAULT,	     [IG_PART_UNKNOWN] = TH_PART_UNKNOWN,
	    [IG_PART_THROTTLED] = TH_PREEMPTED,	     [IG_PART_FILE_IO] = TH_PART_IO,
	    [IG_PART_COLD_READ] = TH_PART_IO,	     [IG_PART_MEM_PRESSURE] = TH_PART_FAULT,
	    [IG_PART_LOCK_WAIT] = TH_PART_WAIT,	     [IG_PART_GIL_WAIT] = TH_PART_WAIT,
	    [IG_PART_BACKPRESSURE] = TH_PART_WAIT,   [IG_PART_NET_WAIT] = TH_PART_WAIT,
	    [IG_PART_STOPPED] = TH_PART_UNKNOWN,
	};
	return part >= 0 && part < IG_PART_MAX ? slots[part] : TH_NORMAL;
}

/* Letters when colours cannot tell the parts apart (ASCII or monochrome). */
static int use_letters(struct tui *t)
{
	return t->ascii || t->theme.mono;
}

void timebar_draw(struct tui *t, const struct tui_rect *r, int y, int x, int w,
		  const struct ig_time_parts *p)
{
	signed char own[512];
	if (w <= 0)
		return;
	if (w > (int)sizeof(own))
		w = sizeof(own);
	tui_parts_cols(p->ns, IG_PART_MAX, p->wall_ns, w, own);
	for (int c = 0; c < w; c++) {
		int k = own[c];
		char g[4] = " ";
		if (k >= 0 && use_letters(t))
			g[0] = gloss_part_letter(k);
		else if (k >= 0)
			snprintf(g, sizeof(g), "%s", "\u2588");
		draw_text(t, r, y, x + c, 1, k >= 0 ? timebar_slot(k) : TH_DIM, k >= 0 ? g : ".");
	}
}

int timebar_legend(struct tui *t, const struct tui_rect *r, int y, int x, int w,
		   const struct ig_time_parts *p, int compact)
{
	char a[16], item[64];
	int used = 0;
	if (!p->wall_ns) {
		return draw_text(t, r, y, x, w, TH_DIM, "no wall time in the window");
	}
	/* largest first, so that what does not fit is the least; room kept
	 * for "(split unknown)" at every width */
	int room = p->split_unknown ? w - 17 : w;
	int order[IG_PART_MAX], n = 0;
	for (int k = 0; k < IG_PART_MAX; k++)
		if (p->ns[k])
			order[n++] = k;
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && p->ns[order[j]] > p->ns[order[j - 1]]; j--) {
			int tmp = order[j];
			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	for (int i = 0; i < n; i++) {
		int k = order[i];
		const char *label = compact ? gloss_part_short(k) : gloss_part_label(k);
		fmt_pct(a, sizeof(a), ig_part_share(p, k));
		if (use_letters(t))
			snprintf(item, sizeof(item), "%c %s %s", gloss_part_letter(k), label, a);
		else
			snprintf(item, sizeof(item), "%s %s", label, a);
		int need = tui_text_cols(item) + (used ? 2 : 0);
		if (used + need > room)
			break;
		used += draw_text(t, r, y, x + used, -1, TH_NORMAL, used ? "  " : "");
		used += draw_text(t, r, y, x + used, -1, timebar_slot(k), item);
	}
	if (p->split_unknown)
		used += draw_text(t, r, y, x + used, w - used, TH_DIM,
				  used ? "  (split unknown)" : "(split unknown)");
	return used;
}

/* "12%", or "-" for a side without wall time. */
static char *side_pct(char *buf, size_t n, const struct ig_time_parts *p, int part)
{
	return fmt_pct(buf, n, p && p->wall_ns ? ig_part_share(p, part) : -1);
}

int timebar_legend_cmp(struct tui *t, const struct tui_rect *r, int y, int x, int w,
		       const struct ig_time_parts *then, const struct ig_time_parts *now,
		       int compact)
{
	char a[16], b[16], item[80];
	int order[IG_PART_MAX], used = 0;
	int n = fig_parts_order(then, now, order);
	if (!n)
		return draw_text(t, r, y, x, w, TH_DIM, "no wall time at the mark or now");
	for (int i = 0; i < n; i++) {
		int k = order[i];
		const char *label = compact ? gloss_part_short(k) : gloss_part_label(k);
		side_pct(a, sizeof(a), then, k);
		side_pct(b, sizeof(b), now, k);
		if (use_letters(t))
			snprintf(item, sizeof(item), "%c %s %s\u2192%s", gloss_part_letter(k),
				 label, a, b);
		else
			snprintf(item, sizeof(item), "%s %s\u2192%s", label, a, b);
		int need = tui_text_cols(item) + (used ? 2 : 0) + (t->ascii ? 1 : 0);
		if (used + need > w)
			break;
		used += draw_text(t, r, y, x + used, -1, TH_NORMAL, used ? "  " : "");
		used += draw_text(t, r, y, x + used, -1, timebar_slot(k), item);
	}
	return used;
}

/* A bar with a label in front ("mark", "now"), or why there is none. */
static void labelled_bar(struct tui *t, const struct tui_rect *r, int y, const char *label, int bw,
			 const struct ig_time_parts *p, const char *none)
{
	draw_text(t, r, y, 1, 5, TH_HEADER_LABEL, label);
	if (p->wall_ns)
		timebar_draw(t, r, y, 6, bw - 5, p);
	else
		draw_text(t, r, y, 6, bw - 5, TH_DIM, none);
}

int timebar_lines(struct tui *t, const struct tui_rect *r, int y, const char *title,
		  const struct ig_time_parts *p, const struct ig_time_parts *then, int life)
{
	char a[32], c[16], line[200];
	int bw = r->w - 2;
	if (bw > 100)
		bw = 100;
	if (!then) {
		snprintf(line, sizeof(line), "%s: %s of wall time %s", title,
			 fmt_ns(a, sizeof(a), p->wall_ns),
			 life ? "since the first call" : "in the window");
		draw_section(t, r, y, line);
		timebar_draw(t, r, y + 1, 1, bw, p);
		timebar_legend(t, r, y + 2, 1, r->w - 2, p, r->w < 100);
		return 3;
	}
	snprintf(line, sizeof(line), "%s: %s of wall time %s, mark %s\u2192now", title,
		 fmt_ns(a, sizeof(a), p->wall_ns), life ? "since the first call" : "in the window",
		 fmt_clock(c, sizeof(c), t->mark->at_ns));
	draw_section(t, r, y, line);
	labelled_bar(t, r, y + 1, "mark", bw, then, "no wall time at the mark");
	labelled_bar(t, r, y + 2, "now", bw, p, "no wall time now");
	timebar_legend_cmp(t, r, y + 3, 1, r->w - 2, then, p, r->w < 100);
	return 4;
}
