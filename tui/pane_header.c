/* The header: what the view is (LIVE, REPLAY xSPEED and position, PAUSED,
 * ENDED 2m ago, since start), the alerts ("3 alerts (worst HIGH)"), the
 * notice of the moment, host, time, CPU / memory / load meters, events/s,
 * drops (red when not zero), probes, recording state and the session's
 * last notice, and a replay's timeline (its last row). It uses 1 to 4
 * rows; what does not fit on a row moves to the next, what does not fit
 * at all is left out, least important last. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "tui_int.h"

/* A writer that flows "segments" along the rows of the header. */
struct flow {
	struct tui *t;
	const struct tui_rect *r;
	int y, x;
};

static void flow_break(struct flow *f)
{
	if (f->x > 0)
		f->y++, f->x = 0;
}

/* Puts one segment of up to 3 parts (label, value, rest) on the current row,
 * or on the next one when it does not fit. */
static void seg(struct flow *f, const char *label, const char *value, int vslot)
{
	int need = (int)(strlen(label) + (label[0] && value[0] ? 1 : 0)) + tui_text_cols(value) +
		   (f->x ? 2 : 0);
	if (f->x && f->x + need > f->r->w)
		flow_break(f);
	if (f->y >= f->r->h)
		return;
	if (f->x)
		f->x += 2;
	if (label[0]) {
		f->x += draw_text(f->t, f->r, f->y, f->x, -1, TH_HEADER_LABEL, label);
		if (value[0])
			f->x++;
	}
	f->x += draw_text(f->t, f->r, f->y, f->x, -1, vslot, value);
}

static const char *speed_text(char *buf, size_t n, double speed)
{
	if (speed <= 0)
		snprintf(buf, n, "max");
	else if (speed < 1)
		snprintf(buf, n, "%.2g", speed);
	else
		snprintf(buf, n, "%.0f", speed);
	return buf;
}

/* " ENDED 2m03s ago " when every traced process exited (or the command
 * did), " IDLE 12s " when they are alive but make no CUDA call. */
static void ended_badge(struct tui *t, char *buf, size_t n)
{
	char a[32];
	const struct tui_snap *sn = t->snap;
	int alive = 0;
	for (int i = 0; i < sn->nprocs; i++)
		alive += sn->procs[i].cuda && !sn->procs[i].exited;
	int gone = session_done(t->s) || !alive;
	fmt_age(a, sizeof(a), tui_ended_ago_ns(t));
	snprintf(buf, n, gone ? " ENDED %s ago " : " IDLE %s ", a);
}

/* "3 alerts (worst HIGH)", "1 alert (MED)", "no alerts": the active ones. */
static int alerts_text(struct tui *t, char *buf, size_t n)
{
	int nact = 0, worst = -1;
	for (int i = 0; i < t->snap->nchains; i++)
		if (t->snap->chains[i].active) {
			nact++;
			if (t->snap->chains[i].severity > worst)
				worst = t->snap->chains[i].severity;
		}
	if (!nact)
		snprintf(buf, n, "no alerts");
	else if (nact == 1)
		snprintf(buf, n, "1 alert (%s)", detect_sev_name(worst));
	else
		snprintf(buf, n, "%d alerts (worst %s)", nact, detect_sev_name(worst));
	return worst;
}

static int row1_right(struct tui *t, struct flow *f, const struct ig_status *st);

/* Row 1: what the view is (mode, paused, ended, since the start), where
 * a replay is, drops, the alerts, the notice, the host and the clock. */
