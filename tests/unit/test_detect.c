/* The detector on synthetic streams: each class fires on the stream built to
 * show it (at its expected severity, naming the culprit) and no other class
 * goes above LOW there; a healthy stream gives nothing above INFO; a chain
 * keeps its id while it persists, then resolves and ages out; identical
 * input gives identical chains whatever the chunking and however often the
 * clock is advanced in between; missing evidence is said. */
#include "check.h"
#include "model/model.h"
#include "core/ops.h"
#include "store/replay.h"
#include "report/report.h"
#include "synth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEC 1000000000ull

static struct ig_model *run(int sc, double seconds, uint64_t start)
{
	struct synth_cfg c = {.scenario = sc, .seconds = seconds, .start_ns = start};
	struct synth *s = synth_new(&c);
	struct ig_model *m = model_new(NULL);
	struct ig_event e;
	while (synth_next(s, &e))
		model_ingest(m, &e);
	synth_free(s);
	return m;
}

static const struct ig_chain *find(const struct ig_model *m, int cls)
{
	const struct ig_chain *best = NULL;
	for (int i = 0; i < model_chain_count(m); i++) {
		const struct ig_chain *c = model_chain(m, i);
		if (c->cls == cls && c->active && (!best || c->severity > best->severity))
			best = c;
	}
	return best;
}

static void dump(const struct ig_model *m)
{
	for (int i = 0; i < model_chain_count(m); i++) {
		const struct ig_chain *c = model_chain(m, i);
		fprintf(stderr, "   [%s%s] %s\n", detect_sev_name(c->severity),
			c->active ? "" : " resolved", c->summary);
	}
}

struct expect {
	int sc, cls, min_sev;
	const char *in_summary; /* substring the summary must contain */
	uint32_t culprit;	/* 0 = none required */
};

static const struct expect cases[] = {
    {SYNTH_CPU_CONTENTION, IG_CC_CPU_CONTENTION, IG_SEV_HIGH,
     "% of tail time preempted by stress-ng[2231] → CPU contention", 2231},
    {SYNTH_GPU_BOUND, IG_CC_GPU_BOUND, IG_SEV_MEDIUM, "→ GPU-bound wait", 0},
    {SYNTH_HOST_STARVATION, IG_CC_HOST_STARVATION, IG_SEV_HIGH,
     "off-CPU between CUDA calls (waiting on pt_data_worker[", 0},
    {SYNTH_SYNC_STORM, IG_CC_SYNC_STORM, IG_SEV_MEDIUM, "synchronisations/s (mostly cudaMemcpy", 0},
    {SYNTH_COPY_DOMINATED, IG_CC_COPY_DOMINATED, IG_SEV_MEDIUM, "copies take", 0},
    {SYNTH_ALLOC_SPIKES, IG_CC_ALLOC_SPIKES, IG_SEV_MEDIUM, "every ~2.0 s → allocator spikes", 0},
    {SYNTH_MEMORY_PRESSURE, IG_CC_MEMORY_PRESSURE, IG_SEV_HIGH, "page allocations", 0},
    {SYNTH_BLOCK_IO, IG_CC_BLOCK_IO, IG_SEV_HIGH, "block I/O requests", 4821},
    {SYNTH_COLD_START, IG_CC_COLD_START, IG_SEV_INFO, "first 5 cudaLaunchKernel calls", 0},
    {SYNTH_NO_SPLIT, IG_CC_CPU_CONTENTION, IG_SEV_MEDIUM, "(preempted/blocked unknown)", 0},
};

