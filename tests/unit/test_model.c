/* The model: window expiry and rates on event time, lifetime vs window,
 * off-CPU accounting (preempted/blocked, inside/between calls, late in-call
 * reclassification, nested calls counted once), culprits and their shares,
 * slowest calls, eviction of capped tables, reset, late and malformed events,
 * host snapshots, page and block I/O sums; and where the time goes: the
 * parts of every thread's and process's wall time add up to it exactly in
 * every window of every synthetic scenario and match the scenario's recipe,
 * nested calls count once, blocked intervals by their flags and waker, late
 * reclassification, lifetime parts, the wall time of an exited process. */
#include "check.h"
#include "evmake.h"
#include "model/model.h"
#include "model/window.h"
#include "core/ops.h"
#include "synth.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


static struct ig_event call(uint32_t pid, uint32_t tid, int op, uint64_t ts, uint64_t dur)
{
	return ev_call(pid, tid, op, ts, dur, "python3");
}

static struct ig_event off(uint32_t pid, uint32_t tid, uint64_t ts, uint64_t dur, int state,
			   uint32_t flags, uint32_t other, const char *other_comm)
{
	return ev_off(pid, tid, ts, dur, state, flags, other, other_comm);
}

static int near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b) + 1e-9;
}

static void test_window_expiry(void)
{
	struct ig_model *m = model_new(NULL);
	/* one call per second for 15 s, duration (k+1) ms */
	for (int k = 0; k < 15; k++) {
		struct ig_event e = call(100, 100, IG_OP_CUDA_LAUNCH_KERNEL,
					 T0 + k * SEC + 100 * MS, (uint64_t)(k + 1) * MS);
		model_ingest(m, &e);
	}
	struct ig_series_stats s;
	CHECK(model_op_stats(m, IG_OP_CUDA_LAUNCH_KERNEL, &s) == 0);
	CHECK(s.calls_life == 15);
	/* window = seconds 5..14 of the stream: calls k = 5..14 */
	CHECKF(s.calls_win == 10, "%lu", (unsigned long)s.calls_win);
	CHECK(s.win.min == 6 * MS);
	CHECK(s.win.max == 15 * MS);
	CHECK(s.life.max == 15 * MS);
	CHECK(near((double)s.life.p50, 8 * MS, 0.01));
	CHECK(near((double)s.win.p50, 10 * MS, 0.01));
	CHECK(s.spark_n == 10);
	CHECK(near((double)s.spark_p99[9], 15 * MS, 0.01));
	/* the histogram accessor the record/replay tests use */
	const struct hist *h = model_op_hist(m, IG_OP_CUDA_LAUNCH_KERNEL, 0, 1);
	CHECK(h && h->n == 15);
	CHECK(near((double)hist_percentile(h, 0.99), 15 * MS, 0.01));
	CHECK(model_op_hist(m, IG_OP_CUDA_LAUNCH_KERNEL, 100, 0)->n == 10);
	CHECK(model_op_hist(m, IG_OP_CUDA_MALLOC, 0, 0) == NULL);
	CHECK(model_op_hist(m, IG_OP_CUDA_LAUNCH_KERNEL, 999, 0) == NULL);

	/* idle time moves the window: after 20 more seconds nothing is left */
	model_advance(m, T0 + 35 * SEC);
	CHECK(model_op_stats(m, IG_OP_CUDA_LAUNCH_KERNEL, &s) == 0);
	CHECK(s.calls_win == 0 && s.calls_life == 15 && s.win.p99 == 0);
	CHECK(model_op_hist(m, IG_OP_CUDA_LAUNCH_KERNEL, 0, 0)->n == 0);
	/* advancing backwards is ignored */
	model_advance(m, T0);
	CHECK(model_now(m) == T0 + 35 * SEC);
	/* a call older than the window counts in lifetime only */
	struct ig_event late = call(100, 100, IG_OP_CUDA_LAUNCH_KERNEL, T0 + 1 * SEC, MS);
	model_ingest(m, &late);
	struct ig_model_totals t;
	model_totals(m, &t);
	CHECK(t.late == 1);
	model_op_stats(m, IG_OP_CUDA_LAUNCH_KERNEL, &s);
	CHECK(s.calls_life == 16 && s.calls_win == 0);
	model_free(m);
}

static void test_rates_and_window_len(void)
{
	struct ig_model_cfg cfg;
	model_cfg_default(&cfg);
	cfg.window_s = 5;
	struct ig_model *m = model_new(&cfg);
	CHECK(model_cfg(m)->window_s == 5);
	/* 200 calls/s for 12 s on one thread, each 1 ms: 20 % of wall time */
	for (int i = 0; i < 2400; i++) {
		struct ig_event e =
		    call(7, 7, IG_OP_CUDA_STREAM_SYNC, T0 + (uint64_t)i * 5 * MS, MS);
		model_ingest(m, &e);
	}
	struct ig_series_stats s;
	model_op_stats(m, IG_OP_CUDA_STREAM_SYNC, &s);
	CHECKF(near(s.calls_per_s, 200, 0.03), "%f", s.calls_per_s);
	CHECKF(near(s.wall_share, 0.2, 0.03), "%f", s.wall_share);
	CHECK(s.spark_n == 5);
	struct ig_model_totals t;
	model_totals(m, &t);
	CHECK(t.win_span_ns > 4 * SEC && t.win_span_ns <= 5 * SEC);
	struct ig_thread_stats th[2];
	CHECK(model_threads(m, 7, th, 2) == 1);
	CHECKF(near(th[0].cuda_pct, 20, 0.03), "%f", th[0].cuda_pct);
	CHECK(th[0].main_op == IG_OP_CUDA_STREAM_SYNC);
	CHECK(th[0].sync_calls_win == s.calls_win);
	model_free(m);

	/* out-of-range config is clamped */
	cfg.window_s = 1000;
	m = model_new(&cfg);
	CHECK(model_cfg(m)->window_s == IG_WIN_MAX);
	model_free(m);
	model_free(NULL);
}

/* One denominator (issue 28): every rate is over the span the window
 * covers, an op that began late in it included, so rate x span = calls and
 * a process's rate is the sum of its ops'; a wait longer than the window
 * counts only its part in the window for who ended it. */