static int row1(struct tui *t, struct flow *f, const struct ig_status *st, int rows)
{
	const struct tui_rect *r = f->r;
	char a[64], b[64], c[256], sp[16];
	if (st->mode == IG_MODE_REPLAY) {
		snprintf(a, sizeof(a), " REPLAY %s%s ", t->ascii ? "x" : "\u00d7",
			 speed_text(sp, sizeof(sp), st->replay_speed));
		f->x += draw_text(t, r, 0, f->x, -1, TH_MODE_REPLAY, a);
	} else {
		f->x += draw_text(t, r, 0, f->x, -1, TH_MODE_LIVE, " LIVE ");
	}
	if (t->paused || st->paused) {
		f->x++;
		f->x += draw_text(t, r, 0, f->x, -1, TH_PAUSED, " PAUSED ");
	}
	if (t->ended) {
		ended_badge(t, a, sizeof(a));
		f->x++;
		f->x += draw_text(t, r, 0, f->x, -1, TH_ENDED, a);
	}
	if (t->mark->set) { /* m: what the op table and the time split compare with */
		f->x++;
		f->x += draw_text(t, r, 0, f->x, -1, TH_PAUSED, mark_badge(t, a, sizeof(a)));
	}
	if (t->life)
		seg(f, "", "since start", TH_MESSAGE);
	if (t->cli->demo && st->mode == IG_MODE_REPLAY)
		seg(f, "", "not root: replaying a recording", TH_MESSAGE);
	if (st->mode == IG_MODE_REPLAY && st->replay_end_ns > st->replay_start_ns) {
		uint64_t pos = st->replay_pos_ns > st->replay_start_ns
				   ? st->replay_pos_ns - st->replay_start_ns
				   : 0;
		uint64_t len = st->replay_end_ns - st->replay_start_ns;
		if (pos > len)
			pos = len;
		snprintf(c, sizeof(c), "%s/%s %.0f%%", fmt_age(a, sizeof(a), pos),
			 fmt_age(b, sizeof(b), len), 100.0 * (double)pos / (double)len);
		seg(f, "at", c, TH_HEADER_VALUE);
	}
	/* drops come early: they must never be the thing that is cut */
	if (st->drops_kernel || st->drops_user || rows == 1) {
		snprintf(c, sizeof(c), "k %llu u %llu", (unsigned long long)st->drops_kernel,
			 (unsigned long long)st->drops_user);
		seg(f, "drops", c, st->drops_kernel || st->drops_user ? TH_DROPS_BAD : TH_DROPS_OK);
	}
	int worst = alerts_text(t, c, sizeof(c));
	seg(f, "", c, worst >= 0 ? sev_slot(worst) : TH_HEADER_VALUE);
	if (rows == 1)
		seg(f, "ev/s", fmt_rate(a, sizeof(a), st->events_per_s), TH_HEADER_VALUE);
	return row1_right(t, f, st);
}

static int notice_on(struct tui *t)
{
	return t->msg[0] && tui_now_ms() < t->msg_until_ms;
}

/* The notice of the moment over a whole row (when row 1 has no room). */
static void notice_row(struct tui *t, const struct tui_rect *r, int y)
{
	char clean[512], clip[512];
	draw_fill(t, r, y, TH_HEADER);
	tui_text_clean(clean, sizeof(clean), t->msg, -1, t->ascii);
	tui_clip_words(clip, sizeof(clip), clean, r->w - 2, t->ascii);
	draw_text(t, r, y, 1, r->w - 2, TH_MESSAGE, clip);
}

/* The end of row 1: the notice of the moment (it may push the host name
 * and the clock out), else the host and the clock at the right edge.
 * Returns 0 when a notice is on but did not get 30 columns here: the
 * caller shows it on a row of its own. */
static int row1_right(struct tui *t, struct flow *f, const struct ig_status *st)
{
	const struct tui_rect *r = f->r;
	char clock[16], clean[512], clip[512];
	fmt_clock(clock, sizeof(clock), st->now_ns ? st->now_ns : model_now(tui_model(t)));
	int host_w = (int)strnlen(st->host, sizeof(st->host));
	int x = f->y == 0 ? f->x + 2 : r->w; /* row 1 is full when the flow moved on */
	int cx = r->w - 8;		     /* where the clock goes */
	int show_clock = 1, show_host = host_w > 0, shown = !notice_on(t);
	if (notice_on(t) && x < r->w - 31) {
		/* the notice keeps at least 30 columns: the host goes first, then
		 * the clock */
		int room = cx - 1 - host_w - 2 - x;
		if (room < 30) {
			show_host = 0;
			room = cx - 1 - x;
		}
		if (room < 30) {
			show_clock = 0;
			room = r->w - 1 - x;
		}
		tui_text_clean(clean, sizeof(clean), t->msg, -1, t->ascii);
		tui_clip_words(clip, sizeof(clip), clean, room, t->ascii);
		draw_text(t, r, 0, x, room, TH_MESSAGE, clip);
		shown = 1;
	}
	if (!show_clock || cx <= x)
		return shown;
	draw_text(t, r, 0, cx, 8, TH_HEADER_VALUE, clock);
	if (show_host && cx - host_w - 2 > x)
		draw_text(t, r, 0, cx - host_w - 2, host_w, TH_HEADER_LABEL, st->host);
	return shown;
}

/* Row 2 of a full header: CPU and memory meters, load, swap. */
static void row2_meters(struct tui *t, struct flow *f, const struct ig_host *host)
{
	const struct tui_rect *r = f->r;
	char a[64];
	int mw = (r->w - 24) / 2;
	if (mw > 40)
		mw = 40;
	if (!host->valid) {
		seg(f, "host", "no snapshot yet", TH_DIM);
		return;
	}
	snprintf(a, sizeof(a), "%.1f%%", host->cpu_pct);
	draw_meter(t, r, f->y, 0, mw, "CPU", host->cpu_pct, a);
	snprintf(a, sizeof(a), "%.1f%%", host->mem_pct);
	draw_meter(t, r, f->y, mw + 2, mw, "MEM", host->mem_pct, a);
	f->x = 2 * mw + 4;
	snprintf(a, sizeof(a), "%.2f", host->load1);
	seg(f, "load", a, TH_HEADER_VALUE);
	if (host->swap_mb) {
		seg(f, "swap", fmt_bytes(a, sizeof(a), host->swap_mb << 20), TH_METER_CRIT);
	}
}