static void test_classes(void)
{
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct expect *x = &cases[k];
		struct ig_model *m = run(x->sc, 15, 0);
		const struct ig_chain *c = find(m, x->cls);
		CHECKF(c != NULL, "%s: no %s chain", synth_name(x->sc), detect_class_name(x->cls));
		if (!c) {
			dump(m);
			model_free(m);
			continue;
		}
		CHECKF(c->severity >= x->min_sev, "%s: severity %s", synth_name(x->sc),
		       detect_sev_name(c->severity));
		CHECKF(strstr(c->summary, x->in_summary) != NULL, "%s: summary '%s'",
		       synth_name(x->sc), c->summary);
		CHECKF(c->pid == 4821 && !strcmp(c->comm, "python3"), "%s pid %u",
		       synth_name(x->sc), c->pid);
		if (x->culprit)
			CHECKF(c->culprit_pid == x->culprit, "%s culprit %u", synth_name(x->sc),
			       c->culprit_pid);
		CHECK(c->explanation[0] && c->nrecs >= 2 && c->nevidence >= 3 && c->ntimeline >= 1);
		CHECK(!strncmp(c->id_str, "chain-", 6));
		CHECK(strstr(c->summary, "→") != NULL);
		/* no other class above LOW */
		for (int i = 0; i < model_chain_count(m); i++) {
			const struct ig_chain *o = model_chain(m, i);
			if (o->cls == x->cls || !o->active)
				continue;
			CHECKF(o->severity <= IG_SEV_LOW, "%s: also %s %s: %s", synth_name(x->sc),
			       detect_sev_name(o->severity), detect_class_name(o->cls), o->summary);
		}
		/* the class-specific evidence */
		switch (x->cls) {
		case IG_CC_CPU_CONTENTION:
			if (x->sc == SYNTH_NO_SPLIT) {
				CHECK(strstr(c->lacking, "preempted/blocked split") != NULL);
				CHECK(detect_evidence(c, "tail_preempt_pct", -1) == -1);
			} else {
				CHECK(!c->lacking[0]);
				CHECK(detect_evidence(c, "tail_preempt_pct", 0) > 50);
				CHECK(detect_evidence(c, "preemptor_share_pct", 0) > 90);
				CHECK(!strcmp(c->culprit_comm, "stress-ng"));
				CHECK(strstr(c->recs[0], "renice") && strstr(c->recs[0], "2231"));
			}
			break;
		case IG_CC_GPU_BOUND:
			CHECK(c->op == IG_OP_CUDA_STREAM_SYNC);
			CHECK(detect_evidence(c, "sync_blocked_pct", 0) > 90);
			CHECK(detect_evidence(c, "sync_preempt_pct", 100) < 1);
			break;
		case IG_CC_HOST_STARVATION:
			CHECK(c->culprit_pid >= 2001 && c->culprit_pid <= 2004);
			CHECK(!strcmp(c->culprit_comm, "pt_data_worker"));
			CHECK(c->tid == 4821);
			CHECK(detect_evidence(c, "off_between_pct", 0) > 80);
			CHECK(strstr(c->recs[0], "data-loader workers") != NULL);
			break;
		case IG_CC_SYNC_STORM:
			CHECK(detect_evidence(c, "syncs_per_s", 0) > 1000);
			CHECK(detect_evidence(c, "mean_copy_bytes", 0) == 4);
			CHECK(strstr(c->recs[0], ".item()") != NULL);
			break;
		case IG_CC_COPY_DOMINATED:
			CHECK(c->op == IG_OP_CUDA_MEMCPY_ASYNC);
			CHECK(detect_evidence(c, "copy_share_pct", 0) > 80);
			CHECK(strstr(c->recs[0], "pinned") != NULL);
			break;
		case IG_CC_ALLOC_SPIKES: {
			double p = detect_evidence(c, "period_s", 0);
			CHECKF(p > 1.9 && p < 2.1, "period %f", p);
			CHECK(c->op == IG_OP_CUDA_MALLOC);
			CHECK(strstr(c->recs[0], "~2.0 s") != NULL);
			break;
		}
		case IG_CC_MEMORY_PRESSURE:
			CHECK(detect_evidence(c, "page_alloc_bytes", 0) > (double)(1ull << 30));
			CHECK(detect_evidence(c, "swap_mb", 0) == 2048);
			break;
		case IG_CC_BLOCK_IO:
			CHECK(detect_evidence(c, "io_ops", 0) >= 200);
			CHECK(detect_evidence(c, "io_peak_ms", 0) >= 50);
			break;
		case IG_CC_COLD_START:
			CHECK(c->severity == IG_SEV_INFO);
			CHECK(c->op == IG_OP_CUDA_LAUNCH_KERNEL);
			break;
		}
		model_free(m);
	}
}