static void test_one_denominator(void)
{
	struct ig_model *m = model_new(NULL);
	/* pid 60: 100 launches/s for 8 s, then 20 syncs in its last 0.5 s */
	for (int i = 0; i < 800; i++) {
		struct ig_event e =
		    call(60, 60, IG_OP_CUDA_LAUNCH_KERNEL, T0 + (uint64_t)i * 10 * MS, MS);
		model_ingest(m, &e);
	}
	for (int i = 0; i < 20; i++) {
		struct ig_event e = call(60, 60, IG_OP_CUDA_STREAM_SYNC,
					 T0 + 7500 * MS + (uint64_t)i * 25 * MS, MS);
		model_ingest(m, &e);
	}
	model_advance(m, T0 + 8 * SEC);
	struct ig_model_totals t;
	model_totals(m, &t);
	CHECKF(t.win_span_ns == 8 * SEC, "%lu", (unsigned long)t.win_span_ns);
	struct ig_series_stats l, y;
	CHECK(model_op_stats(m, IG_OP_CUDA_LAUNCH_KERNEL, &l) == 0);
	CHECK(model_op_stats(m, IG_OP_CUDA_STREAM_SYNC, &y) == 0);
	CHECKF(near(y.calls_per_s, 20 / 8.0, 1e-9), "syncs %f/s, not over their own 0.5 s",
	       y.calls_per_s);
	CHECKF(near(l.calls_per_s, 100, 1e-9), "%f", l.calls_per_s);
	struct ig_proc_stats p;
	CHECK(model_proc(m, 60, &p) == 0);
	CHECKF(near(p.calls_per_s, l.calls_per_s + y.calls_per_s, 1e-9), "%f != %f + %f",
	       p.calls_per_s, l.calls_per_s, y.calls_per_s);
	struct ig_series_stats po[4];
	int n = model_proc_ops(m, 60, po, 4);
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += po[i].calls_per_s;
	CHECK(n == 2 && near(sum, p.calls_per_s, 1e-9));
	model_free(m);

	/* tid 70 waits 22 s between calls, woken by 901; the window is 10 s */
	m = model_new(NULL);
	for (int i = 0; i < 10; i++) {
		struct ig_event e =
		    call(70, 70, IG_OP_CUDA_STREAM_SYNC, T0 + (uint64_t)i * 100 * MS, MS);
		model_ingest(m, &e);
	}
	struct ig_event w = off(70, 70, T0 + SEC, 22 * SEC, IG_OFF_BLOCKED, 0, 901, "feeder");
	model_ingest(m, &w);
	for (int i = 0; i < 50; i++) {
		struct ig_event e = call(70, 70, IG_OP_CUDA_STREAM_SYNC,
					 T0 + 23 * SEC + 10 * MS + (uint64_t)i * 100 * MS, MS);
		model_ingest(m, &e);
	}
	model_advance(m, T0 + 28 * SEC);
	model_totals(m, &t);
	CHECK(model_proc(m, 70, &p) == 0);
	/* the window holds seconds 19..28: 4 s of the wait */
	CHECKF(p.nwakers == 1 && p.wakers[0].pid == 901 && p.wakers[0].ns <= t.win_span_ns &&
		   near((double)p.wakers[0].ns, 4 * SEC, 1e-6),
	       "woken by 901 for %lu ns in a window of %lu ns", (unsigned long)p.wakers[0].ns,
	       (unsigned long)t.win_span_ns);
	model_advance(m, T0 + 31 * SEC); /* a second at a time, it leaves */
	CHECK(model_proc(m, 70, &p) == 0);
	CHECKF(p.nwakers == 1 && near((double)p.wakers[0].ns, 1 * SEC, 1e-6), "%lu",
	       (unsigned long)p.wakers[0].ns);
	model_free(m);
}

static void test_offcpu(void)
{
	struct ig_model *m = model_new(NULL);
	/* 10 s of steps of 100 ms on tid 11 of pid 10:
	 *   20 ms call with 5 ms preempted (by 900 "stress") + 10 ms blocked inside,
	 *   then 50 ms blocked between calls (woken by worker 901),
	 *   then 30 ms on CPU. */
	for (int i = 0; i < 100; i++) {
		uint64_t t = T0 + (uint64_t)i * 100 * MS;
		struct ig_event o1 =
		    off(10, 11, t + 1 * MS, 5 * MS, IG_OFF_PREEMPTED, IG_F_IN_CALL, 900, "stress");
		struct ig_event o2 =
		    off(10, 11, t + 8 * MS, 10 * MS, IG_OFF_BLOCKED, IG_F_IN_CALL, 0, NULL);
		struct ig_event c = call(10, 11, IG_OP_CUDA_STREAM_SYNC, t, 20 * MS);
		c.preempt_ns = 5 * MS;
		c.blocked_ns = 10 * MS;
		c.switches = 2;
		c.other_pid = (i % 4 == 0) ? 902 : 900; /* 900 3/4 of the preempted time */
		strcpy(c.other_comm, c.other_pid == 900 ? "stress" : "other");
		struct ig_event o3 =
		    off(10, 11, t + 20 * MS, 50 * MS, IG_OFF_BLOCKED, 0, 901, "worker");
		model_ingest(m, &o1);
		model_ingest(m, &o2);
		model_ingest(m, &c);
		model_ingest(m, &o3);
	}
	model_advance(m, T0 + 10 * SEC - 1); /* the window is exactly the 10 s */
	struct ig_proc_stats p;
	CHECK(model_proc(m, 10, &p) == 0);
	CHECK(p.cuda && p.threads == 1);
	CHECKF(near((double)p.wall_ns, 10 * SEC, 0.01), "%lu", (unsigned long)p.wall_ns);
	CHECKF(near((double)p.cuda_ns, 2 * SEC, 0.01), "%lu", (unsigned long)p.cuda_ns);
	CHECKF(near((double)p.off_preempt_ns, 0.5 * SEC, 0.01), "%lu",
	       (unsigned long)p.off_preempt_ns);
	CHECKF(near((double)p.off_blocked_ns, 6 * SEC, 0.01), "%lu",
	       (unsigned long)p.off_blocked_ns);
	CHECK(p.off_unknown_ns == 0);
	CHECKF(near((double)p.off_in_call_ns, 1.5 * SEC, 0.01), "%lu",
	       (unsigned long)p.off_in_call_ns);
	CHECKF(near((double)p.off_between_ns, 5 * SEC, 0.01), "%lu",
	       (unsigned long)p.off_between_ns);
	CHECKF(near((double)p.between_on_cpu_ns, 3 * SEC, 0.02), "%lu",
	       (unsigned long)p.between_on_cpu_ns);
	CHECK(near(p.off_pct, 65, 0.01) && near(p.between_pct, 50, 0.01));
	CHECK(p.switches == 300);
	CHECK(p.npreemptors == 1 && p.preemptors[0].pid == 900 &&
	      near(p.preemptors[0].share, 1, 0.01));
	CHECK(!strcmp(p.preemptors[0].comm, "stress"));
	CHECK(p.nwakers == 1 && p.wakers[0].pid == 901 && !strcmp(p.wakers[0].comm, "worker"));
	CHECK(near((double)p.wakers[0].ns, 5 * SEC, 0.01));
	/* lifetime numbers for --summary */
	CHECK(near((double)p.life_off_between_ns, 5 * SEC, 0.01));
	CHECK(near((double)p.life_cuda_ns, 2 * SEC, 0.01));

	struct ig_series_stats s;
	CHECK(model_op_proc_stats(m, IG_OP_CUDA_STREAM_SYNC, 10, &s) == 0);
	CHECK(s.top_preemptor_pid == 900 && near(s.top_preemptor_share, 0.75, 0.02));
	CHECK(near(s.tail_preempt_share, 0.25, 0.01) && near(s.tail_blocked_share, 0.5, 0.01));
	CHECK(s.switches_win == 200);

	struct ig_thread_stats th;
	CHECK(model_threads(m, 10, &th, 1) == 1 && th.tid == 11);
	CHECK(near((double)th.between_blocked_ns, 5 * SEC, 0.01) && th.between_preempt_ns == 0);
	CHECK(th.last_preemptor_pid == 900);

	struct ig_offcpu_rec r[IG_TL_MAX + 4];
	int n = model_thread_offcpu(m, 11, r, IG_TL_MAX + 4);
	CHECK(n == IG_TL_MAX);
	CHECK(r[n - 1].dur_ns == 50 * MS && !r[n - 1].in_call && r[n - 1].other_pid == 901);
	CHECK(r[n - 2].in_call && r[n - 2].state == IG_OFF_BLOCKED);
	CHECK(r[0].ts_ns < r[n - 1].ts_ns);
	CHECK(model_thread_offcpu(m, 12345, r, 4) == 0);
	model_free(m);
}

