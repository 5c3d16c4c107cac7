/* The detector on the synthetic streams, whose recipes state what takes the
 * feeding thread's time (synth_truth): on each scenario the top actionable
 * chain is the scenario's cause, names its culprit, and its impact is within
 * 3 points of the recipe's share; no other class goes above LOW; the healthy
 * loops (GPU-bound at 100, 27 and 1000 syncs/s) raise nothing above LOW at
 * any time; an Ingero-like stream's chains say what the source lacks and stop
 * at MEDIUM; a chain keeps its id while it persists, then resolves and ages
 * out; identical input gives identical chains whatever the chunking and
 * however often the clock is advanced in between; recommendations are the
 * class's own; copies and allocations are judged by their share of the wall
 * time, steady costs as well as spikes. */
#include "analysis.h"
#include "check.h"
#include "core/ops.h"
#include "evmake.h"
#include "model/model.h"
#include "store/replay.h"
#include "synth.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ig_model *run_seed(int sc, double seconds, uint64_t start, uint64_t seed)
{
	struct synth_cfg c = {.scenario = sc, .seconds = seconds, .start_ns = start, .seed = seed};
	struct synth *s = synth_new(&c);
	struct ig_model *m = an_model_new(NULL);
	struct ig_event e;
	while (synth_next(s, &e))
		model_ingest(m, &e);
	synth_free(s);
	return m;
}

static struct ig_model *run(int sc, double seconds, uint64_t start)
{
	return run_seed(sc, seconds, start, 0);
}

static const struct ig_chain *find(const struct ig_model *m, int cls)
{
	return an_active_chain(m, cls);
}

static int worst(const struct ig_model *m)
{
	int w = -1;
	for (int i = 0; i < detect_count(an_detect(m)); i++) {
		const struct ig_chain *c = detect_chain(an_detect(m), i);
		if (c->active && c->severity > w)
			w = c->severity;
	}
	return w;
}

static void dump(const struct ig_model *m)
{
	for (int i = 0; i < detect_count(an_detect(m)); i++) {
		const struct ig_chain *c = detect_chain(an_detect(m), i);
		fprintf(stderr, "   [%s%s] %s %.1f%% %s\n", detect_sev_name(c->severity),
			c->active ? "" : " resolved", detect_class_name(c->cls), c->impact * 100,
			c->summary);
	}
}

/* What each scenario's top chain must say beyond the truth: its severity
 * (from the impact: LOW 5 %, MEDIUM 15 %, HIGH 30 % with a named, confirmed
 * cause) and a piece of its summary. */
struct expect {
	int sc, sev;
	const char *in_summary;
};

