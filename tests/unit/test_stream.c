/* The stream's objects (report/stream.h) from a synthetic model: a frame
 * of the two-rank NCCL straggler has every member of stream v1, its
 * processes busiest first with the processes pane's GPU% CPU% PRE% WAIT%
 * (tui/figures.c, the same numbers), the straggler chain with its impact
 * and first recommendation, per rank the arrivals since the previous frame
 * (contiguous sequence numbers, oldest first, the ones not listed
 * counted); pongs echo the ping's id, other lines get no answer; hello,
 * end and error; one flushed line each. */
#include "check.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../tui/figures.c"
#include "analysis.h"
#include "core/ops.h"
#include "core/status.h"
#include "detect/detect.h"
#include "evmake.h"
#include "model/model.h"
#include "report/stream.h"
#include "synth.h"

#define RT 1767225999000000000ull /* a wall clock for the frames */

static const char *str(const json_t *o, const char *k)
{
	return ig_json_get_str(o, k, "(absent)");
}

static int has(const json_t *o, const char *const *keys)
{
	int ok = 1;
	for (; *keys; keys++)
		if (!json_object_get(o, *keys)) {
			fprintf(stderr, "missing member %s\n", *keys);
			ok = 0;
		}
	return ok;
}

/* Every object: its type and "stream": 1. */
static int head_ok(const json_t *o, const char *type)
{
	return o && !strcmp(str(o, "type"), type) && ig_json_get_int(o, "stream", 0) == 1;
}

static const json_t *rank_of(const json_t *f, uint32_t pid)
{
	const json_t *a = json_object_get(f, "nccl");
	for (size_t i = 0; i < json_array_size(a); i++)
		if (ig_json_get_int(json_array_get(a, i), "pid", 0) == pid)
			return json_array_get(a, i);
	return NULL;
}

/* The rank's arrivals: n listed, contiguous from first, lost as said, its
 * seq the last; returns the count. */
static int arrivals_ok(const json_t *r, uint64_t first, uint64_t n, uint64_t lost)
{
	const json_t *a = json_object_get(r, "arrivals");
	int ok =
	    json_array_size(a) == n && (uint64_t)ig_json_get_int(r, "arrivals_lost", -1) == lost;
	uint64_t prev_ns = 0;
	for (size_t i = 0; ok && i < n; i++) {
		const json_t *x = json_array_get(a, i);
		uint64_t seq = (uint64_t)json_integer_value(json_array_get(x, 0));
		uint64_t ns = (uint64_t)json_integer_value(json_array_get(x, 1));
		ok &= json_array_size(x) == 2 && seq == first + i && ns >= prev_ns && ns > T0;
		prev_ns = ns;
	}
	if (n)
		ok &= (uint64_t)ig_json_get_int(r, "seq", 0) == first + n - 1;
	if (!ok)
		fprintf(stderr, "arrivals: %zu listed, lost %lld, seq %lld\n", json_array_size(a),
			(long long)ig_json_get_int(r, "arrivals_lost", -1),
			(long long)ig_json_get_int(r, "seq", -1));
	return ok;
}

/* The processes: busiest first, the pane's split as percentages. */
static void check_procs(const struct ig_model *m, const json_t *f)
{
	static const char *const keys[] = {"pid",     "comm",	 "exited",  "calls_per_s",
					   "gpu_pct", "cpu_pct", "pre_pct", "wait_pct",
					   "top_op",  NULL};
	const json_t *procs = json_object_get(f, "procs");
	CHECKF(json_array_size(procs) == 2, "%zu procs", json_array_size(procs));
	double prev = 1e18;
	for (size_t i = 0; i < json_array_size(procs); i++) {
		const json_t *p = json_array_get(procs, i);
		CHECK(has(p, keys));
		double rate = ig_json_get_num(p, "calls_per_s", -1);
		CHECK(rate <= prev && rate > 0);
		prev = rate;
		struct ig_proc_stats v[16];
		int n = model_procs(m, v, 16), k = 0;
		while (k < n && v[k].pid != (uint32_t)ig_json_get_int(p, "pid", 0))
			k++;
		CHECK(k < n);
		if (k == n)
			continue;
		struct fig_split sp; /* what the processes pane shows */
		fig_split(&v[k].parts, &sp);
		static const char *const col[FIG_NSPLIT] = {"gpu_pct", "cpu_pct", "pre_pct",
							    "wait_pct"};
		for (int c = 0; c < FIG_NSPLIT; c++)
			CHECKF(sp.valid && ig_json_get_num(p, col[c], -1) == sp.share[c] * 100.0,
			       "pid %u %s %g, pane %g", v[k].pid, col[c],
			       ig_json_get_num(p, col[c], -1), sp.share[c] * 100);
		const json_t *top = json_object_get(p, "top_op");
		CHECK(json_is_object(top) && ig_json_get_num(top, "p99_ns", 0) > 0 &&
		      ig_json_get_int(top, "calls_win", 0) > 0 &&
		      ig_json_get_num(top, "rate", 0) > 0);
		CHECK(!strcmp(str(top, "op"), "ncclAllReduce") ||
		      !strcmp(str(top, "op"), "cudaStreamSynchronize") ||
		      !strncmp(str(top, "op"), "cuda", 4));
	}
	CHECK(json_array_size(procs) && ig_json_get_int(json_array_get(procs, 0), "pid", 0) > 0);
}

