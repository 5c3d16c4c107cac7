/* Prometheus metrics (report/prom.c): label escaping, the latency buckets,
 * and whole renderings of models fed synthetic streams, parsed back line by
 * line: the exposition syntax, one HELP/TYPE per family before its samples,
 * histograms that are cumulative and end at the op's call count, per-process
 * calls that add up to the op's (top-N plus "other"), feeder parts that add
 * up to the wall time, chain gauges, hostile process names. */
#include "analysis.h"
#include "check.h"
#include "core/ops.h"
#include "core/status.h"
#include "detect/detect.h"
#include "model/model.h"
#include "report/prom.h"
#include "synth.h"

#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

/* --- label values ---------------------------------------------------------------------- */

static void test_label(void)
{
	static const struct {
		const char *in;
		int untrusted;
		const char *out;
	} c[] = {
	    {"python3", 1, "python3"},
	    {"", 1, ""},
	    {"a\\b\"c\nd", 0, "a\\\\b\\\"c\\nd"},
	    {"a\\b\"c\nd", 1, "a\\\\b\\\"cd"},	 /* newline is a control byte: dropped */
	    {"\x1b]0;pwned\x07", 1, "]0;pwned"}, /* ESC and BEL dropped */
	    {"a\rb\tc\x7f", 1, "abc"},		 /* CR, TAB, DEL */
	    {"e\xc2\x9b[2J", 1, "e[2J"},	 /* a C1 control (CSI) */
	    {"x\xffy", 1, "x\xef\xbf\xbdy"},	 /* invalid UTF-8 -> U+FFFD */
	    {"\xe2\x82\xac \xc3\xa9", 1, "\xe2\x82\xac \xc3\xa9"}, /* valid UTF-8 kept */
	    {"sp ace", 0, "sp ace"},
	};
	char b[128];
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		size_t n = prom_label(b, sizeof(b), c[i].in, c[i].untrusted);
		CHECKF(!strcmp(b, c[i].out) && n == strlen(c[i].out), "case %zu: got '%s'", i, b);
	}
	/* a short buffer never cuts an escape or a UTF-8 sequence */
	prom_label(b, 3, "a\"b", 0);
	CHECK(!strcmp(b, "a"));
	prom_label(b, 3, "a\xe2\x82\xac", 1);
	CHECK(!strcmp(b, "a"));
	prom_label(b, 5, "a\xe2\x82\xac", 1);
	CHECK(!strcmp(b, "a\xe2\x82\xac"));
}

/* --- buckets ------------------------------------------------------------------------------- */

static void test_buckets(void)
{
	for (int i = 1; i < PROM_NBOUNDS; i++)
		CHECK(prom_bounds_ns[i] > prom_bounds_ns[i - 1]);
	CHECK(prom_bounds_ns[0] == 1000 && prom_bounds_ns[PROM_NBOUNDS - 1] == 10000000000ull);
	struct hist h;
	hist_clear(&h);
	uint64_t out[PROM_NBOUNDS + 1];
	prom_hist_cumulative(&h, out);
	for (int i = 0; i <= PROM_NBOUNDS; i++)
		CHECK(out[i] == 0);
	/* 3 x 500 ns, 2 x 2 us, 4 x 7 ms, 1 x 20 s */
	for (int i = 0; i < 3; i++)
		hist_add(&h, 500);
	for (int i = 0; i < 2; i++)
		hist_add(&h, 2000);
	for (int i = 0; i < 4; i++)
		hist_add(&h, 7000000);
	hist_add(&h, 20000000000ull);
	prom_hist_cumulative(&h, out);
	CHECK(out[0] == 3);  /* le 1us */
	CHECK(out[1] == 5);  /* le 2.5us */
	CHECK(out[11] == 5); /* le 5ms */
	CHECK(out[12] == 9); /* le 10ms */
	CHECK(out[PROM_NBOUNDS - 1] == 9);
	CHECK(out[PROM_NBOUNDS] == 10);
	/* the bucket of the p99 agrees with the cumulative counts */
	uint64_t p50 = hist_percentile(&h, 0.5);
	int b = 0;
	while (b < PROM_NBOUNDS && p50 > prom_bounds_ns[b])
		b++;
	CHECK(out[b] >= 5 && (b == 0 || out[b - 1] < 5));
}

/* --- parsing a rendering -------------------------------------------------------------------- */

static regex_t re_sample, re_help, re_type;

