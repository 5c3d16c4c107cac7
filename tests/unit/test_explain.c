/* The pure parts of the handover: time arguments (core/timearg), the
 * marking of untrusted text for MCP answers (report/mcpmark), the slowest
 * calls of a run (analysis/slowcalls), the ring of recent events
 * (session/evring), range models (session/range), and the incident report
 * on a synthetic stream with a stated cause (report/explain): the cause
 * first with its culprit, filters, widths, escaping of a hostile name. */
#include "analysis.h"
#include "check.h"
#include "synth.h"

#include "analysis/analysis.h"
#include "analysis/slowcalls.h"
#include "core/ops.h"
#include "core/timearg.h"
#include "report/explain.h"
#include "report/mcpmark.h"
#include "session/evring.h"
#include "session/range.h"
#include "session/session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define S1 1000000000ull
#define T0 1767225600000000000ull /* 2026-01-01T00:00:00Z */

static void test_timearg(void)
{
	uint64_t v = 0;
	char err[256];
	CHECK(!timearg_duration("1m30s", &v) && v == 90 * S1);
	CHECK(!timearg_duration("250ms", &v) && v == 250000000ull);
	CHECK(!timearg_duration("2.5", &v) && v == 2500000000ull);
	CHECK(!timearg_duration("1h", &v) && v == 3600 * S1);
	CHECK(!timearg_duration("10us", &v) && v == 10000);
	const char *badd[] = {"", "abc", "5x", "-3s", "1s2", "s"};
	for (size_t i = 0; i < sizeof(badd) / sizeof(badd[0]); i++)
		CHECKF(timearg_duration(badd[i], &v) == -EINVAL, "%s", badd[i]);

	uint64_t start = T0 + 5 * S1, end = T0 + 65 * S1;
	CHECK(!timearg_parse("+30s", start, end, &v, err, sizeof(err)) && v == start + 30 * S1);
	CHECK(!timearg_parse("-5s", start, end, &v, err, sizeof(err)) && v == end - 5 * S1);
	CHECK(!timearg_parse("-0s", start, end, &v, err, sizeof(err)) && v == end);
	CHECK(!timearg_parse("2026-01-01T00:00:01Z", start, end, &v, err, sizeof(err)) &&
	      v == T0 + S1);
	CHECK(!timearg_parse("2026-01-01T01:00:01+01:00", start, end, &v, err, sizeof(err)) &&
	      v == T0 + S1);
	CHECK(!timearg_parse("2025-12-31T19:00:01-05:00", start, end, &v, err, sizeof(err)) &&
	      v == T0 + S1);
	CHECK(!timearg_parse("2026-01-01 00:00:01.250", start, end, &v, err, sizeof(err)) &&
	      v == T0 + S1 + 250000000ull);
	CHECK(!timearg_parse("2026-01-01T00:02", start, end, &v, err, sizeof(err)) &&
	      v == T0 + 120 * S1);
	CHECK(!timearg_parse("1767225601000000000", start, end, &v, err, sizeof(err)) &&
	      v == T0 + S1);
	CHECK(!timearg_parse("00:00:30", start, end, &v, err, sizeof(err)) && v == T0 + 30 * S1);
	CHECK(!timearg_parse("00:01:00.5", start, end, &v, err, sizeof(err)) &&
	      v == T0 + 60 * S1 + S1 / 2);
	/* before the start: the next day (data across midnight) */
	CHECK(!timearg_parse("00:00:01", start, end, &v, err, sizeof(err)) && v == T0 + 86401 * S1);
	const char *badt[] = {"yesterday",
			      "2026-13-01T00:00Z",
			      "2026-01-01T25:00Z",
			      "2026-01-01",
			      "+",
			      "+5q",
			      "1969-12-31T23:59:59Z",
			      "25:00",
			      "12:00Z"};
	for (size_t i = 0; i < sizeof(badt) / sizeof(badt[0]); i++)
		CHECKF(timearg_parse(badt[i], start, end, &v, err, sizeof(err)) == -EINVAL &&
			   strstr(err, "not a time"),
		       "%s", badt[i]);
	char b[40];
	CHECK(
	    !strcmp(timearg_iso(b, sizeof(b), T0 + S1 + 250000000ull), "2026-01-01T00:00:01.250Z"));
	CHECK(!strcmp(timearg_iso(b, sizeof(b), 0), "-"));
}

