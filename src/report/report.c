/* Batch frames: the text frame of `--batch`, the JSON object of `--json`,
 * their `--summary` variants, and number formatting. JSON is written with
 * jansson (core/json.h).
 * The layout is documented in report.h; tests parse it, keep it stable. */
#include "report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detect/detect.h"
#include "model/model.h"
#include "core/fmt.h"
#include "core/json.h"
#include "report/json_build.h"
#include "core/escape.h"
#include "core/ops.h"
#include "core/status.h"
#include "detect/detect.h"
#include "model/model.h"
#include "report/report_gpu.h"
#include "report/report_stacks.h"

#define MAX_ROWS 256

char *report_fmt_ns(char *b, size_t n, uint64_t ns)
{
	return fmt_ns(b, n, ns);
}

char *report_fmt_bytes(char *b, size_t n, uint64_t bytes)
{
	return fmt_bytes(b, n, bytes);
}

/* --- shared --------------------------------------------------------------------- */

/* 2026-01-01T00:00:01Z, or with ms 2026-01-01T00:00:01.096Z; "-" for 0. */
static void fmt_utc(char *b, size_t n, uint64_t ns, int ms)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;
	char s[32];
	if (!ns || !gmtime_r(&t, &tm)) {
		snprintf(b, n, "-");
		return;
	}
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	if (ms)
		snprintf(b, n, "%s.%03luZ", s, (unsigned long)(ns / 1000000 % 1000));
	else
		snprintf(b, n, "%sZ", s);
}

