/* Synchronous launches (detect/rules_launch.c) on hand-made loops: each
 * step host work, launches (cudaLaunchKernel with its cuLaunchKernel
 * inside) and a synchronisation (the same), with or without the
 * environment's CUDA_LAUNCH_BLOCKING=1 (IG_EV_ENV each second):
 * - the environment says so: confirmed, HIGH, the impact what overlap
 *   gives back (the smaller of the time in launches and the rest), the
 *   host work left once launches are queued its own chain;
 * - launches asleep 300 us whose syncs then wait 30 us, no environment
 *   recorded: the same, unconfirmed (MEDIUM at most); spinning as long,
 *   launch overhead as before (the calls alone cannot tell);
 * - the same launches with syncs that wait 5 ms (a full launch queue):
 *   not synchronous, not launch overhead either: GPU-bound;
 * - the environment set, launches of 8 us: what overlap would give back is
 *   under 5 %: nothing said;
 * - launches of 10 us with a 5 ms one asleep every other step (lazy module
 *   loads): their mean is 260 us, their p50 10 us: not synchronous;
 * - PYTORCH_NO_CUDA_MEMORY_CACHING=1 and an allocation each step: the
 *   allocation chain's first advice unsets it. */
#include "analysis.h"
#include "check.h"
#include "core/ops.h"
#include "detect/detect.h"
#include "evmake.h"
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PID 700

struct loop {
	uint64_t host_ns;
	int launches;
	uint64_t launch_ns;
	uint64_t slow_every, slow_ns; /* one launch this long every N steps */
	int launch_sleep;	      /* launches asleep all but 5 us (slow ones always) */
	uint64_t sync_ns;	      /* the sync, asleep all but 5 us when > 20 us */
	uint64_t malloc_ns;	      /* a cudaMalloc this long and a cudaFree each step */
	uint32_t env;		      /* IG_EV_ENV with these IG_ENV_* each second */
	int initial;		      /* and in what it was started with */
};

static void pair(struct ig_model *m, int op, int inner, uint64_t t, uint64_t d, uint64_t blk)
{
	struct ig_event in = ev_call(PID, PID, inner, t + 1 * US, d - 2 * US, "train");
	struct ig_event out = ev_call(PID, PID, op, t, d, "train");
	in.blocked_ns = blk > 2 * US ? blk - 2 * US : 0;
	out.blocked_ns = blk;
	in.switches = out.switches = blk ? 1 : 0;
	model_ingest(m, &in);
	model_ingest(m, &out);
}

static struct ig_model *run(const struct loop *l, int secs)
{
	struct ig_model *m = an_model_new(NULL);
	uint64_t t = T0, end = T0 + (uint64_t)secs * SEC, next_env = T0;
	for (uint64_t step = 0; t < end; step++) {
		if (l->env && t >= next_env) {
			struct ig_event e = ev_call(PID, PID, 0, t, 0, "train");
			e.kind = IG_EV_ENV;
			e.arg0 = l->env;
			e.arg1 = IG_ENV_SRC_LIVE;
			e.arg2 = l->initial ? l->env : 0;
			model_ingest(m, &e);
			next_env += SEC;
		}
		/* the host work ends in a short preemption: the source records
		 * off-CPU states */
		struct ig_event off = ev_off(PID, PID, t + l->host_ns - 20 * US, 10 * US,
					     IG_OFF_PREEMPTED, 0, 0, NULL);
		model_ingest(m, &off);
		t += l->host_ns;
		if (l->malloc_ns) {
			pair(m, IG_OP_CUDA_MALLOC, IG_OP_CU_MEM_ALLOC, t, l->malloc_ns, 0);
			t += l->malloc_ns;
			pair(m, IG_OP_CUDA_FREE, IG_OP_CU_MEM_FREE, t, 20 * US, 0);
			t += 20 * US;
		}
		for (int k = 0; k < l->launches; k++) {
			int slow = l->slow_every && step % l->slow_every == 0 && !k;
			uint64_t d = slow ? l->slow_ns : l->launch_ns;
			pair(m, IG_OP_CUDA_LAUNCH_KERNEL, IG_OP_CU_LAUNCH_KERNEL, t, d,
			     slow || l->launch_sleep ? d - 5 * US : 0);
			t += d;
		}
		pair(m, IG_OP_CUDA_STREAM_SYNC, IG_OP_CU_STREAM_SYNC, t, l->sync_ns,
		     l->sync_ns > 20 * US ? l->sync_ns - 5 * US : 0);
		t += l->sync_ns;
	}
	model_advance(m, end);
	return m;
}