static const struct expect cases[] = {
    {SYNTH_HEALTHY, IG_SEV_INFO, "GPU-bound: python3[4821] waits for the GPU 95%"},
    {SYNTH_CPU_CONTENTION, IG_SEV_HIGH,
     "CPU contention by stress-ng[2231]: python3[4821] runnable but not running 37%"},
    {SYNTH_GPU_BOUND, IG_SEV_INFO, "waits for the GPU 97% of its time (the host keeps up)"},
    {SYNTH_LOADER_WAIT, IG_SEV_HIGH, "data-loader wait on pt_data_worker[2001]: python3[4821]"},
    {SYNTH_SYNC_STORM, IG_SEV_HIGH, "sync storm in python3[4821]: 5000 synchronisations/s"},
    {SYNTH_COPY_DOMINATED, IG_SEV_HIGH, "copies take 88% of its time"},
    {SYNTH_ALLOC_SPIKES, IG_SEV_MEDIUM, "cudaMalloc outliers up to 100ms, every ~500ms"},
    {SYNTH_MEMORY_PRESSURE, IG_SEV_HIGH, "35% of its time reclaiming memory or reading it"},
    {SYNTH_BLOCK_IO, IG_SEV_HIGH, "asleep on the disk 40% of its time (device 259:1)"},
    {SYNTH_COLD_START, IG_SEV_INFO, "first 5 cudaLaunchKernel calls up to 300ms"},
    {SYNTH_NO_SPLIT, IG_SEV_MEDIUM, "30% of its time off CPU between CUDA calls, why not"},
    {SYNTH_HOST_WORK, IG_SEV_HIGH, "busy on the CPU 40% of its time between CUDA calls"},
    {SYNTH_TIMER_SLEEP, IG_SEV_INFO, "paced by a timer: python3[4821] sleeps 25% of its time"},
    {SYNTH_LAUNCH_BOUND, IG_SEV_HIGH, "48% of its time in CUDA API work on the CPU"},
    {SYNTH_HEALTHY_FAST, IG_SEV_INFO, "waits for the GPU 93% of its time"},
    {SYNTH_MIXED, IG_SEV_MEDIUM, "blocked 25% of its time until a worker fed it"},
    {SYNTH_LOCK_WAIT, IG_SEV_HIGH,
     "lock contention with holder (tid 4830): python3[4821] blocked 30% of its time"},
    {SYNTH_GIL_WAIT, IG_SEV_HIGH,
     "GIL contention with pybusy (tid 4831): python3[4821] waited 40% of its time"},
    {SYNTH_BACKPRESSURE, IG_SEV_HIGH,
     "back-pressure from consumer[2100]: python3[4821] blocked 30% of its time writing"},
    {SYNTH_NET_WAIT, IG_SEV_HIGH, "30% of its time waiting on a socket to 10.0.0.5:5555"},
    {SYNTH_CPU_QUOTA, IG_SEV_HIGH, "python3[4821] throttled 35% of its time by its cgroup"},
    {SYNTH_FILE_IO, IG_SEV_HIGH, "40% of its time in file reads, writes and syncs (device 259:1)"},
    {SYNTH_COLD_READ, IG_SEV_HIGH, "30% of its time in page faults reading a mapped file"},
    {SYNTH_PAGE_FAULTS, IG_SEV_HIGH, "30% of its time faulting in fresh memory"},
    {SYNTH_STOPPED, IG_SEV_HIGH,
     "stopped by signals: python3[4821] stopped 30% of its time (SIGSTOP) until cpulimit[2200]"},
    {SYNTH_POLL_WAIT, IG_SEV_MEDIUM,
     "polling wait in python3[4821]: sleeps 30% of its time between CUDA calls, 3.0 sleeps of "
     "800us at a time"},
    {SYNTH_LAUNCH_BLOCKING, IG_SEV_HIGH,
     "synchronous launches in python3[4821]: CUDA_LAUNCH_BLOCKING=1 makes each launch wait for "
     "its kernel (300us on average, 63% of its time), so its other 37% cannot overlap"},
};

