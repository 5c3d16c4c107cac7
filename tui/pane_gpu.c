/* The device meters: one GPU per two rows in the htop style (utilisation,
 * memory and power meters, temperature, SM clock, memory utilisation), one
 * row per device when the rows are short, and a summary of all devices
 * above four of them or when even that does not fit. Shown only when the
 * model has NVML samples (live with NVML, or a replay of them); a value
 * NVML did not give is "-", and an NVML call that does not answer is named
 * while the last values are dimmed. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

#define FULL_MAX 4 /* devices shown one by one; more: the summary */

static int read_gpus(struct tui *t, struct ig_gpu_stats *g)
{
	return model_gpus(tui_model(t), g, IG_GPU_MAX_DEVS);
}

static int gpu_want(struct tui *t)
{
	struct ig_gpu_stats g[IG_GPU_MAX_DEVS];
	const struct ig_status *st = session_status(t->s);
	int n = read_gpus(t, g);
	int note = st->mode == IG_MODE_LIVE && st->nvml_stuck_ns > 0; /* a row for why */
	int per = t->cols >= 80 ? 2 : 1; /* narrower: one line per device (gpu_draw) */
	return !n ? 0 : (n > FULL_MAX ? 2 : per * n) + note;
}

static double upct(const struct ig_gpu_dev *d)
{
	return d->valid & IG_GPU_V_UTIL ? d->util_gpu_pct : 0;
}

static double mpct(const struct ig_gpu_dev *d)
{
	return d->valid & IG_GPU_V_MEM && d->mem_total
		   ? 100.0 * (double)d->mem_used / (double)d->mem_total
		   : 0;
}

/* "32.0G/80.0G", "-" */
static const char *mem_text(char *b, size_t n, const struct ig_gpu_dev *d)
{
	char u[24], tt[24];
	if (!(d->valid & IG_GPU_V_MEM))
		return snprintf(b, n, "-"), b;
	fmt_bytes(u, sizeof(u), d->mem_used);
	fmt_bytes(tt, sizeof(tt), d->mem_total);
	snprintf(b, n, "%s/%s", u, tt);
	return b;
}

/* "350W/700W", "-/700W" */
static const char *power_text(char *b, size_t n, const struct ig_gpu_dev *d)
{
	char p[16] = "-", l[16] = "-";
	if (d->valid & IG_GPU_V_POWER)
		snprintf(p, sizeof(p), "%.0fW", d->power_mw / 1000.0);
	if (d->valid & IG_GPU_V_LIMIT)
		snprintf(l, sizeof(l), "%.0fW", d->power_limit_mw / 1000.0);
	snprintf(b, n, "%s/%s", p, l);
	return b;
}

static const char *num_text(char *b, size_t n, int valid, unsigned v, const char *unit)
{
	if (valid)
		snprintf(b, n, "%u%s", v, unit);
	else
		snprintf(b, n, "-");
	return b;
}

/* Two rows: name and utilisation and memory meters; power meter and the rest. */
static void draw_full(struct tui *t, const struct tui_rect *r, int y, const struct ig_gpu_stats *g,
		      int stale)
{
	const struct ig_gpu_dev *d = &g->last;
	char lab[40], a[96], b[24], c[24], e[24];
	int lw = 22, mw = (r->w - lw - 2) / 2;
	if (mw > 48)
		mw = 48;
	snprintf(lab, sizeof(lab), "GPU%u %.*s", d->index, IG_COMM_LEN, d->name);
	draw_text(t, r, y, 0, lw - 1, TH_HEADER_LABEL, lab);
	num_text(a, sizeof(a), d->valid & IG_GPU_V_UTIL, d->util_gpu_pct, "%");
	draw_meter(t, r, y, lw, mw, "UTIL", upct(d), a);
	draw_meter(t, r, y, lw + mw + 2, mw, "MEM ", mpct(d), mem_text(a, sizeof(a), d));
	double pw = d->valid & IG_GPU_V_POWER && d->valid & IG_GPU_V_LIMIT && d->power_limit_mw
			? 100.0 * d->power_mw / d->power_limit_mw
			: 0;
	draw_meter(t, r, y + 1, lw, mw, "PWR ", pw, power_text(a, sizeof(a), d));
	snprintf(a, sizeof(a), "%s  SM %s  MEM-UTIL %s",
		 num_text(b, sizeof(b), d->valid & IG_GPU_V_TEMP, d->temp_c, "C"),
		 num_text(c, sizeof(c), d->valid & IG_GPU_V_CLOCK, d->sm_mhz, "MHz"),
		 num_text(e, sizeof(e), d->valid & IG_GPU_V_UTIL, d->util_mem_pct, "%"));
	draw_text(t, r, y + 1, lw + mw + 2, -1, stale ? TH_DIM : TH_HEADER_VALUE, a);
}

