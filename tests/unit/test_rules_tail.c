/* Tail rules on hand-made event streams (issue 28):
 * - a cold start is judged on the first calls' own time: first calls slowed
 *   by a preemption are not a cold start;
 * - copies are judged within one direction: device-to-host copies that are
 *   all equally slow are not a cold start of cudaMemcpy;
 * - a burst of slow calls (warm-up at the start, a preemption mid-run) is a
 *   chain that says when, how many and what they cost; a steady tail is not
 *   a burst;
 * - advice fits the process: an inference server is not told about
 *   DataLoader workers. docs/detection.md says why. */
#include "analysis.h"
#include "check.h"
#include "detect/detect.h"
#include "evmake.h"
#include "model/model.h"
#include "core/ops.h"

#include <math.h>
#include <string.h>

static const struct ig_chain *find(const struct ig_model *m, int cls)
{
	for (int i = 0; i < detect_count(an_detect(m)); i++)
		if (detect_chain(an_detect(m), i)->cls == cls)
			return detect_chain(an_detect(m), i);
	return NULL;
}

/* Ever seen (active or resolved) by the end of the run. */
static int seen(const struct ig_model *m, int cls)
{
	return find(m, cls) != NULL;
}

/* 100 steps/s for secs seconds: a launch of 30 us, a sync of 2 ms (the
 * GPU's), host work. The first five launches are slow_ns (0: not), of which
 * pre_ns preempted by a hog. */
static struct ig_model *launch_loop(uint64_t slow_ns, uint64_t pre_ns, int secs)
{
	struct ig_model *m = an_model_new(NULL);
	for (int i = 0; i < 100 * secs; i++) {
		uint64_t t = T0 + (uint64_t)i * 10 * MS;
		struct ig_event l = ev_call(500, 500, IG_OP_CUDA_LAUNCH_KERNEL, t,
					    i < 5 && slow_ns ? slow_ns : 30 * US, "train");
		if (i < 5 && slow_ns) {
			l.preempt_ns = pre_ns;
			l.switches = pre_ns ? 1 : 0;
			l.other_pid = pre_ns ? 777 : 0;
			strcpy(l.other_comm, "hog");
		}
		model_ingest(m, &l);
		struct ig_event s =
		    ev_call(500, 500, IG_OP_CUDA_STREAM_SYNC, t + l.dur_ns, 2 * MS, "train");
		s.blocked_ns = 2 * MS - 20 * US;
		s.switches = 1;
		model_ingest(m, &s);
	}
	model_advance(m, T0 + (uint64_t)secs * SEC);
	return m;
}

static void test_cold_start_not_preempted(void)
{
	/* 5 ms first launches of which 4.97 ms runnable behind a hog: their own
	 * time is 30 us, the settled p50 */
	struct ig_model *m = launch_loop(5 * MS, 5 * MS - 30 * US, 6);
	CHECK(!seen(m, IG_CC_COLD_START));
	an_model_free(m);
	/* the same first launches on the CPU all along: a cold start */
	m = launch_loop(5 * MS, 0, 6);
	const struct ig_chain *c = find(m, IG_CC_COLD_START);
	CHECK(c && c->op == IG_OP_CUDA_LAUNCH_KERNEL);
	an_model_free(m);
	/* partly preempted, still 10x the p50 in their own time: a cold start */
	m = launch_loop(5 * MS, 4 * MS, 6);
	CHECK(seen(m, IG_CC_COLD_START));
	an_model_free(m);
}

/* 100 steps/s: a host-to-device cudaMemcpy of h2d_ns (the first five
 * first_h2d_ns), and every 4th step a device-to-host one of 3 ms that
 * spins (no sleep, not preempted). */
static struct ig_model *copy_loop(uint64_t first_h2d_ns, int secs)
{
	struct ig_model *m = an_model_new(NULL);
	for (int i = 0; i < 100 * secs; i++) {
		uint64_t t = T0 + (uint64_t)i * 10 * MS;
		struct ig_event h = ev_call(600, 600, IG_OP_CUDA_MEMCPY, t,
					    i < 5 ? first_h2d_ns : 60 * US, "train");
		h.arg0 = 1 << 20;
		h.arg1 = IG_DIR_H2D;
		model_ingest(m, &h);
		if (i % 4 == 0) {
			struct ig_event d =
			    ev_call(600, 600, IG_OP_CUDA_MEMCPY, t + 1 * MS, 3 * MS, "train");
			d.arg0 = 4 << 20;
			d.arg1 = IG_DIR_D2H;
			model_ingest(m, &d);
		}
	}
	model_advance(m, T0 + (uint64_t)secs * SEC);
	return m;
}

static void test_cold_start_by_direction(void)
{
	/* the first five copies hold two device-to-host ones, 50x the p50 of
	 * all copies (mostly host-to-device): not a cold start, each
	 * direction is as fast at first as later */
	struct ig_model *m = copy_loop(60 * US, 6);
	CHECK(!seen(m, IG_CC_COLD_START));
	an_model_free(m);
	/* slow first host-to-device copies are one, named by direction */
	m = copy_loop(4 * MS, 6);
	const struct ig_chain *c = find(m, IG_CC_COLD_START);
	CHECK(c && c->op == IG_OP_CUDA_MEMCPY);
	CHECKF(c && strstr(c->summary, "host-to-device"), "%s", c ? c->summary : "none");
	an_model_free(m);
}