static void test_reclassify_and_nesting(void)
{
	struct ig_model *m = model_new(NULL);
	/* an Ingero-like order: the call first, the off-CPU inside it after,
	 * with no IN_CALL flag and no state */
	struct ig_event c = call(20, 20, IG_OP_CUDA_LAUNCH_KERNEL, T0 + SEC, 10 * MS);
	c.flags = IG_F_NO_SPLIT;
	struct ig_event o = off(20, 20, T0 + SEC + 2 * MS, 6 * MS, IG_OFF_UNKNOWN, 0, 0, NULL);
	model_ingest(m, &c);
	model_ingest(m, &o);
	/* a live-like order where the off-CPU came before a call containing it */
	struct ig_event o2 = off(20, 20, T0 + 2 * SEC + 1 * MS, 3 * MS, IG_OFF_BLOCKED, 0, 0, NULL);
	struct ig_event c2 = call(20, 20, IG_OP_CUDA_STREAM_SYNC, T0 + 2 * SEC, 5 * MS);
	model_ingest(m, &o2);
	model_ingest(m, &c2);
	/* nested: a driver call inside a runtime call, reported first */
	struct ig_event inner = call(20, 20, IG_OP_CU_MEMCPY_DTOH, T0 + 3 * SEC + 10 * US, 80 * US);
	struct ig_event outer = call(20, 20, IG_OP_CUDA_MEMCPY, T0 + 3 * SEC, 100 * US);
	outer.arg1 = IG_DIR_D2H;
	model_ingest(m, &inner);
	model_ingest(m, &outer);
	struct ig_proc_stats p;
	model_proc(m, 20, &p);
	CHECKF(p.off_in_call_ns == 9 * MS, "%lu", (unsigned long)p.off_in_call_ns);
	CHECK(p.off_between_ns == 0);
	CHECK(p.off_unknown_ns == 6 * MS && p.off_blocked_ns == 3 * MS);
	CHECKF(p.cuda_ns == 15 * MS + 100 * US, "%lu", (unsigned long)p.cuda_ns);
	struct ig_thread_stats th;
	model_threads(m, 20, &th, 1);
	CHECK(th.sync_calls_win == 3); /* the sync, the D2H runtime copy, the D2H driver copy */
	struct ig_series_stats s;
	model_op_proc_stats(m, IG_OP_CUDA_LAUNCH_KERNEL, 20, &s);
	CHECK(s.tail_preempt_share < 0 && s.no_split_calls_win == 1); /* no split: unknown */
	struct ig_model_totals t;
	model_totals(m, &t);
	CHECK(t.no_split_seen);
	model_free(m);
}

static void test_slow_calls(void)
{
	struct ig_model *m = model_new(NULL);
	for (int i = 0; i < 500; i++) {
		uint32_t pid = i % 2 ? 31 : 30;
		struct ig_event e = call(pid, pid, IG_OP_CUDA_MALLOC, T0 + (uint64_t)i * 20 * MS,
					 (uint64_t)((i * 7919) % 1000 + 1) * US);
		e.arg0 = 4096;
		e.stack_id = (uint64_t)i;
		model_ingest(m, &e);
	}
	struct ig_call_rec r[IG_SLOW_MAX];
	int n = model_slow_calls(m, IG_OP_CUDA_MALLOC, 0, r, IG_SLOW_MAX);
	CHECK(n == IG_SLOW_MAX);
	for (int i = 1; i < n; i++)
		CHECK(r[i - 1].dur_ns >= r[i].dur_ns);
	/* exact: the slowest calls of the window (calls 0..499 complete in 10 s;
	 * the window holds the last 10 seconds) */
	uint64_t best = 0;
	struct ig_model_totals t;
	model_totals(m, &t);
	for (int i = 0; i < 500; i++) {
		uint64_t ts = T0 + (uint64_t)i * 20 * MS,
			 d = (uint64_t)((i * 7919) % 1000 + 1) * US;
		if (ts + d >= t.win_start_ns && d > best)
			best = d;
	}
	CHECK(r[0].dur_ns == best);
	CHECK(r[0].arg0 == 4096 && r[0].op == IG_OP_CUDA_MALLOC);
	n = model_slow_calls(m, IG_OP_CUDA_MALLOC, 31, r, 3);
	CHECK(n == 3);
	for (int i = 0; i < n; i++)
		CHECK(r[i].pid == 31);
	CHECK(model_slow_calls(m, IG_OP_CUDA_FREE, 0, r, 3) == 0);
	struct ig_series_stats s;
	model_op_stats(m, IG_OP_CUDA_MALLOC, &s);
	CHECK(s.bytes_win == 4096 * s.calls_win);
	struct ig_series_stats rows[4];
	CHECK(model_op_procs(m, IG_OP_CUDA_MALLOC, rows, 4) == 2);
	CHECK(rows[0].pid == 30 && rows[1].pid == 31 && !strcmp(rows[0].comm, "python3"));
	CHECK(rows[0].calls_life + rows[1].calls_life == 500);
	CHECK(model_op_threads(m, IG_OP_CUDA_MALLOC, 31, rows, 4) == 1 && rows[0].tid == 31);
	CHECK(model_proc_ops(m, 30, rows, 4) == 1 && rows[0].op == IG_OP_CUDA_MALLOC);
	model_free(m);
}

