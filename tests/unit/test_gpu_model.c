/* NCCL and GPU devices in the model and the detector: operations enqueued
 * and completed by the synchronisations that follow them (stream, event,
 * device and implicit), their completion waits and bytes per op and per
 * rank, a group as one operation with its members named, late events;
 * device samples and per-process GPU memory; the straggler chain on the
 * synthetic two-rank stream (the slow rank and its process named, impact
 * as the recipe says); NVML evidence on a host-bound chain. */
#include "analysis.h"
#include "check.h"
#include "core/ops.h"
#include "detect/detect.h"
#include "evmake.h"
#include "model/model.h"
#include "synth.h"

#include <errno.h>
#include <math.h>
#include <string.h>


static struct ig_event call(uint32_t pid, uint32_t tid, int op, uint64_t ts, uint64_t dur)
{
	return ev_call(pid, tid, op, ts, dur, "trainer");
}

static struct ig_event coll(uint32_t pid, int op, uint64_t ts, uint64_t bytes, uint64_t stream,
			    unsigned rank)
{
	struct ig_event e = call(pid, pid, op, ts, 10 * US);
	e.arg0 = bytes;
	e.arg1 = IG_NCCL_ARG1(7, 0, IG_NCCL_NONE32);
	e.arg2 = IG_NCCL_COMM(0xabc, rank, 2);
	e.stream = stream;
	return e;
}

static const struct ig_nccl_stats *op_row(const struct ig_nccl_stats *r, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(r[i].name, name))
			return &r[i];
	return NULL;
}

/* Two ranks, 20 steps: rank 0 (pid 100) enqueues an AllReduce at the start
 * of each 10 ms step and syncs its stream at once; rank 1 (pid 200) works
 * 8 ms first; both syncs end at the step's end. Rank 0 also syncs another
 * stream first (which completes nothing). */
static void test_completion(void)
{
	struct ig_model *m = model_new(NULL);
	for (int s = 0; s < 20; s++) {
		uint64_t t = T0 + (uint64_t)s * 10 * MS, end = t + 10 * MS;
		struct ig_event e = coll(100, IG_OP_NCCL_ALL_REDUCE, t, 4096, 0x10, 0);
		model_ingest(m, &e);
		e = call(100, 100, IG_OP_CUDA_STREAM_SYNC, t + 20 * US, 10 * US);
		e.stream = 0x20; /* not the collective's stream */
		model_ingest(m, &e);
		e = coll(200, IG_OP_NCCL_ALL_REDUCE, t + 8 * MS, 4096, 0x30, 1);
		model_ingest(m, &e);
		e = call(200, 200, IG_OP_CUDA_STREAM_SYNC, t + 8 * MS + 10 * US,
			 end - (t + 8 * MS + 10 * US));
		e.stream = 0x30;
		model_ingest(m, &e);
		e = call(100, 100, IG_OP_CUDA_STREAM_SYNC, t + 40 * US, end - (t + 40 * US));
		e.stream = 0x10;
		model_ingest(m, &e);
	}
	struct ig_nccl_stats ops[8];
	int n = model_nccl_ops(m, ops, 8);
	CHECKF(n == 1, "%d op rows", n);
	const struct ig_nccl_stats *a = op_row(ops, n, "ncclAllReduce");
	CHECK(a && a->ops_life == 40 && a->done_life == 40 && a->bytes_life == 40 * 4096);
	/* rank 0 waits from 10 us to 10 ms, rank 1 from 8.01 ms */
	CHECKF(a && a->wait_life.max >= 9980 * US && a->wait_life.max <= 9990 * US * 1.01,
	       "max %lu", a ? (unsigned long)a->wait_life.max : 0);
	struct ig_nccl_rank r[4];
	n = model_nccl_ranks(m, r, 4);
	CHECKF(n == 2, "%d ranks", n);
	if (n == 2) {
		CHECK(r[0].pid == 100 && r[0].rank == 0 && r[0].nranks == 2 && r[0].key == 0xabc);
		CHECK(r[1].pid == 200 && r[1].rank == 1 && r[1].known);
		CHECKF(r[0].wait_mean_ns == 9990 * US, "rank 0 waits %lu",
		       (unsigned long)r[0].wait_mean_ns);
		CHECKF(r[1].wait_mean_ns == 1990 * US, "rank 1 waits %lu",
		       (unsigned long)r[1].wait_mean_ns);
		/* each sync that completed one counts once */
		CHECK(r[0].done_win == r[0].ops_win &&
		      r[0].sync_ns_win == r[0].done_win * 9960 * US);
	}
	struct ig_nccl_totals tot;
	model_nccl_totals(m, &tot);
	CHECK(tot.pending == 0 && tot.dropped == 0);
	model_reset(m);
	CHECK(model_nccl_ops(m, ops, 8) == 0 && model_nccl_ranks(m, r, 4) == 0);
	model_free(m);
}