static void fmt_time(char *b, size_t n, uint64_t ns)
{
	fmt_utc(b, n, ns, 0);
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

/* r from the stats already in r->s: window or lifetime. 0, or 1 when the
 * row has no calls in the window (not shown in a frame). */
static int oprow_fill(struct oprow *r, int summary, double life_s)
{
	if (summary) {
		r->p = &r->s.life;
		r->calls = r->s.calls_life;
		r->rate = life_s > 0 ? (double)r->calls / life_s : 0;
		r->time_ns = r->s.life.mean * r->s.life.n;
		return 0;
	}
	if (!r->s.calls_win)
		return 1;
	r->p = &r->s.win;
	r->calls = r->s.calls_win;
	r->rate = r->s.calls_per_s;
	r->time_ns = r->s.time_win_ns;
	return 0;
}

/* The op rows of every process (pid 0) or of one, by time spent. */
static int collect_ops_of(const struct ig_model *m, int summary, uint32_t pid, struct oprow *rows)
{
	int k = 0;
	struct ig_model_totals t;
	model_totals(m, &t);
	double life_s = t.now_ns > t.first_ns ? (double)(t.now_ns - t.first_ns) / 1e9 : 0;
	if (pid) {
		struct ig_series_stats *v = calloc(IG_OP_MAX, sizeof(*v));
		int n = v ? model_proc_ops(m, pid, v, IG_OP_MAX) : 0;
		for (int i = 0; i < n; i++) {
			rows[k].s = v[i];
			k += !oprow_fill(&rows[k], summary, life_s);
		}
		free(v);
	} else {
		int ops[IG_OP_MAX], n = model_ops(m, ops, IG_OP_MAX);
		for (int i = 0; i < n; i++)
			if (!model_op_stats(m, ops[i], &rows[k].s))
				k += !oprow_fill(&rows[k], summary, life_s);
	}
	qsort(rows, (size_t)k, sizeof(*rows), cmp_oprow);
	for (int i = 0; i < k; i++) /* qsort moved the stats: re-point */
		rows[i].p = summary ? &rows[i].s.life : &rows[i].s.win;
	return k;
}

static int collect_ops(const struct ig_model *m, int summary, struct oprow *rows)
{
	return collect_ops_of(m, summary, 0, rows);
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
		/* since the first event, as the ops' rates: one denominator */
		double life_s = t.now_ns > t.first_ns ? (double)(t.now_ns - t.first_ns) / 1e9 : 0;
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

/* A name as one whitespace-separated text column, escaped (core/escape.h);
 * b holds COL_LEN bytes. */
#define COL_LEN (IG_COMM_LEN * 4 + 1)
static const char *col(char *b, const char *comm)
{
	if (!comm || !comm[0])
		return "?";
	return esc_str(b, COL_LEN, comm, ESC_FIELD);
}

/* A container as one field (ig_proc_stats.container): escaped, "?" when
 * unknown; b holds IG_CONTAINER_LEN * 4 bytes. */
static const char *container_col(char *b, const char *container)
{
	if (!container[0])
		return "?";
	return esc_str(b, IG_CONTAINER_LEN * 4, container, ESC_FIELD);
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
	char tm[32], sp[48];
	fmt_time(tm, sizeof(tm), t.now_ns);
	if (o->summary)
		fprintf(f, "ingero-top %s %s summary %.1fs", mode_name(st), tm,
			t.now_ns > t.first_ns ? (double)(t.now_ns - t.first_ns) / 1e9 : 0.0);
	else /* the span the rates are over: the window, or less while it fills */
		fprintf(f, "ingero-top %s %s window %s", mode_name(st), tm,
			fmt_window_span(sp, sizeof(sp), t.first_ns ? t.win_span_ns : 0,
					model_cfg(m)->window_s));
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
		fprintf(f, "replay %s .. %s speed %g%s", a, b, st->replay_speed,
			st->paused ? " paused" : "");
		if (st->rows_refused) /* values out of range (docs/recording.md) */
			fprintf(f, " refused %lu rows", (unsigned long)st->rows_refused);
		fputc('\n', f);
	}
	if (st && st->mode == IG_MODE_LIVE) /* calls the collector missed, or may have */
		fprintf(f, "collection late %d (PID %d) partial %lu too-deep %lu holds %lu\n",
			st->late_pids, st->late_pid, (unsigned long)st->calls_partial,
			(unsigned long)st->calls_too_deep, (unsigned long)st->holds);
	if (st && st->recording[0]) {
		fputs("recording ", f);
		esc_fputs(f, st->recording, 0);
		if (st->record_error[0]) {
			fputs(" error: ", f);
			esc_fputs(f, st->record_error, 0);
		}
		if (st->record_dropped)
			fprintf(f, " lost %lu events", (unsigned long)st->record_dropped);
		if (st->record_summarised)
			fprintf(f, " summarised %lu calls", (unsigned long)st->record_summarised);
		if (st->record_waits)
			fprintf(f, " waited %lu times %.2fs for the writer",
				(unsigned long)st->record_waits, (double)st->record_wait_ns / 1e9);
		if (st->record_rate_hint) /* the writer is the limit: say what keeps up */
			fputs(" (it fell behind: --record-rate would have kept every count)", f);
		fputc('\n', f);
	}
	if (st && st->message[0]) {
		fputs("message ", f);
		esc_fputs(f, st->message, 0);
		fputc('\n', f);
	}
	if (t.no_split_seen)
		fprintf(f,
			"note: some calls have no preempted/blocked split (imported recording)\n");
}

char *report_fmt_evidence(char *b, size_t n, const struct ig_evidence *e)
{
	const char *u = e->unit;
	double v = e->value;
	if (!strcmp(u, "ns"))
		return fmt_ns(b, n, v > 0 ? (uint64_t)(v + 0.5) : 0);
	if (!strcmp(u, "B"))
		return fmt_bytes(b, n, v > 0 ? (uint64_t)(v + 0.5) : 0);
	if (!strcmp(u, "B/s")) {
		char t[24];
		snprintf(b, n, "%s/s", fmt_bytes(t, sizeof(t), v > 0 ? (uint64_t)(v + 0.5) : 0));
	} else if (!strcmp(u, "%")) {
		fmt_pct(b, n, v / 100);
	} else if (!strcmp(u, "x")) {
		fmt_ratio(b, n, v);
	} else if (!strcmp(u, "/s")) {
		snprintf(b, n, "%s/s", fmt_rate((char[24]){0}, 24, v));
	} else if (v == (double)(int64_t)v && fabs(v) < 1e15) {
		snprintf(b, n, "%lld%s", (long long)v, u);
	} else {
		snprintf(b, n, "%.3g%s", v, u);
	}
	return b;
}

/* Where the feeding threads' time went, one line per CUDA process shown:
 * every part as a share of their wall time (window, or since the start). */
static void text_time(FILE *f, unsigned window_s, const struct ig_proc_stats *procs, int np,
		      const struct report_opts *o)
{
	char cm[COL_LEN], w[24], s[16];
	int shown = 0;
	for (int i = 0; i < np; i++) {
		const struct ig_proc_stats *p = &procs[i];
		const struct ig_time_parts *t = o->summary ? &p->life_parts : &p->parts;
		if (!p->cuda || !t->wall_ns || !proc_shown(p, o->summary))
			continue;
		if (o->max_procs && shown >= o->max_procs)
			break;
		if (!shown++) {
			if (o->summary)
				fprintf(f,
					"\nTIME share of the feeding threads' wall time since they "
					"began calling CUDA\n");
			else
				fprintf(
				    f,
				    "\nTIME share of the feeding threads' wall time in the last "
				    "%us\n",
				    window_s);
		}
		fprintf(f, "pid %-6u %-16s tid %-7u wall %-7s", p->pid, col(cm, p->comm),
			p->feeder_tid, fmt_ns(w, sizeof(w), t->wall_ns));
		/* the first ten parts always; those of the kernel's wait evidence
		 * (throttled, file_io...) when there is some */
		for (int k = 0; k < IG_PART_MAX; k++)
			if (k <= IG_PART_UNKNOWN || t->ns[k])
				fprintf(f, " %s %s", ig_part_name(k),
					fmt_pct(s, sizeof(s), ig_part_share(t, k)));
		fputs(t->split_unknown ? " (split unknown)\n" : "\n", f);
	}
}

/* One chain: its line, and with details the lines under it. Every string
 * of a chain may hold names of traced processes (or come from a recording):
 * all go through the escaper. */
static void text_chain(FILE *f, const struct ig_chain *ch, int details, struct stacks *stk)
{
	char imp[16];
	fprintf(f, "[%s] ", detect_sev_name(ch->severity));
	esc_fputs(f, ch->id_str, ESC_FIELD);
	fprintf(f, " %s%s impact %s ", detect_class_name(ch->cls), ch->active ? "" : " resolved",
		fmt_pct(imp, sizeof(imp), ch->impact));
	esc_fputs(f, ch->summary, 0);
	fputc('\n', f);
	if (!details)
		return;
	fputs("    why: ", f);
	esc_fputs(f, ch->explanation, 0);
	fputs("\n    evidence:", f);
	for (int k = 0; k < ch->nevidence; k++) {
		char v[40];
		fputc(' ', f);
		esc_fputs(f, ch->ev[k].key, ESC_FIELD);
		fputc('=', f);
		esc_fputs(f, report_fmt_evidence(v, sizeof(v), &ch->ev[k]), ESC_FIELD);
	}
	fputc('\n', f);
	if (ch->lacking[0]) {
		fputs("    missing: ", f);
		esc_fputs(f, ch->lacking, 0);
		fputc('\n', f);
	}
	char site[3][REPORT_SITE_LEN];
	int ns = ch->stack_id ? report_call_site(stk, ch->stack_id, site, 3) : 0;
	for (int k = 0; k < ns; k++) {
		fputs("    call site: ", f);
		esc_fputs(f, site[k], 0);
		fputc('\n', f);
	}
	if (ch->stack_id && !ns)
		fprintf(f, "    call site: stack 0x%016" PRIx64 " (frames not known)\n",
			ch->stack_id);
	ns = ch->wake_stack_id ? report_waker_site(stk, ch->wake_stack_id, site, 3) : 0;
	for (int k = 0; k < ns; k++) { /* where the thread that ended the wait was */
		fputs("    waker at: ", f);
		esc_fputs(f, site[k], 0);
		fputc('\n', f);
	}
	for (int k = 0; k < ch->nrecs; k++) {
		fputs("    do: ", f);
		esc_fputs(f, ch->recs[k], 0);
		fputc('\n', f);
	}
	for (int k = 0; k < ch->ntimeline; k++) {
		char tm[40];
		fmt_utc(tm, sizeof(tm), ch->timeline[k].ts_ns, 1);
		fprintf(f, "    at %s ", tm);
		esc_fputs(f, ch->timeline[k].text, 0);
		fputc('\n', f);
	}
}

int report_text(FILE *f, const struct ig_model *m, const struct ig_detect *det,
		const struct ig_status *st, const struct report_opts *o)
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
	char a[24], b[24], c[24], d[24], cm[COL_LEN], w[COL_LEN + 16], ct[IG_CONTAINER_LEN * 4];

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

	fprintf(f, "\n%-10s %-16s %-22s %-14s %-22s %-22s %-22s %-22s %s\n", "PID", "COMM",
		"CONTAINER", "CALLS/S", "OFFCPU-PREEMPTED", "OFFCPU-BLOCKED", "OFFCPU-UNKNOWN",
		"BETWEEN-CALLS", "TOP-PREEMPTOR");
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
			"pid %-6s %-16s container %-12s calls/s %-6s preempted %-7s %5.1f%%  "
			"blocked %-7s %5.1f%%  unknown %-7s %5.1f%%  between %-7s %5.1f%%  top ",
			pid, col(cm, p->comm), container_col(ct, p->container), rate,
			report_fmt_ns(a, sizeof(a), v.pre), pctof(v.pre, v.wall),
			report_fmt_ns(b, sizeof(b), v.blk), pctof(v.blk, v.wall),
			report_fmt_ns(c, sizeof(c), v.unk), pctof(v.unk, v.wall),
			report_fmt_ns(d, sizeof(d), v.btw), pctof(v.btw, v.wall));
		if (p->npreemptors) {
			snprintf(w, sizeof(w), "%s[%u]", col(cm, p->preemptors[0].comm),
				 p->preemptors[0].pid);
			fprintf(f, "%s %.0f%%", w, p->preemptors[0].share * 100);
		} else {
			fprintf(f, "-");
		}
		if (p->gpu_mem_known) /* NVML's GPU memory of the process */
			fprintf(f, "  gpu_mem %s",
				report_fmt_bytes(a, sizeof(a), p->gpu_mem_bytes));
		fputc('\n', f);
	}

	text_time(f, model_cfg(m)->window_s, procs, np, o);
	report_gpu_text(f, m, o->summary);

	int nc = detect_count(det), listed = 0;
	int active = 0;
	for (int i = 0; i < nc; i++)
		active += detect_chain(det, i)->active;
	fprintf(f, "\nCHAINS %d\n", o->resolved ? nc : active);
	if (!nc && detect_why_none(det)[0]) {
		fputs("no chains: ", f);
		esc_fputs(f, detect_why_none(det), 0);
		fputc('\n', f);
	}
	for (int i = 0; i < nc; i++) {
		const struct ig_chain *ch = detect_chain(det, i);
		if (!ch->active && !o->resolved)
			continue;
		if (o->max_chains && listed >= o->max_chains)
			break;
		listed++;
		text_chain(f, ch, o->details, o->stacks);
	}
	free(rows);
	free(procs);
	cloc_leave(&loc);
	return ferror(f) ? -EIO : 0;
}