/* The evidence only the class's own stream can show. */
static void class_checks(int sc, const struct ig_model *m, const struct ig_chain *c,
			 const struct synth_truth *t)
{
	const char *n = synth_name(sc);
	switch (sc) {
	case SYNTH_CPU_CONTENTION:
		CHECKF(c->op == IG_OP_CUDA_STREAM_SYNC, "%s: op %s", n, ig_op_name(c->op));
		CHECK(strstr(c->summary, "cudaStreamSynchronize p99 46.9ms") != NULL);
		CHECK(detect_evidence(c, "culprit_share_pct", 0) > 90);
		CHECK(strstr(c->recs[0], "renice") && strstr(c->recs[0], "2231"));
		CHECK(c->ntimeline >= 2); /* detection and the slowest preempted syncs */
		break;
	case SYNTH_LOADER_WAIT:
		/* worker 2001 delivers 2 batches in 5 */
		CHECKF(fabs(detect_evidence(c, "culprit_share_pct", 0) - 40) < 1, "%s: %g", n,
		       detect_evidence(c, "culprit_share_pct", 0));
		CHECK(strstr(c->recs[0], "num_workers") != NULL);
		break;
	case SYNTH_SYNC_STORM:
		/* counted, not timed (the synthetic stream's timestamps are
		 * fixed): the window's syncs are the recipe's rate over the
		 * window's wall time, to the one sync its edge may cut */
		{
			double syncs = detect_evidence(c, "syncs", 0);
			double rate = detect_evidence(c, "syncs_per_s", 0);
			long long want = rate > 0 ? llround(t->syncs_per_s * syncs / rate) : -1;
			CHECKF(syncs > 0 && llabs((long long)syncs - want) <= 1,
			       "%s: %g syncs at %g/s, the recipe's %g/s gives %lld", n, syncs,
			       rate, t->syncs_per_s, want);
		}
		CHECKF(fabs(detect_evidence(c, "gpu_wait_per_sync_ns", 0) - 40e3) < 1e3, "%s: %g",
		       n, detect_evidence(c, "gpu_wait_per_sync_ns", 0));
		CHECK(strstr(c->recs[0], ".item()") != NULL);
		break;
	case SYNTH_COPY_DOMINATED:
		CHECK(c->op == IG_OP_CUDA_MEMCPY_ASYNC);
		CHECK(detect_evidence(c, "copy_share_pct", 0) > 80);
		CHECK(detect_evidence(c, "mean_copy_bytes", 0) == 8 << 20);
		CHECK(strstr(c->recs[0], "pinned") != NULL);
		break;
	case SYNTH_ALLOC_SPIKES: {
		double p = detect_evidence(c, "period_ns", 0) / 1e9;
		CHECKF(p > 0.49 && p < 0.52, "%s: period %f s", n, p);
		CHECK(c->op == IG_OP_CUDA_MALLOC);
		CHECK(strstr(c->recs[0], "~500ms") != NULL);
		break;
	}
	case SYNTH_MEMORY_PRESSURE:
		CHECK(detect_evidence(c, "page_alloc_bytes", 0) > (double)(1ull << 30));
		CHECK(detect_evidence(c, "swap_bytes", 0) == (double)(2048ull << 20));
		CHECK(detect_evidence(c, "mem_max_pct", 0) == 97);
		break;
	case SYNTH_BLOCK_IO:
		CHECK(detect_evidence(c, "io_dev", 0) == (double)((259u << 20) | 1u));
		CHECK(strstr(c->recs[0], "checkpoint") != NULL);
		break;
	case SYNTH_COLD_START:
		CHECK(c->op == IG_OP_CUDA_LAUNCH_KERNEL);
		break;
	case SYNTH_NO_SPLIT:
		CHECK(strstr(c->lacking, "preempted/blocked split") != NULL);
		CHECK(strstr(c->recs[0], "Re-record") != NULL);
		break;
	case SYNTH_LAUNCH_BOUND:
		CHECK(strstr(c->recs[0], "CUDA graphs") != NULL);
		break;
	case SYNTH_LOCK_WAIT: /* the timed try is the same wait: no sleep chain */
		CHECK(strstr(c->recs[0], "py-spy dump --pid 4821") != NULL);
		CHECK(strstr(c->explanation, "a futex") != NULL);
		CHECK(detect_evidence(c, "culprit_tid", 0) == SYNTH_HOLDER);
		break;
	case SYNTH_GIL_WAIT:
		CHECK(strstr(c->recs[1], "releases the GIL") != NULL);
		break;
	case SYNTH_BACKPRESSURE:
		CHECK(strstr(c->recs[1], "F_SETPIPE_SZ") != NULL);
		break;
	case SYNTH_NET_WAIT:
		CHECK(strstr(c->recs[1], "ss -tin dst 10.0.0.5") != NULL);
		CHECK(detect_evidence(c, "peer_port", 0) == 5555);
		break;
	case SYNTH_CPU_QUOTA:
		CHECK(strstr(c->explanation, "not contention") != NULL);
		break;
	case SYNTH_FILE_IO:
	case SYNTH_COLD_READ:
		CHECK(detect_evidence(c, "io_dev", 0) == (double)((259u << 20) | 1u));
		CHECK(strstr(c->recs[0], sc == SYNTH_FILE_IO ? "checkpoint" : "vmtouch") != NULL);
		break;
	case SYNTH_PAGE_FAULTS:
		CHECK(strstr(c->recs[1], "MALLOC_MMAP_THRESHOLD_") != NULL);
		break;
	case SYNTH_POLL_WAIT: /* not paced by design: GPU-bound does not say the host keeps up */
		CHECK(detect_evidence(c, "sleeps_per_gap", 0) == 3);
		CHECK(!find(m, IG_CC_TIMER_SLEEP));
		CHECK(find(m, IG_CC_GPU_BOUND) &&
		      !strstr(find(m, IG_CC_GPU_BOUND)->summary, "host keeps up"));
		break;
	case SYNTH_LAUNCH_BLOCKING: /* its launches are not launch overhead */
		CHECKF(strstr(c->recs[0], ": xargs -0 -n1 < /proc/4821/environ | grep CUDA_LAUNCH"),
		       "%s", c->recs[0]);
		CHECK(detect_evidence(c, "env_launch_blocking", -1) == 1);
		CHECK(!find(m, IG_CC_LAUNCH_BOUND) && !find(m, IG_CC_SYNC_STORM));
		/* its host work (37 %) hides behind the GPU's (63 %) once queued */
		CHECK(!find(m, IG_CC_HOST_WORK));
		break;
	case SYNTH_STOPPED: /* not the nanosleep it was stopped in: no sleep chain */
		CHECK(strstr(c->recs[0], "ps -o pid,args -p 2200") != NULL);
		CHECKF(strstr(c->recs[1], ": kill 2200; sleep 1; kill -CONT 4821") != NULL, "%s",
		       c->recs[1]);
		CHECK(!find(m, IG_CC_TIMER_SLEEP));
		break;
	}
}