static void compile_res(void)
{
	const char *lv = "\"([^\"\\\\\n]|\\\\[\\\\\"n])*\"";
	char s[1024];
	snprintf(s, sizeof(s),
		 "^[a-zA-Z_:][a-zA-Z0-9_:]*(\\{[a-zA-Z_][a-zA-Z0-9_]*=%s(,[a-zA-Z_][a-zA-Z0-9_]*=%"
		 "s)*\\})? "
		 "(-?[0-9]+(\\.[0-9]+)?(e[-+]?[0-9]+)?|\\+Inf|NaN)$",
		 lv, lv);
	CHECK(!regcomp(&re_sample, s, REG_EXTENDED | REG_NOSUB));
	CHECK(
	    !regcomp(&re_help, "^# HELP ingero_top_[a-z0-9_]+ [^\n]+$", REG_EXTENDED | REG_NOSUB));
	CHECK(!regcomp(&re_type, "^# TYPE ingero_top_[a-z0-9_]+ (counter|gauge|histogram)$",
		       REG_EXTENDED | REG_NOSUB));
}

#define MAXF 64
struct parsed {
	int bad;
	char fam[MAXF][64];
	int nfam;
};

/* The family of a sample name: the name without a histogram suffix. */
static void family_of(const char *name, const struct parsed *p, char *out, size_t n)
{
	snprintf(out, n, "%s", name);
	for (int i = 0; i < p->nfam; i++)
		if (!strncmp(name, p->fam[i], strlen(p->fam[i])) &&
		    (!strcmp(name + strlen(p->fam[i]), "_bucket") ||
		     !strcmp(name + strlen(p->fam[i]), "_sum") ||
		     !strcmp(name + strlen(p->fam[i]), "_count")))
			snprintf(out, n, "%s", p->fam[i]);
}

/* Checks the syntax of every line and the order of families: HELP then
 * TYPE, once each, then the samples of that family only. */
static void check_syntax(const char *text, struct parsed *p)
{
	memset(p, 0, sizeof(*p));
	char cur[64] = "";
	const char *l = text;
	int lineno = 0;
	while (*l) {
		const char *e = strchr(l, '\n');
		CHECKF(e != NULL, "last line without a newline");
		if (!e)
			break;
		char line[2048];
		size_t n = (size_t)(e - l) < sizeof(line) - 1 ? (size_t)(e - l) : sizeof(line) - 1;
		memcpy(line, l, n);
		line[n] = 0;
		lineno++;
		if (!strncmp(line, "# HELP ", 7)) {
			CHECKF(!regexec(&re_help, line, 0, NULL, 0), "line %d: %s", lineno, line);
			char name[64];
			sscanf(line + 7, "%63s", name);
			for (int i = 0; i < p->nfam; i++)
				CHECKF(strcmp(p->fam[i], name), "family %s listed twice", name);
			if (p->nfam < MAXF)
				snprintf(p->fam[p->nfam++], sizeof(p->fam[0]), "%s", name);
			snprintf(cur, sizeof(cur), "%s", name);
			const char *t = e + 1;
			char want[128];
			snprintf(want, sizeof(want), "# TYPE %s ", name);
			CHECKF(!strncmp(t, want, strlen(want)), "no TYPE after HELP of %s", name);
		} else if (!strncmp(line, "# TYPE ", 7)) {
			CHECKF(!regexec(&re_type, line, 0, NULL, 0), "line %d: %s", lineno, line);
		} else {
			int ok = !regexec(&re_sample, line, 0, NULL, 0);
			CHECKF(ok, "line %d: %s", lineno, line);
			p->bad += !ok;
			char name[96], fam[96];
			sscanf(line, "%95[^{ ]", name);
			family_of(name, p, fam, sizeof(fam));
			CHECKF(!strcmp(fam, cur), "line %d: sample of %s under family %s", lineno,
			       fam, cur);
		}
		l = e + 1;
	}
}

/* The unescaped value of label key in a sample line, "" when absent. */
static void label(const char *line, const char *key, char *out, size_t n)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "%s=\"", key);
	out[0] = 0;
	const char *b = strchr(line, '{'), *e = strchr(line, '}');
	for (const char *p = b; p && p < e; p++) {
		if ((p == b + 1 || p[-1] == ',') && !strncmp(p, pat, strlen(pat))) {
			p += strlen(pat);
			size_t o = 0;
			while (*p && *p != '"' && o + 1 < n) {
				if (*p == '\\') {
					p++;
					out[o++] = *p == 'n' ? '\n' : *p;
				} else {
					out[o++] = *p;
				}
				p++;
			}
			out[o] = 0;
			return;
		}
	}
}