/* --- JSON (jansson through core/json.h) ------------------------------------------ */

/* The member shorthands and built(): report/json_build.h. */

/* p50_ns .. mean_ns of p into o (an op row has them, and win/life). */
static int set_pcts(json_t *o, const struct ig_pcts *p)
{
	int bad = 0;
	bad |= JU(o, "p50_ns", p->p50);
	bad |= JU(o, "p90_ns", p->p90);
	bad |= JU(o, "p95_ns", p->p95);
	bad |= JU(o, "p99_ns", p->p99);
	bad |= JU(o, "p999_ns", p->p999);
	bad |= JU(o, "max_ns", p->max);
	bad |= JU(o, "mean_ns", p->mean);
	return bad;
}

static json_t *json_pcts(const struct ig_pcts *p)
{
	json_t *o = json_object();
	int bad = !o;
	bad |= JU(o, "n", p->n);
	bad |= set_pcts(o, p);
	return built(o, bad);
}

/* The evidence, recommendations and timeline of a chain into o. */
static int json_chain_lists(json_t *o, const struct ig_chain *c)
{
	json_t *ev = json_object(), *recs = json_array(), *tl = json_array();
	int bad = 0;
	for (int k = 0; k < c->nevidence; k++)
		bad |= ig_json_set(ev, c->ev[k].key, ig_json_num(c->ev[k].value));
	for (int k = 0; k < c->nrecs; k++)
		bad |= ig_json_push(recs, ig_json_str(c->recs[k]));
	for (int k = 0; k < c->ntimeline; k++) {
		json_t *e = json_object();
		bad |= JU(e, "ts_ns", c->timeline[k].ts_ns);
		bad |= JS(e, "text", c->timeline[k].text);
		bad |= ig_json_push(tl, e);
	}
	bad |= ig_json_set(o, "evidence", ev);
	bad |= ig_json_set(o, "recommendations", recs);
	bad |= ig_json_set(o, "timeline", tl);
	return bad;
}