static void test_eviction(void)
{
	struct ig_model_cfg cfg;
	model_cfg_default(&cfg);
	cfg.max_procs = 4;
	cfg.max_threads = 8;
	cfg.max_op_procs = 4;
	cfg.max_op_threads = 4;
	struct ig_model *m = model_new(&cfg);
	/* 10 processes, 2 threads each, one after the other */
	for (uint32_t p = 1; p <= 10; p++)
		for (int i = 0; i < 20; i++) {
			struct ig_event e = call(1000 + p, 1000 + p * 10 + (uint32_t)(i & 1),
						 IG_OP_CUDA_LAUNCH_KERNEL,
						 T0 + (p * 20 + (uint64_t)i) * 10 * MS, 10 * US);
			model_ingest(m, &e);
		}
	struct ig_model_totals t;
	model_totals(m, &t);
	CHECK(t.procs == 4 && t.threads == 8 && t.op_procs == 4 && t.op_threads == 4);
	CHECK(t.evicted_procs == 6);
	CHECK(t.evicted_threads == 12);
	CHECK(t.evicted_series == 6 + 16);
	struct ig_proc_stats ps[16];
	int n = model_procs(m, ps, 16);
	CHECK(n == 4);
	for (int i = 0; i < n; i++) /* the least recently active went first */
		CHECKF(ps[i].pid >= 1007, "%u", ps[i].pid);
	CHECK(model_proc(m, 1001, ps) == -ENOENT);
	struct ig_series_stats s;
	model_op_stats(m, IG_OP_CUDA_LAUNCH_KERNEL, &s);
	CHECK(s.calls_life == 200); /* the op total is never evicted */
	/* an evicted process comes back fresh */
	struct ig_event e = call(1001, 1010, IG_OP_CUDA_LAUNCH_KERNEL, T0 + 3 * SEC, 10 * US);
	model_ingest(m, &e);
	CHECK(model_proc(m, 1001, ps) == 0 && ps[0].calls_life == 1);
	model_free(m);
}

static void test_other_kinds(void)
{
	struct ig_model *m = model_new(NULL);
	struct ig_event e = {0};
	e.kind = IG_EV_COMM;
	e.pid = 50;
	e.ts_ns = T0;
	strcpy(e.comm, "trainer");
	char cont[IG_CONTAINER_LEN] = "docker:4f1e2d3c4b5a";
	e.container = cont;
	model_ingest(m, &e);
	cont[0] = 0;	    /* the model kept a copy */
	e.container = NULL; /* a name event without a container keeps it */
	model_ingest(m, &e);
	e = (struct ig_event){0};
	e.kind = IG_EV_FORK;
	e.pid = 50;
	e.arg0 = 51;
	e.ts_ns = T0 + 1;
	model_ingest(m, &e);
	e.kind = IG_EV_EXEC;
	e.pid = 51;
	strcpy(e.comm, "worker");
	model_ingest(m, &e);
	for (int i = 0; i < 10; i++) {
		e = (struct ig_event){0};
		e.kind = IG_EV_PAGE_ALLOC;
		e.pid = 50;
		e.ts_ns = T0 + (uint64_t)i * 100 * MS;
		e.arg0 = 1 << 20;
		model_ingest(m, &e);
		e.kind = IG_EV_BLOCK_IO;
		e.dur_ns = (uint64_t)(i + 1) * MS;
		e.arg0 = 4096;
		e.op = IG_IO_WRITE;
		model_ingest(m, &e);
	}
	ig_snapshot_fill(&e, T0 + SEC, 91.5, 96.2, 1200, 300, 3.25);
	model_ingest(m, &e);
	ig_snapshot_fill(&e, T0 + 2 * SEC, 50.0, 60.0, 8000, 0, 1.0);
	model_ingest(m, &e);
	e = (struct ig_event){0};
	e.kind = IG_EV_EXIT;
	e.pid = 51;
	e.ts_ns = T0 + 2 * SEC;
	model_ingest(m, &e);

	struct ig_proc_stats p;
	CHECK(model_proc(m, 50, &p) == 0 && !strcmp(p.comm, "trainer") && !p.cuda);
	CHECK(!strcmp(p.container, "docker:4f1e2d3c4b5a"));
	CHECK(p.page_bytes_win == 10 << 20 && p.page_bytes_life == 10 << 20);
	CHECK(p.io_ops_win == 10 && p.io_bytes_win == 40960 && p.io_max_ns_win == 10 * MS);
	CHECK(p.io_lat_ns_win == 55 * MS);
	CHECK(model_proc(m, 51, &p) == 0 && p.ppid == 50 && !strcmp(p.comm, "worker") && p.exited);
	CHECK(!strcmp(p.container, "docker:4f1e2d3c4b5a")); /* forked in its parent's */
	e = (struct ig_event){.kind = IG_EV_COMM, .pid = 52, .tid = 53, .ts_ns = T0 + 2 * SEC};
	e.container = "k8s:0123456789abcdef0123456789abcdef";
	model_ingest(m, &e); /* a thread's name event names its process's container */
	CHECK(model_proc(m, 52, &p) == 0 && !strcmp(p.container, e.container));
	CHECK(model_proc(m, 77, &p) != 0 || !p.container[0]);
	CHECK(!strcmp(model_comm(m, 51), "worker") && !strcmp(model_comm(m, 77), ""));
	struct ig_host h;
	model_host(m, &h);
	CHECK(h.valid && h.cpu_pct == 50.0 && h.mem_pct == 60.0 && h.swap_mb == 0);
	CHECK(h.cpu_max_win == 91.5 && near(h.mem_max_win, 96.2, 0.001) && h.swap_max_win == 300);
	CHECK(near(h.load1, 1.0, 0.001) && h.mem_avail_mb == 8000);
	CHECK(h.page_bytes_win == 10 << 20 && h.io_ops_win == 10);

	/* malformed events are counted and ignored */
	e = (struct ig_event){0};
	model_ingest(m, &e); /* kind 0 */
	e.kind = IG_EV_CALL;
	model_ingest(m, &e); /* ts 0 */
	e.ts_ns = T0 + 2 * SEC;
	e.op = 999;
	model_ingest(m, &e); /* unknown op */
	e.kind = 200;
	model_ingest(m, &e);
	struct ig_model_totals t;
	model_totals(m, &t);
	CHECK(t.ignored == 4);
	CHECK(t.by_kind[IG_EV_PAGE_ALLOC] == 10 && t.by_kind[IG_EV_SNAPSHOT] == 2);
	int ops[IG_OP_MAX];
	CHECK(model_ops(m, ops, IG_OP_MAX) == 0);
	model_free(m);
}