/* Groups are one operation; event syncs complete the event's stream up to
 * its record; a device sync and a synchronous copy complete every stream;
 * a refused call enqueues nothing; events older than the window count in
 * the lifetime only. */
static void test_groups_events(void)
{
	struct ig_model *m = model_new(NULL);
	uint64_t t = T0;
	struct ig_event e;
	for (int s = 0; s < 5; s++, t += MS) {
		e = call(1, 1, IG_OP_NCCL_GROUP_START, t, US);
		model_ingest(m, &e);
		e = coll(1, IG_OP_NCCL_SEND, t + 2 * US, 100, 0x10, 0);
		model_ingest(m, &e);
		e = coll(1, IG_OP_NCCL_RECV, t + 20 * US, 100, 0x10, 0);
		model_ingest(m, &e);
		e = coll(1, IG_OP_NCCL_RECV, t + 40 * US, 100, 0x10, 0);
		model_ingest(m, &e);
		e = call(1, 1, IG_OP_NCCL_GROUP_END, t + 60 * US, 5 * US);
		model_ingest(m, &e);
		/* event recorded after the group, synchronised later */
		e = call(1, 1, IG_OP_CUDA_EVENT_RECORD, t + 70 * US, US);
		e.arg0 = 0xe1;
		e.stream = 0x10;
		model_ingest(m, &e);
		e = coll(1, IG_OP_NCCL_ALL_GATHER, t + 80 * US, 64, 0x10, 0);
		model_ingest(m, &e);
		e = call(1, 1, IG_OP_CUDA_EVENT_SYNC, t + 100 * US, 400 * US);
		e.arg0 = 0xe1;
		model_ingest(m, &e);
	}
	struct ig_nccl_stats ops[8];
	int n = model_nccl_ops(m, ops, 8);
	const struct ig_nccl_stats *g = op_row(ops, n, "group(ncclSend, ncclRecv x2)");
	const struct ig_nccl_stats *ag = op_row(ops, n, "ncclAllGather");
	CHECKF(n == 2 && g && ag, "%d rows: %s, %s", n, n > 0 ? ops[0].name : "",
	       n > 1 ? ops[1].name : "");
	if (g && ag) {
		CHECK(g->op == IG_OP_NCCL_GROUP_END && g->ops_life == 5 && g->bytes_life == 1500);
		/* completed by the event sync: from 65 us to 500 us */
		CHECKF(g->done_life == 5 && g->wait_life.min >= 434 * US &&
			   g->wait_life.max <= 436 * US,
		       "done %lu wait %lu..%lu", (unsigned long)g->done_life,
		       (unsigned long)g->wait_life.min, (unsigned long)g->wait_life.max);
		/* enqueued after the record: completed by the next step's event
		 * sync, the last one still pending */
		CHECK(ag->ops_life == 5 && ag->done_life == 4);
	}
	struct ig_nccl_totals tot;
	model_nccl_totals(m, &tot);
	CHECK(tot.pending == 1);
	/* a synchronous copy completes every stream of the process */
	e = call(1, 1, IG_OP_CUDA_MEMCPY, t + MS, 2 * MS);
	e.arg1 = IG_DIR_D2H;
	model_ingest(m, &e);
	model_nccl_totals(m, &tot);
	CHECK(tot.pending == 0);
	/* a refused call enqueues nothing; another process's sync completes nothing */
	e = coll(1, IG_OP_NCCL_ALL_REDUCE, t + 4 * MS, 64, 0x10, 0);
	e.ret = 4;
	model_ingest(m, &e);
	e = coll(1, IG_OP_NCCL_BCAST, t + 5 * MS, 64, 0x10, 0);
	model_ingest(m, &e);
	e = call(2, 2, IG_OP_CUDA_DEVICE_SYNC, t + 6 * MS, MS);
	model_ingest(m, &e);
	model_nccl_totals(m, &tot);
	CHECK(tot.pending == 1);
	e = call(1, 1, IG_OP_CU_CTX_SYNC, t + 8 * MS, MS);
	model_ingest(m, &e);
	model_nccl_totals(m, &tot);
	CHECK(tot.pending == 0);
	n = model_nccl_ops(m, ops, 8);
	CHECK(!op_row(ops, n, "ncclAllReduce") && op_row(ops, n, "ncclBcast"));
	/* 30 s later: an event from the start is older than the window */
	e = call(1, 1, IG_OP_CUDA_LAUNCH_KERNEL, t + 30 * SEC, US);
	model_ingest(m, &e);
	e = coll(1, IG_OP_NCCL_BCAST, t + 10 * MS, 64, 0x10, 0);
	model_ingest(m, &e);
	n = model_nccl_ops(m, ops, 8);
	const struct ig_nccl_stats *b = op_row(ops, n, "ncclBcast");
	CHECK(b && b->ops_life == 2 && b->ops_win == 0);
	model_free(m);
}