/* The top chain of a scenario against its recipe. */
static void check_top(const struct expect *x, const struct ig_model *m, const struct synth_truth *t)
{
	const char *n = synth_name(x->sc);
	int cls = detect_class_by_name(t->cause);
	CHECKF(cls >= 0, "%s: cause '%s'", n, t->cause);
	/* what to act on first; for a healthy loop, the INFO chain that says so,
	 * as for a loop paced by its own timer (INFO: idle by design) */
	const struct ig_chain *c =
	    detect_count(an_detect(m)) ? detect_chain(an_detect(m), 0) : NULL;
	if (t->healthy || x->sev == IG_SEV_INFO)
		c = find(m, cls);
	CHECKF(c && c->active && c->cls == cls, "%s: top chain %s, want %s", n,
	       c ? detect_class_name(c->cls) : "none", t->cause);
	if (!c || c->cls != cls) {
		dump(m);
		return;
	}
	CHECKF(c->severity == x->sev, "%s: severity %s, want %s", n, detect_sev_name(c->severity),
	       detect_sev_name(x->sev));
	if (t->impact >= 0)
		CHECKF(fabs(c->impact - t->impact) <= 0.03, "%s: impact %.2f %%, recipe %.2f %%", n,
		       c->impact * 100, t->impact * 100);
	if (t->culprit_pid)
		CHECKF(c->culprit_pid == t->culprit_pid &&
			   !strcmp(c->culprit_comm, t->culprit_comm),
		       "%s: culprit %s[%u], want %s[%u]", n, c->culprit_comm, c->culprit_pid,
		       t->culprit_comm, t->culprit_pid);
	CHECKF(c->culprit_tid == t->culprit_tid, "%s: culprit thread %u, want %u", n,
	       c->culprit_tid, t->culprit_tid);
	CHECKF(strstr(c->summary, x->in_summary) != NULL, "%s: summary '%s'", n, c->summary);
	CHECK(c->pid == SYNTH_PID && !strcmp(c->comm, "python3"));
	CHECK(c->explanation[0] && c->nrecs >= 1 && c->nevidence >= 3 && c->ntimeline >= 1);
	CHECK(!strncmp(c->id_str, "chain-", 6));
	CHECK(t->unconfirmed || !c->lacking[0]);
	class_checks(x->sc, m, c, t);
}

static void test_causes(void)
{
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct expect *x = &cases[k];
		const char *n = synth_name(x->sc);
		struct synth_cfg cfg = {.scenario = x->sc};
		struct synth_truth t;
		CHECK(synth_truth(&cfg, &t) == 0);
		struct ig_model *m = run(x->sc, 20, 0);
		check_top(x, m, &t);
		int cls = detect_class_by_name(t.cause), cls2 = detect_class_by_name(t.cause2);
		/* the second cause of a mix: reported after the first, with its share */
		if (cls2 >= 0) {
			const struct ig_chain *c2 = find(m, cls2);
			CHECKF(c2 && fabs(c2->impact - t.impact2) <= 0.03,
			       "%s: %s %.2f %%, recipe %.2f %%", n, t.cause2,
			       c2 ? c2->impact * 100 : -1, t.impact2 * 100);
			CHECK(c2 && detect_chain(an_detect(m), 1) == c2 &&
			      c2->severity == IG_SEV_LOW);
		}
		/* nothing else above LOW; nothing at all above LOW in a healthy loop */
		for (int i = 0; i < detect_count(an_detect(m)); i++) {
			const struct ig_chain *o = detect_chain(an_detect(m), i);
			if (!o->active || (o->cls == cls && !t.healthy))
				continue;
			CHECKF(o->severity <= IG_SEV_LOW, "%s: also %s %s: %s", n,
			       detect_sev_name(o->severity), detect_class_name(o->cls), o->summary);
			/* an Ingero-like stream: every chain says what is missing */
			if (t.unconfirmed)
				CHECKF(o->lacking[0] && o->severity <= IG_SEV_MEDIUM,
				       "%s: %s confirmed", n, detect_class_name(o->cls));
		}
		an_model_free(m);
	}
}

