/* The off-CPU intervals of the slowest calls stay with them (model/callev.c):
 * a call that left the CPU twice, followed by many more intervals of its
 * thread than the thread's ring holds, still shows its two intervals, in the
 * window, since the start, after a model copy; a call that never left the
 * CPU has none kept; a reset forgets them. */
#include "check.h"
#include "core/ops.h"
#include "evmake.h"
#include "model/model.h"

#include <string.h>

static void feed_slow_call(struct ig_model *m, uint64_t t)
{
	/* the slow call: 40 ms with 5 ms preempted and 10 ms blocked inside */
	struct ig_event o1 = ev_off(10, 11, t + 2 * MS, 5 * MS, IG_OFF_PREEMPTED, IG_F_IN_CALL,
				    900, "stress");
	struct ig_event o2 =
	    ev_off(10, 11, t + 20 * MS, 10 * MS, IG_OFF_BLOCKED, IG_F_IN_CALL, 0, NULL);
	struct ig_event c = ev_call(10, 11, IG_OP_CUDA_STREAM_SYNC, t, 40 * MS, "trainer");
	c.preempt_ns = 5 * MS;
	c.blocked_ns = 10 * MS;
	c.switches = 2;
	model_ingest(m, &o1);
	model_ingest(m, &o2);
	model_ingest(m, &c);
}

static void test_kept(void)
{
	struct ig_model *m = model_new(NULL);
	uint64_t slow = T0 + 100 * MS;
	feed_slow_call(m, slow);
	/* then 3 * IG_TL_MAX short calls, each after 1 ms blocked between calls,
	 * and one 2 ms call that stayed on the CPU */
	uint64_t t = slow + 50 * MS;
	for (int i = 0; i < 3 * IG_TL_MAX; i++, t += 2 * MS) {
		struct ig_event o = ev_off(10, 11, t, 1 * MS, IG_OFF_BLOCKED, 0, 901, "loader");
		struct ig_event c =
		    ev_call(10, 11, IG_OP_CUDA_STREAM_SYNC, t + 1 * MS, 100 * US, "trainer");
		model_ingest(m, &o);
		model_ingest(m, &c);
	}
	struct ig_event on = ev_call(10, 11, IG_OP_CUDA_STREAM_SYNC, t, 2 * MS, "trainer");
	model_ingest(m, &on);
	model_advance(m, t + 3 * MS);

	/* the thread's ring has moved on: the call's intervals are not in it */
	struct ig_offcpu_rec r[IG_TL_MAX];
	int n = model_thread_offcpu(m, 11, r, IG_TL_MAX);
	CHECK(n == IG_TL_MAX && r[0].ts_ns > slow + 40 * MS);
	/* but they are kept with the call, oldest first, whole */
	int cut = -1;
	n = model_call_offcpu(m, 11, slow, r, IG_TL_MAX, &cut);
	CHECKF(n == 2, "%d", n);
	CHECK(cut == 0);
	CHECK(n == 2 && r[0].ts_ns == slow + 2 * MS && r[0].state == IG_OFF_PREEMPTED &&
	      r[0].in_call && r[0].other_pid == 900 && !strcmp(r[0].other_comm, "stress"));
	CHECK(n == 2 && r[1].dur_ns == 10 * MS && r[1].state == IG_OFF_BLOCKED);
	/* the call is the slowest of the window and since the start */
	struct ig_call_rec c[IG_SLOW_MAX];
	CHECK(model_slow_calls(m, IG_OP_CUDA_STREAM_SYNC, 0, c, IG_SLOW_MAX) > 0 &&
	      c[0].ts_ns == slow);
	CHECK(model_slow_calls_life(m, IG_OP_CUDA_STREAM_SYNC, 0, c, IG_SLOW_MAX) > 0 &&
	      c[0].ts_ns == slow);
	/* a slow call that stayed on the CPU: nothing kept (-1), as for a call
	 * that was never among the slowest */
	CHECK(model_call_offcpu(m, 11, t, r, IG_TL_MAX, NULL) == -1);
	CHECK(model_call_offcpu(m, 11, slow + 1, r, IG_TL_MAX, NULL) == -1);
	/* a copy (the paused viewer's) has them too */
	struct ig_model *cp = model_copy(NULL, m);
	CHECK(cp && model_call_offcpu(cp, 11, slow, r, IG_TL_MAX, NULL) == 2);
	model_free(cp);
	/* a reset forgets them */
	model_reset(m);
	CHECK(model_call_offcpu(m, 11, slow, r, IG_TL_MAX, NULL) == -1);
	model_free(m);
}

