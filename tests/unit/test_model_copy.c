/* model_copy: a copy reads exactly like the model it was taken from (every
 * read, in the window and since the start), stays the same while the model
 * moves on, and a copy into a used copy (memory reused) is as good as a new
 * one; on every synthetic scenario, with tables small enough to evict. */
#include "check.h"
#include "detect/detect.h"
#include "model/model.h"
#include "report/report.h"
#include "core/ops.h"
#include "core/status.h"
#include "synth.h"

#include <stdlib.h>
#include <string.h>

#define SEC 1000000000ull

/* Everything the views read, as text: the JSON frame of the window and of
 * the lifetime, the text frame, and the reads the JSON leaves out. */
static char *dump(const struct ig_model *m, const struct ig_detect *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct ig_status st = {.mode = IG_MODE_REPLAY};
	struct report_opts win = {0}, life = {.summary = 1};
	report_json(f, m, d, &st, &win);
	report_json(f, m, d, &st, &life);
	report_text(f, m, d, &st, &win);
	int ops[IG_OP_MAX];
	int nops = model_ops(m, ops, IG_OP_MAX);
	static struct ig_call_rec calls[64];
	static struct ig_thread_stats th[1024];
	static struct ig_offcpu_rec off[IG_TL_MAX];
	for (int i = 0; i < nops; i++) {
		const struct hist *h = model_op_hist(m, ops[i], 0, 0);
		const struct hist *hl = model_op_hist(m, ops[i], 0, 1);
		fprintf(f, "op %d win %llu life %llu\n", ops[i], h ? (unsigned long long)h->n : 0,
			hl ? (unsigned long long)hl->n : 0);
		int n = model_slow_calls(m, ops[i], 0, calls, 64);
		for (int k = 0; k < n; k++)
			fprintf(f, "slow %llu %llu %u\n", (unsigned long long)calls[k].ts_ns,
				(unsigned long long)calls[k].dur_ns, calls[k].tid);
		n = model_slow_calls_life(m, ops[i], 0, calls, 64);
		for (int k = 0; k < n; k++)
			fprintf(f, "life slow %llu %llu\n", (unsigned long long)calls[k].ts_ns,
				(unsigned long long)calls[k].dur_ns);
		static struct ig_series_stats rows[256];
		n = model_op_threads(m, ops[i], 0, rows, 256);
		for (int k = 0; k < n; k++)
			fprintf(f, "thr %u %llu %llu\n", rows[k].tid,
				(unsigned long long)rows[k].calls_win,
				(unsigned long long)rows[k].win.p99);
	}
	int nt = model_threads(m, 0, th, 1024);
	for (int i = 0; i < nt; i++) {
		fprintf(f, "thread %u %s %llu %llu", th[i].tid, th[i].comm,
			(unsigned long long)th[i].parts.wall_ns,
			(unsigned long long)th[i].life_parts.wall_ns);
		int n = model_thread_offcpu(m, th[i].tid, off, IG_TL_MAX);
		for (int k = 0; k < n; k++)
			fprintf(f, " %llu/%llu", (unsigned long long)off[k].ts_ns,
				(unsigned long long)off[k].dur_ns);
		fputc('\n', f);
	}
	fclose(f);
	return buf;
}

static int same(const struct ig_model *a, const struct ig_model *b, const struct ig_detect *d)
{
	char *x = dump(a, d), *y = dump(b, d);
	int r = strcmp(x, y) == 0 && strlen(x) > 100;
	free(x);
	free(y);
	return r;
}

static void scenario(int sc, int small)
{
	struct synth_cfg sc_cfg = {.scenario = sc, .seconds = 14};
	struct ig_model_cfg mc;
	model_cfg_default(&mc);
	if (small) { /* evictions in every table */
		mc.max_procs = 4;
		mc.max_threads = 6;
		mc.max_op_procs = 4;
		mc.max_op_threads = 5;
	}
	struct ig_model *m = model_new(&mc);
	struct ig_detect *d = detect_new(NULL);
	struct synth *s = synth_new(&sc_cfg);
	struct ig_model *copy = NULL, *frozen = NULL;
	char *frozen_dump = NULL;
	struct ig_event e;
	uint64_t next = 0;
	int copies = 0;
	while (synth_next(s, &e) == 1) {
		model_ingest(m, &e);
		uint64_t now = model_now(m);
		if (!next)
			next = now + 2 * SEC;
		if (now < next)
			continue;
		next += 3 * SEC;
		copy = model_copy(copy, m); /* reused from the second time on */
		CHECKF(copy && same(copy, m, d), "%s copy %d", synth_name(sc), copies);
		copies++;
		if (!frozen) {
			frozen = model_copy(NULL, m);
			frozen_dump = dump(frozen, d);
		}
	}
	CHECKF(copies >= 3, "%s: %d copies", synth_name(sc), copies);
	/* the slowest calls since the start: sorted, and none slower in the window */
	int ops[IG_OP_MAX], nops = model_ops(m, ops, IG_OP_MAX);
	for (int i = 0; i < nops; i++) {
		struct ig_call_rec w[IG_SLOW_MAX], l[IG_SLOW_MAX];
		int nw = model_slow_calls(m, ops[i], 0, w, IG_SLOW_MAX);
		int nl = model_slow_calls_life(m, ops[i], 0, l, IG_SLOW_MAX);
		CHECKF(nl >= nw && (!nw || l[0].dur_ns >= w[0].dur_ns), "%s op %d", synth_name(sc),
		       ops[i]);
		for (int k = 1; k < nl; k++)
			CHECK(l[k - 1].dur_ns >= l[k].dur_ns);
	}
	/* the first copy did not move with the model */
	char *now_dump = frozen ? dump(frozen, d) : NULL;
	CHECKF(frozen && strcmp(now_dump, frozen_dump) == 0 && !same(frozen, m, d), "%s frozen",
	       synth_name(sc));
	/* a reset model copies as a reset model */
	model_reset(m);
	copy = model_copy(copy, m);
	CHECK(copy && same(copy, m, d));
	free(now_dump);
	free(frozen_dump);
	model_free(frozen);
	model_free(copy);
	synth_free(s);
	detect_free(d);
	model_free(m);
}

int main(void)
{
	for (int sc = 0; sc < SYNTH_MAX; sc++)
		scenario(sc, 0);
	scenario(SYNTH_BENCH, 1);
	scenario(SYNTH_LOADER_WAIT, 1);
	/* another cfg: the copy is made anew */
	struct ig_model_cfg a, b;
	model_cfg_default(&a);
	model_cfg_default(&b);
	b.window_s = 5;
	struct ig_model *ma = model_new(&a), *mb = model_new(&b);
	struct ig_model *c = model_copy(NULL, ma);
	c = model_copy(c, mb);
	CHECK(c && model_cfg(c)->window_s == 5);
	model_free(c);
	model_free(ma);
	model_free(mb);
	return check_done("test_model_copy");
}
