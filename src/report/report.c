/* Batch frames: the text frame of `--batch`, the JSON object of `--json`,
 * their `--summary` variants, number formatting and the JSON string escaper.
 * The layout is documented in report.h; tests parse it, keep it stable. */
#include "report/report.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detect/detect.h"
#include "model/model.h"
#include "core/ops.h"
#include "core/status.h"

#define MAX_ROWS 256

char *report_fmt_ns(char *b, size_t n, uint64_t ns)
{
	double v = (double)ns;
	if (ns < 1000)
		snprintf(b, n, "%luns", (unsigned long)ns);
	else if (v < 999.5e3)
		snprintf(b, n, v < 9.995e3 ? "%.2fus" : v < 99.95e3 ? "%.1fus" : "%.0fus", v / 1e3);
	else if (v < 999.5e6)
		snprintf(b, n, v < 9.995e6 ? "%.2fms" : v < 99.95e6 ? "%.1fms" : "%.0fms", v / 1e6);
	else if (v < 59.95e9)
		snprintf(b, n, v < 9.995e9 ? "%.2fs" : "%.1fs", v / 1e9);
	else {
		uint64_t s = (ns + 500000000ull) / 1000000000ull;
		snprintf(b, n, "%lum%02lus", (unsigned long)(s / 60), (unsigned long)(s % 60));
	}
	return b;
}

char *report_fmt_bytes(char *b, size_t n, uint64_t bytes)
{
	double v = (double)bytes;
	if (bytes < 1024)
		snprintf(b, n, "%luB", (unsigned long)bytes);
	else if (v < 1048576.0 * 0.9995)
		snprintf(b, n, "%.1fKiB", v / 1024);
	else if (v < 1073741824.0 * 0.9995)
		snprintf(b, n, "%.1fMiB", v / 1048576);
	else if (v < 1099511627776.0 * 0.9995)
		snprintf(b, n, "%.1fGiB", v / 1073741824.0);
	else
		snprintf(b, n, "%.1fTiB", v / 1099511627776.0);
	return b;
}

/* --- JSON strings ---------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static int utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && s[1] < 0xa0)
			return 0; /* overlong */
		if (c == 0xed && s[1] >= 0xa0)
			return 0; /* surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && s[1] < 0x90)
			return 0;
		if (c == 0xf4 && s[1] >= 0x90)
			return 0; /* > U+10FFFF */
		return 4;
	}
	return 0;
}

size_t report_json_escape(char *dst, size_t cap, const char *src)
{
	size_t o = 0;
#define OUT(ch)                                                                                    \
	do {                                                                                       \
		if (o + 1 < cap)                                                                   \
			dst[o] = (char)(ch);                                                       \
		o++;                                                                               \
	} while (0)
	const unsigned char *s = (const unsigned char *)(src ? src : "");
	while (*s) {
		unsigned c = *s;
		const char *esc = NULL;
		char u[8];
		int len = 1;
		switch (c) {
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '\t':
			esc = "\\t";
			break;
		case '\b':
			esc = "\\b";
			break;
		case '\f':
			esc = "\\f";
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				snprintf(u, sizeof(u), "\\u%04x", c);
				esc = u;
			} else if (c >= 0x80) {
				len = utf8_len(s);
				if (!len) {
					esc = "\\ufffd";
					len = 1;
				} else if (len == 3 && c == 0xe2 && s[1] == 0x80 &&
					   (s[2] == 0xa8 || s[2] == 0xa9)) {
					/* U+2028/2029 break JavaScript string literals */
					snprintf(u, sizeof(u), "\\u%04x", 0x2000 + (s[2] - 0x80));
					esc = u;
				}
			}
		}
		if (esc) {
			for (const char *p = esc; *p; p++)
				OUT(*p);
		} else {
			for (int k = 0; k < len; k++)
				OUT(s[k]);
		}
		s += len;
	}
	if (cap)
		dst[o < cap ? o : cap - 1] = 0;
#undef OUT
	return o;
}