static json_t *json_chain(const struct ig_chain *c, struct stacks *stk)
{
	json_t *o = json_object();
	int bad = !o;
	bad |= JS(o, "id", c->id_str);
	bad |= JS(o, "severity", detect_sev_name(c->severity));
	bad |= JS(o, "max_severity", detect_sev_name(c->max_severity));
	bad |= JS(o, "class", detect_class_name(c->cls));
	bad |= JD(o, "impact", c->impact);
	bad |= JS(o, "op", c->op ? ig_op_name(c->op) : "");
	bad |= JU(o, "pid", c->pid);
	bad |= JU(o, "tid", c->tid);
	bad |= JC(o, "comm", c->comm);
	bad |= JU(o, "culprit_pid", c->culprit_pid);
	bad |= JC(o, "culprit_comm", c->culprit_comm);
	bad |= JU(o, "culprit_tid", c->culprit_tid);
	bad |= JU(o, "p50_ns", c->p50_ns);
	bad |= JU(o, "p99_ns", c->p99_ns);
	bad |= JD(o, "tail_ratio", c->tail_ratio);
	bad |= JS(o, "summary", c->summary);
	bad |= JS(o, "explanation", c->explanation);
	bad |= JS(o, "lacking", c->lacking);
	if (c->stack_id) /* the call site: its id, and its lines when known */
		bad |= report_site_json(o, "stack_id", "call_site", stk, c->stack_id, 0);
	else
		bad |= ig_json_set(o, "stack_id", json_null());
	if (c->wake_stack_id) /* where the threads that ended the waits were */
		bad |= report_site_json(o, "wake_stack_id", "waker_site", stk, c->wake_stack_id, 1);
	bad |= json_chain_lists(o, c);
	bad |= JU(o, "first_seen_ns", c->first_seen_ns);
	bad |= JU(o, "last_seen_ns", c->last_seen_ns);
	bad |= JU(o, "updated_ns", c->updated_ns);
	bad |= ig_json_set(o, "active", json_boolean(c->active));
	return built(o, bad);
}