static void test_healthy(void)
{
	for (uint64_t seed = 1; seed <= 3; seed++) {
		struct synth_cfg cfg = {.scenario = SYNTH_HEALTHY, .seconds = 30, .seed = seed};
		struct synth *s = synth_new(&cfg);
		struct ig_model *m = model_new(NULL);
		struct ig_event e;
		int worst = -1;
		while (synth_next(s, &e)) {
			model_ingest(m, &e);
			for (int i = 0; i < model_chain_count(m); i++)
				if (model_chain(m, i)->severity > worst)
					worst = model_chain(m, i)->severity;
		}
		CHECKF(worst <= IG_SEV_INFO, "healthy seed %lu reached %s", (unsigned long)seed,
		       detect_sev_name(worst));
		if (worst > IG_SEV_INFO)
			dump(m);
		model_free(m);
		synth_free(s);
	}
}

/* CPU contention for 30 s, then a healthy stream: the chain keeps its id
 * while it fires, resolves after the window drains, then is dropped. */
static void test_lifecycle(void)
{
	struct synth_cfg c1 = {.scenario = SYNTH_CPU_CONTENTION, .seconds = 30};
	struct synth *s = synth_new(&c1);
	struct ig_model *m = model_new(NULL);
	struct ig_event e;
	uint32_t id = 0;
	uint64_t first = 0;
	int changed = 0, dups = 0;
	while (synth_next(s, &e)) {
		model_ingest(m, &e);
		int n = 0;
		for (int i = 0; i < model_chain_count(m); i++) {
			const struct ig_chain *c = model_chain(m, i);
			if (c->cls != IG_CC_CPU_CONTENTION || c->op != IG_OP_CUDA_STREAM_SYNC)
				continue;
			n++;
			if (!id) {
				id = c->id;
				first = c->first_seen_ns;
			} else if (c->id != id || c->first_seen_ns != first) {
				changed++;
			}
		}
		if (n > 1)
			dups++;
	}
	CHECK(id != 0 && !changed && !dups);
	const struct ig_chain *c = NULL;
	for (int i = 0; i < model_chain_count(m); i++)
		if (model_chain(m, i)->id == id)
			c = model_chain(m, i);
	CHECK(c && c->active && c->fired >= 20);
	CHECK(detect_find(model_detect(m), id) == c);
	CHECK(c->last_seen_ns > c->first_seen_ns + 20 * SEC);
	CHECK(c->ntimeline <= IG_CHAIN_MAX_TIMELINE);
	for (int k = 1; c && k < c->ntimeline; k++)
		CHECK(c->timeline[k - 1].ts_ns <= c->timeline[k].ts_ns);
	uint64_t gen = detect_generation(model_detect(m));

	/* the same host, healthy again */
	struct synth_cfg c2 = {
	    .scenario = SYNTH_HEALTHY, .seconds = 20, .start_ns = model_now(m) + 1000};
	synth_free(s);
	s = synth_new(&c2);
	while (synth_next(s, &e))
		model_ingest(m, &e);
	c = detect_find(model_detect(m), id);
	CHECK(c && !c->active);
	CHECK(c && c->ntimeline && strstr(c->timeline[c->ntimeline - 1].text, "resolved"));
	CHECK(detect_generation(model_detect(m)) > gen);
	/* resolved chains sort after active ones */
	int seen_resolved = 0, order_ok = 1;
	for (int i = 0; i < model_chain_count(m); i++) {
		if (!model_chain(m, i)->active)
			seen_resolved = 1;
		else if (seen_resolved)
			order_ok = 0;
	}
	CHECK(order_ok);
	/* after keep_s it is gone */
	model_advance(m, model_now(m) + 200 * SEC);
	CHECK(detect_find(model_detect(m), id) == NULL);
	for (int i = 0; i < model_chain_count(m); i++)
		CHECK(model_chain(m, i)->cls == IG_CC_GPU_BOUND || !model_chain(m, i)->active);

	/* contention again: a new chain, a new id */
	struct synth_cfg c3 = {
	    .scenario = SYNTH_CPU_CONTENTION, .seconds = 10, .start_ns = model_now(m) + 1000};
	synth_free(s);
	s = synth_new(&c3);
	while (synth_next(s, &e))
		model_ingest(m, &e);
	const struct ig_chain *again = find(m, IG_CC_CPU_CONTENTION);
	CHECK(again && again->id > id);
	model_free(m);
	synth_free(s);
}

