/* The incident report for a terminal (wrapped to a width) and as Markdown,
 * both written from the JSON object of explain_build (explain.h). Every
 * string of that object may hold text from traced programs: each goes
 * through esc_text (core/escape.h) and, in Markdown, md() on top. */
#include "report/explain.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/escape.h"
#include "core/fmt.h"

#define S(o, k) ig_json_get_str(o, k, "")
#define I(o, k) ((uint64_t)ig_json_get_int(o, k, 0))

/* s escaped, malloc'd ("" on failure). */
void explain_refused_words(char *buf, size_t len, uint64_t n)
{
	if (len)
		buf[0] = 0;
	if (n)
		snprintf(buf, len,
			 "; %" PRIu64 " row%s of the recording refused (values out of range or "
			 "NULL, docs/recording.md)",
			 n, n == 1 ? "" : "s");
}

static char *esc(const char *s)
{
	size_t need = esc_text(NULL, 0, s, 0) + 1;
	char *b = malloc(need);
	if (b)
		esc_text(b, need, s, 0);
	return b ? b : strdup("");
}

static size_t cols(const char *s, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n && s[i]; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

/* --- text ------------------------------------------------------------------------ */

struct tw {
	FILE *f;
	int width;
};

/* Writes first, then s (untrusted, escaped here) wrapped at the width,
 * later lines indented by indent spaces. */
static void wrap(struct tw *t, const char *first, int indent, const char *s)
{
	char *e = esc(s), *p = e;
	size_t at = cols(first, strlen(first));
	int fresh = 1; /* no word on this line yet */
	fputs(first, t->f);
	while (*p == ' ')
		p++;
	while (*p) {
		size_t wl = strcspn(p, " ");
		size_t w = cols(p, wl);
		if (!fresh && at + 1 + w > (size_t)t->width) {
			fprintf(t->f, "\n%*s", indent, "");
			at = (size_t)indent;
			fresh = 1;
		}
		if (!fresh) {
			fputc(' ', t->f);
			at++;
		}
		fwrite(p, 1, wl, t->f);
		at += w;
		fresh = 0;
		p += wl;
		while (*p == ' ')
			p++;
	}
	fputc('\n', t->f);
	free(e);
}

static const char *dur(char *b, size_t n, uint64_t ns)
{
	return fmt_ns(b, n, ns);
}

/* "02:19:06.123" of an ISO time "2026-...T02:19:06.123Z". */
static const char *clock_of(const char *iso, char *b, size_t n)
{
	snprintf(b, n, "%.12s", strlen(iso) > 11 ? iso + 11 : iso);
	return b;
}

static void text_where(struct tw *t, const json_t *r)
{
	const json_t *rg = json_object_get(r, "range"), *h;
	char a[24], line[512];
	size_t i;
	snprintf(line, sizeof(line), "%s .. %s (%s)", S(rg, "start"), S(rg, "end"),
		 dur(a, sizeof(a), I(rg, "duration_ns")));
	wrap(t, "WHEN    ", 8, line);
	json_array_foreach(json_object_get(r, "hosts"), i, h)
	{
		char mem[24];
		snprintf(line, sizeof(line), "%s: kernel %s%s%s, %u CPUs%s%s, %s%s%s%s%s",
			 *S(h, "node") ? S(h, "node") : "(host not recorded)",
			 *S(h, "kernel") ? S(h, "kernel") : "not recorded", *S(h, "os") ? ", " : "",
			 S(h, "os"), (unsigned)I(h, "cpu_cores"), *S(h, "cpu_model") ? " " : "",
			 S(h, "cpu_model"), fmt_bytes(mem, sizeof(mem), I(h, "mem_total_mb") << 20),
			 *S(h, "writer") ? "; written by " : "", S(h, "writer"),
			 *S(h, "command") ? "; command " : "", S(h, "command"));
		wrap(t, "WHERE   ", 8, line);
	}
	const json_t *src = json_object_get(r, "sources"), *v;
	if (json_array_size(src))
		json_array_foreach(src, i, v)
		    wrap(t, "SOURCE  replay of ", 8, json_string_value(v));
	else
		wrap(t, "SOURCE  ", 8, "live tracing");
	char sum[160] = "", ref[160] = "";
	if (I(r, "summarised"))
		snprintf(sum, sizeof(sum),
			 "; %" PRIu64 " calls summarised by --record-rate (counts exact, "
			 "durations estimated)",
			 I(r, "summarised"));
	explain_refused_words(ref, sizeof(ref), I(r, "rows_refused"));
	snprintf(line, sizeof(line),
		 "%" PRIu64 " (dropped: %" PRIu64 " in the kernel, %" PRIu64
		 " in ingero-top)%s%s%s",
		 I(r, "events"), I(r, "drops_kernel"), I(r, "drops_user"),
		 json_is_true(json_object_get(r, "no_split"))
		     ? "; some calls have no preempted/blocked split (imported recording)"
		     : "",
		 sum, ref);
	wrap(t, "EVENTS  ", 8, line);
}

static void text_procs(struct tw *t, const json_t *r)
{
	const json_t *p;
	size_t i;
	if (!json_array_size(json_object_get(r, "processes")))
		return;
	fputs("\nPROCESSES\n", t->f);
	json_array_foreach(json_object_get(r, "processes"), i, p)
	{
		char line[256], head[32];
		snprintf(head, sizeof(head), "  pid %-7" PRIu64, I(p, "pid"));
		snprintf(line, sizeof(line),
			 "%s: %" PRIu64 " CUDA calls, %" PRIu64 " threads%s, parent %" PRIu64,
			 S(p, "comm"), I(p, "calls"), I(p, "threads"),
			 json_is_true(json_object_get(p, "exited")) ? ", exited" : "",
			 I(p, "ppid"));
		wrap(t, head, 14, line);
		const char *cl = S(p, "cmdline");
		wrap(t, "              command line: ", 14, *cl ? cl : "not recorded");
	}
}

static void text_chain(struct tw *t, const json_t *c)
{
	char head[96], line[512], imp[16], rs[16];
	const json_t *v;
	const char *k;
	size_t i;
	double share = ig_json_get_num(c, "range_share", -1);
	snprintf(head, sizeof(head), "%2d. ", (int)I(c, "rank"));
	snprintf(line, sizeof(line), "[%s] %s %s, impact %s at its last firing%s%s%s",
		 S(c, "severity"), S(c, "id"), S(c, "title"),
		 fmt_pct(imp, sizeof(imp), ig_json_get_num(c, "impact", 0)), share >= 0 ? ", " : "",
		 share >= 0 ? fmt_pct(rs, sizeof(rs), share) : "",
		 share >= 0 ? " of the range" : "");
	wrap(t, head, 4, line);
	if (I(c, "culprit_pid"))
		snprintf(line, sizeof(line), "culprit %s[%" PRIu64 "]; ", S(c, "culprit_comm"),
			 I(c, "culprit_pid"));
	else
		snprintf(line, sizeof(line), "no named culprit; ");
	size_t l = strlen(line);
	snprintf(line + l, sizeof(line) - l, "in %s[%" PRIu64 "] tid %" PRIu64 "%s%s%s",
		 S(c, "comm"), I(c, "pid"), I(c, "tid"), *S(c, "op") ? ", op " : "", S(c, "op"),
		 json_is_true(json_object_get(c, "active")) ? "" : " (resolved)");
	wrap(t, "    ", 4, line);
	wrap(t, "    ", 4, S(c, "summary"));
	wrap(t, "    Why: ", 9, S(c, "explanation"));
	char *ev = NULL;
	size_t evn = 0;
	FILE *m = open_memstream(&ev, &evn);
	json_object_foreach((json_t *)json_object_get(c, "evidence_text"), k, v)
	    fprintf(m, "%s%s=%s", ftell(m) ? ", " : "", k, json_string_value(v));
	fclose(m);
	wrap(t, "    Evidence: ", 9, ev ? ev : "");
	free(ev);
	if (*S(c, "lacking"))
		wrap(t, "    Missing: ", 9, S(c, "lacking"));
	/* where the cause happens (a sleep's, a lock's, the GIL's), which the
	 * advice points at */
	json_array_foreach(json_object_get(c, "call_site"), i, v)
	    wrap(t, i ? "               " : "    Call site: ", 15, json_string_value(v));
	/* where the threads that ended its lock waits were (an unlock, a put) */
	json_array_foreach(json_object_get(c, "waker_site"), i, v)
	    wrap(t, i ? "               " : "    Waker at:  ", 15, json_string_value(v));
	if (json_array_size(json_object_get(c, "proof")))
		fputs("    Proof:\n", t->f);
	json_array_foreach(json_object_get(c, "proof"), i, v)
	{
		char cl[24], h2[40];
		snprintf(h2, sizeof(h2), "      %s ", clock_of(S(v, "time"), cl, sizeof(cl)));
		wrap(t, h2, 19, S(v, "text"));
	}
	json_array_foreach(json_object_get(c, "recommendations"), i, v)
	    wrap(t, i ? "         " : "    Do:  ", 9, json_string_value(v));
}

static void text_frames(struct tw *t, const json_t *s)
{
	const json_t *f;
	size_t i;
	if (!json_array_size(json_object_get(s, "frames"))) {
		const char *st = S(s, "stack_state");
		wrap(t, "    stack: ", 6,
		     !strcmp(st, "none")	? "none recorded"
		     : !strcmp(st, "resolving") ? "still resolving"
						: "not available");
		return;
	}
	fputs("    stack:\n", t->f);
	json_array_foreach(json_object_get(s, "frames"), i, f) wrap(t, "      ", 8, S(f, "text"));
}

static void text_slow(struct tw *t, const json_t *r)
{
	const json_t *s;
	size_t i;
	if (!json_array_size(json_object_get(r, "slow_calls")))
		return;
	fputs("\nSLOWEST CALLS\n", t->f);
	json_array_foreach(json_object_get(r, "slow_calls"), i, s)
	{
		char head[16], line[400], a[24], b[24], c[24];
		snprintf(head, sizeof(head), "%2d. ", (int)i + 1);
		snprintf(line, sizeof(line), "%s %s at %s, %s[%" PRIu64 "] tid %" PRIu64 "%s%s%s",
			 S(s, "op"), dur(a, sizeof(a), I(s, "dur_ns")), S(s, "time"), S(s, "comm"),
			 I(s, "pid"), I(s, "tid"), *S(s, "thread_comm") ? " (" : "",
			 S(s, "thread_comm"), *S(s, "thread_comm") ? ")" : "");
		wrap(t, head, 4, line);
		if (json_is_null(json_object_get(s, "preempt_ns")))
			snprintf(line, sizeof(line), "no preempted/blocked split recorded");
		else
			snprintf(line, sizeof(line),
				 "preempted %s, asleep %s, context switches %" PRIu64 "%s%s%s%s%s",
				 dur(b, sizeof(b), I(s, "preempt_ns")),
				 dur(c, sizeof(c), I(s, "blocked_ns")), I(s, "switches"),
				 I(s, "other_pid") ? ", last preemptor " : "",
				 I(s, "other_pid") ? S(s, "other_comm") : "",
				 I(s, "other_pid") ? "[" : "",
				 I(s, "other_pid")
				     ? (snprintf(a, sizeof(a), "%" PRIu64, I(s, "other_pid")), a)
				     : "",
				 I(s, "other_pid") ? "]" : "");
		wrap(t, "    ", 4, line);
		text_frames(t, s);
	}
}

/* The per-op table in the columns the width allows: all (86+), without
 * P95 and TOTAL (66+), or OP, P99 and MAX. */
static void text_ops(struct tw *t, const json_t *r)
{
	const json_t *o;
	size_t i;
	char a[16], b[16], c[16], d[16], e[16], n[16];
	int wide = t->width >= 86, mid = t->width >= 66;
	int opw = mid ? 24 : t->width - 24 < 28 ? t->width - 24 : 28;
	if (!json_array_size(json_object_get(r, "ops")))
		return;
	fputs("\nPER-OP LATENCY over the range\n", t->f);
	if (wide)
		fprintf(t->f, "  %-*s %8s %9s %9s %9s %9s %9s\n", opw, "OP", "CALLS", "P50", "P95",
			"P99", "MAX", "TOTAL");
	else if (mid)
		fprintf(t->f, "  %-*s %8s %9s %9s %9s\n", opw, "OP", "CALLS", "P50", "P99", "MAX");
	else
		fprintf(t->f, "  %-*s %9s %9s\n", opw, "OP", "P99", "MAX");
	json_array_foreach(json_object_get(r, "ops"), i, o)
	{
		const char *op = S(o, "op");
		dur(a, sizeof(a), I(o, "p50_ns"));
		dur(b, sizeof(b), I(o, "p95_ns"));
		dur(c, sizeof(c), I(o, "p99_ns"));
		dur(d, sizeof(d), I(o, "max_ns"));
		dur(e, sizeof(e), I(o, "time_ns"));
		fmt_count(n, sizeof(n), I(o, "calls"), 8);
		if (wide)
			fprintf(t->f, "  %-*.*s %8s %9s %9s %9s %9s %9s\n", opw, opw, op, n, a, b,
				c, d, e);
		else if (mid)
			fprintf(t->f, "  %-*.*s %8s %9s %9s %9s\n", opw, opw, op, n, a, c, d);
		else
			fprintf(t->f, "  %-*.*s %9s %9s\n", opw, opw, op, c, d);
	}
}

/* Where the time went: the non-zero parts of each process, largest first. */
static void text_time(struct tw *t, const json_t *r)
{
	const json_t *p;
	size_t i;
	if (!json_array_size(json_object_get(r, "procs")))
		return;
	fputc('\n', t->f);
	wrap(t, "", 2, "WHERE THE FEEDING THREADS' TIME WENT (share of their wall time)");
	json_array_foreach(json_object_get(r, "procs"), i, p)
	{
		const json_t *tm = json_object_get(p, "time"),
			     *parts = json_object_get(tm, "parts"), *v;
		const char *k, *used[16];
		uint64_t wall = I(tm, "wall_ns");
		char line[640], w[24];
		int n = 0;
		snprintf(
		    line, sizeof(line), "pid %" PRIu64 " %s, feeding thread %" PRIu64 ", wall %s%s",
		    I(p, "pid"), S(p, "comm"), I(tm, "tid"), dur(w, sizeof(w), wall),
		    json_is_true(json_object_get(tm, "split_unknown")) ? " (split unknown)" : "");
		wrap(t, "  ", 4, line);
		line[0] = 0;
		for (;;) { /* selection by size: at most IG_PART_MAX parts */
			const char *best = NULL;
			uint64_t bv = 0;
			json_object_foreach((json_t *)parts, k, v)
			{
				int taken = 0;
				for (int q = 0; q < n; q++)
					taken |= !strcmp(used[q], k);
				if (!taken && (uint64_t)json_integer_value(v) > bv)
					best = k, bv = (uint64_t)json_integer_value(v);
			}
			if (!best || n >= 16)
				break;
			used[n++] = best;
			char pct[16];
			size_t l = strlen(line);
			snprintf(line + l, sizeof(line) - l, "%s%s %s", l ? ", " : "", best,
				 fmt_pct(pct, sizeof(pct), wall ? (double)bv / (double)wall : 0));
		}
		wrap(t, "    ", 4, *line ? line : "no time measured");
	}
}

int explain_text(FILE *f, const json_t *r, int width)
{
	struct tw t = {f, width < 40 ? 40 : width};
	const json_t *c, *a;
	size_t i;
	fputs("INCIDENT REPORT (ingero-top explain)\n\n", f);
	wrap(&t, "VERDICT ", 8, S(r, "verdict"));
	text_where(&t, r);
	text_procs(&t, r);
	fprintf(f, "\nFINDINGS  %d chain%s, by impact\n", (int)I(r, "chains_total"),
		I(r, "chains_total") == 1 ? "" : "s");
	if (!json_array_size(json_object_get(r, "chains")) && *S(r, "no_chains_why"))
		wrap(&t, "  ", 2, S(r, "no_chains_why"));
	else if (!json_array_size(json_object_get(r, "chains")))
		wrap(&t, "  ", 2,
		     "No chain: no cause took 5% or more of the feeding threads' time.");
	json_array_foreach(json_object_get(r, "chains"), i, c)
	{
		if (i)
			fputc('\n', f);
		text_chain(&t, c);
	}
	text_slow(&t, r);
	if (json_array_size(json_object_get(r, "actions")))
		fputs("\nWHAT TO DO\n", f);
	json_array_foreach(json_object_get(r, "actions"), i, a)
	{
		char head[16], line[400];
		snprintf(head, sizeof(head), "%2d. ", (int)i + 1);
		snprintf(line, sizeof(line), "%s (%s)", S(a, "text"), S(a, "chain"));
		wrap(&t, head, 4, line);
	}
	text_ops(&t, r);
	text_time(&t, r);
	return ferror(f) ? -EIO : 0;
}

/* --- Markdown ---------------------------------------------------------------------- */

/* s as Markdown text: escaped by the one rule, then every character that
 * could start markup backslash-escaped (CommonMark allows it before any
 * ASCII punctuation), so untrusted text is shown, never interpreted. */
static void md(FILE *f, const char *s)
{
	char *e = esc(s);
	for (char *p = e; *p; p++) {
		if (strchr("\\`*_{}[]<>|#~!&", *p) || (p == e && strchr("-+=", *p)))
			fputc('\\', f);
		fputc(*p, f);
	}
	free(e);
}

static void md_chain(FILE *f, const json_t *c)
{
	const json_t *v;
	const char *k;
	size_t i;
	char imp[16], rs[16];
	double share = ig_json_get_num(c, "range_share", -1);
	fprintf(f, "\n### %d. %s: ", (int)I(c, "rank"), S(c, "severity"));
	md(f, S(c, "title"));
	fputs(" (", f);
	md(f, S(c, "id"));
	fprintf(f, "), impact %s at its last firing",
		fmt_pct(imp, sizeof(imp), ig_json_get_num(c, "impact", 0)));
	if (share >= 0)
		fprintf(f, ", %s of the range", fmt_pct(rs, sizeof(rs), share));
	fputs("\n\n> ", f);
	md(f, S(c, "summary"));
	fputs("\n\n- **Culprit:** ", f);
	if (I(c, "culprit_pid")) {
		md(f, S(c, "culprit_comm"));
		fprintf(f, "\\[%" PRIu64 "\\]", I(c, "culprit_pid"));
	} else {
		fputs("none named", f);
	}
	fputs("\n- **Affects:** ", f);
	md(f, S(c, "comm"));
	fprintf(f, "\\[%" PRIu64 "\\] tid %" PRIu64, I(c, "pid"), I(c, "tid"));
	if (*S(c, "op")) {
		fputs(", op ", f);
		md(f, S(c, "op"));
	}
	fputs(json_is_true(json_object_get(c, "active")) ? "\n- **Why:** "
							 : " (resolved)\n- **Why:** ",
	      f);
	md(f, S(c, "explanation"));
	fputs("\n- **Evidence:** ", f);
	int nev = 0;
	json_object_foreach((json_t *)json_object_get(c, "evidence_text"), k, v)
	{
		fputs(nev++ ? ", " : "", f);
		md(f, k);
		fputs(" ", f);
		md(f, json_string_value(v));
	}
	if (*S(c, "lacking")) {
		fputs("\n- **Missing:** ", f);
		md(f, S(c, "lacking"));
	}
	json_array_foreach(json_object_get(c, "call_site"), i, v)
	{
		fputs(i ? "; " : "\n- **Call site:** ", f);
		md(f, json_string_value(v));
	}
	json_array_foreach(json_object_get(c, "waker_site"), i, v)
	{
		fputs(i ? "; " : "\n- **Waker at:** ", f);
		md(f, json_string_value(v));
	}
	fputs("\n", f);
	if (json_array_size(json_object_get(c, "proof")))
		fputs("\n**Proof:**\n\n", f);
	json_array_foreach(json_object_get(c, "proof"), i, v)
	{
		fputs("- ", f);
		md(f, S(v, "time"));
		fputs(" ", f);
		md(f, S(v, "text"));
		fputc('\n', f);
	}
	if (json_array_size(json_object_get(c, "recommendations")))
		fputs("\n**What to do:**\n\n", f);
	json_array_foreach(json_object_get(c, "recommendations"), i, v)
	{
		fputs("- ", f);
		md(f, json_string_value(v));
		fputc('\n', f);
	}
}

static void md_head(FILE *f, const json_t *r)
{
	const json_t *rg = json_object_get(r, "range"), *h, *v;
	char a[24];
	size_t i;
	fputs("# Incident report\n\n**Verdict:** ", f);
	md(f, S(r, "verdict"));
	fputs("\n\n| | |\n|---|---|\n| When | ", f);
	md(f, S(rg, "start"));
	fputs(" .. ", f);
	md(f, S(rg, "end"));
	fprintf(f, " (%s) |\n", dur(a, sizeof(a), I(rg, "duration_ns")));
	json_array_foreach(json_object_get(r, "hosts"), i, h)
	{
		fputs("| Where | ", f);
		md(f, *S(h, "node") ? S(h, "node") : "(host not recorded)");
		fputs(": kernel ", f);
		md(f, *S(h, "kernel") ? S(h, "kernel") : "not recorded");
		fprintf(f, ", %u CPUs, %s", (unsigned)I(h, "cpu_cores"),
			fmt_bytes(a, sizeof(a), I(h, "mem_total_mb") << 20));
		if (*S(h, "writer")) {
			fputs("; written by ", f);
			md(f, S(h, "writer"));
		}
		if (*S(h, "command")) {
			fputs("; command ", f);
			md(f, S(h, "command"));
		}
		fputs(" |\n", f);
	}
	fputs("| Source | ", f);
	if (!json_array_size(json_object_get(r, "sources")))
		fputs("live tracing", f);
	json_array_foreach(json_object_get(r, "sources"), i, v)
	{
		fputs(i ? ", " : "replay of ", f);
		md(f, json_string_value(v));
	}
	char ref[160] = "";
	explain_refused_words(ref, sizeof(ref), I(r, "rows_refused"));
	fprintf(f,
		" |\n| Events | %" PRIu64 " (dropped: %" PRIu64 " in the kernel, %" PRIu64
		" in ingero-top)%s |\n",
		I(r, "events"), I(r, "drops_kernel"), I(r, "drops_user"), ref);
}

static void md_tables(FILE *f, const json_t *r)
{
	const json_t *o, *p;
	size_t i;
	char a[16], b[16], c[16], d[16], e[16];
	if (json_array_size(json_object_get(r, "ops")))
		fputs("\n## Per-op latency over the range\n\n| op | calls | p50 | p95 | p99 | max "
		      "| total |\n"
		      "|---|---:|---:|---:|---:|---:|---:|\n",
		      f);
	json_array_foreach(json_object_get(r, "ops"), i, o)
	{
		fputs("| ", f);
		md(f, S(o, "op"));
		fprintf(f, " | %" PRIu64 " | %s | %s | %s | %s | %s |\n", I(o, "calls"),
			dur(a, sizeof(a), I(o, "p50_ns")), dur(b, sizeof(b), I(o, "p95_ns")),
			dur(c, sizeof(c), I(o, "p99_ns")), dur(d, sizeof(d), I(o, "max_ns")),
			dur(e, sizeof(e), I(o, "time_ns")));
	}
	if (!json_array_size(json_object_get(r, "procs")))
		return;
	fputs("\n## Where the feeding threads' time went\n\nShares of their wall time.\n\n| pid | "
	      "name | tid | wall |",
	      f);
	const json_t *first = json_object_get(
	    json_object_get(json_array_get(json_object_get(r, "procs"), 0), "time"), "parts");
	const char *k;
	const json_t *v;
	int np = 0;
	json_object_foreach((json_t *)first, k, v)
	{
		fputc(' ', f);
		md(f, k);
		fputs(" |", f);
		np++;
	}
	fputs("\n|---:|---|---:|---:|", f);
	for (int q = 0; q < np; q++)
		fputs("---:|", f);
	fputc('\n', f);
	json_array_foreach(json_object_get(r, "procs"), i, p)
	{
		const json_t *tm = json_object_get(p, "time");
		uint64_t wall = I(tm, "wall_ns");
		fprintf(f, "| %" PRIu64 " | ", I(p, "pid"));
		md(f, S(p, "comm"));
		fprintf(f, " | %" PRIu64 " | %s |", I(tm, "tid"), dur(a, sizeof(a), wall));
		json_object_foreach((json_t *)json_object_get(tm, "parts"), k, v) fprintf(
		    f, " %s |",
		    fmt_pct(b, sizeof(b), wall ? (double)json_integer_value(v) / (double)wall : 0));
		fputc('\n', f);
	}
}

static void md_slow(FILE *f, const json_t *r)
{
	const json_t *s, *fr;
	size_t i, j;
	char a[24], b[24], c[24];
	if (json_array_size(json_object_get(r, "slow_calls")))
		fputs("\n## Slowest calls\n", f);
	json_array_foreach(json_object_get(r, "slow_calls"), i, s)
	{
		fprintf(f, "\n%d. **", (int)i + 1);
		md(f, S(s, "op"));
		fprintf(f, " %s** at ", dur(a, sizeof(a), I(s, "dur_ns")));
		md(f, S(s, "time"));
		fputs(", ", f);
		md(f, S(s, "comm"));
		fprintf(f, "\\[%" PRIu64 "\\] tid %" PRIu64, I(s, "pid"), I(s, "tid"));
		if (json_is_null(json_object_get(s, "preempt_ns")))
			fputs(": no preempted/blocked split recorded", f);
		else
			fprintf(f, ": preempted %s, asleep %s, context switches %" PRIu64,
				dur(b, sizeof(b), I(s, "preempt_ns")),
				dur(c, sizeof(c), I(s, "blocked_ns")), I(s, "switches"));
		fputc('\n', f);
		json_array_foreach(json_object_get(s, "frames"), j, fr)
		{
			fputs("   - ", f);
			md(f, S(fr, "text"));
			fputc('\n', f);
		}
	}
}

int explain_md(FILE *f, const json_t *r)
{
	const json_t *c, *a;
	size_t i;
	md_head(f, r);
	if (json_array_size(json_object_get(r, "processes")))
		fputs("\n## Processes\n\n| pid | name | CUDA calls | threads | command line |\n"
		      "|---:|---|---:|---:|---|\n",
		      f);
	json_array_foreach(json_object_get(r, "processes"), i, c)
	{
		fprintf(f, "| %" PRIu64 " | ", I(c, "pid"));
		md(f, S(c, "comm"));
		fprintf(f, "%s | %" PRIu64 " | %" PRIu64 " | ",
			json_is_true(json_object_get(c, "exited")) ? " (exited)" : "",
			I(c, "calls"), I(c, "threads"));
		md(f, *S(c, "cmdline") ? S(c, "cmdline") : "not recorded");
		fputs(" |\n", f);
	}
	fprintf(f, "\n## Findings: %d chain%s, by impact\n", (int)I(r, "chains_total"),
		I(r, "chains_total") == 1 ? "" : "s");
	if (!json_array_size(json_object_get(r, "chains")) && *S(r, "no_chains_why")) {
		fputs("\nNo chain: ", f);
		md(f, S(r, "no_chains_why"));
		fputs(".\n", f);
	} else if (!json_array_size(json_object_get(r, "chains")))
		fputs("\nNo chain: no cause took 5% or more of the feeding threads' time.\n", f);
	json_array_foreach(json_object_get(r, "chains"), i, c) md_chain(f, c);
	md_slow(f, r);
	if (json_array_size(json_object_get(r, "actions")))
		fputs("\n## What to do\n\n", f);
	json_array_foreach(json_object_get(r, "actions"), i, a)
	{
		fprintf(f, "%d. ", (int)i + 1);
		md(f, S(a, "text"));
		fputs(" (", f);
		md(f, S(a, "chain"));
		fputs(")\n", f);
	}
	md_tables(f, r);
	return ferror(f) ? -EIO : 0;
}
