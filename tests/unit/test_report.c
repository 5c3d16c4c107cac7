/* Batch frames: duration and byte formatting, the text frame layout that
 * scripts grep (header, op rows, process rows, chains), the --summary
 * variant, and the JSON frame parsed back with jansson. The string escaping
 * is core/json's (test_json). */
#include "analysis.h"
#include "check.h"
#include "model/model.h"
#include "core/ops.h"
#include "report/report.h"
#include "core/status.h"
#include "synth.h"

#include <jansson.h>
#include <locale.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

static void test_fmt(void)
{
	static const struct {
		uint64_t ns;
		const char *s;
	} d[] = {
	    {0, "0ns"},
	    {999, "999ns"},
	    {1000, "1.00us"},
	    {12345, "12.3us"},
	    {999499, "999us"},
	    {999500, "1.00ms"},
	    {4560000, "4.56ms"},
	    {142000000, "142ms"},
	    {999600000, "1.00s"},
	    {1230000000, "1.23s"},
	    {59900000000ull, "59.9s"},
	    {123000000000ull, "2m03s"},
	};
	char b[32];
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		CHECKF(!strcmp(report_fmt_ns(b, sizeof(b), d[i].ns), d[i].s), "%lu -> %s",
		       (unsigned long)d[i].ns, b);
	CHECK(!strcmp(report_fmt_bytes(b, sizeof(b), 512), "512B"));
	CHECK(!strcmp(report_fmt_bytes(b, sizeof(b), 1536), "1.5KiB"));
	CHECK(!strcmp(report_fmt_bytes(b, sizeof(b), 12ull << 20), "12.0MiB"));
	CHECK(!strcmp(report_fmt_bytes(b, sizeof(b), 3435973837ull), "3.2GiB"));
}

/* --- JSON: parsed back with jansson ------------------------------------------------ */

static char jerr[200];

/* One valid JSON object on exactly one line. */
static int json_ok(const char *s)
{
	json_error_t e;
	size_t n = strlen(s);
	jerr[0] = 0;
	if (!n || s[n - 1] != '\n' || memchr(s, '\n', n - 1)) {
		snprintf(jerr, sizeof(jerr), "not exactly one line");
		return 0;
	}
	json_t *v = json_loads(s, 0, &e);
	if (!v)
		snprintf(jerr, sizeof(jerr), "%s at %d", e.text, e.position);
	int ok = json_is_object(v);
	json_decref(v);
	return ok;
}

/* --- frames ------------------------------------------------------------------------ */

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

static char *render(const struct ig_model *m, const struct ig_status *st,
		    const struct report_opts *o, int json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = json ? report_json(f, m, an_detect(m), st, o) : report_text(f, m, an_detect(m), st, o);
	fclose(f);
	CHECK(rc == 0);
	return buf;
}

/* The first line matching re, copied into out; 0 when none. */
static int grep(const char *text, const char *re, char *out, size_t n)
{
	regex_t r;
	if (regcomp(&r, re, REG_EXTENDED | REG_NEWLINE))
		return 0;
	regmatch_t mt;
	int ok = !regexec(&r, text, 1, &mt, 0);
	if (ok && out) {
		const char *b = text + mt.rm_so;
		while (b > text && b[-1] != '\n')
			b--;
		const char *e = strchr(b, '\n');
		size_t l = e ? (size_t)(e - b) : strlen(b);
		if (l >= n)
			l = n - 1;
		memcpy(out, b, l);
		out[l] = 0;
	}
	regfree(&r);
	return ok;
}