static json_t *json_status(const struct ig_status *st, const struct ig_model_totals *t)
{
	json_t *o = json_object();
	int bad = !o;
	bad |= JD(o, "events_per_s", st ? st->events_per_s : 0);
	bad |= JU(o, "events_total", st && st->events_total ? st->events_total : t->events);
	bad |= JU(o, "drops_kernel", st ? st->drops_kernel : 0);
	bad |= JU(o, "drops_user", st ? st->drops_user : 0);
	bad |= JI(o, "probes_attached", st ? st->probes_attached : 0);
	bad |= JI(o, "probes_failed", st ? st->probes_failed : 0);
	bad |= JI(o, "probes_missing", st ? st->probes_missing : 0);
	bad |= JI(o, "libs", st ? st->libs : 0);
	bad |= JI(o, "targets", st ? st->targets : 0);
	bad |= JI(o, "paused", st ? st->paused : 0);
	if (st && st->mode == IG_MODE_LIVE) {
		bad |= JI(o, "late_pids", st->late_pids);
		bad |= JI(o, "late_pid", st->late_pid);
		bad |= JU(o, "calls_partial", st->calls_partial);
		bad |= JU(o, "calls_too_deep", st->calls_too_deep);
		bad |= JU(o, "holds", st->holds);
		if (st->nvml_state >= 0) {
			static const char *const nv[] = {"starting", "ok", "absent", "failed"};
			bad |= JS(o, "nvml", nv[st->nvml_state & 3]);
			bad |= JS(o, "nvml_note", st->nvml);
			bad |= JU(o, "nvml_stuck_ns", st->nvml_stuck_ns);
		}
	}
	if (st && st->mode == IG_MODE_REPLAY) {
		bad |= JD(o, "replay_speed", st->replay_speed);
		bad |= JU(o, "replay_pos_ns", st->replay_pos_ns);
		bad |= JU(o, "replay_start_ns", st->replay_start_ns);
		bad |= JU(o, "replay_end_ns", st->replay_end_ns);
		bad |= JU(o, "rows_refused", st->rows_refused);
	}
	bad |= JS(o, "host", st ? st->host : "");
	bad |= JS(o, "recording", st ? st->recording : "");
	bad |= JS(o, "record_error", st ? st->record_error : "");
	if (st && st->recording[0]) { /* while recording (goldens are replays) */
		bad |= JU(o, "record_dropped", st->record_dropped);
		bad |= JU(o, "record_summarised", st->record_summarised);
		bad |= JU(o, "record_waits", st->record_waits);
		bad |= JU(o, "record_wait_ns", st->record_wait_ns);
	}
	bad |= JS(o, "message", st ? st->message : "");
	bad |= JU(o, "late_events", t->late);
	bad |= JU(o, "ignored_events", t->ignored);
	bad |= JI(o, "no_split", t->no_split_seen);
	return built(o, bad);
}