/* The same stream through different chunkings and idle-advance patterns
 * gives byte-identical JSON frames (chains included). */
static char *frame(const struct ig_model *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct report_opts o = {.resolved = 1, .details = 1};
	report_json(f, m, NULL, &o);
	report_text(f, m, NULL, &o);
	fclose(f);
	return buf;
}

static uint64_t lcg = 12345;
static unsigned rnd(unsigned n)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((lcg >> 33) % n);
}

static void test_determinism(void)
{
	static const int scs[] = {SYNTH_CPU_CONTENTION, SYNTH_HOST_STARVATION, SYNTH_ALLOC_SPIKES,
				  SYNTH_NO_SPLIT, SYNTH_BLOCK_IO};
	for (size_t k = 0; k < sizeof(scs) / sizeof(scs[0]); k++) {
		struct synth_cfg cfg = {.scenario = scs[k], .seconds = 25};
		/* reference: one event at a time, no advance */
		struct ig_model *a = run(scs[k], 25, 0);
		char *fa = frame(a);
		for (int variant = 0; variant < 3; variant++) {
			struct ig_source *src = synth_source_new(&cfg);
			struct ig_model *b = model_new(NULL);
			int rc;
			do {
				/* a replay at some speed: before a chunk, the clock is
				 * moved up to the next event's time */
				uint64_t ts;
				if (variant > 0 && src->ops->peek_ts(src, &ts) == 0) {
					if (variant == 1 || rnd(3) == 0)
						model_advance(b, ts);
					if (variant == 2 && rnd(2))
						model_advance(b, ts - rnd(1000000));
				}
				rc = src->ops->poll(src, (ig_emit_fn)model_ingest, b,
						    variant == 0 ? 4096 : 1 + (int)rnd(300));
			} while (rc > 0);
			CHECK(rc == -ENODATA);
			char *fb = frame(b);
			CHECKF(!strcmp(fa, fb), "%s variant %d differs", synth_name(scs[k]),
			       variant);
			free(fb);
			model_free(b);
			src->ops->free(src);
		}
		free(fa);
		model_free(a);
	}
}

static void test_names(void)
{
	for (int c = 0; c < IG_CC_MAX; c++) {
		CHECK(detect_class_by_name(detect_class_name(c)) == c);
		CHECK(detect_class_by_name(detect_class_title(c)) == c);
	}
	CHECK(detect_class_by_name("nope") == -1);
	CHECK(!strcmp(detect_class_name(IG_CC_MAX), "?"));
	CHECK(!strcmp(detect_sev_name(IG_SEV_HIGH), "HIGH") && !strcmp(detect_sev_name(9), "?"));
	for (int s = 0; s < SYNTH_MAX; s++)
		CHECK(synth_by_name(synth_name(s)) == s);
	struct ig_detect_cfg d;
	detect_cfg_default(&d);
	CHECK(d.tail_ratio == 3 && d.min_calls == 10 && d.min_switches == 5);
	CHECK(d.page_bytes == 1ull << 30 && d.io_ops == 200 && d.io_peak_ns == 50000000ull);
}