void report_json_str(FILE *f, const char *s)
{
	char buf[1024];
	size_t need = report_json_escape(buf, sizeof(buf), s);
	fputc('"', f);
	if (need < sizeof(buf)) {
		fputs(buf, f);
	} else {
		char *big = malloc(need + 1);
		if (big) {
			report_json_escape(big, need + 1, s);
			fputs(big, f);
			free(big);
		} else {
			fputs(buf, f);
		}
	}
	fputc('"', f);
}

/* --- shared --------------------------------------------------------------------- */

static void fmt_time(char *b, size_t n, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;
	if (!ns || !gmtime_r(&t, &tm)) {
		snprintf(b, n, "-");
		return;
	}
	strftime(b, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* 2026-01-01T00:00:01.096Z */
static void fmt_time_ms(char *b, size_t n, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;
	if (!ns || !gmtime_r(&t, &tm)) {
		snprintf(b, n, "-");
		return;
	}
	char s[32];
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(b, n, "%s.%03luZ", s, (unsigned long)(ns / 1000000 % 1000));
}

/* Numbers in both formats use '.' whatever the process locale (the TUI
 * sets one for wide characters). */
struct cloc {
	locale_t c, old;
};

static void cloc_enter(struct cloc *l)
{
	l->c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	l->old = l->c ? uselocale(l->c) : (locale_t)0;
}

static void cloc_leave(struct cloc *l)
{
	if (l->c) {
		uselocale(l->old);
		freelocale(l->c);
	}
}

/* One op row, window or lifetime. */
struct oprow {
	struct ig_series_stats s;
	const struct ig_pcts *p;
	uint64_t calls;
	double rate;
	uint64_t time_ns;
};

static int cmp_oprow(const void *a, const void *b)
{
	const struct oprow *x = a, *y = b;
	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return x->s.op - y->s.op;
}

static int collect_ops(const struct ig_model *m, int summary, struct oprow *rows)
{
	int ops[IG_OP_MAX], n = model_ops(m, ops, IG_OP_MAX), k = 0;
	struct ig_model_totals t;
	model_totals(m, &t);
	double life_s = t.now_ns > t.first_ns ? (double)(t.now_ns - t.first_ns) / 1e9 : 0;
	for (int i = 0; i < n; i++) {
		struct oprow *r = &rows[k];
		if (model_op_stats(m, ops[i], &r->s))
			continue;
		if (summary) {
			r->p = &r->s.life;
			r->calls = r->s.calls_life;
			r->rate = life_s > 0 ? (double)r->calls / life_s : 0;
			r->time_ns = r->s.life.mean * r->s.life.n;
		} else {
			if (!r->s.calls_win)
				continue;
			r->p = &r->s.win;
			r->calls = r->s.calls_win;
			r->rate = r->s.calls_per_s;
			r->time_ns = r->s.time_win_ns;
		}
		k++;
	}
	qsort(rows, (size_t)k, sizeof(*rows), cmp_oprow);
	for (int i = 0; i < k; i++) /* qsort moved the stats: re-point */
		rows[i].p = summary ? &rows[i].s.life : &rows[i].s.win;
	return k;
}

static int proc_shown(const struct ig_proc_stats *p, int summary)
{
	if (summary)
		return p->calls_life || p->life_off_preempt_ns || p->life_off_blocked_ns ||
		       p->life_off_unknown_ns || p->page_bytes_life;
	return p->calls_win || p->off_preempt_ns || p->off_blocked_ns || p->off_unknown_ns ||
	       p->io_ops_win || p->page_bytes_win;
}

/* Off-CPU numbers of a process for the chosen scope. */
struct offv {
	uint64_t wall, pre, blk, unk, btw;
	double rate;
};

static void offv_of(const struct ig_model *m, const struct ig_proc_stats *p, int summary,
		    struct offv *v)
{
	if (summary) {
		struct ig_model_totals t;
		model_totals(m, &t);
		double life_s = t.now_ns > p->first_ns ? (double)(t.now_ns - p->first_ns) / 1e9 : 0;
		v->wall = p->life_wall_ns;
		v->pre = p->life_off_preempt_ns;
		v->blk = p->life_off_blocked_ns;
		v->unk = p->life_off_unknown_ns;
		v->btw = p->life_off_between_ns;
		v->rate = life_s > 0 ? (double)p->calls_life / life_s : 0;
	} else {
		v->wall = p->wall_ns;
		v->pre = p->off_preempt_ns;
		v->blk = p->off_blocked_ns;
		v->unk = p->off_unknown_ns;
		v->btw = p->off_between_ns;
		v->rate = p->calls_per_s;
	}
}

static double pctof(uint64_t a, uint64_t b)
{
	double v = b ? 100.0 * (double)a / (double)b : 0;
	return v > 100 ? 100 : v;
}

/* comm for a whitespace-separated text column */
static const char *col(char *b, const char *comm)
{
	size_t i = 0;
	for (; comm && comm[i] && i < IG_COMM_LEN - 1; i++)
		b[i] = comm[i] == ' ' || comm[i] == '\t' ? '_' : comm[i];
	b[i] = 0;
	if (!i) {
		b[0] = '?';
		b[1] = 0;
	}
	return b;
}

static const char *mode_name(const struct ig_status *st)
{
	return st && st->mode == IG_MODE_REPLAY ? "replay" : "live";
}

/* --- text -------------------------------------------------------------------------- */

static void text_header(FILE *f, const struct ig_model *m, const struct ig_status *st,
			const struct report_opts *o)
{
	struct ig_model_totals t;
	model_totals(m, &t);
	char tm[32];
	fmt_time(tm, sizeof(tm), t.now_ns);
	if (o->summary)
		fprintf(f, "ingero-top %s %s summary %.1fs", mode_name(st), tm,
			t.now_ns > t.first_ns ? (double)(t.now_ns - t.first_ns) / 1e9 : 0.0);
	else
		fprintf(f, "ingero-top %s %s window %us", mode_name(st), tm,
			model_cfg(m)->window_s);
	fprintf(f,
		" events/s %.1f events %lu drops kernel %lu user %lu probes attached %d failed %d "
		"missing %d\n",
		st ? st->events_per_s : 0.0,
		(unsigned long)(st && st->events_total ? st->events_total : t.events),
		(unsigned long)(st ? st->drops_kernel : 0),
		(unsigned long)(st ? st->drops_user : 0), st ? st->probes_attached : 0,
		st ? st->probes_failed : 0, st ? st->probes_missing : 0);
	struct ig_host h;
	model_host(m, &h);
	if (h.valid)
		fprintf(f, "host cpu %.1f%% mem %.1f%% swap %luMiB load %.2f\n", h.cpu_pct,
			h.mem_pct, (unsigned long)h.swap_mb, h.load1);
	if (st && st->mode == IG_MODE_REPLAY) {
		char a[32], b[32];
		fmt_time(a, sizeof(a), st->replay_start_ns);
		fmt_time(b, sizeof(b), st->replay_end_ns);
		fprintf(f, "replay %s .. %s speed %g%s\n", a, b, st->replay_speed,
			st->paused ? " paused" : "");
	}
	if (st && st->mode == IG_MODE_LIVE) /* calls the collector missed, or may have */
		fprintf(f, "collection late %d (PID %d) partial %lu too-deep %lu holds %lu\n",
			st->late_pids, st->late_pid, (unsigned long)st->calls_partial,
			(unsigned long)st->calls_too_deep, (unsigned long)st->holds);
	if (st && st->recording[0])
		fprintf(f, "recording %s%s%s\n", st->recording,
			st->record_error[0] ? " error: " : "", st->record_error);
	if (st && st->message[0])
		fprintf(f, "message %s\n", st->message);
	if (t.no_split_seen)
		fprintf(f,
			"note: some calls have no preempted/blocked split (imported recording)\n");
}

int report_text(FILE *f, const struct ig_model *m, const struct ig_status *st,
		const struct report_opts *o)
{
	static const struct report_opts defo;
	if (!o)
		o = &defo;
	struct cloc loc;
	cloc_enter(&loc);
	text_header(f, m, st, o);

	struct oprow *rows = calloc(IG_OP_MAX, sizeof(*rows));
	struct ig_proc_stats *procs = calloc(MAX_ROWS, sizeof(*procs));
	if (!rows || !procs) {
		free(rows);
		free(procs);
		cloc_leave(&loc);
		return -ENOMEM;
	}
	char a[24], b[24], c[24], d[24], cm[IG_COMM_LEN], w[64];

	fprintf(f, "\n%-24s %9s %10s  %-12s %-12s %-12s %s\n", "OP", "CALLS", "RATE", "P50", "P95",
		"P99", "MAX");
	int n = collect_ops(m, o->summary, rows);
	for (int i = 0; i < n && (!o->max_ops || i < o->max_ops); i++) {
		const struct oprow *r = &rows[i];
		char rate[24];
		snprintf(rate, sizeof(rate), "%.1f/s", r->rate);
		fprintf(
		    f, "%-24s %9lu %10s  p50 %-8s p95 %-8s p99 %-8s max %s\n", ig_op_name(r->s.op),
		    (unsigned long)r->calls, rate, report_fmt_ns(a, sizeof(a), r->p->p50),
		    report_fmt_ns(b, sizeof(b), r->p->p95), report_fmt_ns(c, sizeof(c), r->p->p99),
		    report_fmt_ns(d, sizeof(d), r->p->max));
	}

	fprintf(f, "\n%-10s %-16s %-14s %-22s %-22s %-22s %-22s %s\n", "PID", "COMM", "CALLS/S",
		"OFFCPU-PREEMPTED", "OFFCPU-BLOCKED", "OFFCPU-UNKNOWN", "BETWEEN-CALLS",
		"TOP-PREEMPTOR");
	int np = model_procs(m, procs, MAX_ROWS), shown = 0;
	for (int i = 0; i < np; i++) {
		const struct ig_proc_stats *p = &procs[i];
		if (!proc_shown(p, o->summary))
			continue;
		if (o->max_procs && shown >= o->max_procs)
			break;
		shown++;
		struct offv v;
		offv_of(m, p, o->summary, &v);
		char pid[16], rate[24];
		snprintf(pid, sizeof(pid), "%u", p->pid);
		snprintf(rate, sizeof(rate), "%.1f", v.rate);
		fprintf(f,
			"pid %-6s %-16s calls/s %-6s preempted %-7s %5.1f%%  blocked %-7s %5.1f%%  "
			"unknown %-7s %5.1f%%  between %-7s %5.1f%%  top ",
			pid, col(cm, p->comm), rate, report_fmt_ns(a, sizeof(a), v.pre),
			pctof(v.pre, v.wall), report_fmt_ns(b, sizeof(b), v.blk),
			pctof(v.blk, v.wall), report_fmt_ns(c, sizeof(c), v.unk),
			pctof(v.unk, v.wall), report_fmt_ns(d, sizeof(d), v.btw),
			pctof(v.btw, v.wall));
		if (p->npreemptors) {
			snprintf(w, sizeof(w), "%s[%u]", col(cm, p->preemptors[0].comm),
				 p->preemptors[0].pid);
			fprintf(f, "%s %.0f%%\n", w, p->preemptors[0].share * 100);
		} else {
			fprintf(f, "-\n");
		}
	}

	int nc = model_chain_count(m), listed = 0;
	int active = 0;
	for (int i = 0; i < nc; i++)
		active += model_chain(m, i)->active;
	fprintf(f, "\nCHAINS %d\n", o->resolved ? nc : active);
	for (int i = 0; i < nc; i++) {
		const struct ig_chain *ch = model_chain(m, i);
		if (!ch->active && !o->resolved)
			continue;
		if (o->max_chains && listed >= o->max_chains)
			break;
		listed++;
		fprintf(f, "[%s] %s %s%s %s\n", detect_sev_name(ch->severity), ch->id_str,
			detect_class_name(ch->cls), ch->active ? "" : " resolved", ch->summary);
		if (!o->details)
			continue;
		fprintf(f, "    why: %s\n", ch->explanation);
		fprintf(f, "    evidence:");
		for (int k = 0; k < ch->nevidence; k++)
			fprintf(f, " %s=%g%s", ch->ev[k].key, ch->ev[k].value, ch->ev[k].unit);
		fputc('\n', f);
		if (ch->lacking[0])
			fprintf(f, "    missing: %s\n", ch->lacking);
		for (int k = 0; k < ch->nrecs; k++)
			fprintf(f, "    do: %s\n", ch->recs[k]);
		for (int k = 0; k < ch->ntimeline; k++) {
			char tm[40];
			fmt_time_ms(tm, sizeof(tm), ch->timeline[k].ts_ns);
			fprintf(f, "    at %s %s\n", tm, ch->timeline[k].text);
		}
	}
	free(rows);
	free(procs);
	cloc_leave(&loc);
	return ferror(f) ? -EIO : 0;
}

/* --- JSON -------------------------------------------------------------------------- */

static void jnum(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else if (v == floor(v) && fabs(v) < 9e15)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.6g", v);
}

static void jkey(FILE *f, const char *k, int *first)
{
	if (!*first)
		fputc(',', f);
	*first = 0;
	fprintf(f, "\"%s\":", k);
}

#define JU(k, v) (jkey(f, k, &first), fprintf(f, "%lu", (unsigned long)(v)))
#define JI(k, v) (jkey(f, k, &first), fprintf(f, "%d", (int)(v)))
#define JD(k, v) (jkey(f, k, &first), jnum(f, v))
#define JS(k, v) (jkey(f, k, &first), report_json_str(f, v))

static void json_pcts(FILE *f, const struct ig_pcts *p)
{
	int first = 1;
	fputc('{', f);
	JU("n", p->n);
	JU("p50_ns", p->p50);
	JU("p90_ns", p->p90);
	JU("p95_ns", p->p95);
	JU("p99_ns", p->p99);
	JU("p999_ns", p->p999);
	JU("max_ns", p->max);
	JU("mean_ns", p->mean);
	fputc('}', f);
}

static void json_chain(FILE *f, const struct ig_chain *c)
{
	int first = 1;
	fputc('{', f);
	JS("id", c->id_str);
	JS("severity", detect_sev_name(c->severity));
	JS("max_severity", detect_sev_name(c->max_severity));
	JS("class", detect_class_name(c->cls));
	JS("op", c->op ? ig_op_name(c->op) : "");
	JU("pid", c->pid);
	JU("tid", c->tid);
	JS("comm", c->comm);
	JU("culprit_pid", c->culprit_pid);
	JS("culprit_comm", c->culprit_comm);
	JU("p50_ns", c->p50_ns);
	JU("p99_ns", c->p99_ns);
	JD("tail_ratio", c->tail_ratio);
	JS("summary", c->summary);
	JS("explanation", c->explanation);
	JS("lacking", c->lacking);
	jkey(f, "evidence", &first);
	fputc('{', f);
	for (int k = 0; k < c->nevidence; k++) {
		if (k)
			fputc(',', f);
		report_json_str(f, c->ev[k].key);
		fputc(':', f);
		jnum(f, c->ev[k].value);
	}
	fputc('}', f);
	jkey(f, "recommendations", &first);
	fputc('[', f);
	for (int k = 0; k < c->nrecs; k++) {
		if (k)
			fputc(',', f);
		report_json_str(f, c->recs[k]);
	}
	fputc(']', f);
	jkey(f, "timeline", &first);
	fputc('[', f);
	for (int k = 0; k < c->ntimeline; k++) {
		fprintf(f, "%s{\"ts_ns\":%lu,\"text\":", k ? "," : "",
			(unsigned long)c->timeline[k].ts_ns);
		report_json_str(f, c->timeline[k].text);
		fputc('}', f);
	}
	fputc(']', f);
	JU("first_seen_ns", c->first_seen_ns);
	JU("last_seen_ns", c->last_seen_ns);
	JU("updated_ns", c->updated_ns);
	jkey(f, "active", &first);
	fputs(c->active ? "true" : "false", f);
	fputc('}', f);
}

int report_json(FILE *f, const struct ig_model *m, const struct ig_status *st,
		const struct report_opts *o)
{
	static const struct report_opts defo;
	if (!o)
		o = &defo;
	struct oprow *rows = calloc(IG_OP_MAX, sizeof(*rows));
	struct ig_proc_stats *procs = calloc(MAX_ROWS, sizeof(*procs));
	if (!rows || !procs) {
		free(rows);
		free(procs);
		return -ENOMEM;
	}
	struct cloc loc;
	cloc_enter(&loc);
	struct ig_model_totals t;
	model_totals(m, &t);
	char tm[32];
	fmt_time(tm, sizeof(tm), t.now_ns);
	int first = 1;
	fputc('{', f);
	JS("type", o->summary ? "summary" : "frame");
	JU("time_ns", t.now_ns);
	JS("time", tm);
	JS("mode", mode_name(st));
	JU("window_s", model_cfg(m)->window_s);
	JU("first_ns", t.first_ns);

	jkey(f, "status", &first);
	{
		int first2 = first;
		first = 1;
		fputc('{', f);
		JD("events_per_s", st ? st->events_per_s : 0);
		JU("events_total", st && st->events_total ? st->events_total : t.events);
		JU("drops_kernel", st ? st->drops_kernel : 0);
		JU("drops_user", st ? st->drops_user : 0);
		JI("probes_attached", st ? st->probes_attached : 0);
		JI("probes_failed", st ? st->probes_failed : 0);
		JI("probes_missing", st ? st->probes_missing : 0);
		JI("libs", st ? st->libs : 0);
		JI("targets", st ? st->targets : 0);
		JI("paused", st ? st->paused : 0);
		if (st && st->mode == IG_MODE_LIVE) {
			JI("late_pids", st->late_pids);
			JI("late_pid", st->late_pid);
			JU("calls_partial", st->calls_partial);
			JU("calls_too_deep", st->calls_too_deep);
			JU("holds", st->holds);
		}
		if (st && st->mode == IG_MODE_REPLAY) {
			JD("replay_speed", st->replay_speed);
			JU("replay_pos_ns", st->replay_pos_ns);
			JU("replay_start_ns", st->replay_start_ns);
			JU("replay_end_ns", st->replay_end_ns);
		}
		JS("host", st ? st->host : "");
		JS("recording", st ? st->recording : "");
		JS("record_error", st ? st->record_error : "");
		JS("message", st ? st->message : "");
		JU("late_events", t.late);
		JU("ignored_events", t.ignored);
		JI("no_split", t.no_split_seen);
		fputc('}', f);
		first = first2;
	}

	struct ig_host h;
	model_host(m, &h);
	jkey(f, "host", &first);
	if (h.valid) {
		int first2 = first;
		first = 1;
		fputc('{', f);
		JU("ts_ns", h.ts_ns);
		JD("cpu_pct", h.cpu_pct);
		JD("mem_pct", h.mem_pct);
		JU("mem_avail_mb", h.mem_avail_mb);
		JU("swap_mb", h.swap_mb);
		JD("load1", h.load1);
		JD("cpu_max_win", h.cpu_max_win);
		JD("mem_max_win", h.mem_max_win);
		fputc('}', f);
		first = first2;
	} else {
		fputs("null", f);
	}

	jkey(f, "ops", &first);
	fputc('[', f);
	int n = collect_ops(m, o->summary, rows);
	for (int i = 0; i < n && (!o->max_ops || i < o->max_ops); i++) {
		const struct oprow *r = &rows[i];
		int first2 = first;
		first = 1;
		fputs(i ? ",{" : "{", f);
		JS("op", ig_op_name(r->s.op));
		JU("calls", r->calls);
		JU("calls_life", r->s.calls_life);
		JU("calls_win", r->s.calls_win);
		JD("rate", r->rate);
		JU("p50_ns", r->p->p50);
		JU("p90_ns", r->p->p90);
		JU("p95_ns", r->p->p95);
		JU("p99_ns", r->p->p99);
		JU("p999_ns", r->p->p999);
		JU("max_ns", r->p->max);
		JU("mean_ns", r->p->mean);
		JD("tail_ratio", r->p->p50 ? (double)r->p->p99 / (double)r->p->p50 : 0);
		JU("time_ns", r->time_ns);
		JD("wall_share", r->s.wall_share);
		if (r->s.tail_preempt_share >= 0) {
			JD("tail_preempt_share", r->s.tail_preempt_share);
			JD("tail_blocked_share", r->s.tail_blocked_share);
		} else {
			jkey(f, "tail_preempt_share", &first);
			fputs("null", f);
			jkey(f, "tail_blocked_share", &first);
			fputs("null", f);
		}
		jkey(f, "win", &first);
		json_pcts(f, &r->s.win);
		jkey(f, "life", &first);
		json_pcts(f, &r->s.life);
		jkey(f, "severity", &first);
		if (r->s.severity >= 0)
			report_json_str(f, detect_sev_name(r->s.severity));
		else
			fputs("null", f);
		fputc('}', f);
		first = first2;
	}
	fputc(']', f);

	jkey(f, "procs", &first);
	fputc('[', f);
	int np = model_procs(m, procs, MAX_ROWS), shown = 0;
	for (int i = 0; i < np; i++) {
		const struct ig_proc_stats *p = &procs[i];
		if (!proc_shown(p, o->summary))
			continue;
		if (o->max_procs && shown >= o->max_procs)
			break;
		struct offv v;
		offv_of(m, p, o->summary, &v);
		int first2 = first;
		first = 1;
		fputs(shown++ ? ",{" : "{", f);
		JU("pid", p->pid);
		JU("ppid", p->ppid);
		JS("comm", p->comm);
		JU("cgroup_id", p->cgroup_id);
		JI("cuda", p->cuda);
		JI("exited", p->exited);
		JU("threads", p->threads);
		JU("calls_win", p->calls_win);
		JU("calls_life", p->calls_life);
		JD("calls_per_s", v.rate);
		JU("wall_ns", v.wall);
		JU("off_preempt_ns", v.pre);
		JU("off_blocked_ns", v.blk);
		JU("off_unknown_ns", v.unk);
		JU("off_between_ns", v.btw);
		JD("off_preempt_pct", pctof(v.pre, v.wall));
		JD("off_blocked_pct", pctof(v.blk, v.wall));
		JD("off_unknown_pct", pctof(v.unk, v.wall));
		JD("between_pct", pctof(v.btw, v.wall));
		if (!o->summary) {
			JU("cuda_ns", p->cuda_ns);
			JU("off_in_call_ns", p->off_in_call_ns);
			JU("between_on_cpu_ns", p->between_on_cpu_ns);
			JU("switches", p->switches);
		}
		JU("page_bytes", o->summary ? p->page_bytes_life : p->page_bytes_win);
		JU("io_ops_win", p->io_ops_win);
		JU("io_bytes_win", p->io_bytes_win);
		JU("io_max_ns_win", p->io_max_ns_win);
		jkey(f, "preemptors", &first);
		fputc('[', f);
		for (int k = 0; k < p->npreemptors; k++) {
			fprintf(f, "%s{\"pid\":%u,\"comm\":", k ? "," : "", p->preemptors[k].pid);
			report_json_str(f, p->preemptors[k].comm);
			fprintf(f, ",\"ns\":%lu,\"share\":", (unsigned long)p->preemptors[k].ns);
			jnum(f, p->preemptors[k].share);
			fputc('}', f);
		}
		fputc(']', f);
		jkey(f, "wakers", &first);
		fputc('[', f);
		for (int k = 0; k < p->nwakers; k++) {
			fprintf(f, "%s{\"pid\":%u,\"comm\":", k ? "," : "", p->wakers[k].pid);
			report_json_str(f, p->wakers[k].comm);
			fprintf(f, ",\"ns\":%lu,\"share\":", (unsigned long)p->wakers[k].ns);
			jnum(f, p->wakers[k].share);
			fputc('}', f);
		}
		fputc(']', f);
		fputc('}', f);
		first = first2;
	}
	fputc(']', f);

	jkey(f, "chains", &first);
	fputc('[', f);
	int listed = 0;
	for (int i = 0; i < model_chain_count(m); i++) {
		const struct ig_chain *c = model_chain(m, i);
		if (!c->active && !o->resolved)
			continue;
		if (o->max_chains && listed >= o->max_chains)
			break;
		if (listed++)
			fputc(',', f);
		json_chain(f, c);
	}
	fputs("]}\n", f);
	free(rows);
	free(procs);
	cloc_leave(&loc);
	return ferror(f) ? -EIO : 0;
}