typedef int (*match_fn)(const char *line, void *ctx);

/* Sum of the values of the samples named name whose line passes fn. */
static double sum_of(const char *text, const char *name, match_fn fn, void *ctx, int *count)
{
	double s = 0;
	int c = 0;
	size_t nl = strlen(name);
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		char line[2048];
		size_t n = (size_t)(e - l) < sizeof(line) - 1 ? (size_t)(e - l) : sizeof(line) - 1;
		memcpy(line, l, n);
		line[n] = 0;
		if (!strncmp(line, name, nl) && (line[nl] == '{' || line[nl] == ' ') &&
		    (!fn || fn(line, ctx))) {
			s += strtod(strrchr(line, ' ') + 1, NULL);
			c++;
		}
		l = e + 1;
	}
	if (count)
		*count = c;
	return s;
}

struct kv {
	const char *k, *v;
};
static int has_label(const char *line, void *ctx)
{
	const struct kv *kv = ctx;
	char b[256];
	label(line, kv->k, b, sizeof(b));
	return !strcmp(b, kv->v);
}

static char *render(const struct ig_model *m, const struct ig_status *st, const struct prom_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = prom_write(f, m, an_detect(m), st, o);
	fclose(f);
	CHECK(rc == 0);
	CHECK(strlen(buf) == len); /* no NUL byte inside */
	return buf;
}

static struct ig_model *model_of(int sc, double secs)
{
	struct synth_cfg c = {.scenario = sc, .seconds = secs};
	struct synth *s = synth_new(&c);
	struct ig_model *m = an_model_new(NULL);
	struct ig_event e;
	while (synth_next(s, &e))
		model_ingest(m, &e);
	synth_free(s);
	return m;
}

/* Every op: a cumulative histogram ending at the op's calls, and per-process
 * calls adding up to them. */
static void check_ops(const struct ig_model *m, const char *text)
{
	int ops[IG_OP_MAX], n = model_ops(m, ops, IG_OP_MAX);
	CHECK(n > 0);
	for (int i = 0; i < n; i++) {
		struct ig_series_stats s;
		CHECK(model_op_stats(m, ops[i], &s) == 0);
		const char *op = ig_op_name(ops[i]);
		struct kv k = {"op", op};
		int nb;
		double prev = -1;
		/* the buckets in order, cumulative */
		for (const char *l = text;
		     (l = strstr(l, "ingero_top_cuda_call_duration_seconds_bucket{")); l++) {
			char line[512];
			sscanf(l, "%511[^\n]", line);
			if (!has_label(line, &k))
				continue;
			double v = strtod(strrchr(line, ' ') + 1, NULL);
			CHECKF(v >= prev, "%s: buckets not cumulative", op);
			prev = v;
		}
		sum_of(text, "ingero_top_cuda_call_duration_seconds_bucket", has_label, &k, &nb);
		CHECK(nb == PROM_NBOUNDS + 1);
		CHECKF(prev == (double)s.calls_life, "%s: +Inf %.0f, calls %" PRIu64, op, prev,
		       s.calls_life);
		double cnt = sum_of(text, "ingero_top_cuda_call_duration_seconds_count", has_label,
				    &k, NULL);
		CHECK(cnt == (double)s.calls_life);
		const struct hist *h = model_op_hist(m, ops[i], 0, 1);
		double sum =
		    sum_of(text, "ingero_top_cuda_call_duration_seconds_sum", has_label, &k, NULL);
		CHECKF(fabs(sum - (double)h->sum_ns / 1e9) < 1e-9 * (1 + sum), "%s: sum %.9f", op,
		       sum);
		double calls = sum_of(text, "ingero_top_cuda_calls_total", has_label, &k, NULL);
		CHECKF(calls == (double)s.calls_life, "%s: calls_total %.0f, want %" PRIu64, op,
		       calls, s.calls_life);
	}
}

