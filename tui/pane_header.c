/* The header: mode (LIVE, REPLAY xSPEED and position, PAUSED), host, time,
 * CPU / memory / load meters, events/s, drops (red when not zero), probes,
 * recording state and the session's last notice. It uses 1 to 3 rows; what
 * does not fit on a row moves to the next, what does not fit at all is left
 * out, least important last. */
#include <stdio.h>
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

static void header_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r, int focused)
{
	const struct ig_status *st = session_status(t->s);
	struct ig_host host;
	struct flow f = {t, r, 0, 0};
	char a[64], b[64], c[256], sp[16];
	int rows = r->h;

	model_host(tui_model(t), &host);
	for (int y = 0; y < rows; y++)
		draw_fill(t, r, y, TH_HEADER);

	/* row 1: mode, position, alerts, host, clock */
	if (st->mode == IG_MODE_REPLAY) {
		snprintf(a, sizeof(a), " REPLAY %s%s ", t->ascii ? "x" : "\u00d7",
			 speed_text(sp, sizeof(sp), st->replay_speed));
		f.x += draw_text(t, r, 0, f.x, -1, TH_MODE_REPLAY, a);
	} else {
		f.x += draw_text(t, r, 0, f.x, -1, TH_MODE_LIVE, " LIVE ");
	}
	if (t->paused || st->paused) {
		f.x++;
		f.x += draw_text(t, r, 0, f.x, -1, TH_PAUSED, " PAUSED ");
	}
	if (st->mode == IG_MODE_REPLAY && st->replay_end_ns > st->replay_start_ns) {
		uint64_t pos = st->replay_pos_ns > st->replay_start_ns
				   ? st->replay_pos_ns - st->replay_start_ns
				   : 0;
		uint64_t len = st->replay_end_ns - st->replay_start_ns;
		if (pos > len)
			pos = len;
		snprintf(c, sizeof(c), "%s/%s %.0f%%", fmt_age(a, sizeof(a), pos),
			 fmt_age(b, sizeof(b), len), 100.0 * (double)pos / (double)len);
		seg(&f, "at", c, TH_HEADER_VALUE);
	}
	/* drops come early: they must never be the thing that is cut */
	int drops = st->drops_kernel || st->drops_user;
	if (drops || rows == 1) {
		snprintf(c, sizeof(c), "k %llu u %llu", (unsigned long long)st->drops_kernel,
			 (unsigned long long)st->drops_user);
		seg(&f, "drops", c, drops ? TH_DROPS_BAD : TH_DROPS_OK);
	}
	/* alerts: how many are active and the worst */
	int nact = 0, worst = -1;
	for (int i = 0; i < t->snap->nchains; i++)
		if (t->snap->chains[i].active) {
			nact++;
			if (t->snap->chains[i].severity > worst)
				worst = t->snap->chains[i].severity;
		}
	if (nact) {
		snprintf(c, sizeof(c), "%d %s", nact, sev_short(worst));
		seg(&f, "alerts", c, sev_slot(worst));
	} else {
		seg(&f, "alerts", "0", TH_HEADER_VALUE);
	}
	if (rows == 1) {
		seg(&f, "ev/s", fmt_rate(a, sizeof(a), st->events_per_s), TH_HEADER_VALUE);
	}
	/* the clock sits at the right end of row 1 when there is room */
	fmt_clock(a, sizeof(a), st->now_ns ? st->now_ns : model_now(tui_model(t)));
	int host_w = (int)strnlen(st->host, sizeof(st->host));
	if (rows == 1 || f.y > 0) {
		seg(&f, "", a, TH_HEADER_VALUE);
	} else {
		int cx = r->w - 8;
		if (cx > f.x + 2) {
			draw_text(t, r, 0, cx, 8, TH_HEADER_VALUE, a);
			if (host_w && cx - host_w - 2 > f.x + 2)
				draw_text(t, r, 0, cx - host_w - 2, host_w, TH_HEADER_LABEL,
					  st->host);
		}
	}
	if (rows == 1)
		return;

	/* row 2: meters (full header) or compact numbers */
	flow_break(&f);
	if (f.y < 1)
		f.y = 1;
	if (rows >= 3) {
		int w = r->w;
		int mw = (w - 24) / 2;
		if (mw > 40)
			mw = 40;
		if (host.valid) {
			snprintf(a, sizeof(a), "%.1f%%", host.cpu_pct);
			draw_meter(t, r, f.y, 0, mw, "CPU", host.cpu_pct, a);
			snprintf(a, sizeof(a), "%.1f%%", host.mem_pct);
			draw_meter(t, r, f.y, mw + 2, mw, "MEM", host.mem_pct, a);
			f.x = 2 * mw + 4;
			snprintf(a, sizeof(a), "%.2f", host.load1);
			seg(&f, "load", a, TH_HEADER_VALUE);
			if (host.swap_mb) {
				snprintf(a, sizeof(a), "%lluM", (unsigned long long)host.swap_mb);
				seg(&f, "swap", a, TH_METER_CRIT);
			}
		} else {
			seg(&f, "host", "no snapshot yet", TH_DIM);
		}
		flow_break(&f);
		if (f.y < 2)
			f.y = 2;
		seg(&f, "ev/s", fmt_rate(a, sizeof(a), st->events_per_s), TH_HEADER_VALUE);
		seg(&f, "events", fmt_count(a, sizeof(a), st->events_total, 7),
		    TH_HEADER_VALUE);
		if (!drops) {
			snprintf(c, sizeof(c), "k %llu u %llu",
				 (unsigned long long)st->drops_kernel,
				 (unsigned long long)st->drops_user);
			seg(&f, "drops", c, TH_DROPS_OK);
		}
	} else {
		seg(&f, "ev/s", fmt_rate(a, sizeof(a), st->events_per_s), TH_HEADER_VALUE);
		if (!drops) {
			snprintf(c, sizeof(c), "k %llu u %llu",
				 (unsigned long long)st->drops_kernel,
				 (unsigned long long)st->drops_user);
			seg(&f, "drops", c, TH_DROPS_OK);
		}
	}
	if (rows < 3 && host.valid) {
		snprintf(a, sizeof(a), "%.0f%%", host.cpu_pct);
		seg(&f, "CPU", a,
		    host.cpu_pct >= 90	 ? TH_METER_CRIT
		    : host.cpu_pct >= 70 ? TH_METER_WARN
					 : TH_HEADER_VALUE);
		snprintf(a, sizeof(a), "%.0f%%", host.mem_pct);
		seg(&f, "MEM", a,
		    host.mem_pct >= 90	 ? TH_METER_CRIT
		    : host.mem_pct >= 70 ? TH_METER_WARN
					 : TH_HEADER_VALUE);
		snprintf(a, sizeof(a), "%.2f", host.load1);
		seg(&f, "load", a, TH_HEADER_VALUE);
	}
	if (st->mode == IG_MODE_LIVE) {
		snprintf(c, sizeof(c), "%d", st->probes_attached);
		seg(&f, "probes", c, TH_HEADER_VALUE);
		snprintf(c, sizeof(c), "%d", st->probes_failed);
		seg(&f, "failed", c, st->probes_failed ? TH_DROPS_BAD : TH_HEADER_VALUE);
		if (st->probes_missing) {
			snprintf(c, sizeof(c), "%d", st->probes_missing);
			seg(&f, "missing", c, TH_HEADER_VALUE);
		}
		snprintf(c, sizeof(c), "%d", st->targets);
		seg(&f, "targets", c, TH_HEADER_VALUE);
	}
	if (st->recording[0]) {
		const char *base = strrchr(st->recording, '/');
		snprintf(c, sizeof(c), "%s %.200s", t->ascii ? "REC" : "\u25cf REC",
			 base ? base + 1 : st->recording);
		seg(&f, "", c, TH_RECORDING);
	} else if (st->record_error[0]) {
		seg(&f, "REC stopped:", st->record_error, TH_ERROR);
	}
	if (st->message[0])
		seg(&f, "", st->message, TH_MESSAGE);
}

static int header_want(struct tui *t)
{
	return 3;
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