/* The active chains in display order (here host work on the late rank,
 * the straggler, GPU-bound), each the detector's. */
static void check_chains(const struct ig_model *m, const json_t *f)
{
	static const char *const keys[] = {"id",     "severity", "class",	"op",
					   "pid",    "comm",	 "culprit_pid", "culprit_comm",
					   "impact", "summary",	 "advice",	NULL};
	const json_t *chains = json_object_get(f, "chains");
	const struct ig_detect *d = an_detect(m);
	size_t k = 0;
	int straggler = 0;
	for (int i = 0; i < detect_count(d) && k < 3; i++) {
		const struct ig_chain *c = detect_chain(d, i);
		if (!c->active)
			continue;
		const json_t *j = json_array_get(chains, k++);
		CHECK(j && has(j, keys));
		if (!j)
			continue;
		CHECK(!strcmp(str(j, "class"), detect_class_name(c->cls)) &&
		      !strcmp(str(j, "id"), c->id_str) &&
		      !strcmp(str(j, "severity"), detect_sev_name(c->severity)));
		CHECK(ig_json_get_num(j, "impact", -1) == c->impact &&
		      ig_json_get_int(j, "pid", 0) == c->pid);
		CHECK(!strcmp(str(j, "advice"), c->nrecs ? c->recs[0] : "") &&
		      !strcmp(str(j, "summary"), c->summary));
		if (c->cls == IG_CC_STRAGGLER) {
			straggler = 1;
			CHECK(ig_json_get_int(j, "culprit_pid", 0) == SYNTH_PEER &&
			      !strcmp(str(j, "culprit_comm"), "python3") &&
			      !strcmp(str(j, "op"), "ncclAllReduce") && c->impact > 0.7);
		}
	}
	CHECKF(k == 3 && json_array_size(chains) == 3 && straggler, "%zu chains",
	       json_array_size(chains));
}

/* An AllReduce of rank 1 (the peer) at ts. */
static void peer_coll(struct ig_model *m, uint64_t ts)
{
	struct ig_event e =
	    ev_call(SYNTH_PEER, SYNTH_PEER, IG_OP_NCCL_ALL_REDUCE, ts, 10 * US, "python3");
	e.arg0 = 4096;
	e.arg1 = IG_NCCL_ARG1(7, 0, IG_NCCL_NONE32);
	e.arg2 = IG_NCCL_COMM(SYNTH_NCCL_KEY, 1, 2);
	e.stream = 0x10;
	model_ingest(m, &e);
}