/* The host meters, or null before the first snapshot. */
static json_t *json_host(const struct ig_model *m)
{
	struct ig_host h;
	model_host(m, &h);
	if (!h.valid)
		return json_null();
	json_t *o = json_object();
	int bad = !o;
	bad |= JU(o, "ts_ns", h.ts_ns);
	bad |= JD(o, "cpu_pct", h.cpu_pct);
	bad |= JD(o, "mem_pct", h.mem_pct);
	bad |= JU(o, "mem_avail_mb", h.mem_avail_mb);
	bad |= JU(o, "swap_mb", h.swap_mb);
	bad |= JD(o, "load1", h.load1);
	bad |= JD(o, "cpu_max_win", h.cpu_max_win);
	bad |= JD(o, "mem_max_win", h.mem_max_win);
	return built(o, bad);
}

static json_t *json_op(const struct oprow *r, const struct ig_detect *det)
{
	json_t *o = json_object();
	int bad = !o;
	bad |= JS(o, "op", ig_op_name(r->s.op));
	bad |= JU(o, "calls", r->calls);
	bad |= JU(o, "calls_life", r->s.calls_life);
	bad |= JU(o, "calls_win", r->s.calls_win);
	bad |= JD(o, "rate", r->rate);
	if (r->p == &r->s.win && r->s.bytes_win) { /* a frame's op that moved bytes */
		bad |= JU(o, "bytes_win", r->s.bytes_win);
		bad |= JD(o, "bytes_per_s", r->s.bytes_per_s);
	}
	bad |= set_pcts(o, r->p);
	bad |= JD(o, "tail_ratio", r->p->p50 ? (double)r->p->p99 / (double)r->p->p50 : 0);
	bad |= JU(o, "time_ns", r->time_ns);
	bad |= JD(o, "wall_share", r->s.wall_share);
	int split = r->s.tail_preempt_share >= 0; /* null: no preempted/blocked split */
	bad |= ig_json_set(o, "tail_preempt_share",
			   split ? ig_json_num(r->s.tail_preempt_share) : json_null());
	bad |= ig_json_set(o, "tail_blocked_share",
			   split ? ig_json_num(r->s.tail_blocked_share) : json_null());
	bad |= ig_json_set(o, "win", json_pcts(&r->s.win));
	bad |= ig_json_set(o, "life", json_pcts(&r->s.life));
	int sev = detect_severity(det, r->s.op, r->s.pid);
	bad |=
	    ig_json_set(o, "severity", sev >= 0 ? ig_json_str(detect_sev_name(sev)) : json_null());
	return built(o, bad);
}

/* Preemptors or wakers: [{pid, comm, ns, share}]. */
static json_t *json_peers(const struct ig_culprit *v, int n)
{
	json_t *a = json_array();
	int bad = !a;
	for (int k = 0; k < n; k++) {
		json_t *o = json_object();
		bad |= JU(o, "pid", v[k].pid);
		bad |= JC(o, "comm", v[k].comm);
		bad |= JU(o, "ns", v[k].ns);
		bad |= JD(o, "share", v[k].share);
		bad |= ig_json_push(a, o);
	}
	return built(a, bad);
}