static const struct ig_chain *find(const struct ig_model *m, int cls)
{
	return an_active_chain(m, cls);
}

static void dump(const char *what, const struct ig_model *m)
{
	fprintf(stderr, "  %s:\n", what);
	for (int i = 0; i < detect_count(an_detect(m)); i++) {
		const struct ig_chain *c = detect_chain(an_detect(m), i);
		fprintf(stderr, "   [%s] %s %.1f%% %s\n", detect_sev_name(c->severity),
			detect_class_name(c->cls), c->impact * 100, c->summary);
	}
}

static void test_confirmed(void)
{
	struct loop l = {.host_ns = 6500 * US,
			 .launches = 10,
			 .launch_ns = 300 * US,
			 .sync_ns = 30 * US,
			 .env = 1};
	struct ig_model *m = run(&l, 12);
	const struct ig_chain *c = find(m, IG_CC_LAUNCH_BLOCKING);
	double in = 3.0 / 9.53;
	CHECKF(c && fabs(c->impact - in) < 0.02 && c->severity == IG_SEV_HIGH,
	       "confirmed: impact %.1f %%, want %.1f %%", c ? c->impact * 100 : -1, in * 100);
	CHECK(c && !c->lacking[0] &&
	      strstr(c->summary, "CUDA_LAUNCH_BLOCKING=1 makes each launch"));
	CHECK(c && detect_evidence(c, "env_launch_blocking", -1) == 1);
	CHECK(c && fabs(detect_evidence(c, "launch_mean_ns", 0) - 300 * US) < 2 * US);
	/* the program set it at run time (not in what it was started with) */
	CHECK(c && strstr(c->recs[0], "remove that line") &&
	      strstr(c->recs[0], ": ps -o args= -p 700"));
	/* the host work (68 %) minus what the GPU's work hides once queued */
	const struct ig_chain *h = find(m, IG_CC_HOST_WORK);
	CHECKF(h && fabs(h->impact - (6.5 - 3.0) / 9.53) < 0.02, "host work %.1f %%",
	       h ? h->impact * 100 : -1);
	CHECKF(h && strstr(h->summary, "busy on the CPU 68% of its time"), "%s",
	       h ? h->summary : "");
	CHECK(h && strstr(h->recs[0], "asynchronous first"));
	CHECK(!find(m, IG_CC_LAUNCH_BOUND) && !find(m, IG_CC_SYNC_STORM));
	if (!c || !h)
		dump("confirmed", m);
	an_model_free(m);
}

static void test_unconfirmed(void)
{
	struct loop l = {.host_ns = 6500 * US,
			 .launches = 10,
			 .launch_ns = 300 * US,
			 .launch_sleep = 1,
			 .sync_ns = 30 * US};
	struct ig_model *m = run(&l, 12);
	const struct ig_chain *c = find(m, IG_CC_LAUNCH_BLOCKING);
	CHECKF(c && fabs(c->impact - 3.0 / 9.53) < 0.02 && c->severity == IG_SEV_MEDIUM,
	       "unconfirmed: %s %.1f %%", c ? detect_sev_name(c->severity) : "none",
	       c ? c->impact * 100 : -1);
	CHECK(c && detect_evidence(c, "env_launch_blocking", 0) == -1);
	CHECK(c && strstr(c->lacking, "CUDA_LAUNCH_BLOCKING=1 in the process's environment (not "
				      "recorded)"));
	CHECK(c && strstr(c->explanation, "did not record its environment"));
	CHECK(c && strstr(c->recs[0], "/proc/700/environ"));
	if (!c)
		dump("unconfirmed", m);
	an_model_free(m);
	/* the same launches on the CPU (spinning, or slow CPU work): launch
	 * overhead as far as the calls can tell */
	l.launch_sleep = 0;
	m = run(&l, 12);
	CHECK(!find(m, IG_CC_LAUNCH_BLOCKING) && find(m, IG_CC_LAUNCH_BOUND));
	an_model_free(m);
}