#define STATUS_MSG_MS 15000 /* a session notice leads the last row this long */

/* The text with the user's home directory as "~": paths fit better. */
static void home_short(char *out, size_t n, const char *text)
{
	const char *home = getenv("HOME");
	size_t hl = home ? strlen(home) : 0;
	const char *p = hl > 1 ? strstr(text, home) : NULL;
	if (!p || (p[hl] != '/' && p[hl] != 0)) {
		snprintf(out, n, "%s", text);
		return;
	}
	snprintf(out, n, "%.*s~%s", (int)(p - text), text, p + hl);
}

static int pct_slot(double pct)
{
	return pct >= 90 ? TH_METER_CRIT : pct >= 70 ? TH_METER_WARN : TH_HEADER_VALUE;
}

/* The rest: events, drops, host numbers on a small header, probes,
 * targets, the recording and the session's last notice. */
static void row_status(struct tui *t, struct flow *f, const struct ig_status *st,
		       const struct ig_host *host, int rows)
{
	char a[64], c[256], msg[640];
	int drops = st->drops_kernel || st->drops_user;
	/* a fresh notice of the session (a flight save and its path) first */
	home_short(msg, sizeof(msg), st->message);
	int fresh = msg[0] && tui_now_ms() - t->status_msg_ms < STATUS_MSG_MS;
	if (fresh)
		seg(f, "", msg, TH_MESSAGE);
	seg(f, "ev/s", fmt_rate(a, sizeof(a), st->events_per_s), TH_HEADER_VALUE);
	if (rows >= 3)
		seg(f, "events", fmt_count(a, sizeof(a), st->events_total, 7), TH_HEADER_VALUE);
	if (!drops) {
		snprintf(c, sizeof(c), "k %llu u %llu", (unsigned long long)st->drops_kernel,
			 (unsigned long long)st->drops_user);
		seg(f, "drops", c, TH_DROPS_OK);
	}
	if (rows < 3 && host->valid) {
		snprintf(a, sizeof(a), "%.0f%%", host->cpu_pct);
		seg(f, "CPU", a, pct_slot(host->cpu_pct));
		snprintf(a, sizeof(a), "%.0f%%", host->mem_pct);
		seg(f, "MEM", a, pct_slot(host->mem_pct));
		snprintf(a, sizeof(a), "%.2f", host->load1);
		seg(f, "load", a, TH_HEADER_VALUE);
	}
	if (st->mode == IG_MODE_LIVE) {
		snprintf(c, sizeof(c), "%d", st->probes_attached);
		seg(f, "probes", c, TH_HEADER_VALUE);
		snprintf(c, sizeof(c), "%d", st->probes_failed);
		seg(f, "failed", c, st->probes_failed ? TH_DROPS_BAD : TH_HEADER_VALUE);
		if (st->probes_missing) {
			snprintf(c, sizeof(c), "%d", st->probes_missing);
			seg(f, "missing", c, TH_HEADER_VALUE);
		}
		snprintf(c, sizeof(c), "%d", st->targets);
		seg(f, "targets", c, TH_HEADER_VALUE);
	}
	if (st->recording[0]) {
		const char *base = strrchr(st->recording, '/');
		snprintf(c, sizeof(c), "%s %.200s", t->ascii ? "REC" : "\u25cf REC",
			 base ? base + 1 : st->recording);
		seg(f, "", c, st->record_dropped ? TH_ERROR : TH_RECORDING);
		if (st->record_dropped) { /* the disk could not keep up */
			snprintf(c, sizeof(c), "%llu events",
				 (unsigned long long)st->record_dropped);
			seg(f, "lost", c, TH_ERROR);
		}
		if (st->record_summarised) { /* --record-rate: counted, not kept */
			char n[24];
			snprintf(c, sizeof(c), "%s calls",
				 fmt_count(n, sizeof(n), st->record_summarised, 0));
			seg(f, "summarised", c, TH_HEADER_VALUE);
		}
		if (st->record_rate_hint) /* the writer fell behind the calls */
			seg(f, "writer behind:", "--record-rate keeps counts", TH_MESSAGE);
	} else if (st->record_error[0]) {
		seg(f, "REC stopped:", st->record_error, TH_ERROR);
	}
	if (msg[0] && !fresh)
		seg(f, "", msg, TH_MESSAGE);
}