/* One row: "GPU0 [|||  87%] MEM 32.0G/80.0G 350W/700W 65C 1980MHz". */
static void draw_line(struct tui *t, const struct tui_rect *r, int y, const struct ig_gpu_stats *g,
		      int stale)
{
	const struct ig_gpu_dev *d = &g->last;
	char lab[16], a[48], b[48], c[24], e[24], line[160];
	int mw = r->w >= 100 ? 30 : 18;
	snprintf(lab, sizeof(lab), "GPU%u", d->index);
	num_text(a, sizeof(a), d->valid & IG_GPU_V_UTIL, d->util_gpu_pct, "%");
	draw_meter(t, r, y, 0, mw, lab, upct(d), a);
	snprintf(line, sizeof(line), "MEM %s  %s  %s  %s", mem_text(a, sizeof(a), d),
		 power_text(b, sizeof(b), d),
		 num_text(c, sizeof(c), d->valid & IG_GPU_V_TEMP, d->temp_c, "C"),
		 num_text(e, sizeof(e), d->valid & IG_GPU_V_CLOCK, d->sm_mhz, "MHz"));
	draw_text(t, r, y, mw + 1, -1, stale ? TH_DIM : TH_HEADER_VALUE, line);
}

/* All devices in a row or two: mean, lowest and highest utilisation, memory
 * and power summed, the hottest; then each device's utilisation. */
static void draw_summary(struct tui *t, const struct tui_rect *r, const struct ig_gpu_stats *g,
			 int n, int stale)
{
	double sum = 0;
	int nu = 0, lo = -1, hi = -1, tmax = -1;
	uint64_t used = 0, total = 0;
	unsigned pw = 0, lim = 0;
	for (int i = 0; i < n; i++) {
		const struct ig_gpu_dev *d = &g[i].last;
		if (d->valid & IG_GPU_V_UTIL) {
			sum += d->util_gpu_pct;
			nu++;
			if (lo < 0 || d->util_gpu_pct < g[lo].last.util_gpu_pct)
				lo = i;
			if (hi < 0 || d->util_gpu_pct > g[hi].last.util_gpu_pct)
				hi = i;
		}
		if (d->valid & IG_GPU_V_MEM) {
			used += d->mem_used;
			total += d->mem_total;
		}
		pw += d->valid & IG_GPU_V_POWER ? d->power_mw : 0;
		lim += d->valid & IG_GPU_V_LIMIT ? d->power_limit_mw : 0;
		if (d->valid & IG_GPU_V_TEMP && (int)d->temp_c > tmax)
			tmax = (int)d->temp_c;
	}
	char line[256], a[24], b[24], u[64] = "util -";
	if (nu)
		snprintf(u, sizeof(u), "util avg %.0f%% min %u%% (GPU%u) max %u%% (GPU%u)",
			 sum / nu, g[lo].last.util_gpu_pct, g[lo].last.index,
			 g[hi].last.util_gpu_pct, g[hi].last.index);
	int k = snprintf(line, sizeof(line), "GPUs %d  %s  mem %s/%s  power %.1fkW/%.1fkW", n, u,
			 fmt_bytes(a, sizeof(a), used), fmt_bytes(b, sizeof(b), total), pw / 1e6,
			 lim / 1e6);
	if (tmax >= 0 && k > 0 && (size_t)k < sizeof(line))
		snprintf(line + k, sizeof(line) - (size_t)k, "  temp max %dC", tmax);
	draw_text(t, r, 0, 0, -1, stale ? TH_DIM : TH_HEADER_VALUE, line);
	if (r->h < 2)
		return;
	int x = 0;
	for (int i = 0; i < n && x < r->w; i++) {
		const struct ig_gpu_dev *d = &g[i].last;
		snprintf(line, sizeof(line), "%u:%s", d->index,
			 num_text(a, sizeof(a), d->valid & IG_GPU_V_UTIL, d->util_gpu_pct, "%"));
		int slot = !(d->valid & IG_GPU_V_UTIL) ? TH_DIM
			   : d->util_gpu_pct >= 90     ? TH_METER_CRIT
			   : d->util_gpu_pct >= 70     ? TH_METER_WARN
						       : TH_METER_OK;
		x += draw_text(t, r, 1, x, -1, slot, line) + 2;
	}
}

static void gpu_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r, int focused)
{
	struct ig_gpu_stats g[IG_GPU_MAX_DEVS];
	const struct ig_status *st = session_status(t->s);
	int n = read_gpus(t, g);
	for (int y = 0; y < r->h; y++)
		draw_fill(t, r, y, TH_HEADER);
	if (!n)
		return;
	int stale = st->mode == IG_MODE_LIVE && st->nvml_stuck_ns > 0;
	int rows = r->h;
	if (stale) /* the last row says why the values do not move */
		rows = rows > 1 ? rows - 1 : 1;
	if (n <= FULL_MAX && rows >= 2 * n && r->w >= 80) {
		for (int i = 0; i < n; i++)
			draw_full(t, r, 2 * i, &g[i], stale);
	} else if (n <= FULL_MAX && rows >= n) {
		for (int i = 0; i < n; i++)
			draw_line(t, r, i, &g[i], stale);
	} else {
		struct tui_rect s = *r;
		s.h = rows < 2 ? rows : 2;
		draw_summary(t, &s, g, n, stale);
	}
	if (stale) {
		char note[256], age[32];
		snprintf(note, sizeof(note), "NVML: %s (values as of %s ago)", st->nvml,
			 fmt_age(age, sizeof(age), g[0].age_ns));
		draw_text(t, r, r->h - 1, r->h > 1 ? 0 : r->w / 2, -1, TH_ERROR, note);
	}
}

const struct tui_pane pane_gpu = {
    .name = "gpu",
    .area = AREA_GPU,
    .min_w = TUI_FLOOR_W,
    .min_h = 1,
    .want = gpu_want,
    .draw = gpu_draw,
    .key = NULL, /* meters, not a list: never focused */
};