/* Recommendations name the class's own remedies, never the same list. */
static void test_recs_specific(void)
{
	char firsts[IG_CC_MAX][192];
	int have[IG_CC_MAX] = {0};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct ig_model *m = run(cases[k].sc, 15, 0);
		const struct ig_chain *c = find(m, cases[k].cls);
		if (c && !have[c->cls]) {
			have[c->cls] = 1;
			memcpy(firsts[c->cls], c->recs[0], sizeof(firsts[0]));
		}
		model_free(m);
	}
	for (int i = 0; i < IG_CC_MAX; i++)
		for (int j = i + 1; j < IG_CC_MAX; j++)
			if (have[i] && have[j])
				CHECKF(strcmp(firsts[i], firsts[j]), "%d and %d share '%s'", i, j,
				       firsts[i]);
}

/* A real recording by Ingero (no preempted/blocked split, off-CPU state
 * unknown): the PyTorch DataLoader case, where the main thread is busy on the
 * CPU and the GPU waits. The repository ships it (tests/fixtures/ingero;
 * IG_TRACES names another directory): a missing file fails. */
static void test_ingero_recording(void)
{
	const char *const cands[] = {getenv("IG_TRACES"), "tests/fixtures/ingero",
				     "../tests/fixtures/ingero", "../../tests/fixtures/ingero",
				     "../../../tests/fixtures/ingero"};
	char path[512];
	FILE *f = NULL;
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]) && !f; i++) {
		if (!cands[i])
			continue;
		snprintf(path, sizeof(path), "%s/pytorch-dataloader-starvation.db", cands[i]);
		f = fopen(path, "rb");
	}
	CHECKF(f != NULL, "tests/fixtures/ingero/pytorch-dataloader-starvation.db not found "
			  "(run from the checkout or set IG_TRACES)");
	if (!f)
		return;
	fclose(f);
	const char *p = path, *err = NULL;
	struct ig_source *src = replay_open(&p, 1, &err);
	CHECKF(src != NULL, "%s", err ? err : "?");
	if (!src)
		return;
	struct ig_model *m = model_new(NULL);
	int worst[IG_CC_MAX];
	for (int c = 0; c < IG_CC_MAX; c++)
		worst[c] = -1;
	int starve_busy = 0;
	while (src->ops->poll(src, (ig_emit_fn)model_ingest, m, 64) > 0) {
		for (int i = 0; i < model_chain_count(m); i++) {
			const struct ig_chain *c = model_chain(m, i);
			if (c->severity > worst[c->cls])
				worst[c->cls] = c->severity;
			if (c->cls == IG_CC_CPU_CONTENTION)
				CHECKF(c->lacking[0], "confirmed contention without a split: %s",
				       c->summary);
			if (c->cls == IG_CC_HOST_STARVATION && c->pid == 2233 &&
			    strstr(c->summary, "busy on the CPU between CUDA calls"))
				starve_busy = 1;
		}
	}
	/* the main thread is on the CPU between sparse CUDA calls: starvation */
	CHECK(worst[IG_CC_HOST_STARVATION] == IG_SEV_MEDIUM && starve_busy);
	/* the 25.8 ms first cudaLaunchKernel is start-up, not an incident */
	CHECK(worst[IG_CC_COLD_START] == IG_SEV_INFO);
	/* the initial 219 MiB copies are start-up loading: reported low */
	CHECK(worst[IG_CC_COPY_DOMINATED] <= IG_SEV_LOW);
	for (int c = 0; c < IG_CC_MAX; c++)
		CHECKF(worst[c] <= IG_SEV_MEDIUM, "%s reached %s", detect_class_name(c),
		       detect_sev_name(worst[c]));
	model_free(m);
	src->ops->free(src);
}

int main(void)
{
	test_names();
	test_classes();
	test_healthy();
	test_lifecycle();
	test_determinism();
	test_recs_specific();
	test_ingero_recording();
	return check_done("test_detect");
}