static void test_text(void)
{
	struct ig_model *m = model_of(SYNTH_CPU_CONTENTION, 15);
	struct ig_status st = {.mode = IG_MODE_LIVE,
			       .events_per_s = 1234.5,
			       .events_total = 999,
			       .drops_kernel = 3,
			       .drops_user = 4,
			       .probes_attached = 24,
			       .probes_failed = 1,
			       .probes_missing = 2};
	strcpy(st.recording, "/tmp/x.db");
	char *t = render(m, &st, NULL, 0);
	char line[512];
	CHECK(grep(t,
		   "^ingero-top live 2026-01-01T00:00:15Z window 9\\.00s events/s 1234\\.5 events 999 "
		   "drops kernel 3 user 4 probes attached 24 failed 1 missing 2$",
		   NULL, 0));
	CHECK(grep(t, "^host cpu 98\\.0% mem 40\\.0% swap 0MiB load 9\\.50$", NULL, 0));
	CHECK(grep(t, "^recording /tmp/x\\.db$", NULL, 0));
	/* op rows: name in column 1, calls, rate, then labelled percentiles */
	CHECK(grep(t,
		   "^cudaStreamSynchronize +[0-9]+ +[0-9.]+/s +p50 [0-9.]+ms +p95 [0-9.]+ms +"
		   "p99 [0-9.]+ms +max [0-9.]+ms$",
		   line, sizeof(line)));
	struct ig_series_stats s;
	model_op_stats(m, IG_OP_CUDA_STREAM_SYNC, &s);
	unsigned long calls = 0;
	char p99[16];
	CHECK(sscanf(line, "cudaStreamSynchronize %lu %*s p50 %*s p95 %*s p99 %15s", &calls, p99) ==
	      2);
	CHECK(calls == s.calls_win);
	char want[16];
	CHECK(!strcmp(p99, report_fmt_ns(want, sizeof(want), s.win.p99)));
	CHECK(grep(t, "^cudaLaunchKernel +[0-9]+ +[0-9.]+/s +p50 [0-9.]+us ", NULL, 0));
	/* the op with the most time comes first */
	CHECK(strstr(t, "\ncudaStreamSynchronize") < strstr(t, "\ncudaMemcpyAsync"));
	/* process rows */
	CHECK(grep(
	    t,
	    "^pid 4821 +python3 +container \\? +calls/s [0-9.]+ +preempted [0-9.]+m?s +[0-9.]+% "
	    "+blocked "
	    "[^ ]+ +[0-9.]+% +unknown 0ns +0\\.0% +between [^ ]+ +[0-9.]+% +top "
	    "stress-ng\\[2231\\] 100%$",
	    NULL, 0));
	/* chains */
	CHECK(grep(t, "^CHAINS 2$", NULL, 0));
	CHECK(grep(t,
		   "^\\[HIGH\\] chain-000[0-9] cpu_contention impact [0-9]+% CPU contention by "
		   "stress-ng\\[2231\\]: python3\\[4821\\] runnable but not running [0-9]+% of its time",
		   NULL, 0));
	/* where the time goes: every part, as a share of the feeders' wall time */
	CHECK(grep(t,
		   "^pid 4821 +python3 +tid 4821 +wall [0-9.]+m?s +gpu_wait [0-9.]+% api [<0-9.]+% "
		   "call_preempted [0-9.]+% host_cpu [<0-9.]+% preempted [0-9.]+% io_wait 0% "
		   "task_wait 0% sleep 0% fault 0% unknown 0%$",
		   NULL, 0));
	CHECK(!strstr(t, "    why:"));
	free(t);

	struct report_opts o = {.details = 1, .max_ops = 1, .max_chains = 1};
	t = render(m, &st, &o, 0);
	CHECK(grep(t, "^    why: ", NULL, 0) && grep(t, "^    do: ", NULL, 0));
	CHECK(grep(t, "^    evidence: .*impact_pct=[0-9]+% .*feeder_wall_ns=[0-9.]+s$", NULL, 0));
	CHECK(grep(t, "^    at 2026-01-01T00:00:[0-9]{2}\\.[0-9]{3}Z ", NULL, 0));
	CHECK(!grep(t, "^cudaMemcpyAsync ", NULL, 0)); /* max_ops */
	int nchains = 0;
	for (const char *p = t; (p = strstr(p, "\n[")); p++)
		nchains++;
	CHECK(nchains == 1);
	free(t);

	/* --summary: lifetime numbers */
	o = (struct report_opts){.summary = 1};
	t = render(m, NULL, &o, 0);
	CHECK(grep(t, "^ingero-top live 2026-01-01T00:00:15Z summary 15\\.0s ", NULL, 0));
	CHECK(grep(t, "^cudaStreamSynchronize +[0-9]+ ", line, sizeof(line)));
	CHECK(sscanf(line, "cudaStreamSynchronize %lu", &calls) == 1 && calls == s.calls_life);
	CHECK(grep(t, "^pid 4821 ", NULL, 0));
	free(t);
	an_model_free(m);

	/* replay header, an empty model, comm with blanks */
	m = an_model_new(NULL);
	st = (struct ig_status){.mode = IG_MODE_REPLAY, .replay_speed = 8, .paused = 1};
	t = render(m, &st, NULL, 0);
	CHECK(grep(t, "^ingero-top replay - window 0s of 10s ", NULL, 0)); /* no event */
	CHECK(grep(t, "^replay - \\.\\. - speed 8 paused$", NULL, 0));
	CHECK(grep(t, "^CHAINS 0$", NULL, 0));
	free(t);
	struct ig_event e = {.kind = IG_EV_CALL,
			     .ts_ns = 1767225600000000000ull,
			     .dur_ns = 1000,
			     .pid = 9,
			     .tid = 9,
			     .op = IG_OP_CUDA_MALLOC};
	strcpy(e.comm, "Web Content");
	model_ingest(m, &e);
	t = render(m, NULL, NULL, 0);
	CHECK(grep(t, "^pid 9 +Web_Content +container \\? +calls/s ", NULL, 0));
	CHECK(grep(t, "^cudaMalloc +1 ", NULL, 0));
	free(t);
	/* the container of a name event: text (escaped) and JSON */
	struct ig_event n = {.kind = IG_EV_COMM, .ts_ns = e.ts_ns, .pid = 9, .tid = 9};
	strcpy(n.comm, "Web Content");
	n.container = "k8s:0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9/4f1e2d3c4b5a";
	model_ingest(m, &n);
	t = render(m, NULL, NULL, 0);
	CHECK(grep(t,
		   "^pid 9 +Web_Content +container "
		   "k8s:0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9/4f1e2d3c4b5a calls/s ",
		   NULL, 0));
	CHECK(grep(t, "^PID +COMM +CONTAINER +CALLS/S ", NULL, 0));
	free(t);
	n.container = "a b\x1b[2J.service";
	model_ingest(m, &n);
	t = render(m, NULL, NULL, 0);
	CHECK(
	    grep(t, "^pid 9 +Web_Content +container a_b\\\\x1b\\[2J\\.service calls/s ", NULL, 0));
	free(t);
	t = render(m, NULL, NULL, 1);
	json_t *v = json_loads(t, 0, NULL);
	json_t *p0 = json_array_get(json_object_get(v, "procs"), 0);
	CHECK(p0 &&
	      !strcmp(json_string_value(json_object_get(p0, "container")), "a b\x1b[2J.service"));
	json_decref(v);
	free(t);
	an_model_free(m);
}