/* Where the feeding threads' time went: {wall_ns, tid, split_unknown,
 * parts: {gpu_wait: ns, ...}}; the parts add up to wall_ns. */
static json_t *json_time(const struct ig_proc_stats *p, const struct ig_time_parts *t)
{
	json_t *o = json_object(), *parts = json_object();
	int bad = !o || !parts;
	bad |= JU(o, "wall_ns", t->wall_ns);
	bad |= JU(o, "tid", p->feeder_tid);
	bad |= ig_json_set(o, "split_unknown", json_boolean(t->split_unknown));
	for (int k = 0; k < IG_PART_MAX; k++)
		bad |= JU(parts, ig_part_name(k), t->ns[k]);
	bad |= ig_json_set(o, "parts", parts);
	return built(o, bad);
}

/* The CPU quota of its cgroup: {quota_us, period_us, v2, dir, throttled_ns,
 * nr_throttled, nr_periods} (the window's, or since the start). */
static json_t *json_quota(const struct ig_quota *q, int summary)
{
	json_t *o = json_object();
	int bad = !o;
	bad |= JU(o, "quota_us", q->quota_us);
	bad |= JU(o, "period_us", q->period_us);
	bad |= ig_json_set(o, "v2", json_boolean(q->v2));
	bad |= JS(o, "dir", q->dir);
	bad |= JU(o, "throttled_ns", summary ? q->life_thr_ns : q->thr_ns);
	bad |= JU(o, "nr_throttled", summary ? q->life_nr_thr : q->nr_thr);
	bad |= JU(o, "nr_periods", summary ? q->life_nr_per : q->nr_per);
	return built(o, bad);
}

static json_t *json_proc(const struct ig_model *m, const struct ig_proc_stats *p, int summary)
{
	struct offv v;
	offv_of(m, p, summary, &v);
	json_t *o = json_object();
	int bad = !o;
	bad |= JU(o, "pid", p->pid);
	bad |= JU(o, "ppid", p->ppid);
	bad |= JC(o, "comm", p->comm);
	bad |= JS(o, "container", p->container); /* "" unknown */
	bad |= JU(o, "cgroup_id", p->cgroup_id);
	bad |= JI(o, "cuda", p->cuda);
	bad |= JI(o, "exited", p->exited);
	bad |= JU(o, "threads", p->threads);
	bad |= JU(o, "calls_win", p->calls_win);
	bad |= JU(o, "calls_life", p->calls_life);
	bad |= JD(o, "calls_per_s", v.rate);
	bad |= JU(o, "wall_ns", v.wall);
	bad |= JU(o, "off_preempt_ns", v.pre);
	bad |= JU(o, "off_blocked_ns", v.blk);
	bad |= JU(o, "off_unknown_ns", v.unk);
	bad |= JU(o, "off_between_ns", v.btw);
	bad |= JD(o, "off_preempt_pct", pctof(v.pre, v.wall));
	bad |= JD(o, "off_blocked_pct", pctof(v.blk, v.wall));
	bad |= JD(o, "off_unknown_pct", pctof(v.unk, v.wall));
	bad |= JD(o, "between_pct", pctof(v.btw, v.wall));
	if (!summary) {
		bad |= JU(o, "cuda_ns", p->cuda_ns);
		bad |= JU(o, "off_in_call_ns", p->off_in_call_ns);
		bad |= JU(o, "between_on_cpu_ns", p->between_on_cpu_ns);
		bad |= JU(o, "switches", p->switches);
	}
	bad |= JU(o, "page_bytes", summary ? p->page_bytes_life : p->page_bytes_win);
	bad |= JU(o, "io_ops_win", p->io_ops_win);
	bad |= JU(o, "io_bytes_win", p->io_bytes_win);
	bad |= JU(o, "io_max_ns_win", p->io_max_ns_win);
	if (p->gpu_mem_known)
		bad |= JU(o, "gpu_mem_bytes", p->gpu_mem_bytes);
	if (p->quota.quota_us)
		bad |= ig_json_set(o, "cpu_quota", json_quota(&p->quota, summary));
	bad |= ig_json_set(o, "time", json_time(p, summary ? &p->life_parts : &p->parts));
	bad |= ig_json_set(o, "preemptors", json_peers(p->preemptors, p->npreemptors));
	bad |= ig_json_set(o, "wakers", json_peers(p->wakers, p->nwakers));
	return built(o, bad);
}