static void test_full_queue(void)
{
	struct loop l = {.host_ns = 1 * MS,
			 .launches = 10,
			 .launch_ns = 300 * US,
			 .launch_sleep = 1,
			 .sync_ns = 5 * MS};
	struct ig_model *m = run(&l, 12);
	CHECK(!find(m, IG_CC_LAUNCH_BLOCKING) && !find(m, IG_CC_LAUNCH_BOUND));
	const struct ig_chain *g = find(m, IG_CC_GPU_BOUND);
	CHECKF(g && fabs(g->impact - 8.0 / 9.0) < 0.03, "GPU-bound %.1f %%, want 89 %%",
	       g ? g->impact * 100 : -1);
	if (!g || find(m, IG_CC_LAUNCH_BOUND))
		dump("full queue", m);
	an_model_free(m);
}

static void test_short_launches(void)
{
	struct loop l = {
	    .host_ns = 3 * MS, .launches = 20, .launch_ns = 8 * US, .sync_ns = 2 * MS, .env = IG_ENV_LAUNCH_BLOCKING};
	struct ig_model *m = run(&l, 12);
	CHECK(!find(m, IG_CC_LAUNCH_BLOCKING));
	an_model_free(m);
}

static void test_lazy_loads(void)
{
	struct loop l = {.host_ns = 3 * MS,
			 .launches = 10,
			 .launch_ns = 10 * US,
			 .slow_every = 2,
			 .slow_ns = 5 * MS,
			 .sync_ns = 30 * US};
	struct ig_model *m = run(&l, 12);
	CHECK(!find(m, IG_CC_LAUNCH_BLOCKING));
	if (find(m, IG_CC_LAUNCH_BLOCKING))
		dump("lazy loads", m);
	an_model_free(m);
}

/* PYTORCH_NO_CUDA_MEMORY_CACHING=1: the allocation chain's first advice
 * undoes it, worded by where it was set */
static void test_no_alloc_cache(void)
{
	for (int initial = 0; initial < 2; initial++) {
		struct loop l = {.host_ns = 1 * MS, .launches = 10, .launch_ns = 10 * US,
				 .malloc_ns = 2 * MS, .sync_ns = 5 * MS,
				 .env = IG_ENV_NO_ALLOC_CACHE, .initial = initial};
		struct ig_model *m = run(&l, 12);
		const struct ig_chain *c = find(m, IG_CC_ALLOC_SPIKES);
		const char *want = initial ? "it came with the job: xargs -0 -n1 < /proc/700/environ "
					     "| grep CUDA_MEMORY"
					   : "the program sets it: ps -o args= -p 700";
		CHECKF(c && strstr(c->recs[0], "Unset PYTORCH_NO_CUDA_MEMORY_CACHING") &&
			   strstr(c->recs[0], want),
		       "%s", c ? c->recs[0] : "no allocation chain");
		CHECK(c && strstr(c->explanation, "caching allocator is off"));
		CHECK(!find(m, IG_CC_LAUNCH_BLOCKING));
		an_model_free(m);
	}
	struct loop l = {.host_ns = 1 * MS, .launches = 10, .launch_ns = 10 * US,
			 .malloc_ns = 2 * MS, .sync_ns = 5 * MS};
	struct ig_model *m = run(&l, 12);
	const struct ig_chain *c = find(m, IG_CC_ALLOC_SPIKES);
	CHECK(c && !strstr(c->recs[0], "PYTORCH_NO_CUDA_MEMORY_CACHING"));
	an_model_free(m);
}

int main(void)
{
	test_confirmed();
	test_unconfirmed();
	test_full_queue();
	test_short_launches();
	test_lazy_loads();
	test_no_alloc_cache();
	return check_done("test_rules_launch");
}