/* The column of event time ns on a bar of w cells over [start, start+len]. */
static int strip_col(uint64_t ns, uint64_t start, uint64_t len, int w)
{
	uint64_t d = ns > start ? ns - start : 0;
	if (d > len)
		d = len;
	return len ? (int)((double)d * (w - 1) / (double)len) : 0;
}

/* A replay's timeline on row y: the start and end clocks when there is
 * room, the part played, the position, a mark where each alert was first
 * detected (the recording's chains, else the detector's so far), and an M
 * at the marked moment (m). */
static void timeline_draw(struct tui *t, const struct tui_rect *r, int y,
			  const struct ig_status *st)
{
	char a[16], b[16];
	if (st->replay_end_ns <= st->replay_start_ns)
		return; /* no span yet */
	uint64_t start = st->replay_start_ns, len = st->replay_end_ns - st->replay_start_ns;
	int labels = r->w >= 60, x = 1, w = r->w - 2;
	if (labels) {
		fmt_clock(a, sizeof(a), start);
		fmt_clock(b, sizeof(b), st->replay_end_ns);
		draw_text(t, r, y, 1, -1, TH_HEADER_LABEL, a);
		draw_text(t, r, y, r->w - 1 - (int)strlen(b), -1, TH_HEADER_LABEL, b);
		x += (int)strlen(a) + 1;
		w -= (int)strlen(a) + (int)strlen(b) + 2;
	}
	if (w < 3)
		return;
	int pos = strip_col(st->replay_pos_ns, start, len, w);
	for (int c = 0; c < w; c++)
		draw_text(t, r, y, x + c, 1, c < pos ? TH_HEADER_VALUE : TH_DIM,
			  c < pos ? (t->ascii ? "=" : "\u2501") : (t->ascii ? "-" : "\u2500"));
	const uint64_t *marks;
	size_t n = session_chain_marks(t->s, &marks);
	for (size_t i = 0; i < n; i++)
		if (marks[i] >= start && marks[i] <= st->replay_end_ns)
			draw_text(t, r, y, x + strip_col(marks[i], start, len, w), 1, TH_ALERT_HIGH,
				  "!");
	for (int i = 0; !n && i < t->snap->nchains; i++) {
		const struct ig_chain *ch = &t->snap->chains[i];
		draw_text(t, r, y, x + strip_col(ch->first_seen_ns, start, len, w), 1,
			  sev_slot(ch->max_severity), "!");
	}
	if (t->mark->set && t->mark->at_ns >= start && t->mark->at_ns <= st->replay_end_ns)
		draw_text(t, r, y, x + strip_col(t->mark->at_ns, start, len, w), 1, TH_PAUSED, "M");
	draw_text(t, r, y, x + pos, 1, TH_MODE_REPLAY, t->ascii ? "#" : "\u2588");
}

static int header_want(struct tui *t);

static void header_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r, int focused)
{
	const struct ig_status *st = session_status(t->s);
	struct ig_host host;
	struct tui_rect hr = *r; /* the rows above the timeline */
	struct flow f = {t, &hr, 0, 0};

	model_host(tui_model(t), &host);
	for (int y = 0; y < r->h; y++)
		draw_fill(t, r, y, TH_HEADER);
	int strip = header_want(t) > 3 && r->h >= 2;
	if (strip) { /* the last row is the timeline */
		timeline_draw(t, r, r->h - 1, st);
		hr.h--;
	}
	int rows = hr.h;
	int notice_shown = row1(t, &f, st, rows);
	if (rows == 1)
		return;
	flow_break(&f);
	if (f.y < 1)
		f.y = 1;
	if (rows >= 3) {
		row2_meters(t, &f, &host);
		flow_break(&f);
		if (f.y < 2)
			f.y = 2;
	}
	row_status(t, &f, st, &host, rows);
	/* a notice row 1 had no room for takes the meters' row for its few
	 * seconds (never the row with the drops); above a timeline, the
	 * compact status row, whose drops are on row 1 when there are any */
	if (!notice_shown && (rows >= 3 || (strip && rows == 2)))
		notice_row(t, &hr, 1);
}

static int header_want(struct tui *t)
{
	/* a replay adds its timeline (from the start: the layout stays put) */
	return session_status(t->s)->mode == IG_MODE_REPLAY ? 4 : 3;
}

const struct tui_pane pane_header = {
    .name = "header",
    .area = AREA_HEADER,
    .min_w = TUI_FLOOR_W,
    .min_h = 1,
    .want = header_want,
    .draw = header_draw,
    .key = NULL,
};