static void test_frames(void)
{
	struct synth_cfg cfg = {.scenario = SYNTH_NCCL_STRAGGLER, .seconds = 15};
	struct synth *s = synth_new(&cfg);
	struct ig_model *m = an_model_new(NULL);
	struct ig_event e;
	while (synth_next(s, &e))
		model_ingest(m, &e);
	synth_free(s);
	struct ig_status st = {.mode = IG_MODE_REPLAY, .nvml_state = -1, .events_total = 1234};
	snprintf(st.message, sizeof(st.message), "hello there");
	struct stream_writer *w = stream_writer_new();
	json_t *f = stream_frame_json(w, m, an_detect(m), &st, false, RT);
	CHECK(head_ok(f, "frame"));
	CHECK(ig_json_get_int(f, "seq", 0) == 1 &&
	      (uint64_t)ig_json_get_int(f, "realtime_ns", 0) == RT &&
	      ig_json_get_int(f, "window_s", 0) == 10);
	static const char *const skeys[] = {
	    "events_total",  "events_per_s", "drops_kernel", "drops_user", "probes_attached",
	    "probes_failed", "nvml",	     "message",	     "done",	   NULL};
	const json_t *sj = json_object_get(f, "status");
	CHECK(sj && has(sj, skeys));
	CHECK(ig_json_get_int(sj, "events_total", 0) == 1234 && !strcmp(str(sj, "nvml"), "none") &&
	      !strcmp(str(sj, "message"), "hello there") &&
	      json_is_false(json_object_get(sj, "done")));
	CHECK(!json_object_get(f, "gpus")); /* no NVML samples */
	check_procs(m, f);
	check_chains(m, f);

	/* the ranks: every collective since the start, the last 256 listed */
	static const char *const rkeys[] = {"pid",	"key",		 "rank",	"nranks",
					    "ops_win",	"wait_mean_ns",	 "wait_ns_win", "seq",
					    "arrivals", "arrivals_lost", NULL};
	struct ig_nccl_rank r[4];
	CHECK(model_nccl_ranks(m, r, 4) == 2);
	const json_t *r0 = rank_of(f, SYNTH_PID), *r1 = rank_of(f, SYNTH_PEER);
	CHECK(r0 && r1 && has(r0, rkeys) && has(r1, rkeys));
	uint64_t ops1 = r[1].ops_life;
	CHECKF(ops1 > 300 && r[1].pid == SYNTH_PEER, "peer ops %lu", (unsigned long)ops1);
	CHECK(r1 && arrivals_ok(r1, ops1 - 255, 256, ops1 - 256));
	CHECK(r1 && ig_json_get_int(r1, "key", 0) == SYNTH_NCCL_KEY &&
	      ig_json_get_int(r1, "rank", -1) == 1 && ig_json_get_int(r1, "nranks", 0) == 2);
	CHECK(r0 && arrivals_ok(r0, r[0].ops_life - 255, 256, r[0].ops_life - 256));
	json_decref(f);

	/* nothing new: an empty list */
	f = stream_frame_json(w, m, an_detect(m), &st, false, RT + 1);
	CHECK(ig_json_get_int(f, "seq", 0) == 2);
	CHECK(arrivals_ok(rank_of(f, SYNTH_PEER), 0, 0, 0));
	json_decref(f);

	/* three more on rank 1: exactly those, with their entry times */
	struct ig_model_totals t;
	model_totals(m, &t);
	uint64_t t1 = t.now_ns + 5 * MS;
	for (int k = 0; k < 3; k++)
		peer_coll(m, t1 + (uint64_t)k * MS);
	f = stream_frame_json(w, m, an_detect(m), &st, true, RT + 2);
	const json_t *p = rank_of(f, SYNTH_PEER);
	CHECK(ig_json_get_int(f, "seq", 0) == 3 && arrivals_ok(p, ops1 + 1, 3, 0));
	const json_t *a = json_object_get(p, "arrivals");
	CHECK((uint64_t)json_integer_value(json_array_get(json_array_get(a, 2), 1)) == t1 + 2 * MS);
	CHECK(arrivals_ok(rank_of(f, SYNTH_PID), 0, 0, 0));
	CHECK(json_is_true(json_object_get(json_object_get(f, "status"), "done")));
	json_decref(f);

	/* 300 more: the last 256, 44 lost */
	for (int k = 0; k < 300; k++)
		peer_coll(m, t1 + 10 * MS + (uint64_t)k * US * 100);
	f = stream_frame_json(w, m, an_detect(m), &st, true, RT + 3);
	CHECK(arrivals_ok(rank_of(f, SYNTH_PEER), ops1 + 3 + 45, 256, 44));
	json_decref(f);
	stream_writer_free(w);
	an_model_free(m);
}

static void test_lines(void)
{
	json_t *o = stream_answer("{\"type\":\"ping\",\"id\":7}", RT);
	CHECK(head_ok(o, "pong") && ig_json_get_int(o, "id", 0) == 7 &&
	      (uint64_t)ig_json_get_int(o, "realtime_ns", 0) == RT);
	json_decref(o);
	o = stream_answer("{\"id\":\"a\",\"type\":\"ping\",\"later\":1}", RT);
	CHECK(head_ok(o, "pong") && !strcmp(str(o, "id"), "a"));
	json_decref(o);
	CHECK(!stream_answer("{\"type\":\"request\",\"id\":3}", RT));
	CHECK(!stream_answer("{\"type\":\"ping\"}", RT));
	CHECK(!stream_answer("ping", RT));
	CHECK(!stream_answer("", RT));

	struct stream_hello h = {.version = "0.1.0",
				 .host = "gpu1",
				 .pid = 42,
				 .realtime_ns = RT,
				 .interval_s = 0.5,
				 .window_s = 10,
				 .target = "demo nccl-straggler"};
	o = stream_hello_json(&h);
	CHECK(head_ok(o, "hello") && !strcmp(str(o, "version"), "0.1.0") &&
	      !strcmp(str(o, "host"), "gpu1") && ig_json_get_int(o, "pid", 0) == 42 &&
	      ig_json_get_num(o, "interval_s", 0) == 0.5 &&
	      ig_json_get_num(o, "window_s", 0) == 10 &&
	      !strcmp(str(o, "target"), "demo nccl-straggler"));
	/* one line, flushed */
	char *buf = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);
	CHECK(stream_put(mf, o) == 0);
	CHECK(len > 10 && buf[len - 1] == '\n' && !memchr(buf, '\n', len - 1) &&
	      !strncmp(buf, "{\"type\":\"hello\",\"stream\":1,", 27));
	CHECK(stream_put(mf, NULL) == -ENOMEM);
	fclose(mf);
	free(buf);
	o = stream_end_json("stdin closed", 0);
	CHECK(head_ok(o, "end") && !strcmp(str(o, "reason"), "stdin closed") &&
	      ig_json_get_int(o, "exit", -1) == 0);
	json_decref(o);
	o = stream_error_json("tracing needs root");
	CHECK(head_ok(o, "error") && !strcmp(str(o, "message"), "tracing needs root"));
	json_decref(o);
	CHECK(stream_realtime_ns() > 0);
}

int main(void)
{
	test_frames();
	test_lines();
	return check_done("test_stream");
}