static void test_mcpmark(void)
{
	char b[64];
	CHECK(mcp_strip(b, sizeof(b), "a\x1b[2Jb\n\tc") == 9 && !strcmp(b, "a [2Jb  c"));
	CHECK(
	    !strcmp((mcp_strip(b, sizeof(b), "x\xe2\x80\xa8y\xe2\x80\xaez\xc2\x9b"), b), "x y z "));
	CHECK(!strcmp((mcp_strip(b, sizeof(b),
				 "\xff"
				 "ok"),
		       b),
		      "\xef\xbf\xbd"
		      "ok"));
	CHECK(!strcmp((mcp_strip(b, sizeof(b), "\xe2\x9f\xa6x\xe2\x9f\xa7"), b),
		      "\xef\xbf\xbdx\xef\xbf\xbd"));
	CHECK(!strcmp((mcp_strip(b, sizeof(b), "caf\xc3\xa9 \xe2\x9c\x93"), b),
		      "caf\xc3\xa9 \xe2\x9c\x93"));
	CHECK(mcp_strip(b, 5, "abc\xc3\xa9z") == 6 &&
	      !strcmp(b, "abc")); /* never half a sequence */

	json_t *v = ig_json_parse(
	    "{\"comm\":\"evil\\u001b\",\"op\":\"cudaMalloc\",\"evidence\":{\"a\":\"b\"},"
	    "\"list\":[\"p\",3],\"chains\":[{\"summary\":\"s\",\"severity\":\"HIGH\"}],"
	    "\"n\":5}");
	mcp_mark(v, MARK_OBJECT);
	char *t = ig_json_dumps(v);
	CHECKF(t && !strcmp(t, "{\"comm\":{\"untrusted_text\":\"evil "
			       "\"},\"op\":\"cudaMalloc\",\"evidence\":{\"a\":\"b\"},"
			       "\"list\":[{\"untrusted_text\":\"p\"},3],\"chains\":[{\"summary\":{"
			       "\"untrusted_text\":\"s\"},"
			       "\"severity\":\"HIGH\"}],\"n\":5}"),
	       "%s", t);
	free(t);
	json_decref(v);
	v = ig_json_parse("{\"comm\":\"a\\u27e7b\",\"id\":\"chain-0001\"}");
	mcp_mark(v, MARK_BRACKETS);
	CHECK(!strcmp(ig_json_get_str(v, "comm", ""), "\xe2\x9f\xa6"
						      "a\xef\xbf\xbd"
						      "b\xe2\x9f\xa7"));
	CHECK(!strcmp(ig_json_get_str(v, "id", ""), "chain-0001"));
	json_decref(v);
}

static struct ig_event call(int op, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t dur)
{
	struct ig_event e = {.kind = IG_EV_CALL,
			     .op = (uint16_t)op,
			     .pid = pid,
			     .tid = tid,
			     .ts_ns = ts,
			     .dur_ns = dur};
	return e;
}

static void test_slowcalls(void)
{
	struct slowcalls *s = slowcalls_new(10, 3);
	struct ig_event out[64];
	for (int i = 1; i <= 100; i++) {
		struct ig_event e =
		    call(IG_OP_CUDA_MALLOC, 1, 1, T0 + (uint64_t)i * S1, (uint64_t)i * 1000);
		slowcalls_event(s, &e);
	}
	int n = slowcalls_get(s, IG_OP_CUDA_MALLOC, 1, 0, 0, out, 64);
	CHECK(n == 10 && out[0].dur_ns == 100000 && out[9].dur_ns == 91000);
	/* a range: the calls completing in it */
	n = slowcalls_get(s, IG_OP_CUDA_MALLOC, 0, T0 + 92 * S1, T0 + 95 * S1 + 95000, out, 64);
	CHECK(n == 4 && out[0].dur_ns == 95000 && out[3].dur_ns == 92000);
	/* a nested driver call is left out of the list of every op */
	struct ig_event outer = call(IG_OP_CUDA_STREAM_SYNC, 2, 7, T0, 500000);
	struct ig_event inner = call(IG_OP_CU_STREAM_SYNC, 2, 7, T0 + 1000, 490000);
	slowcalls_event(s, &outer);
	slowcalls_event(s, &inner);
	n = slowcalls_get(s, -1, 2, 0, 0, out, 64);
	CHECK(n == 1 && out[0].op == IG_OP_CUDA_STREAM_SYNC);
	CHECK(slowcalls_get(s, IG_OP_CU_STREAM_SYNC, 2, 0, 0, out, 64) == 1);
	/* 3 series at most: a fourth takes the place of the series whose
	 * slowest call is the fastest, when it is slower */
	CHECK(slowcalls_evicted(s) == 0);
	struct ig_event e3 = call(IG_OP_CUDA_MALLOC, 3, 3, T0, 7000000);
	struct ig_event e4 = call(IG_OP_CUDA_MALLOC, 4, 4, T0, 1);
	slowcalls_event(s, &e3);
	CHECK(slowcalls_evicted(s) == 1 &&
	      slowcalls_get(s, IG_OP_CUDA_MALLOC, 1, 0, 0, out, 64) == 0);
	slowcalls_event(s, &e4); /* faster than every series kept: not taken */
	CHECK(slowcalls_evicted(s) == 1);
	CHECK(slowcalls_get(s, -1, 3, 0, 0, out, 64) == 1 &&
	      slowcalls_get(s, -1, 4, 0, 0, out, 64) == 0);
	n = slowcalls_get(s, -1, 0, 0, 0, out, 64);
	CHECK(n == 2 && out[0].pid == 3 && out[0].dur_ns == 7000000 &&
	      out[1].op == IG_OP_CUDA_STREAM_SYNC);
	slowcalls_reset(s);
	CHECK(slowcalls_get(s, -1, 0, 0, 0, out, 64) == 0);
	slowcalls_free(s);
	slowcalls_free(NULL);
}

