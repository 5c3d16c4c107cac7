/* Synthetic event streams: a simulated training loop per scenario, one step
 * at a time, each step's events sorted by completion time (entry time for the
 * Ingero-like scenario) before they are handed out. */
#include "synth.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"

#define US 1000ull
#define MS 1000000ull
#define SEC 1000000000ull
#define BUF 1024
#define STRESS_PID 2231
#define WORKER0 2001
#define NWORKERS 4
#define CKPT_TID 4830

static const char *const names[SYNTH_MAX] = {
    "healthy",	  "cpu_contention", "gpu_bound",    "host_starvation",
    "sync_storm", "copy_dominated", "alloc_spikes", "memory_pressure",
    "block_io",	  "cold_start",	    "no_split",	    "bench",
};

struct synth {
	struct synth_cfg cfg;
	uint64_t rng;
	uint64_t t, end_ns;
	uint64_t next_snap, next_page, next_io, next_spike;
	unsigned steps;
	unsigned cold_left;
	int no_split;
	struct ig_event buf[BUF];
	uint32_t seq[BUF];
	int n, i;
	int done;
};

const char *synth_name(int sc)
{
	return sc >= 0 && sc < SYNTH_MAX ? names[sc] : "?";
}

int synth_by_name(const char *name)
{
	for (int i = 0; i < SYNTH_MAX; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

static uint64_t rnd(struct synth *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545f4914f6cdd1dull;
}

static double urand(struct synth *s)
{
	return (double)(rnd(s) >> 11) / 9007199254740992.0;
}

/* uniform in [lo, hi] */
static uint64_t uni(struct synth *s, uint64_t lo, uint64_t hi)
{
	return lo + (uint64_t)(urand(s) * (double)(hi - lo));
}

/* median * exp(sigma * N(0,1)) */
static uint64_t lognorm(struct synth *s, double median, double sigma)
{
	double u1 = urand(s) + 1e-12, u2 = urand(s);
	double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
	return (uint64_t)(median * exp(sigma * z));
}

static struct ig_event *push(struct synth *s, int kind, uint64_t ts, uint64_t dur)
{
	if (s->n >= BUF)
		return NULL;
	struct ig_event *e = &s->buf[s->n];
	memset(e, 0, sizeof(*e));
	e->kind = (uint16_t)kind;
	e->ts_ns = ts;
	e->dur_ns = dur;
	e->pid = s->cfg.pid;
	e->tid = s->cfg.pid;
	memcpy(e->comm, "python3", 8);
	s->seq[s->n] = (uint32_t)s->n;
	s->n++;
	return e;
}

static void set_comm(char *dst, const char *src)
{
	memset(dst, 0, IG_COMM_LEN);
	strncpy(dst, src, IG_COMM_LEN - 1);
}

static void offcpu(struct synth *s, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t dur,
		   int state, int in_call, uint32_t other, const char *other_comm)
{
	struct ig_event *e = push(s, IG_EV_OFFCPU, ts, dur);
	if (!e)
		return;
	e->pid = pid;
	e->tid = tid;
	e->cpu = (uint32_t)(tid % 4);
	if (pid >= WORKER0 && pid < WORKER0 + NWORKERS)
		set_comm(e->comm, "pt_data_worker");
	if (s->no_split) { /* Ingero: no state, no waker, no in-call flag */
		e->state = IG_OFF_UNKNOWN;
		return;
	}
	e->state = (uint8_t)state;
	e->flags = in_call ? IG_F_IN_CALL : 0;
	e->other_pid = other;
	if (other_comm)
		set_comm(e->other_comm, other_comm);
}

/* A call on the main thread at the cursor; pre/blk of it off CPU. */
static void call(struct synth *s, int op, uint64_t dur, uint64_t pre, uint64_t blk, uint32_t other,
		 const char *other_comm, uint64_t bytes, int dir)
{
	uint64_t ts = s->t;
	struct ig_event *e = push(s, IG_EV_CALL, ts, dur);
	if (!e)
		return;
	e->op = (uint16_t)op;
	e->arg0 = bytes;
	e->arg1 = (uint64_t)dir;
	e->stack_id = 0x1000 + (uint64_t)op;
	if (s->no_split) {
		e->flags = IG_F_NO_SPLIT;
	} else {
		e->preempt_ns = pre;
		e->blocked_ns = blk;
		e->switches = (pre ? 1u : 0u) + (blk ? 1u : 0u);
		if (pre) {
			e->other_pid = other;
			set_comm(e->other_comm, other_comm);
		}
	}
	/* the off-CPU intervals inside it: preempted early, then asleep */
	if (pre)
		offcpu(s, s->cfg.pid, s->cfg.pid, ts + 2 * US, pre, IG_OFF_PREEMPTED, 1, other,
		       other_comm);
	if (blk)
		offcpu(s, s->cfg.pid, s->cfg.pid, ts + dur - blk, blk, IG_OFF_BLOCKED, 1, 0, NULL);
	s->t += dur + 1 * US;
}

static void cpu(struct synth *s, uint64_t ns)
{
	s->t += ns;
}

/* The common loop body: CPU work, 20 launches, a small copy, one sync. */
static void base_step(struct synth *s, double launch_tail_p, uint64_t sync_median)
{
	cpu(s, uni(s, 1300 * US, 1700 * US));
	for (int i = 0; i < 20; i++) {
		uint64_t d = uni(s, 8 * US, 15 * US), pre = 0, blk = 0;
		if (launch_tail_p > 0 && urand(s) < launch_tail_p) {
			uint64_t extra = uni(s, 5 * MS, 20 * MS);
			if (s->cfg.scenario == SYNTH_CPU_CONTENTION || s->no_split)
				pre = extra;
			else
				blk = extra * 2 / 5; /* page reclaim, writeback: partly asleep */
			d += extra;
		}
		if (s->cold_left) {
			d = uni(s, 100 * MS, 300 * MS);
			s->cold_left--;
		}
		call(s, IG_OP_CUDA_LAUNCH_KERNEL, d, pre, blk, STRESS_PID, "stress-ng", 0, 0);
		cpu(s, 20 * US);
	}
	call(s, IG_OP_CUDA_MEMCPY_ASYNC, uni(s, 15 * US, 25 * US), 0, 0, 0, NULL, 256 << 10,
	     IG_DIR_H2D);
	uint64_t d = lognorm(s, (double)sync_median, 0.08), pre = 0;
	uint64_t blk = d * 95 / 100;
	if ((s->cfg.scenario == SYNTH_CPU_CONTENTION || s->no_split) && urand(s) < 0.04) {
		pre = uni(s, 40 * MS, 140 * MS);
		d += pre;
	}
	call(s, IG_OP_CUDA_STREAM_SYNC, d, pre, blk, STRESS_PID, "stress-ng", 0, 0);
}

static void step_gpu_bound(struct synth *s)
{
	cpu(s, uni(s, 800 * US, 1200 * US));
	for (int i = 0; i < 20; i++) {
		call(s, IG_OP_CUDA_LAUNCH_KERNEL, uni(s, 8 * US, 15 * US), 0, 0, 0, NULL, 0, 0);
		cpu(s, 20 * US);
	}
	uint64_t d = lognorm(s, 30.0 * MS, 0.1);
	if (urand(s) < 0.03)
		d += uni(s, 100 * MS, 200 * MS);
	call(s, IG_OP_CUDA_STREAM_SYNC, d, 0, d * 97 / 100, 0, NULL, 0, 0);
}

static void step_starvation(struct synth *s)
{
	/* wait for the next batch from a worker (a pipe read), then feed the GPU */
	uint32_t w = WORKER0 + s->steps % NWORKERS;
	uint64_t wait = uni(s, 60 * MS, 100 * MS);
	offcpu(s, s->cfg.pid, s->cfg.pid, s->t, wait, IG_OFF_BLOCKED, 0, w, "pt_data_worker");
	/* meanwhile the workers, more than the free cores, preempt each other */
	for (int k = 0; k < NWORKERS; k++) {
		uint32_t me = WORKER0 + (uint32_t)k, by = WORKER0 + (uint32_t)((k + 1) % NWORKERS);
		uint64_t at = s->t + uni(s, 0, wait / 2);
		offcpu(s, me, me, at, uni(s, 5 * MS, 15 * MS), IG_OFF_PREEMPTED, 0, by,
		       "pt_data_worker");
	}
	s->t += wait;
	cpu(s, uni(s, 200 * US, 400 * US));
	for (int i = 0; i < 20; i++) {
		call(s, IG_OP_CUDA_LAUNCH_KERNEL, uni(s, 8 * US, 15 * US), 0, 0, 0, NULL, 0, 0);
		cpu(s, 10 * US);
	}
	call(s, IG_OP_CUDA_MEMCPY_ASYNC, uni(s, 150 * US, 250 * US), 0, 0, 0, NULL, 1 << 20,
	     IG_DIR_H2D);
	uint64_t d = lognorm(s, 3.0 * MS, 0.08);
	call(s, IG_OP_CUDA_STREAM_SYNC, d, 0, d * 95 / 100, 0, NULL, 0, 0);
}

static void step_sync_storm(struct synth *s)
{
	cpu(s, uni(s, 200 * US, 300 * US));
	for (int i = 0; i < 2; i++) {
		call(s, IG_OP_CUDA_LAUNCH_KERNEL, uni(s, 10 * US, 20 * US), 0, 0, 0, NULL, 0, 0);
		uint64_t d = uni(s, 150 * US, 250 * US);
		call(s, IG_OP_CUDA_MEMCPY, d, 0, d * 6 / 10, 0, NULL, 4, IG_DIR_D2H); /* .item() */
	}
}

static void step_copy(struct synth *s)
{
	cpu(s, uni(s, 2500 * US, 3500 * US));
	for (int i = 0; i < 4; i++)
		call(s, IG_OP_CUDA_MEMCPY_ASYNC, uni(s, 2300 * US, 2700 * US), 0, 0, 0, NULL,
		     8 << 20, IG_DIR_H2D);
	for (int i = 0; i < 10; i++)
		call(s, IG_OP_CUDA_LAUNCH_KERNEL, uni(s, 8 * US, 15 * US), 0, 0, 0, NULL, 0, 0);
	uint64_t d = lognorm(s, 1.0 * MS, 0.08);
	call(s, IG_OP_CUDA_STREAM_SYNC, d, 0, d * 9 / 10, 0, NULL, 0, 0);
}

static void step_alloc(struct synth *s)
{
	base_step(s, 0, 6 * MS);
	if (s->steps % 5)
		return;
	if (s->t >= s->next_spike) {
		uint64_t d = uni(s, 75 * MS, 85 * MS);
		call(s, IG_OP_CUDA_MALLOC, d, 0, 10 * MS, 0, NULL, 256 << 20, 0);
		s->next_spike += 2 * SEC;
	} else {
		call(s, IG_OP_CUDA_MALLOC, uni(s, 15 * US, 25 * US), 0, 0, 0, NULL, 1 << 20, 0);
	}
}

static void snapshot(struct synth *s, uint64_t ts)
{
	struct ig_event *e = push(s, IG_EV_SNAPSHOT, ts, 0);
	if (!e)
		return;
	double cpu = 35, mem = 40, load = 2.1;
	uint64_t swap = 0, avail = 40000;
	switch (s->cfg.scenario) {
	case SYNTH_CPU_CONTENTION:
	case SYNTH_NO_SPLIT:
		cpu = 98;
		load = 9.5;
		break;
	case SYNTH_HOST_STARVATION:
		cpu = 99;
		load = 5.2;
		break;
	case SYNTH_MEMORY_PRESSURE:
		mem = 97;
		swap = 2048;
		avail = 900;
		break;
	default:
		break;
	}
	uint32_t pid = e->pid;
	ig_snapshot_fill(e, ts, cpu, mem, avail, swap, load);
	e->pid = pid;
	e->tid = pid;
}

static void periodic(struct synth *s, uint64_t from, uint64_t to)
{
	while (s->next_snap < to) {
		snapshot(s, s->next_snap);
		s->next_snap += SEC;
	}
	if (s->cfg.scenario == SYNTH_MEMORY_PRESSURE)
		while (s->next_page < to) {
			struct ig_event *e = push(s, IG_EV_PAGE_ALLOC, s->next_page, 0);
			if (e)
				e->arg0 = 30ull << 20;
			s->next_page += 100 * MS;
		}
	if (s->cfg.scenario == SYNTH_BLOCK_IO)
		while (s->next_io < to) {
			struct ig_event *e =
			    push(s, IG_EV_BLOCK_IO, s->next_io, uni(s, 5 * MS, 70 * MS));
			if (e) {
				e->tid = CKPT_TID;
				e->op = IG_IO_WRITE;
				e->arg0 = 1 << 20;
			}
			s->next_io += 25 * MS;
		}
	(void)from;
}

/* 8 processes x 4 threads taking turns, every kind of event. */
static void step_bench(struct synth *s)
{
	uint32_t k = s->steps % 32, pid = 5000 + (k / 4) * 100, tid = pid + k % 4;
	uint64_t t = s->t;
	for (int i = 0; i < 4; i++) {
		struct ig_event *e = push(s, IG_EV_CALL, t, uni(s, 5 * US, 15 * US));
		if (!e)
			return;
		e->pid = pid;
		e->tid = tid;
		e->op = IG_OP_CUDA_LAUNCH_KERNEL;
		e->preempt_ns = (rnd(s) & 63) ? 0 : 3 * US;
		e->other_pid = e->preempt_ns ? STRESS_PID : 0;
		t += e->dur_ns + 2 * US;
	}
	struct ig_event *e = push(s, IG_EV_CALL, t, uni(s, 10 * US, 30 * US));
	if (!e)
		return;
	e->pid = pid;
	e->tid = tid;
	e->op = (uint16_t)((s->steps & 1) ? IG_OP_CUDA_MEMCPY_ASYNC : IG_OP_CU_LAUNCH_KERNEL);
	e->arg0 = 65536;
	e->arg1 = IG_DIR_H2D;
	t += e->dur_ns + 2 * US;
	uint64_t d = lognorm(s, 100.0 * US, 0.3);
	e = push(s, IG_EV_CALL, t, d);
	if (!e)
		return;
	e->pid = pid;
	e->tid = tid;
	e->op = IG_OP_CUDA_STREAM_SYNC;
	e->blocked_ns = d * 9 / 10;
	e->switches = 1;
	offcpu(s, pid, tid, t + d / 10, d * 9 / 10, IG_OFF_BLOCKED, 1, 0, NULL);
	t += d + 2 * US;
	if ((s->steps & 7) == 0)
		offcpu(s, pid, tid, t, uni(s, 10 * US, 50 * US), IG_OFF_PREEMPTED, 0, STRESS_PID,
		       "stress-ng");
	if ((s->steps & 63) == 0) {
		e = push(s, IG_EV_PAGE_ALLOC, t, 0);
		if (e) {
			e->pid = pid;
			e->arg0 = 1 << 20;
		}
		e = push(s, IG_EV_BLOCK_IO, t, uni(s, 100 * US, 2 * MS));
		if (e) {
			e->pid = pid;
			e->op = IG_IO_READ;
			e->arg0 = 131072;
		}
	}
	s->t = t + 20 * US;
}

static void step(struct synth *s)
{
	switch (s->cfg.scenario) {
	case SYNTH_HEALTHY:
	case SYNTH_COLD_START:
		base_step(s, 0, 6 * MS);
		break;
	case SYNTH_CPU_CONTENTION:
	case SYNTH_NO_SPLIT:
		base_step(s, 0.03, 6 * MS);
		break;
	case SYNTH_MEMORY_PRESSURE:
	case SYNTH_BLOCK_IO:
		base_step(s, 0.03, 6 * MS);
		break;
	case SYNTH_GPU_BOUND:
		step_gpu_bound(s);
		break;
	case SYNTH_HOST_STARVATION:
		step_starvation(s);
		break;
	case SYNTH_SYNC_STORM:
		step_sync_storm(s);
		break;
	case SYNTH_COPY_DOMINATED:
		step_copy(s);
		break;
	case SYNTH_ALLOC_SPIKES:
		step_alloc(s);
		break;
	case SYNTH_BENCH:
		step_bench(s);
		break;
	}
}

static uint64_t end_of(const struct ig_event *e)
{
	int dur = e->kind == IG_EV_CALL || e->kind == IG_EV_OFFCPU || e->kind == IG_EV_BLOCK_IO;
	return e->ts_ns + (dur ? e->dur_ns : 0);
}

static void sort_buf(struct synth *s)
{
	/* insertion sort on (key, seq): small batches, nearly sorted */
	for (int i = 1; i < s->n; i++) {
		struct ig_event e = s->buf[i];
		uint32_t q = s->seq[i];
		uint64_t k = s->no_split ? e.ts_ns : end_of(&e);
		int j = i;
		while (j > 0) {
			uint64_t kj = s->no_split ? s->buf[j - 1].ts_ns : end_of(&s->buf[j - 1]);
			if (kj < k || (kj == k && s->seq[j - 1] < q))
				break;
			s->buf[j] = s->buf[j - 1];
			s->seq[j] = s->seq[j - 1];
			j--;
		}
		s->buf[j] = e;
		s->seq[j] = q;
	}
}

static void start(struct synth *s)
{
	struct ig_event *e = push(s, IG_EV_COMM, s->t, 0);
	(void)e;
	if (s->cfg.scenario == SYNTH_HOST_STARVATION)
		for (uint32_t k = 0; k < NWORKERS; k++) {
			e = push(s, IG_EV_FORK, s->t, 0);
			if (e)
				e->arg0 = WORKER0 + k;
			e = push(s, IG_EV_COMM, s->t, 0);
			if (e) {
				e->pid = e->tid = WORKER0 + k;
				set_comm(e->comm, "pt_data_worker");
			}
		}
	if (s->cfg.scenario == SYNTH_BENCH)
		for (uint32_t k = 0; k < 8; k++) {
			e = push(s, IG_EV_COMM, s->t, 0);
			if (e) {
				e->pid = e->tid = 5000 + k * 100;
				set_comm(e->comm, k & 1 ? "python3" : "vllm-worker");
			}
		}
}

static void refill(struct synth *s)
{
	s->n = s->i = 0;
	while (!s->n) {
		if (s->t >= s->end_ns) {
			s->done = 1;
			return;
		}
		uint64_t from = s->t;
		if (!s->steps)
			start(s);
		step(s);
		s->steps++;
		periodic(s, from, s->t);
	}
	sort_buf(s);
}

struct synth *synth_new(const struct synth_cfg *cfg)
{
	if (!cfg || cfg->scenario < 0 || cfg->scenario >= SYNTH_MAX)
		return NULL;
	struct synth *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->cfg = *cfg;
	if (!s->cfg.start_ns)
		s->cfg.start_ns = 1767225600ull * SEC; /* 2026-01-01T00:00:00Z */
	if (s->cfg.seconds <= 0)
		s->cfg.seconds = 20;
	if (!s->cfg.pid)
		s->cfg.pid = 4821;
	s->rng = (s->cfg.seed ? s->cfg.seed : 0x5eed) * 0x9e3779b97f4a7c15ull | 1;
	s->t = s->cfg.start_ns;
	s->end_ns = s->cfg.start_ns + (uint64_t)(s->cfg.seconds * 1e9);
	s->next_snap = s->cfg.start_ns + SEC / 2;
	s->next_page = s->next_io = s->cfg.start_ns + 10 * MS;
	s->next_spike = s->cfg.start_ns + 1500 * MS;
	s->no_split = cfg->scenario == SYNTH_NO_SPLIT;
	s->cold_left = cfg->scenario == SYNTH_COLD_START ? 5 : 0;
	return s;
}

void synth_free(struct synth *s)
{
	free(s);
}

int synth_next(struct synth *s, struct ig_event *e)
{
	if (s->i >= s->n && !s->done)
		refill(s);
	if (s->done && s->i >= s->n)
		return 0;
	*e = s->buf[s->i++];
	return 1;
}

int synth_peek_ts(struct synth *s, uint64_t *ts)
{
	if (s->i >= s->n && !s->done)
		refill(s);
	if (s->done && s->i >= s->n)
		return -ENODATA;
	*ts = s->buf[s->i].ts_ns;
	return 0;
}

/* --- as an event source ------------------------------------------------------ */

static int src_fd(struct ig_source *src)
{
	return -1;
}

static int src_poll(struct ig_source *src, ig_emit_fn emit, void *ctx, int max)
{
	struct synth *s = src->priv;
	struct ig_event e;
	int n = 0;
	while (n < max && synth_next(s, &e)) {
		emit(ctx, &e);
		n++;
	}
	return n ? n : -ENODATA;
}

static int src_peek(struct ig_source *src, uint64_t *ts)
{
	return synth_peek_ts(src->priv, ts);
}

static void src_free(struct ig_source *src)
{
	if (!src)
		return;
	synth_free(src->priv);
	free(src);
}

static const struct ig_source_ops synth_ops = {
    .name = "synth",
    .fd = src_fd,
    .poll = src_poll,
    .peek_ts = src_peek,
    .free = src_free,
};

struct ig_source *synth_source_new(const struct synth_cfg *cfg)
{
	struct ig_source *src = calloc(1, sizeof(*src));
	struct synth *s = synth_new(cfg);
	if (!src || !s) {
		free(src);
		synth_free(s);
		return NULL;
	}
	src->ops = &synth_ops;
	src->priv = s;
	return src;
}