/* Evidence value of key in c (-1 when absent). */
static double evid(const struct ig_chain *c, const char *key)
{
	for (int i = 0; c && i < c->nevidence; i++)
		if (!strcmp(c->ev[i].key, key))
			return c->ev[i].value;
	return -1;
}

static int has_rec(const struct ig_chain *c, const char *w)
{
	for (int i = 0; c && i < c->nrecs; i++)
		if (strstr(c->recs[i], w))
			return 1;
	return 0;
}

/* 100 steps/s for secs seconds of a 30 us launch and a 2 ms sync; the
 * launches of the steps in [from, to) every `every` steps take slow_ns, of
 * which pre_ns preempted by a hog. */
static struct ig_model *burst_loop(int from, int to, int every, uint64_t slow_ns, uint64_t pre_ns,
				   int secs)
{
	struct ig_model *m = an_model_new(NULL);
	for (int i = 0; i < 100 * secs; i++) {
		uint64_t t = T0 + (uint64_t)i * 10 * MS;
		int slow = i >= from && i < to && (i - from) % every == 0;
		struct ig_event l =
		    ev_call(700, 700, IG_OP_CUDA_LAUNCH_KERNEL, t,
			    slow ? slow_ns + (uint64_t)(i % 7) * MS : 30 * US, "train");
		if (slow && pre_ns) {
			l.preempt_ns = pre_ns;
			l.switches = 1;
			l.other_pid = 777;
			strcpy(l.other_comm, "hog");
		}
		model_ingest(m, &l);
		struct ig_event s =
		    ev_call(700, 700, IG_OP_CUDA_STREAM_SYNC, t + l.dur_ns, 2 * MS, "train");
		s.blocked_ns = 2 * MS - 20 * US;
		s.switches = 1;
		model_ingest(m, &s);
	}
	model_advance(m, T0 + (uint64_t)secs * SEC);
	return m;
}

static void test_burst(void)
{
	/* warm-up: 8 slow launches among the first 300 ms (after 3 fast ones),
	 * no preemption: a burst at the start, INFO */
	struct ig_model *m = burst_loop(3, 27, 3, 2 * MS, 0, 6);
	const struct ig_chain *c = find(m, IG_CC_SLOW_BURST);
	CHECK(c && c->op == IG_OP_CUDA_LAUNCH_KERNEL && c->max_severity == IG_SEV_INFO);
	CHECKF(c && strstr(c->summary, "8 calls") && strstr(c->summary, "in the first"), "%s",
	       c ? c->summary : "none");
	CHECK(evid(c, "burst_calls") == 8 && evid(c, "after_first_ns") == 30 * MS);
	CHECK(has_rec(c, "warm-up iterations"));
	an_model_free(m);
	/* mid-run: 5 launches of 8 to 14 ms in 400 ms at 5 s, 8 ms of each
	 * behind a hog: a burst that says when and that it was preempted */
	m = burst_loop(500, 550, 10, 8 * MS, 8 * MS - 20 * US, 8);
	c = find(m, IG_CC_SLOW_BURST);
	CHECKF(c && strstr(c->summary, "5 calls") && strstr(c->summary, "5.00s after its first"),
	       "%s", c ? c->summary : "none");
	CHECKF(evid(c, "burst_preempt_pct") > 60 && has_rec(c, "held the CPU"), "%f",
	       evid(c, "burst_preempt_pct"));
	CHECK(c && strstr(c->explanation, "runnable but not running"));
	an_model_free(m);
	/* a steady tail (every 50th launch slow, all run long) is no burst */
	m = burst_loop(0, 800, 50, 2 * MS, 0, 8);
	CHECK(!seen(m, IG_CC_SLOW_BURST));
	an_model_free(m);
	/* nor are five slow first calls alone: that is the cold start */
	m = launch_loop(5 * MS, 0, 6);
	CHECK(!seen(m, IG_CC_SLOW_BURST) && seen(m, IG_CC_COLD_START));
	an_model_free(m);
}

/* Host work: 100 steps/s of a launch and a 0.5 ms sync, 9 ms of the
 * thread's own code between them; the process is called comm. */
static struct ig_model *host_loop(const char *comm)
{
	struct ig_model *m = an_model_new(NULL);
	for (int i = 0; i < 600; i++) {
		uint64_t t = T0 + (uint64_t)i * 10 * MS;
		struct ig_event l = ev_call(800, 800, IG_OP_CUDA_LAUNCH_KERNEL, t, 30 * US, comm);
		model_ingest(m, &l);
		struct ig_event s =
		    ev_call(800, 800, IG_OP_CUDA_STREAM_SYNC, t + 30 * US, 500 * US, comm);
		s.blocked_ns = 480 * US;
		s.switches = 1;
		model_ingest(m, &s);
	}
	model_advance(m, T0 + 6 * SEC);
	return m;
}

static void test_advice_fits_process(void)
{
	struct ig_model *m = host_loop("python3");
	const struct ig_chain *c = find(m, IG_CC_HOST_WORK);
	CHECK(c && has_rec(c, "DataLoader") && !has_rec(c, "engine step"));
	an_model_free(m);
	m = host_loop("VLLM::EngineCor");
	c = find(m, IG_CC_HOST_WORK);
	CHECK(c && !has_rec(c, "DataLoader") && has_rec(c, "engine step"));
	an_model_free(m);
}

int main(void)
{
	test_burst();
	test_advice_fits_process();
	test_cold_start_not_preempted();
	test_cold_start_by_direction();
	return check_done("test_rules_tail");
}