static void test_json(void)
{
	for (int sc = 0; sc < SYNTH_BENCH; sc++) {
		struct ig_model *m = model_of(sc, 12);
		struct ig_status st = {.events_per_s = 10.5};
		strcpy(st.message, "tab\there \"quoted\"");
		struct report_opts o = {.resolved = 1};
		char *j = render(m, &st, &o, 1);
		CHECKF(json_ok(j), "%s: invalid JSON: %s", synth_name(sc), jerr);
		CHECK(!strncmp(j, "{\"type\":\"frame\",\"time_ns\":", 26));
		CHECK(strstr(j, "\"message\":\"tab\\there \\\"quoted\\\"\"") != NULL);
		CHECK(strstr(j, "\"ops\":[{\"op\":\"") != NULL);
		free(j);
		o.summary = 1;
		j = render(m, NULL, &o, 1);
		CHECK(json_ok(j) && !strncmp(j, "{\"type\":\"summary\"", 17));
		free(j);
		an_model_free(m);
	}
	struct ig_model *m = model_of(SYNTH_NO_SPLIT, 12);
	char *j = render(m, NULL, NULL, 1);
	CHECK(json_ok(j));
	CHECK(strstr(j, "\"class\":\"offcpu_wait\"") != NULL);
	CHECK(strstr(j, "\"tail_preempt_share\":null") != NULL);
	CHECK(strstr(j, "\"lacking\":\"off-CPU states") != NULL);
	CHECK(strstr(j, "\"split_unknown\":true") != NULL);
	CHECK(strstr(j, "\"no_split\":1") != NULL);
	free(j);
	an_model_free(m);
	m = an_model_new(NULL);
	j = render(m, NULL, NULL, 1);
	CHECK(json_ok(j) && strstr(j, "\"host\":null") && strstr(j, "\"chains\":[]"));
	free(j);
	an_model_free(m);
	CHECK(!json_ok("{}\n{}\n") && !json_ok("{\"a\":1,}\n"));
}

/* Numbers keep '.' when the process runs under a locale with ',' (the TUI
 * calls setlocale). Skipped when no such locale is installed. */