static void count(void *ctx, const struct ig_event *e)
{
	(*(int *)ctx)++;
}

static void test_evring(void)
{
	struct evring *r = evring_new(10, 100);
	uint64_t lo, hi;
	CHECK(evring_span(r, &lo, &hi) == -ENODATA);
	for (int i = 0; i < 150; i++) { /* 0.01 s apart: the cap drops the oldest */
		struct ig_event e =
		    call(IG_OP_CUDA_MALLOC, 1, 1, T0 + (uint64_t)i * 10000000ull, 0);
		evring_push(r, &e);
	}
	CHECK(evring_count(r) == 100 && evring_capped(r) == 50);
	CHECK(evring_lost_until(r) == T0 + 49 * 10000000ull);
	CHECK(!evring_span(r, &lo, &hi) && lo == T0 + 50 * 10000000ull &&
	      hi == T0 + 149 * 10000000ull);
	int n = 0;
	CHECK(evring_each(r, T0 + S1, T0 + S1 + 99 * 10000000ull, count, &n) == 50 && n == 50);
	evring_free(r);
	r = evring_new(10,
		       1000000); /* 1 per second for 30 s: the age drops all but the last 11 s */
	for (int i = 0; i < 30; i++) {
		struct ig_event e = call(IG_OP_CUDA_MALLOC, 1, 1, T0 + (uint64_t)i * S1, 0);
		evring_push(r, &e);
	}
	CHECK(evring_count(r) == 11 && evring_capped(r) == 0 &&
	      evring_lost_until(r) == T0 + 18 * S1);
	evring_free(r);
	CHECK(!evring_new(0, 10) && !evring_new(10, 0));
}

/* A synthetic stream into a model with its detector and the slowest calls;
 * also into a range model over all of it. */
static struct ig_model *feed(int scenario, struct slowcalls *slow, struct range *rg,
			     const char *rename)
{
	struct synth_cfg cfg = {.scenario = scenario, .seconds = 20};
	struct synth *sy = synth_new(&cfg);
	struct ig_model *m = an_model_new(NULL);
	struct ig_event e;
	uint64_t last = 0;
	if (rename) { /* the main process renamed to a hostile name */
		struct ig_event c = {
		    .kind = IG_EV_COMM, .pid = SYNTH_PID, .tid = SYNTH_PID, .ts_ns = T0 + 1};
		snprintf(c.comm, sizeof(c.comm), "%s", rename);
		model_ingest(m, &c);
		if (rg)
			range_event(rg, &c);
	}
	while (synth_next(sy, &e) == 1) {
		if (rename && e.pid == SYNTH_PID)
			snprintf(e.comm, sizeof(e.comm), "%s", rename);
		model_ingest(m, &e);
		slowcalls_event(slow, &e);
		if (rg)
			range_event(rg, &e);
		if (e.ts_ns + e.dur_ns > last)
			last = e.ts_ns + e.dur_ns;
	}
	model_advance(m, (last / S1 + 1) * S1);
	if (rg)
		CHECK(range_finish(rg) == 0);
	synth_free(sy);
	return m;
}