static struct ig_event gpu_sample(unsigned dev, uint64_t ts, unsigned util, uint64_t used)
{
	struct ig_gpu_dev d = {.ts_ns = ts,
			       .index = dev,
			       .valid = IG_GPU_V_UTIL | IG_GPU_V_MEM | IG_GPU_V_TEMP,
			       .util_gpu_pct = util,
			       .util_mem_pct = util / 2,
			       .mem_used = used,
			       .mem_total = 80ull << 30,
			       .temp_c = 40 + util / 10};
	strcpy(d.name, "H100");
	struct ig_event e;
	ig_gpu_dev_pack(&e, &d);
	return e;
}

static struct ig_event gpu_proc(uint32_t pid, unsigned dev, uint64_t ts, uint64_t bytes)
{
	struct ig_event e = {0};
	e.kind = IG_EV_GPU_PROC;
	e.pid = pid;
	e.cpu = dev;
	e.ts_ns = ts;
	e.arg0 = bytes;
	e.flags = IG_GPU_V_MEM;
	return e;
}

/* Device samples: the latest values, window means, the processes of the
 * latest round only, and the memory joined to the process rows. */
static void test_devices(void)
{
	struct ig_model *m = model_new(NULL);
	struct ig_event e = call(7, 7, IG_OP_CUDA_MALLOC, T0, 10 * US);
	model_ingest(m, &e);
	for (int s = 0; s < 10; s++) {
		uint64_t ts = T0 + (uint64_t)s * SEC + SEC / 2;
		e = gpu_sample(0, ts, s % 2 ? 80 : 40, 1ull << 30);
		model_ingest(m, &e);
		e = gpu_sample(1, ts, 0, 0);
		e.flags &= ~(uint32_t)IG_GPU_V_UTIL; /* an NVML error: no value */
		model_ingest(m, &e);
		e = gpu_proc(7, 0, ts, 512ull << 20);
		model_ingest(m, &e);
		if (s < 5) { /* pid 9 ends after 5 samples */
			e = gpu_proc(9, 0, ts, 256ull << 20);
			model_ingest(m, &e);
		}
		e = gpu_proc(7, 1, ts, 100);
		e.flags = 0; /* NVML_VALUE_NOT_AVAILABLE */
		model_ingest(m, &e);
	}
	e = call(7, 7, IG_OP_CUDA_FREE, T0 + 10 * SEC, 10 * US);
	model_ingest(m, &e);
	struct ig_gpu_stats g[4];
	int n = model_gpus(m, g, 4);
	CHECK(n == 2);
	CHECK(g[0].last.index == 0 && g[0].last.util_gpu_pct == 80 &&
	      !strcmp(g[0].last.name, "H100"));
	/* the window: seconds 1..10, the samples of s = 1..9 (5 x 80 %, 4 x 40 %) */
	CHECKF(fabs(g[0].util_gpu_win - 560.0 / 9) < 1e-9 && g[0].samples_win == 9, "util %f n %u",
	       g[0].util_gpu_win, g[0].samples_win);
	CHECK(g[0].mem_used_max_win == 1ull << 30 && g[0].temp_max_win == 48);
	CHECK(g[0].nprocs == 1 && g[1].nprocs == 1);
	CHECK(g[1].util_gpu_win < 0 && !(g[1].last.valid & IG_GPU_V_UTIL));
	CHECK(g[0].age_ns == SEC / 2 + 10 * US);
	struct ig_gpu_proc gp[8];
	n = model_gpu_procs(m, gp, 8);
	CHECK(n == 2 && gp[0].pid == 7 && gp[0].dev == 0 && gp[0].known &&
	      gp[0].bytes == 512ull << 20 && !strcmp(gp[0].comm, "trainer"));
	CHECK(gp[1].dev == 1 && !gp[1].known);
	uint64_t b = 0;
	CHECK(model_proc_gpu_mem(m, 7, &b) == 0 && b == 512ull << 20);
	CHECK(model_proc_gpu_mem(m, 9, &b) == -ENOENT);
	struct ig_proc_stats p;
	CHECK(model_proc(m, 7, &p) == 0 && p.gpu_mem_known && p.gpu_mem_bytes == 512ull << 20 &&
	      p.gpu_devs == 3);
	model_reset(m);
	n = model_gpus(m, g, 4);
	CHECK(n == 2 && g[0].last.util_gpu_pct == 80 && g[0].samples_win == 0);
	model_free(m);
}