/* Healthy loops raise nothing above LOW at any moment, whatever the seed
 * and the sync rate (27, 100 and 1000 syncs/s). */
static void test_healthy(void)
{
	static const int scs[] = {SYNTH_HEALTHY, SYNTH_GPU_BOUND, SYNTH_HEALTHY_FAST};
	for (size_t k = 0; k < sizeof(scs) / sizeof(scs[0]); k++)
		for (uint64_t seed = 1; seed <= 3; seed++) {
			struct synth_cfg cfg = {.scenario = scs[k], .seconds = 30, .seed = seed};
			struct synth *s = synth_new(&cfg);
			struct ig_model *m = an_model_new(NULL);
			struct ig_event e;
			int w = -1;
			uint64_t runs = 0, now;
			while (synth_next(s, &e)) {
				model_ingest(m, &e);
				/* after each window judged */
				if ((now = model_now(m) / SEC) != runs) {
					runs = now;
					if (worst(m) > w)
						w = worst(m);
				}
			}
			CHECKF(w <= IG_SEV_LOW, "%s seed %lu reached %s", synth_name(scs[k]),
			       (unsigned long)seed, detect_sev_name(w));
			if (w > IG_SEV_LOW)
				dump(m);
			const struct ig_chain *g = find(m, IG_CC_GPU_BOUND);
			CHECK(g && g->severity == IG_SEV_INFO &&
			      detect_chain(an_detect(m), 0) == g);
			CHECK(!find(m, IG_CC_SYNC_STORM));
			an_model_free(m);
			synth_free(s);
		}
}

/* CPU contention for 30 s, then a healthy stream: the chain keeps its id
 * while it fires, resolves after the window drains, then is dropped. */