static int max_line(const char *text)
{
	int w = 0, cur = 0;
	for (const char *p = text; *p; p++) {
		if (*p == '\n') {
			w = cur > w ? cur : w;
			cur = 0;
		} else if (((unsigned char)*p & 0xc0) != 0x80) {
			cur++;
		}
	}
	return w > cur ? w : cur;
}

static char *render(const json_t *rep, int md, int width)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (md)
		explain_md(f, rep);
	else
		explain_text(f, rep, width);
	fclose(f);
	return buf;
}

static void test_explain(void)
{
	struct slowcalls *slow = slowcalls_new(0, 0);
	struct range *rg = range_new(0, 0, 0);
	struct ig_model *m = feed(SYNTH_CPU_CONTENTION, slow, rg, NULL);
	struct explain_in in = {.m = m, .d = an_detect(m), .slow = slow};
	struct explain_opts o = {0};
	char err[512];
	json_t *rep = explain_build(&in, &o, err, sizeof(err));
	CHECKF(rep != NULL, "%s", err);
	const json_t *c0 = json_array_get(json_object_get(rep, "chains"), 0);
	CHECK(!strcmp(ig_json_get_str(c0, "class", ""), "cpu_contention"));
	CHECK(ig_json_get_int(c0, "culprit_pid", 0) == SYNTH_STRESS &&
	      ig_json_get_int(c0, "rank", 0) == 1);
	CHECK(ig_json_get_num(c0, "range_share", -1) > 0.30 &&
	      ig_json_get_num(c0, "range_share", -1) < 0.40);
	CHECK(json_array_size(json_object_get(c0, "proof")) > 0);
	CHECK(!strcmp(ig_json_get_str(rep, "verdict", ""), ig_json_get_str(c0, "summary", "x")));
	CHECK(json_array_size(json_object_get(rep, "slow_calls")) == 5 &&
	      json_array_size(json_object_get(rep, "actions")) > 0);
	/* the range model over the whole stream has the same statistics */
	struct explain_in rin = {
	    .m = session_model(rg->s), .d = session_detect(rg->s), .slow = session_slowcalls(rg->s)};
	json_t *rrep = explain_build(&rin, &o, err, sizeof(err));
	CHECK(rrep && json_equal(json_object_get(rep, "ops"), json_object_get(rrep, "ops")));
	json_decref(rrep);
	/* widths: no line wider than asked */
	for (int w = 50; w <= 130; w += 40) {
		char *t = render(rep, 0, w);
		CHECKF(t && max_line(t) <= w, "width %d: a line of %d", w, max_line(t));
		free(t);
	}
	json_decref(rep);
	/* filters */
	o.chain = "chain-0099";
	CHECK(!explain_build(&in, &o, err, sizeof(err)) && strstr(err, "no chain 'chain-0099'") &&
	      strstr(err, "chain-0001"));
	o.chain = NULL;
	o.pid = 77;
	CHECK(!explain_build(&in, &o, err, sizeof(err)) && strstr(err, "no process 77") &&
	      strstr(err, "4821"));
	o.pid = SYNTH_STRESS; /* the culprit: its chains, no op of its own */
	rep = explain_build(&in, &o, err, sizeof(err));
	CHECK(rep && json_array_size(json_object_get(rep, "chains")) >= 1);
	json_decref(rep);
	an_model_free(m);
	range_free(rg);
	slowcalls_reset(slow);

	/* a hostile process name: escaped in text, escaped in Markdown */
	m = feed(SYNTH_CPU_CONTENTION, slow, NULL, "\x1b]0;[y](z)*");
	in = (struct explain_in){.m = m, .d = an_detect(m), .slow = slow};
	o = (struct explain_opts){0};
	rep = explain_build(&in, &o, err, sizeof(err));
	char *t = render(rep, 0, 80), *md = render(rep, 1, 0);
	CHECK(t && !strchr(t, '\x1b') && strstr(t, "\\x1b]0;[y](z)*"));
	CHECK(md && !strchr(md, '\x1b') && strstr(md, "\\\\x1b\\]0;\\[y\\](z)\\*") &&
	      !strstr(md, "[y]"));
	free(t);
	free(md);
	json_decref(rep);
	an_model_free(m);
	slowcalls_free(slow);
}

int main(void)
{
	test_timearg();
	test_mcpmark();
	test_slowcalls();
	test_evring();
	test_explain();
	return check_done("test_explain");
}