static void test_reset(void)
{
	struct ig_model *m = model_new(NULL);
	for (int i = 0; i < 100; i++) {
		struct ig_event e = call(60, 61, IG_OP_CUDA_MEMCPY, T0 + (uint64_t)i * 10 * MS, MS);
		model_ingest(m, &e);
	}
	uint64_t now = model_now(m);
	model_reset(m);
	CHECK(model_now(m) == now);
	struct ig_series_stats s;
	CHECK(model_op_stats(m, IG_OP_CUDA_MEMCPY, &s) == -ENOENT);
	struct ig_proc_stats p;
	CHECK(model_proc(m, 60, &p) == 0 && !strcmp(p.comm, "python3") && p.calls_life == 0);
	struct ig_model_totals t;
	model_totals(m, &t);
	CHECK(t.events == 0 && t.threads == 0 && t.op_procs == 0);
	struct ig_event e = call(60, 61, IG_OP_CUDA_MEMCPY, now + 10 * MS, 2 * MS);
	model_ingest(m, &e);
	CHECK(model_op_stats(m, IG_OP_CUDA_MEMCPY, &s) == 0 && s.calls_life == 1 &&
	      s.calls_win == 1);
	CHECK(s.win.p50 == 2 * MS);
	model_free(m);
}

/* --- where the time goes ----------------------------------------------------- */

static uint64_t parts_sum(const struct ig_time_parts *t)
{
	uint64_t s = 0;
	for (int k = 0; k < IG_PART_MAX; k++)
		s += t->ns[k];
	return s;
}

/* What the window hook saw of one synthetic stream. */
struct parts_run {
	struct synth_truth truth;
	uint64_t start_ns;
	uint32_t pid;
	int windows, judged, bad_sum, bad_share;
	double worst; /* largest distance of a part from the truth, in judged windows */
	int worst_part;
	uint64_t worst_at;
};

static void parts_sums_ok(struct parts_run *r, const struct ig_time_parts *t, uint64_t wall)
{
	if (parts_sum(t) != t->wall_ns || t->wall_ns != wall)
		r->bad_sum++;
}

static void parts_hook(void *ctx, const struct ig_window *w)
{
	struct parts_run *r = ctx;
	r->windows++;
	for (int i = 0; i < w->nall; i++) {
		const struct ig_proc_stats *p = &w->all[i];
		parts_sums_ok(r, &p->parts, p->parts.wall_ns);
		if (p->parts.wall_ns > p->wall_ns)
			r->bad_sum++; /* the judged wall is part of the wall */
		parts_sums_ok(r, &p->life_parts, p->life_wall_ns);
	}
	for (int i = 0; i < w->nprocs; i++)
		for (int j = 0; j < w->procs[i].nthr; j++) {
			const struct ig_thread_stats *t = &w->procs[i].thr[j].t;
			parts_sums_ok(r, &t->parts, t->parts.wall_ns);
			if (t->parts.wall_ns > t->wall_ns)
				r->bad_sum++;
			parts_sums_ok(r, &t->life_parts, t->life_parts.wall_ns);
		}
	/* the main process against its recipe: windows of at least 5 s (a call
	 * still in progress at the window's end is counted in the next one: in
	 * a 1 s window a 30 ms sync is 3 points) once any start-up has passed */
	for (int i = 0; i < w->nall && r->truth.cause; i++) {
		const struct ig_proc_stats *p = &w->all[i];
		if (p->pid != r->pid || p->parts.wall_ns < 5 * SEC ||
		    w->tot.win_start_ns < r->start_ns + (uint64_t)(r->truth.settle_s * 1e9))
			continue;
		r->judged++;
		int bad = 0;
		for (int k = 0; k < IG_PART_MAX; k++) {
			double d = fabs(ig_part_share(&p->parts, k) - r->truth.part[k]);
			if (d > r->worst) {
				r->worst = d;
				r->worst_part = k;
				r->worst_at = w->now_ns;
			}
			bad |= d > 0.01;
		}
		r->bad_share += bad;
	}
}

/* Every scenario for 20 s: the parts add up to the wall time exactly, for
 * every process and thread (window and lifetime) in every window; the main
 * process's parts are within 1 point of its recipe in every window and over
 * its lifetime. */
static void test_parts_synth(void)
{
	for (int sc = 0; sc < SYNTH_MAX; sc++) {
		struct synth_cfg cfg = {.scenario = sc, .seconds = 20, .seed = 7};
		struct parts_run r = {.start_ns = T0, .pid = SYNTH_PID};
		int has_truth = synth_truth(&cfg, &r.truth) == 0;
		if (!has_truth)
			r.truth.cause = NULL;
		CHECKF(has_truth == (sc != SYNTH_BENCH), "%s: truth", synth_name(sc));
		double sum = 0;
		for (int k = 0; k < IG_PART_MAX && has_truth; k++)
			sum += r.truth.part[k];
		CHECKF(!has_truth || fabs(sum - 1) < 1e-9, "%s: truth sums to %.12f",
		       synth_name(sc), sum);
		struct ig_model *m = model_new(NULL);
		model_set_window_hook(m, parts_hook, &r);
		struct synth *s = synth_new(&cfg);
		struct ig_event e;
		while (synth_next(s, &e))
			model_ingest(m, &e);
		synth_free(s);
		CHECKF(r.windows >= 19, "%s: %d windows", synth_name(sc), r.windows);
		CHECKF(r.bad_sum == 0, "%s: %d part sums differ from their wall time",
		       synth_name(sc), r.bad_sum);
		if (has_truth) {
			CHECKF(r.judged >= 9, "%s: %d windows judged", synth_name(sc), r.judged);
			CHECKF(
			    r.bad_share == 0,
			    "%s: %d windows off the recipe by > 1 point (worst %s %.2f points at "
			    "+%.0f s)",
			    synth_name(sc), r.bad_share, ig_part_name(r.worst_part), r.worst * 100,
			    (double)(r.worst_at - T0) / 1e9);
			struct ig_proc_stats p;
			CHECK(model_proc(m, SYNTH_PID, &p) == 0);
			CHECK(parts_sum(&p.life_parts) == p.life_parts.wall_ns);
			for (int k = 0; k < IG_PART_MAX && !r.truth.settle_s; k++)
				CHECKF(fabs(ig_part_share(&p.life_parts, k) - r.truth.part[k]) <=
					   0.01,
				       "%s: lifetime %s %.2f %%, recipe %.2f %%", synth_name(sc),
				       ig_part_name(k), ig_part_share(&p.life_parts, k) * 100,
				       r.truth.part[k] * 100);
			/* the one feeding thread carries the process's parts */
			struct ig_thread_stats t;
			CHECK(model_threads(m, SYNTH_PID, &t, 1) == 1 && t.tid == SYNTH_PID);
			CHECK(!memcmp(&t.parts, &p.parts, sizeof(t.parts)));
			CHECK(t.parts.split_unknown == r.truth.unconfirmed);
		}
		model_free(m);
	}
	struct synth_cfg bad = {.scenario = SYNTH_MAX};
	struct synth_truth t;
	CHECK(synth_truth(&bad, &t) == -EINVAL && synth_truth(NULL, &t) == -EINVAL);
}