/* Every labelled process: its feeder parts add up to its wall time. */
static void check_parts(const char *text)
{
	for (const char *l = text; (l = strstr(l, "\ningero_top_feeder_wall_seconds_total{"));
	     l++) {
		char line[512], pid[32];
		sscanf(l + 1, "%511[^\n]", line);
		label(line, "pid", pid, sizeof(pid));
		double wall = strtod(strrchr(line, ' ') + 1, NULL);
		struct kv k = {"pid", pid};
		int np;
		double parts = sum_of(text, "ingero_top_feeder_seconds_total", has_label, &k, &np);
		CHECK(np == IG_PART_MAX);
		CHECKF(fabs(parts - wall) < 1e-6, "pid %s: parts %.9f, wall %.9f", pid, parts,
		       wall);
	}
}

static void test_render_contention(void)
{
	struct ig_model *m = model_of(SYNTH_CPU_CONTENTION, 20);
	struct ig_status st = {.mode = IG_MODE_LIVE,
			       .events_total = 1234,
			       .drops_kernel = 5,
			       .drops_user = 6,
			       .probes_attached = 42,
			       .targets = 1};
	char *t = render(m, &st, NULL);
	struct parsed p;
	check_syntax(t, &p);
	CHECK(p.bad == 0);
	CHECK(strstr(t, "\ningero_top_build_info{version=\"" IG_VERSION "\",mode=\"live\"} 1\n"));
	CHECK(strstr(t, "\ningero_top_events_total 1234\n"));
	CHECK(strstr(t, "\ningero_top_dropped_events_total{side=\"kernel\"} 5\n"));
	CHECK(strstr(t, "\ningero_top_dropped_events_total{side=\"user\"} 6\n"));
	CHECK(strstr(t, "\ningero_top_probes_attached 42\n"));
	CHECK(strstr(t, "# TYPE ingero_top_cuda_call_duration_seconds histogram\n"));
	check_ops(m, t);
	check_parts(t);
	/* one process, its own label, no "other" */
	CHECK(strstr(t, "pid=\"4821\",comm=\"python3\""));
	CHECK(!strstr(t, "pid=\"other\""));
	/* every (class, severity) pair, and the active chains with their impact */
	int n;
	sum_of(t, "ingero_top_chains_active", NULL, NULL, &n);
	CHECK(n == IG_CC_MAX * 4);
	const struct ig_detect *d = an_detect(m);
	int active = 0;
	for (int i = 0; i < detect_count(d); i++)
		active += detect_chain(d, i)->active;
	CHECK(active > 0);
	CHECK(sum_of(t, "ingero_top_chains_active", NULL, NULL, NULL) == active);
	int ni;
	sum_of(t, "ingero_top_chain_impact_ratio", NULL, NULL, &ni);
	CHECK(ni == active);
	struct kv cc = {"class", "cpu_contention"};
	double imp = sum_of(t, "ingero_top_chain_impact_ratio", has_label, &cc, &ni);
	CHECK(ni == 1 && imp > 0.3 && imp < 0.45);
	struct kv cul = {"culprit", "stress-ng[2231]"};
	sum_of(t, "ingero_top_chain_impact_ratio", has_label, &cul, &ni);
	CHECK(ni == 1);
	/* without server stats: no endpoint metrics; with them: there */
	CHECK(!strstr(t, "ingero_top_metrics_"));
	free(t);
	struct prom_server_stats ss = {.scrapes = 7, .refused = {[PROM_REF_BUSY] = 2}};
	struct prom_opts o = {.srv = &ss};
	t = render(m, &st, &o);
	CHECK(strstr(t, "\ningero_top_metrics_scrapes_total 7\n"));
	CHECK(strstr(t, "\ningero_top_metrics_refused_total{reason=\"busy\"} 2\n"));
	CHECK(strstr(t, "\ningero_top_metrics_refused_total{reason=\"read_timeout\"} 0\n"));
	free(t);
	an_model_free(m);
}

static int is_numeric_pid(const char *line, void *ctx)
{
	char pid[32];
	label(line, "pid", pid, sizeof(pid));
	return pid[0] && strspn(pid, "0123456789") == strlen(pid);
}