/* A call with more intervals than are kept with it: the last
 * IG_CALLEV_TL, said to be cut. */
static void test_cut(void)
{
	struct ig_model *m = model_new(NULL);
	uint64_t t = T0;
	int k = IG_CALLEV_TL + 4;
	for (int i = 0; i < k; i++) {
		struct ig_event o = ev_off(10, 11, t + (uint64_t)i * 2 * MS + MS, 1 * MS,
					   IG_OFF_PREEMPTED, IG_F_IN_CALL, 900, "stress");
		model_ingest(m, &o);
	}
	struct ig_event c =
	    ev_call(10, 11, IG_OP_CUDA_STREAM_SYNC, t, (uint64_t)(2 * k + 2) * MS, "trainer");
	c.preempt_ns = (uint64_t)k * MS;
	c.switches = (uint32_t)k;
	model_ingest(m, &c);
	struct ig_offcpu_rec r[IG_TL_MAX];
	int cut = 0;
	int n = model_call_offcpu(m, 11, t, r, IG_TL_MAX, &cut);
	CHECKF(n == IG_CALLEV_TL && cut, "%d %d", n, cut);
	CHECK(n > 0 && r[n - 1].ts_ns == t + (uint64_t)(k - 1) * 2 * MS + MS);
	model_free(m);
}

/* Under load most calls leave the CPU and enter some second's slowest list,
 * so more calls are kept than the store holds within one window: the
 * window's slowest call, not among the slowest since the start (ten slower
 * calls came before the window), keeps its intervals all the same. */
static void test_window_kept(void)
{
	struct ig_model *m = model_new(NULL);
	for (int i = 0; i < IG_SLOW_MAX; i++) { /* the slowest since the start */
		struct ig_event c = ev_call(10, 11, IG_OP_CUDA_STREAM_SYNC,
					    T0 + (uint64_t)i * 200 * MS, 100 * MS, "trainer");
		model_ingest(m, &c);
	}
	uint64_t slow = T0 + 20 * SEC;
	feed_slow_call(m, slow); /* 40 ms: the window's slowest */
	/* then 3 000 calls over 5 s, each preempted once inside and longer than
	 * the last (each the slowest of its second so far: each is kept) */
	uint64_t t = slow + 100 * MS;
	int n = 3000;
	for (int i = 0; i < n; i++, t += 5 * SEC / (uint64_t)n) {
		uint64_t d = 100 * US + (uint64_t)i * 1000;
		struct ig_event o = ev_off(10, 11, t + 10 * US, 20 * US, IG_OFF_PREEMPTED,
					   IG_F_IN_CALL, 900, "stress");
		struct ig_event c = ev_call(10, 11, IG_OP_CUDA_STREAM_SYNC, t, d, "trainer");
		c.preempt_ns = 20 * US;
		c.switches = 1;
		model_ingest(m, &o);
		model_ingest(m, &c);
	}
	CHECK(n > 2048); /* IG_CALLEV_MAX, model_int.h */
	model_advance(m, t + SEC);
	struct ig_call_rec c[IG_SLOW_MAX];
	CHECK(model_slow_calls(m, IG_OP_CUDA_STREAM_SYNC, 0, c, IG_SLOW_MAX) > 0 &&
	      c[0].ts_ns == slow);
	struct ig_offcpu_rec r[IG_TL_MAX];
	int cut = -1;
	int k = model_call_offcpu(m, 11, slow, r, IG_TL_MAX, &cut);
	CHECKF(k == 2 && !cut, "%d kept, cut %d", k, cut);
	model_free(m);
}

int main(void)
{
	test_kept();
	test_cut();
	test_window_kept();
	return check_done("test_callev");
}