static void test_lifecycle(void)
{
	struct synth_cfg c1 = {.scenario = SYNTH_CPU_CONTENTION, .seconds = 30};
	struct synth *s = synth_new(&c1);
	struct ig_model *m = an_model_new(NULL);
	struct ig_event e;
	uint32_t id = 0;
	uint64_t first = 0;
	int changed = 0, dups = 0;
	while (synth_next(s, &e)) {
		model_ingest(m, &e);
		int n = 0;
		for (int i = 0; i < detect_count(an_detect(m)); i++) {
			const struct ig_chain *c = detect_chain(an_detect(m), i);
			if (c->cls != IG_CC_CPU_CONTENTION)
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
	const struct ig_chain *c = detect_find(an_detect(m), id);
	CHECK(c && c->active && c->fired >= 28 && c->severity == IG_SEV_HIGH);
	CHECK(c && c->last_seen_ns > c->first_seen_ns + 26 * SEC); /* judged from 2 s of wall */
	CHECK(c && c->ntimeline <= IG_CHAIN_MAX_TIMELINE);
	for (int k = 1; c && k < c->ntimeline; k++)
		CHECK(c->timeline[k - 1].ts_ns <= c->timeline[k].ts_ns);
	uint64_t gen = detect_generation(an_detect(m));

	/* the same host, healthy again */
	struct synth_cfg c2 = {
	    .scenario = SYNTH_HEALTHY, .seconds = 20, .start_ns = model_now(m) + 1000};
	synth_free(s);
	s = synth_new(&c2);
	while (synth_next(s, &e))
		model_ingest(m, &e);
	c = detect_find(an_detect(m), id);
	CHECK(c && !c->active && c->max_severity == IG_SEV_HIGH);
	CHECK(c && c->ntimeline && strstr(c->timeline[c->ntimeline - 1].text, "resolved"));
	CHECK(detect_generation(an_detect(m)) > gen);
	/* resolved chains sort after active ones */
	int seen_resolved = 0, order_ok = 1;
	for (int i = 0; i < detect_count(an_detect(m)); i++) {
		if (!detect_chain(an_detect(m), i)->active)
			seen_resolved = 1;
		else if (seen_resolved)
			order_ok = 0;
	}
	CHECK(order_ok);
	CHECK(worst(m) == IG_SEV_INFO);
	/* after keep_s it is gone, and so is everything once the feeder is quiet */
	model_advance(m, model_now(m) + 200 * SEC);
	CHECK(detect_find(an_detect(m), id) == NULL);
	CHECK(worst(m) == -1);

	/* contention again: a new chain, a new id */
	struct synth_cfg c3 = {
	    .scenario = SYNTH_CPU_CONTENTION, .seconds = 10, .start_ns = model_now(m) + 1000};
	synth_free(s);
	s = synth_new(&c3);
	while (synth_next(s, &e))
		model_ingest(m, &e);
	const struct ig_chain *again = find(m, IG_CC_CPU_CONTENTION);
	CHECK(again && again->id > id);
	an_model_free(m);
	synth_free(s);
}

/* Everything the detector says, and the parts it judged, as text. */
static char *state(const struct ig_model *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const struct ig_detect *d = an_detect(m);
	for (int i = 0; i < detect_count(d); i++) {
		const struct ig_chain *c = detect_chain(d, i);
		fprintf(f, "%s %lx %d %d/%d op %d %u/%u %s culprit %u %s %lu %lu %.17g %.17g\n",
			c->id_str, (unsigned long)c->key, c->cls, c->severity, c->max_severity,
			c->op, c->pid, c->tid, c->comm, c->culprit_pid, c->culprit_comm,
			(unsigned long)c->p50_ns, (unsigned long)c->p99_ns, c->tail_ratio,
			c->impact);
		for (int k = 0; k < c->nevidence; k++)
			fprintf(f, " %s=%.17g%s", c->ev[k].key, c->ev[k].value, c->ev[k].unit);
		fprintf(f, "\n%s\n%s\n%s\n", c->summary, c->explanation, c->lacking);
		for (int k = 0; k < c->nrecs; k++)
			fprintf(f, " do %s\n", c->recs[k]);
		for (int k = 0; k < c->ntimeline; k++)
			fprintf(f, " at %lu %s\n", (unsigned long)c->timeline[k].ts_ns,
				c->timeline[k].text);
		fprintf(f, " %lu %lu %lu %u %d\n", (unsigned long)c->first_seen_ns,
			(unsigned long)c->last_seen_ns, (unsigned long)c->updated_ns, c->fired,
			c->active);
	}
	struct ig_proc_stats p[8];
	int n = model_procs(m, p, 8);
	for (int i = 0; i < n; i++) {
		fprintf(f, "pid %u", p[i].pid);
		for (int k = 0; k < IG_PART_MAX; k++)
			fprintf(f, " %lu/%lu", (unsigned long)p[i].parts.ns[k],
				(unsigned long)p[i].life_parts.ns[k]);
		fprintf(f, "\n");
	}
	fprintf(f, "generation %lu\n", (unsigned long)detect_generation(d));
	fclose(f);
	return buf;
}

static uint64_t lcg = 12345;
static unsigned rnd(unsigned n)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((lcg >> 33) % n);
}

/* The same stream through different chunkings and idle-advance patterns
 * gives identical chains and parts. */
static void test_determinism(void)
{
	static const int scs[] = {SYNTH_CPU_CONTENTION, SYNTH_LOADER_WAIT, SYNTH_ALLOC_SPIKES,
				  SYNTH_NO_SPLIT,	SYNTH_BLOCK_IO,	   SYNTH_MIXED,
				  SYNTH_COLD_START};
	for (size_t k = 0; k < sizeof(scs) / sizeof(scs[0]); k++) {
		struct synth_cfg cfg = {.scenario = scs[k], .seconds = 25};
		/* reference: one event at a time, no advance */
		struct ig_model *a = run(scs[k], 25, 0);
		char *fa = state(a);
		CHECK(detect_count(an_detect(a)) > 0);
		for (int variant = 0; variant < 3; variant++) {
			struct ig_source *src = synth_source_new(&cfg);
			struct ig_model *b = an_model_new(NULL);
			int rc;
			do {
				/* a replay at some speed: before a chunk, the clock is
				 * moved up to the next event's time */
				uint64_t ts;
				if (variant > 0 && src->ops->peek_ts(src, &ts) == 0) {
					if (variant == 2 && rnd(2))
						model_advance(b, ts - rnd(1000000));
					if (variant == 1 || rnd(3) == 0)
						model_advance(b, ts);
				}
				rc = src->ops->poll(src, (ig_emit_fn)model_ingest, b,
						    variant == 0 ? 4096 : 1 + (int)rnd(300));
			} while (rc > 0);
			CHECK(rc == -ENODATA);
			char *fb = state(b);
			CHECKF(!strcmp(fa, fb), "%s variant %d differs", synth_name(scs[k]),
			       variant);
			free(fb);
			an_model_free(b);
			src->ops->free(src);
		}
		free(fa);
		an_model_free(a);
	}
}

static void test_names(void)
{
	for (int c = 0; c < IG_CC_MAX; c++) {
		CHECK(detect_class_by_name(detect_class_name(c)) == c);
		CHECK(detect_class_by_name(detect_class_title(c)) == c);
	}
	CHECK(detect_class_by_name("nope") == -1);
	CHECK(detect_class_by_name("host_starvation") == IG_CC_HOST_WORK);
	CHECK(!strcmp(detect_class_name(IG_CC_MAX), "?"));
	CHECK(!strcmp(detect_sev_name(IG_SEV_HIGH), "HIGH") && !strcmp(detect_sev_name(9), "?"));
	for (int s = 0; s < SYNTH_MAX; s++)
		CHECK(synth_by_name(synth_name(s)) == s);
	CHECK(synth_by_name("host_starvation") == -1 && !strcmp(synth_name(SYNTH_MAX), "?"));
	/* every scenario's cause is a class the detector knows */
	for (int s = 0; s < SYNTH_BENCH; s++) {
		struct synth_cfg cfg = {.scenario = s};
		struct synth_truth t;
		CHECK(synth_truth(&cfg, &t) == 0 && detect_class_by_name(t.cause) >= 0);
	}
	struct ig_detect_cfg d;
	detect_cfg_default(&d);
	CHECK(d.tail_ratio == 3 && d.min_calls == 10);
	CHECK(d.sev_low == 0.05 && d.sev_medium == 0.15 && d.sev_high == 0.30);
	CHECK(d.gpu_info == 0.25 && d.storm_rate == 100 && d.page_bytes == 1ull << 30);
}

/* Recommendations name the class's own remedies, never the same list. */
static void test_recs_specific(void)
{
	char firsts[IG_CC_MAX][192];
	int have[IG_CC_MAX] = {0}, n = 0;
	for (int sc = 0; sc < SYNTH_BENCH; sc++) {
		struct ig_model *m = run(sc, 12, 0);
		for (int i = 0; i < detect_count(an_detect(m)); i++) {
			const struct ig_chain *c = detect_chain(an_detect(m), i);
			if (have[c->cls] || !c->nrecs)
				continue;
			have[c->cls] = 1;
			n++;
			memcpy(firsts[c->cls], c->recs[0], sizeof(firsts[0]));
		}
		an_model_free(m);
	}
	/* a burst of slow calls is a transient no steady scenario makes: it is
	 * tested on streams of its own (test_rules_tail.c) */
	CHECKF(n == IG_CC_MAX - 1 && !have[IG_CC_SLOW_BURST],
	       "%d of %d classes seen on the scenarios", n, IG_CC_MAX - 1);
	for (int i = 0; i < IG_CC_MAX; i++)
		for (int j = i + 1; j < IG_CC_MAX; j++)
			if (have[i] && have[j])
				CHECKF(strcmp(firsts[i], firsts[j]), "%s and %s share '%s'",
				       detect_class_name(i), detect_class_name(j), firsts[i]);
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
	struct ig_model *m = an_model_new(NULL);
	int worst_of[IG_CC_MAX];
	for (int c = 0; c < IG_CC_MAX; c++)
		worst_of[c] = -1;
	int busy = 0, confirmed = 0;
	while (src->ops->poll(src, (ig_emit_fn)model_ingest, m, 64) > 0) {
		for (int i = 0; i < detect_count(an_detect(m)); i++) {
			const struct ig_chain *c = detect_chain(an_detect(m), i);
			if (c->severity > worst_of[c->cls])
				worst_of[c->cls] = c->severity;
			if (c->cls == IG_CC_HOST_WORK && c->pid == 2233 &&
			    strstr(c->summary, "busy on the CPU") && c->impact > 0.5)
				busy = 1;
			/* the time classes cannot be confirmed without off-CPU states */
			if (c->cls <= IG_CC_LAUNCH_BOUND && !c->lacking[0])
				confirmed++;
		}
	}
	CHECK(worst_of[IG_CC_HOST_WORK] == IG_SEV_MEDIUM && busy);
	CHECK(confirmed == 0);
	/* the 25.8 ms first cudaLaunchKernel is start-up, not an incident */
	CHECK(worst_of[IG_CC_COLD_START] == IG_SEV_INFO);
	/* the initial 219 MiB copies are start-up loading: reported low */
	CHECK(worst_of[IG_CC_COPY_DOMINATED] <= IG_SEV_LOW);
	for (int c = 0; c < IG_CC_MAX; c++)
		CHECKF(worst_of[c] <= IG_SEV_MEDIUM, "%s reached %s", detect_class_name(c),
		       detect_sev_name(worst_of[c]));
	an_model_free(m);
	src->ops->free(src);
}

/* A loop of 10 ms steps for 20 s: a call of op taking cost_ns (an
 * allocation on the CPU, or a synchronous copy of bytes), a launch, and a
 * stream sync for the rest of the step. */
static struct ig_model *steady_loop(int op, uint64_t cost_ns, uint64_t bytes)
{
	struct ig_model *m = an_model_new(NULL);
	for (int k = 0; k < 2000; k++) {
		uint64_t t = T0 + (uint64_t)k * 10 * MS;
		struct ig_event e[3] = {
		    ev_call(7, 7, op, t, cost_ns, "train"),
		    ev_call(7, 7, IG_OP_CUDA_LAUNCH_KERNEL, t + cost_ns, 10 * US, "train"),
		    ev_call(7, 7, IG_OP_CUDA_STREAM_SYNC, t + cost_ns + 10 * US,
			    10 * MS - cost_ns - 20 * US, "train"),
		};
		e[0].arg0 = bytes;
		e[0].arg1 = bytes ? IG_DIR_H2D : 0;
		for (int i = 0; i < 3; i++)
			model_ingest(m, &e[i]);
	}
	return m;
}

/* Every step's cudaMalloc costs 2.5 ms on the CPU (a quarter of the wall)
 * and no call stands out: an allocation chain of that impact, at the top,
 * not launch overhead. A 1 MiB synchronous copy of 2.5 ms a step: a copy
 * chain of that impact, and the GPU-bound chain keeps only the rest. */
static void test_steady_costs(void)
{
	struct ig_model *m = steady_loop(IG_OP_CUDA_MALLOC, 2500 * US, 1 << 20);
	const struct ig_chain *a = find(m, IG_CC_ALLOC_SPIKES);
	CHECK(a != NULL);
	if (a) {
		CHECKF(fabs(a->impact - 0.25) < 0.02, "alloc impact %.3f", a->impact);
		CHECKF(a->severity == IG_SEV_MEDIUM, "alloc severity %d", a->severity);
		CHECKF(strstr(a->summary, "allocation cost") != NULL, "%s", a->summary);
		CHECK(detect_chain(an_detect(m), 0) == a);
	}
	CHECK(find(m, IG_CC_LAUNCH_BOUND) == NULL && find(m, IG_CC_SYNC_STORM) == NULL);
	an_model_free(m);

	m = steady_loop(IG_OP_CUDA_MEMCPY, 2500 * US, 1 << 20);
	const struct ig_chain *c = find(m, IG_CC_COPY_DOMINATED), *g = find(m, IG_CC_GPU_BOUND);
	CHECK(c != NULL && g != NULL);
	if (c && g) {
		CHECKF(fabs(c->impact - 0.25) < 0.02, "copy impact %.3f", c->impact);
		CHECKF(fabs(g->impact - 0.75) < 0.02, "gpu-bound impact %.3f", g->impact);
		CHECKF(c->impact + g->impact <= 1.0 + 1e-9, "%.3f + %.3f", c->impact, g->impact);
		CHECK(detect_chain(an_detect(m), 0) == c);
	}
	an_model_free(m);

	/* 4-byte copies that wait are synchronisations (a loss.item()): no copy
	 * chain, their wait is the GPU's */
	m = steady_loop(IG_OP_CUDA_MEMCPY, 2500 * US, 4);
	CHECK(find(m, IG_CC_COPY_DOMINATED) == NULL);
	g = find(m, IG_CC_GPU_BOUND);
	CHECKF(g && g->impact > 0.97, "gpu-bound impact %.3f", g ? g->impact : 0);
	an_model_free(m);
}

int main(void)
{
	test_names();
	test_causes();
	test_healthy();
	test_lifecycle();
	test_determinism();
	test_recs_specific();
	test_steady_costs();
	test_ingero_recording();
	return check_done("test_detect");
}
