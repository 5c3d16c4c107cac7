/* The alerts pane: causal chains in the detector's order (active first,
 * INFO last, by impact), one line each: severity, age, impact and the
 * summary, which leads with the cause and the culprit ("CPU contention by
 * ig-hog[2771]: ...") and is cut at a word. Resolved chains stay listed,
 * dimmed, for a while. Enter opens the chain. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

/* clang-format off */
enum { C_SEV, C_AGE, C_IMPACT, C_SUMMARY, C_N };

const struct tui_col alerts_cols[C_N] = {
	[C_SEV] = { "SEV", 5, 0, 0, 'l', 0,
		"severity: follows the impact and whether the culprit is confirmed; HIGH? is "
		"provisional: the window is not full yet (its first seconds), it may change" },
	[C_AGE] = { "AGE", 5, 0, 1, 'r', 0,
		"since the alert was first detected (to now: after ENDED, the time since the end "
		"counts too)" },
	[C_IMPACT] = { "IMPACT", 6, 0, 2, 'r', 0,
		"share of the feeding threads' wall time the cause takes (what alerts are "
		"ranked by)" },
	/* the cause and the culprit first, cut at a word: never inside a name[pid] */
	[C_SUMMARY] = { "ALERT", 30, 400, 0, 'l', 0,
		"the cause and who causes it, then the numbers; Enter shows the evidence" },
};
const int alerts_ncols = C_N;
/* clang-format on */

struct chains_ctx {
	struct tui *t;
	const struct ig_chain *rows;
	int n;
	struct tui_table *tb;
};

static uint64_t chains_key(void *ctx, int row)
{
	const struct chains_ctx *c = ctx;
	return c->rows[row].id;
}

static void cell_cb(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	struct chains_ctx *c = ctx;
	const struct ig_chain *ch = &c->rows[row];
	uint64_t now = tui_alert_now_ns(c->t);
	int dim = !ch->active;
	switch (col) {
	case C_SEV:
		snprintf(buf, n, "%s%s", sev_short(ch->severity),
			 ch->active && tui_provisional(c->t) ? "?" : "");
		*slot = dim ? TH_DIM : sev_slot(ch->severity);
		return;
	case C_AGE:
		fmt_age(buf, n, now > ch->first_seen_ns ? now - ch->first_seen_ns : 0);
		break;
	case C_IMPACT:
		fmt_pct(buf, n, fig_share(ch->impact));
		break;
	case C_SUMMARY: {
		char full[320], clean[320];
		snprintf(full, sizeof(full), "%s%s", dim ? "(resolved) " : "", ch->summary);
		tui_text_clean(clean, sizeof(clean), full, -1, c->t->ascii);
		if (c->tb && c->tb->cell_w > 0)
			tui_clip_words(buf, n, clean, c->tb->cell_w, c->t->ascii);
		else
			snprintf(buf, n, "%s", clean);
		if (!dim)
			*slot = ch->severity >= IG_SEV_HIGH ? TH_ALERT_HIGH : TH_NORMAL;
		break;
	}
	}
	if (dim)
		*slot = TH_DIM;
}

static double num_cb(void *ctx, int row, int col, int *ok)
{
	struct chains_ctx *c = ctx;
	const struct ig_chain *ch = &c->rows[row];
	*ok = 1;
	switch (col) {
	case C_SEV:
		return (double)(c->n - row); /* the detector's order */
	case C_AGE:
		return -(double)ch->first_seen_ns; /* youngest first */
	case C_IMPACT:
		return ch->impact;
	}
	*ok = 0;
	return 0;
}

/* The chains table; the process screen reuses it. */
void chains_table(struct tui *t, struct tui_view *v, struct tui_list *l,
		  const struct ig_chain *rows, int nrows, const struct tui_rect *r, int focused,
		  const char *title)
{
	struct chains_ctx c = {t, rows, nrows, NULL};
	struct tui_table tb = {
	    .cols = alerts_cols,
	    .ncols = C_N,
	    .ctx = &c,
	    .nrows = nrows,
	    .key = chains_key,
	    .cell = cell_cb,
	    .num = num_cb,
	    .hide = t->hidden[TBL_ALERTS],
	    .empty = "no alerts: no latency tail with a host-side cause",
	};
	c.tb = &tb;
	const struct tui_table_box box = table_draw(t, v, &tb, l, r, focused, title);
	tui_hit_table(t, v, l, &box);
}

/* No title text: the header says how many alerts are active, and the
 * alert text keeps the whole width. */
static void alerts_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r, int focused)
{
	chains_table(t, v, &v->lists[2], t->snap->chains, t->snap->nchains, r, focused, NULL);
}

static int alerts_want(struct tui *t)
{
	int n = t->snap->nchains + 1;
	return n < ALERTS_MIN_H ? ALERTS_MIN_H : n;
}

static int alerts_key_cb(struct tui *t, struct tui_view *v, int action, int key)
{
	if (action != ACT_ENTER)
		return 0;
	uint64_t id = list_selected(&v->lists[2]);
	if (!id)
		return 0;
	struct tui_view nv = {.screen = SCR_ALERT, .chain_id = (uint32_t)id};
	return tui_push(t, &nv);
}

const struct tui_pane pane_alerts = {
    .name = "alerts",
    .area = AREA_ALERTS,
    .min_w = ALERTS_MIN_W,
    .min_h = ALERTS_MIN_H,
    .want = alerts_want,
    .draw = alerts_draw,
    .key = alerts_key_cb,
};