static void test_locale(void)
{
	static const char *const locs[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
					   "fr_FR.utf8"};
	const char *got = NULL;
	for (size_t i = 0; i < sizeof(locs) / sizeof(locs[0]) && !got; i++)
		got = setlocale(LC_NUMERIC, locs[i]);
	char dir[] = "/tmp/ig-test-locale.XXXXXX", cmd[256];
	int made = 0;
	if (!got && mkdtemp(dir)) {
		/* none installed: compile one (Debian's locales package has the
		 * sources) into a private LOCPATH */
		snprintf(cmd, sizeof(cmd),
			 "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", dir);
		made = system(cmd) == 0;
		setenv("LOCPATH", dir, 1);
		got = made ? setlocale(LC_NUMERIC, "de_DE.UTF-8") : NULL;
	}
	CHECKF(got != NULL, "no comma-decimal locale, and localedef -i de_DE failed (install "
			    "Debian's locales package)");
	if (!got)
		return;
	struct ig_model *m = model_of(SYNTH_GPU_BOUND, 12);
	struct ig_status st = {.events_per_s = 1.5};
	char *j = render(m, &st, NULL, 1);
	CHECK(json_ok(j) && strstr(j, "\"events_per_s\":1.5"));
	free(j);
	char *t = render(m, &st, NULL, 0);
	CHECK(strstr(t, "events/s 1.5 ") != NULL);
	free(t);
	setlocale(LC_NUMERIC, "C");
	an_model_free(m);
	if (made) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		CHECK(system(cmd) == 0);
	}
}

/* The JSON of every synthetic stream, window and summary: the parts of
 * each process's time add up to its wall time; chains carry an impact in
 * [0, 1] and come in order: active first, INFO after the others, then by
 * impact. */
static void test_json_time(void)
{
	for (int sc = 0; sc < SYNTH_BENCH; sc++)
		for (int summary = 0; summary < 2; summary++) {
			struct ig_model *m = model_of(sc, 12);
			struct report_opts o = {.summary = summary, .resolved = 1};
			char *j = render(m, NULL, &o, 1);
			json_t *v = json_loads(j, 0, NULL);
			CHECKF(v != NULL, "%s: JSON", synth_name(sc));
			size_t i;
			json_t *p, *c;
			int nt = 0;
			json_array_foreach(json_object_get(v, "procs"), i, p)
			{
				json_t *t = json_object_get(p, "time"), *x;
				const char *k;
				uint64_t sum = 0;
				json_object_foreach(json_object_get(t, "parts"), k, x) sum +=
				    (uint64_t)json_integer_value(x);
				if (json_integer_value(json_object_get(t, "wall_ns")))
					nt++;
				CHECKF(sum == (uint64_t)json_integer_value(json_object_get(t, "wall_ns")),
				       "%s: parts add up to the wall time", synth_name(sc));
			}
			CHECKF(nt >= 1, "%s: a process with a wall time", synth_name(sc));
			int prev_active = 1, prev_info = 0;
			double prev_impact = 2;
			json_array_foreach(json_object_get(v, "chains"), i, c)
			{
				double imp = json_real_value(json_object_get(c, "impact")) +
					     (double)json_integer_value(json_object_get(c, "impact"));
				int active = json_is_true(json_object_get(c, "active")) ||
					     json_integer_value(json_object_get(c, "active"));
				int info = !strcmp(json_string_value(json_object_get(c, "severity")),
						   "INFO");
				CHECKF(imp >= 0 && imp <= 1, "%s: impact %f", synth_name(sc), imp);
				if (active != prev_active || info != prev_info) {
					CHECKF(active <= prev_active &&
						   (active != prev_active || info >= prev_info),
					       "%s: chain order", synth_name(sc));
				} else {
					CHECKF(imp <= prev_impact + 1e-9, "%s: chains by impact",
					       synth_name(sc));
				}
				prev_active = active;
				prev_info = info;
				prev_impact = imp;
			}
			json_decref(v);
			free(j);
			an_model_free(m);
		}
}

/* A full recording whose writer fell behind says that --record-rate would
 * have kept every count (issue 30); one that kept up says nothing more. */
static void test_record_hint(void)
{
	struct ig_model *m = an_model_new(NULL);
	struct ig_status st = {.mode = IG_MODE_LIVE, .record_waits = 3,
			       .record_wait_ns = 1500000000, .record_rate_hint = 1};
	strcpy(st.recording, "/tmp/x.db");
	char *t = render(m, &st, NULL, 0);
	CHECK(grep(t,
		   "^recording /tmp/x\\.db waited 3 times 1\\.50s for the writer \\(it fell "
		   "behind: --record-rate would have kept every count\\)$",
		   NULL, 0));
	free(t);
	st.record_rate_hint = 0;
	t = render(m, &st, NULL, 0);
	CHECK(grep(t, "^recording /tmp/x\\.db waited 3 times 1\\.50s for the writer$", NULL, 0));
	free(t);
	an_model_free(m);
}

int main(void)
{
	test_fmt();
	test_record_hint();
	test_text();
	test_json();
	test_json_time();
	test_locale();
	return check_done("test_report");
}