/* Parts of one thread in the window, read at the clock. */
static void thread_parts(struct ig_model *m, uint32_t pid, struct ig_time_parts *out)
{
	struct ig_thread_stats t;
	memset(out, 0, sizeof(*out));
	if (model_threads(m, pid, &t, 1) == 1)
		*out = t.parts;
}

/* A runtime call and the driver call it makes count once, whichever arrives
 * first, and so does the off-CPU time the kernel charged to both. */
static void test_parts_nested(void)
{
	for (int order = 0; order < 2; order++) {
		struct ig_model *m = model_new(NULL);
		uint64_t t = T0 + SEC;
		/* cudaMemcpy D2H of 1 ms, 200 us preempted by 900, 700 us asleep */
		struct ig_event outer = call(40, 40, IG_OP_CUDA_MEMCPY, t, MS);
		outer.arg0 = 4;
		outer.arg1 = IG_DIR_D2H;
		outer.preempt_ns = 200 * US;
		outer.blocked_ns = 700 * US;
		outer.other_pid = 900;
		struct ig_event inner = outer;
		inner.op = IG_OP_CU_MEMCPY_DTOH;
		inner.arg1 = 0;
		inner.ts_ns = t + 10 * US;
		inner.dur_ns = 980 * US;
		/* cudaLaunchKernel of 100 us, 30 us preempted, its cuLaunchKernel */
		struct ig_event lo = call(40, 40, IG_OP_CUDA_LAUNCH_KERNEL, t + 2 * MS, 100 * US);
		lo.preempt_ns = 30 * US;
		lo.other_pid = 900;
		struct ig_event li = lo;
		li.op = IG_OP_CU_LAUNCH_KERNEL;
		li.ts_ns += 5 * US;
		li.dur_ns = 90 * US;
		const struct ig_event *seq[4] = {&inner, &outer, &li, &lo};
		if (order) {
			seq[0] = &outer;
			seq[1] = &inner;
			seq[2] = &lo;
			seq[3] = &li;
		}
		for (int i = 0; i < 4; i++)
			model_ingest(m, seq[i]);
		model_advance(m, T0 + 3 * SEC);
		struct ig_time_parts p;
		thread_parts(m, 40, &p);
		CHECKF(p.ns[IG_PART_GPU_WAIT] == 800 * US, "order %d: gpu wait %lu", order,
		       (unsigned long)p.ns[IG_PART_GPU_WAIT]);
		CHECKF(p.ns[IG_PART_CALL_PREEMPTED] == 230 * US, "order %d: preempted %lu", order,
		       (unsigned long)p.ns[IG_PART_CALL_PREEMPTED]);
		CHECKF(p.ns[IG_PART_API] == 70 * US, "order %d: api %lu", order,
		       (unsigned long)p.ns[IG_PART_API]);
		CHECK(p.ns[IG_PART_HOST_CPU] == p.wall_ns - 1100 * US);
		/* judged from its first call to its last event: the 2 s of silence after
		 * it are not judged yet */
		CHECKF(parts_sum(&p) == p.wall_ns && p.wall_ns == 2100 * US, "order %d: wall %lu", order,
		       (unsigned long)p.wall_ns);
		struct ig_proc_stats ps;
		CHECK(model_proc(m, 40, &ps) == 0 && ps.cuda_ns == 1100 * US);
		struct ig_thread_stats th;
		CHECK(model_threads(m, 40, &th, 1) == 1);
		CHECK(th.sync_calls_win == 2 && th.sync_nested_win == 1);
		model_free(m);
	}
}

/* Between calls, a blocked interval's reason: a page fault, then D state,
 * then a timer, then who woke it (a task), else unknown. Only task wakers
 * enter the process's waker table. */
static void test_parts_blocked_reasons(void)
{
	static const struct {
		int state;
		uint32_t flags, waker;
		int part;
	} iv[] = {
	    {IG_OFF_BLOCKED, IG_F_FAULT | IG_F_DSTATE, 0, IG_PART_FAULT},
	    {IG_OFF_BLOCKED, IG_F_DSTATE | IG_F_TIMER, 0, IG_PART_IO_WAIT},
	    {IG_OFF_BLOCKED, IG_F_TIMER, 77, IG_PART_SLEEP},
	    {IG_OFF_BLOCKED, 0, 78, IG_PART_TASK_WAIT},
	    {IG_OFF_BLOCKED, 0, 0, IG_PART_UNKNOWN},
	    {IG_OFF_PREEMPTED, 0, 79, IG_PART_PREEMPTED},
	    {IG_OFF_UNKNOWN, 0, 0, IG_PART_UNKNOWN},
	};
	struct ig_model *m = model_new(NULL);
	uint64_t t = T0 + SEC, want[IG_PART_MAX] = {0};
	struct ig_event c = call(50, 50, IG_OP_CUDA_STREAM_SYNC, t, MS);
	model_ingest(m, &c);
	t += MS;
	want[IG_PART_GPU_WAIT] = MS;
	for (size_t i = 0; i < sizeof(iv) / sizeof(iv[0]); i++) {
		uint64_t d = (uint64_t)(i + 1) * MS;
		struct ig_event o = off(50, 50, t, d, iv[i].state, iv[i].flags, iv[i].waker,
					iv[i].waker ? "other" : NULL);
		model_ingest(m, &o);
		want[iv[i].part] += d;
		t += d + MS; /* 1 ms of host work after each */
		want[IG_PART_HOST_CPU] += MS;
	}
	c = call(50, 50, IG_OP_CUDA_STREAM_SYNC, t, MS);
	model_ingest(m, &c);
	want[IG_PART_GPU_WAIT] += MS;
	struct ig_time_parts p;
	thread_parts(m, 50, &p);
	CHECK(p.wall_ns == t + MS - (T0 + SEC));
	for (int k = 0; k < IG_PART_MAX; k++)
		CHECKF(p.ns[k] == want[k], "%s: %lu, want %lu", ig_part_name(k),
		       (unsigned long)p.ns[k], (unsigned long)want[k]);
	struct ig_proc_stats ps;
	CHECK(model_proc(m, 50, &ps) == 0);
	CHECKF(ps.nwakers == 1 && ps.wakers[0].pid == 78 && ps.wakers[0].ns == 4 * MS,
	       "%d wakers, first %u", ps.nwakers, ps.wakers[0].pid);
	CHECK(ps.npreemptors == 1 && ps.preemptors[0].pid == 79);
	model_free(m);
}