/* Eight or more processes, three labelled: the rest adds up under pid="other". */
static void test_render_top_n(void)
{
	struct ig_model *m = model_of(SYNTH_BENCH, 5);
	struct prom_opts o = {.max_procs = 3};
	char *t = render(m, NULL, &o);
	struct parsed p;
	check_syntax(t, &p);
	CHECK(p.bad == 0);
	check_ops(m, t);
	check_parts(t);
	int nw, no;
	sum_of(t, "ingero_top_feeder_wall_seconds_total", is_numeric_pid, NULL, &nw);
	CHECK(nw == 3);
	struct kv other = {"pid", "other"};
	sum_of(t, "ingero_top_feeder_wall_seconds_total", has_label, &other, &no);
	CHECK(no == 1);
	/* the labelled ones are the three with the most calls */
	struct ig_proc_stats ps[32];
	int np = model_procs(m, ps, 32), ncuda = 0;
	for (int i = 0; i < np; i++)
		ncuda += ps[i].cuda != 0;
	CHECKF(ncuda >= 8, "%d CUDA processes", ncuda);
	uint64_t third = 0, calls[32];
	for (int i = 0; i < np; i++)
		calls[i] = ps[i].calls_life;
	for (int k = 0; k < 3; k++) { /* the third largest */
		int best = -1;
		for (int i = 0; i < np; i++)
			if (calls[i] != UINT64_MAX && (best < 0 || calls[i] > calls[best]))
				best = i;
		third = calls[best];
		calls[best] = UINT64_MAX;
	}
	for (int i = 0; i < np; i++) {
		char pid[16];
		snprintf(pid, sizeof(pid), "%u", ps[i].pid);
		struct kv k = {"pid", pid};
		int c;
		sum_of(t, "ingero_top_feeder_wall_seconds_total", has_label, &k, &c);
		if (c)
			CHECK(ps[i].calls_life >= third);
	}
	/* off-CPU of the others summed: the labelled plus other = all */
	double all = 0;
	for (int i = 0; i < np; i++)
		all += (double)ps[i].life_off_preempt_ns / 1e9;
	struct kv pre = {"state", "preempted"};
	double got = sum_of(t, "ingero_top_offcpu_seconds_total", has_label, &pre, NULL);
	CHECKF(fabs(got - all) < 1e-6, "preempted %.9f, want %.9f", got, all);
	free(t);
	/* max_procs 0 = the default of 10 */
	o.max_procs = 0;
	t = render(m, NULL, &o);
	sum_of(t, "ingero_top_feeder_wall_seconds_total", is_numeric_pid, NULL, &nw);
	CHECK(nw == (ncuda < 10 ? ncuda : 10));
	CHECK(!strstr(t, "pid=\"other\"") == (np == nw));
	free(t);
	an_model_free(m);
}

/* A process named with quotes, backslashes, control bytes and invalid
 * UTF-8: the output stays one sample per line, valid UTF-8, and the name
 * is its escaped, stripped form. */
static void test_render_hostile(void)
{
	struct ig_model *m = an_model_new(NULL);
	uint64_t t0 = 1767225600000000000ull;
	for (int i = 0; i < 50; i++) {
		struct ig_event e = {.ts_ns = t0 + (uint64_t)i * 1000000,
				     .dur_ns = 20000,
				     .pid = 77,
				     .tid = 77,
				     .kind = IG_EV_CALL,
				     .op = IG_OP_CUDA_LAUNCH_KERNEL,
				     .flags = IG_F_NO_SPLIT};
		memcpy(e.comm, "a\"b\\c\nd\x1b[31m\xff", 14);
		model_ingest(m, &e);
	}
	char *t = render(m, NULL, NULL);
	struct parsed p;
	check_syntax(t, &p);
	CHECK(p.bad == 0);
	CHECK(strstr(t, "comm=\"a\\\"b\\\\cd[31m\xef\xbf\xbd\""));
	int ctl = 0;
	for (const unsigned char *c = (const unsigned char *)t; *c; c++)
		ctl += (*c < 0x20 && *c != '\n') || *c == 0x7f;
	CHECK(ctl == 0);
	struct kv k = {"comm", "a\"b\\cd[31m\xef\xbf\xbd"};
	CHECK(sum_of(t, "ingero_top_cuda_calls_total", has_label, &k, NULL) == 50);
	free(t);
	/* an empty model: the fixed families, no op, no process */
	an_model_reset(m);
	t = render(m, NULL, NULL);
	check_syntax(t, &p);
	CHECK(p.bad == 0);
	CHECK(!strstr(t, "ingero_top_cuda_calls_total{"));
	CHECK(strstr(t, "\ningero_top_build_info{"));
	free(t);
	an_model_free(m);
}

int main(void)
{
	compile_res();
	test_label();
	test_buckets();
	test_render_contention();
	test_render_top_n();
	test_render_hostile();
	return check_done("test_prom");
}