json_t *report_json_chain(const struct ig_chain *c, struct stacks *stk)
{
	return json_chain(c, stk);
}

json_t *report_json_proc(const struct ig_model *m, const struct ig_proc_stats *p, int summary)
{
	return json_proc(m, p, summary);
}

json_t *report_json_ops(const struct ig_model *m, const struct ig_detect *det, int summary,
			uint32_t pid)
{
	struct oprow *rows = calloc(IG_OP_MAX, sizeof(*rows));
	json_t *a = json_array();
	int bad = !rows || !a;
	int n = bad ? 0 : collect_ops_of(m, summary, pid, rows);
	for (int i = 0; i < n; i++)
		bad |= ig_json_push(a, json_op(&rows[i], det));
	free(rows);
	return built(a, bad);
}

/* The op, process and chain lists of a frame into o. */
static int json_lists(json_t *o, const struct ig_model *m, const struct ig_detect *det,
		      const struct report_opts *opt, struct oprow *rows,
		      struct ig_proc_stats *procs)
{
	json_t *ops = json_array(), *pl = json_array(), *chains = json_array();
	int bad = 0;
	int n = collect_ops(m, opt->summary, rows);
	for (int i = 0; i < n && (!opt->max_ops || i < opt->max_ops); i++)
		bad |= ig_json_push(ops, json_op(&rows[i], det));
	int np = model_procs(m, procs, MAX_ROWS), shown = 0;
	for (int i = 0; i < np; i++) {
		if (!proc_shown(&procs[i], opt->summary))
			continue;
		if (opt->max_procs && shown >= opt->max_procs)
			break;
		shown++;
		bad |= ig_json_push(pl, json_proc(m, &procs[i], opt->summary));
	}
	int listed = 0;
	for (int i = 0; i < detect_count(det); i++) {
		const struct ig_chain *c = detect_chain(det, i);
		if (!c->active && !opt->resolved)
			continue;
		if (opt->max_chains && listed >= opt->max_chains)
			break;
		listed++;
		bad |= ig_json_push(chains, json_chain(c, opt->stacks));
	}
	bad |= ig_json_set(o, "ops", ops);
	bad |= ig_json_set(o, "procs", pl);
	bad |= ig_json_set(o, "chains", chains);
	if (!detect_count(det) && detect_why_none(det)[0])
		bad |= ig_json_set(o, "no_chains_why", ig_json_str(detect_why_none(det)));
	return bad;
}

int report_json(FILE *f, const struct ig_model *m, const struct ig_detect *det,
		const struct ig_status *st, const struct report_opts *opt)
{
	static const struct report_opts defo;
	if (!opt)
		opt = &defo;
	struct oprow *rows = calloc(IG_OP_MAX, sizeof(*rows));
	struct ig_proc_stats *procs = calloc(MAX_ROWS, sizeof(*procs));
	json_t *o = json_object();
	int bad = !rows || !procs || !o;
	if (!bad) {
		struct ig_model_totals t;
		model_totals(m, &t);
		char tm[32];
		fmt_time(tm, sizeof(tm), t.now_ns);
		bad |= JS(o, "type", opt->summary ? "summary" : "frame");
		bad |= JU(o, "time_ns", t.now_ns);
		bad |= JS(o, "time", tm);
		bad |= JS(o, "mode", mode_name(st));
		bad |= JU(o, "window_s", model_cfg(m)->window_s);
		bad |= JU(o, "first_ns", t.first_ns);
		/* what the rates are per second of (under a second: a second) */
		bad |= JU(o, "window_span_ns",
			  opt->summary ? (t.now_ns > t.first_ns ? t.now_ns - t.first_ns : 0)
				       : t.win_span_ns);
		bad |= ig_json_set(o, "status", json_status(st, &t));
		bad |= ig_json_set(o, "host", json_host(m));
		bad |= json_lists(o, m, det, opt, rows, procs);
		bad |= report_gpu_json(o, m);
	}
	int rc = bad ? -ENOMEM : ig_json_write_line(f, o);
	json_decref(o);
	free(rows);
	free(procs);
	return rc;
}