/* The task that held the CPU a woken thread waited for comes by pid alone
 * (the record names the waker): it takes the name it was seen with as a
 * culprit elsewhere, before or after; one never seen by name stays
 * unnamed. (A kernel thread read "?[76]" beside "kdamond.0[76]".) */
static void test_holder_name(void)
{
	struct ig_model *m = model_new(NULL);
	uint64_t t = T0 + SEC;
	struct ig_event c = call(70, 70, IG_OP_CUDA_LAUNCH_KERNEL, t, 10 * US);
	model_ingest(m, &c);
	/* woken by 71, then 2 ms in the run queue behind 76, then 3 ms behind 99 */
	struct ig_event o = off(70, 70, t + MS, 5 * MS, IG_OFF_BLOCKED, 0, 71, "waker");
	o.preempt_ns = 2 * MS;
	o.arg0 = 76;
	model_ingest(m, &o);
	struct ig_event o2 = off(70, 70, t + 10 * MS, 5 * MS, IG_OFF_BLOCKED, 0, 71, "waker");
	o2.preempt_ns = 3 * MS;
	o2.arg0 = 99;
	model_ingest(m, &o2);
	/* another process's call preempted by 76, named */
	struct ig_event p = call(80, 80, IG_OP_CUDA_LAUNCH_KERNEL, t + 20 * MS, MS);
	p.preempt_ns = 500 * US;
	p.switches = 1;
	p.other_pid = 76;
	memcpy(p.other_comm, "kdamond.0", 10);
	model_ingest(m, &p);
	struct ig_event c2 = call(70, 70, IG_OP_CUDA_LAUNCH_KERNEL, t + 30 * MS, 10 * US);
	model_ingest(m, &c2);
	struct ig_proc_stats ps;
	CHECK(model_proc(m, 70, &ps) == 0);
	CHECKF(ps.npreemptors == 2, "%d preemptors", ps.npreemptors);
	int named = 0, unnamed = 0;
	for (int i = 0; i < ps.npreemptors; i++) {
		named += ps.preemptors[i].pid == 76 && !strcmp(ps.preemptors[i].comm, "kdamond.0");
		unnamed += ps.preemptors[i].pid == 99 && !ps.preemptors[i].comm[0];
	}
	CHECK(named == 1 && unnamed == 1);
	/* seen by name first: the holder's entry is named when it is made */
	struct ig_event o3 = off(70, 70, t + 40 * MS, 4 * MS, IG_OFF_BLOCKED, 0, 71, "waker");
	o3.preempt_ns = 4 * MS;
	o3.arg0 = 76;
	model_ingest(m, &o3);
	struct ig_model *cp = model_copy(NULL, m); /* a paused view reads the same */
	CHECK(cp && model_proc(cp, 70, &ps) == 0 && ps.preemptors[0].pid == 76 &&
	      !strcmp(ps.preemptors[0].comm, "kdamond.0"));
	model_free(cp);
	model_free(m);
}

/* An off-CPU interval that arrives before the call it lies in (no in-call
 * flag: a source that orders by time) is between calls until the call comes,
 * then inside it; its waker leaves the waker table. */
static void test_parts_reclassify(void)
{
	struct ig_model *m = model_new(NULL);
	uint64_t t = T0 + SEC;
	struct ig_event c0 = call(60, 60, IG_OP_CUDA_LAUNCH_KERNEL, t, 10 * US);
	struct ig_event o = off(60, 60, t + 2 * MS, 3 * MS, IG_OFF_BLOCKED, 0, 901, "worker");
	model_ingest(m, &c0);
	model_ingest(m, &o);
	struct ig_time_parts p;
	thread_parts(m, 60, &p);
	CHECK(p.ns[IG_PART_TASK_WAIT] == 3 * MS);
	struct ig_proc_stats ps;
	CHECK(model_proc(m, 60, &ps) == 0 && ps.nwakers == 1 && ps.wakers[0].pid == 901);
	CHECK(ps.life_parts.ns[IG_PART_TASK_WAIT] == 3 * MS);
	/* the sync that contained it: 1.5 ms .. 6 ms */
	struct ig_event c = call(60, 60, IG_OP_CUDA_STREAM_SYNC, t + 1500 * US, 4500 * US);
	model_ingest(m, &c);
	thread_parts(m, 60, &p);
	CHECK(p.ns[IG_PART_TASK_WAIT] == 0);
	CHECK(p.ns[IG_PART_GPU_WAIT] == 4500 * US && p.ns[IG_PART_API] == 10 * US);
	CHECK(parts_sum(&p) == p.wall_ns);
	CHECK(model_proc(m, 60, &ps) == 0 && ps.nwakers == 0);
	CHECK(ps.life_parts.ns[IG_PART_TASK_WAIT] == 0);
	CHECK(ps.life_parts.ns[IG_PART_GPU_WAIT] == 4500 * US);
	CHECK(ps.off_in_call_ns == 3 * MS && ps.off_between_ns == 0);
	model_free(m);
}

/* Round-trip idle time: after a sync nothing is queued, so the first launch
 * (its driver call inside it counted once) and a sync with nothing launched
 * since the last one are time the GPU idles, each with one trap pair; a
 * launch after another, and a sync after a launch, are not. */