static const struct ig_chain *find(const struct ig_model *m, int cls)
{
	return an_active_chain(m, cls);
}

/* The synthetic straggler: rank 0 waits for rank 1, which works on the CPU
 * 8 ms of every 10 ms step. */
static void test_straggler(void)
{
	struct synth_cfg cfg = {.scenario = SYNTH_NCCL_STRAGGLER, .seconds = 15};
	struct synth_truth t;
	CHECK(synth_truth(&cfg, &t) == 0 && !strcmp(t.cause, "nccl_straggler"));
	struct synth *s = synth_new(&cfg);
	struct ig_model *m = an_model_new(NULL);
	struct ig_event e;
	while (synth_next(s, &e))
		model_ingest(m, &e);
	synth_free(s);
	const struct ig_chain *c = find(m, IG_CC_STRAGGLER);
	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(detect_chain(an_detect(m), 0) == c || detect_chain(an_detect(m), 0)->pid != c->pid);
	CHECK(c->pid == SYNTH_PID && c->culprit_pid == SYNTH_PEER &&
	      !strcmp(c->culprit_comm, "python3"));
	CHECKF(fabs(c->impact - t.impact) <= 0.03, "impact %.3f, recipe %.3f", c->impact, t.impact);
	CHECK(c->severity == IG_SEV_HIGH && c->op == IG_OP_NCCL_ALL_REDUCE);
	CHECKF(strstr(c->summary, "NCCL straggler: rank 1 of 2, python3[4822], is late; rank 0, "
				  "python3[4821], waits 9.49ms per collective (rank 1: "
				  "1.79ms)") != NULL,
	       "summary: %s", c->summary);
	CHECK(strstr(c->explanation, "busy on the CPU between CUDA calls") != NULL);
	CHECK(detect_evidence(c, "straggler_rank", -1) == 1 &&
	      detect_evidence(c, "nranks", 0) == 2);
	CHECK(strstr(c->recs[0], "rank 1") != NULL);
	/* the late rank itself: host work, not a straggler */
	for (int i = 0; i < detect_count(an_detect(m)); i++) {
		const struct ig_chain *o = detect_chain(an_detect(m), i);
		CHECK(o->cls != IG_CC_STRAGGLER || o->pid == SYNTH_PID);
		if (o->pid == SYNTH_PEER && o->active && o->severity > IG_SEV_LOW)
			CHECKF(o->cls == IG_CC_HOST_WORK, "peer: %s", o->summary);
	}
	an_model_free(m);

	/* equal ranks: no straggler */
	struct ig_model *m2 = an_model_new(NULL);
	for (int k = 0; k < 1500; k++) {
		uint64_t ts = T0 + (uint64_t)k * 10 * MS;
		for (uint32_t pid = 100; pid <= 200; pid += 100) {
			e = coll(pid, IG_OP_NCCL_ALL_REDUCE, ts + 100 * US, 4096, 0x10, pid / 200);
			model_ingest(m2, &e);
			e = call(pid, pid, IG_OP_CUDA_STREAM_SYNC, ts + 110 * US, 9800 * US);
			e.stream = 0x10;
			model_ingest(m2, &e);
		}
	}
	CHECK(find(m2, IG_CC_STRAGGLER) == NULL);
	an_model_free(m2);
}

/* With NVML samples, a host-bound chain says how busy the GPU was. */
static void test_gpu_evidence(void)
{
	struct synth_cfg cfg = {.scenario = SYNTH_HOST_WORK, .seconds = 12};
	struct synth *s = synth_new(&cfg);
	struct ig_model *m = an_model_new(NULL);
	struct ig_event e;
	uint64_t next = T0;
	while (synth_next(s, &e)) {
		while (next <= e.ts_ns) {
			struct ig_event g = gpu_sample(0, next, 20, 1 << 20);
			model_ingest(m, &g);
			g = gpu_proc(SYNTH_PID, 0, next, 1 << 20);
			model_ingest(m, &g);
			next += 250 * MS;
		}
		model_ingest(m, &e);
	}
	synth_free(s);
	const struct ig_chain *c = find(m, IG_CC_HOST_WORK);
	CHECK(c && detect_evidence(c, "gpu_util_pct", -1) == 20);
	CHECK(c && strstr(c->explanation, "NVML: GPU 0 was busy only 20% of the window") != NULL);
	an_model_free(m);
}

int main(void)
{
	test_completion();
	test_groups_events();
	test_devices();
	test_straggler();
	test_gpu_evidence();
	return check_done("test_gpu_model");
}