static void test_parts_rt_idle(void)
{
	struct ig_model *m = model_new(NULL);
	model_set_probe_ns(m, 1000);
	uint64_t t = T0 + SEC;
	struct ig_event s0 = call(80, 80, IG_OP_CUDA_STREAM_SYNC, t, 20 * US);
	struct ig_event lo = call(80, 80, IG_OP_CUDA_LAUNCH_KERNEL, t + 100 * US, 10 * US);
	struct ig_event li = call(80, 80, IG_OP_CU_LAUNCH_KERNEL, t + 101 * US, 8 * US);
	struct ig_event l2 = call(80, 80, IG_OP_CUDA_LAUNCH_KERNEL, t + 200 * US, 10 * US);
	struct ig_event cp = call(80, 80, IG_OP_CUDA_MEMCPY, t + 300 * US, 30 * US);
	cp.arg0 = 4;
	cp.arg1 = IG_DIR_D2H;
	struct ig_event s1 = call(80, 80, IG_OP_CUDA_STREAM_SYNC, t + 400 * US, 5 * US);
	struct ig_event l3 = call(80, 80, IG_OP_CUDA_LAUNCH_KERNEL, t + 500 * US, 10 * US);
	const struct ig_event *seq[] = {&s0, &li, &lo, &l2, &cp, &s1, &l3};
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		model_ingest(m, seq[i]);
	struct ig_time_parts p;
	thread_parts(m, 80, &p);
	/* lo (10 us, li inside it) + s1 (5 us) + l3 (10 us), 3 trap pairs */
	CHECKF(p.rt_idle_ns == 25 * US + 3000, "round-trip idle %lu ns",
	       (unsigned long)p.rt_idle_ns);
	/* of which the sync after no launch: s1, one trap pair */
	CHECKF(p.rt_sync_ns == 5 * US + 1000, "round-trip syncs %lu ns",
	       (unsigned long)p.rt_sync_ns);
	model_free(m);
}

/* Lifetime parts keep what left the window: 10 s of loader waits, then 15 s
 * of host work on the same thread. */
static void test_parts_lifetime(void)
{
	struct ig_model *m = model_new(NULL);
	struct synth_cfg a = {.scenario = SYNTH_LOADER_WAIT, .seconds = 10};
	struct synth_truth ta, tb;
	synth_truth(&a, &ta);
	struct synth *s = synth_new(&a);
	struct ig_event e;
	while (synth_next(s, &e))
		model_ingest(m, &e);
	synth_free(s);
	uint64_t mid = model_now(m);
	struct synth_cfg b = {.scenario = SYNTH_HOST_WORK, .seconds = 15, .start_ns = mid};
	synth_truth(&b, &tb);
	s = synth_new(&b);
	while (synth_next(s, &e))
		model_ingest(m, &e);
	synth_free(s);
	struct ig_proc_stats p;
	CHECK(model_proc(m, SYNTH_PID, &p) == 0);
	double la = (double)(mid - T0) / (double)p.life_parts.wall_ns;
	/* In nanoseconds of wall time, exact but for the calls cut at an edge:
	 * the synthetic events carry fixed timestamps (no clock is read), so
	 * the window's part may differ from the recipe by its longest call
	 * (a 5.78 ms sync of SYNTH_HOST_WORK straddling the window's start),
	 * the lifetime's by the longest call at the seam of the two scenarios
	 * (a 10 ms wait of SYNTH_LOADER_WAIT). */
	const int64_t win_edge = 5780 * US, life_edge = 10 * MS;
	for (int k = 0; k < IG_PART_MAX; k++) {
		double life = la * ta.part[k] + (1 - la) * tb.part[k];
		int64_t got = (int64_t)p.life_parts.ns[k];
		int64_t want = llround(life * (double)p.life_parts.wall_ns);
		CHECKF(llabs(got - want) <= life_edge, "lifetime %s %lld ns, want %lld ns",
		       ig_part_name(k), (long long)got, (long long)want);
		got = (int64_t)p.parts.ns[k];
		want = llround(tb.part[k] * (double)p.parts.wall_ns);
		CHECKF(llabs(got - want) <= win_edge, "window %s %lld ns, want %lld ns",
		       ig_part_name(k), (long long)got, (long long)want);
	}
	CHECK(p.life_parts.wall_ns >= 25 * SEC - 20 * MS && p.life_parts.wall_ns <= 25 * SEC);
	CHECK(p.parts.wall_ns == p.wall_ns && p.wall_ns < 10 * SEC + 20 * MS);
	model_free(m);
}

/* A process that exits: its wall time ends at its exit, in the window and
 * over its lifetime, so the time after it does not read as host work. */
static void test_parts_exit(void)
{
	struct ig_model *m = model_new(NULL);
	/* 3 s of 10 ms steps: 1 ms of host work, a 9 ms sync */
	for (int i = 0; i < 300; i++) {
		struct ig_event c =
		    call(70, 70, IG_OP_CUDA_STREAM_SYNC, T0 + (uint64_t)i * 10 * MS + MS, 9 * MS);
		model_ingest(m, &c);
	}
	struct ig_event x = {.kind = IG_EV_EXIT, .pid = 70, .tid = 70, .ts_ns = T0 + 3 * SEC};
	model_ingest(m, &x);
	model_advance(m, T0 + 6 * SEC);
	struct ig_proc_stats p;
	CHECK(model_proc(m, 70, &p) == 0 && p.exited);
	CHECKF(p.wall_ns == 3 * SEC - MS, "wall %lu", (unsigned long)p.wall_ns);
	CHECKF(p.parts.ns[IG_PART_HOST_CPU] == 299 * MS &&
		   p.parts.ns[IG_PART_GPU_WAIT] == 2700 * MS,
	       "host %.2f %%, gpu wait %.2f %%", ig_part_share(&p.parts, IG_PART_HOST_CPU) * 100,
	       ig_part_share(&p.parts, IG_PART_GPU_WAIT) * 100);
	CHECK(p.life_parts.wall_ns == 3 * SEC - MS);
	struct ig_thread_stats t;
	CHECK(model_threads(m, 70, &t, 1) == 1 && t.wall_ns == p.wall_ns);
	CHECK(!memcmp(&t.parts, &p.parts, sizeof(t.parts)));
	model_free(m);
}

int main(void)
{
	test_window_expiry();
	test_rates_and_window_len();
	test_one_denominator();
	test_offcpu();
	test_reclassify_and_nesting();
	test_slow_calls();
	test_eviction();
	test_other_kinds();
	test_reset();
	test_parts_synth();
	test_parts_nested();
	test_parts_blocked_reasons();
	test_parts_reclassify();
	test_holder_name();
	test_parts_rt_idle();
	test_parts_lifetime();
	test_parts_exit();
	return check_done("test_model");
}
