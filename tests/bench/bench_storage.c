/* Storage benchmark: recording throughput (events/s written, with the model
 * ingesting the same events on the caller's thread, as live), replay
 * throughput (events/s delivered to the model), bytes on disk per million
 * events, the flight recorder's snapshot cost, and the longest stall of a
 * caller that keeps pushing events while saves of a full ring run (against
 * the median push batch, and in ms on this machine; target <= 50 ms).
 * Targets: record >= 300 000/s, replay >= 1 000 000/s.
 * Usage: bench_storage [events] [dir] */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "store/flight.h"
#include "model/model.h"
#include "core/ops.h"
#include "store/rec.h"
#include "store/replay.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A live-like mix: 60 % runtime/driver calls with off-CPU attribution, 35 %
 * off-CPU intervals, a few page allocations, block I/O and snapshots, from
 * 8 processes of 4 threads; ~100k events per second of event time. */
/* --- the flight recorder's stall ------------------------------------------------ */

#define STALL_BATCH 1000 /* events a viewer's poll loop may ingest at once */
#define STALL_SAVES 3

struct stall {
	double max_s, median_s;
	int saves;
};

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* A stack's frames, as the stacks module gives them (a short JSON). */
static int bench_stack(void *ctx, uint64_t id, char **ips, char **frames)
{
	char b[128];
	snprintf(b, sizeof(b), "[\"0x%" PRIx64 "\"]", id);
	*ips = strdup(b);
	snprintf(b, sizeof(b), "[{\"s\": \"fn_%" PRIx64 "+0x10\", \"f\": \"lib.so\"}]", id);
	*frames = strdup(b);
	return 0;
}

/* A caller that keeps pushing events in batches (and polls after each, as
 * the session's tick does) while saves of a full ring run: how long its
 * longest batch took (the save and the poll included), against the median
 * batch. f holds a full ring already. */
static struct stall flight_stalls(struct flight *f, const struct ig_event *evs, uint64_t n,
				  const char *dir)
{
	struct stall sl = {0};
	size_t nb = (size_t)(3 * n / STALL_BATCH), k = 0;
	double *t = calloc(nb, sizeof(*t));
	uint64_t shift = evs[n - 1].ts_ns - evs[0].ts_ns + 1000;
	char path[4200], msg[4400];
	flight_set_stacks(f, bench_stack, NULL);
	for (size_t b = 0; t && b < nb; b++) {
		double t0 = now_s();
		if (b % (nb / (STALL_SAVES + 1)) == nb / (STALL_SAVES + 1) / 2 &&
		    sl.saves < STALL_SAVES && flight_save(f, dir, path, sizeof(path)) == 0)
			sl.saves++;
		for (int i = 0; i < STALL_BATCH; i++, k++) {
			struct ig_event e = evs[k % n];
			e.ts_ns += shift * (k / n + 1);
			e.stack_id = e.kind == IG_EV_CALL ? 1 + k % 512 : 0;
			flight_push(f, &e);
		}
		if (flight_poll(f, msg, sizeof(msg)) && strstr(msg, " to "))
			unlink(strstr(msg, " to ") + 4);
		t[b] = now_s() - t0;
		if (t[b] > sl.max_s)
			sl.max_s = t[b];
	}
	for (;;) { /* the last save: polled to its end (its stacks are served there) */
		int got = flight_poll(f, msg, sizeof(msg));
		if (got && strstr(msg, " to "))
			unlink(strstr(msg, " to ") + 4);
		if (!got && !flight_busy(f))
			break;
		usleep(5000);
	}
	if (t) {
		qsort(t, nb, sizeof(*t), cmp_d);
		sl.median_s = t[nb / 2];
	}
	free(t);
	return sl;
}

static void make_event(struct ig_event *e, uint64_t i, uint64_t base)
{
	static const int ops[] = {IG_OP_CUDA_LAUNCH_KERNEL, IG_OP_CUDA_MEMCPY_ASYNC,
				  IG_OP_CUDA_STREAM_SYNC, IG_OP_CU_LAUNCH_KERNEL,
				  IG_OP_CUDA_MALLOC};
	memset(e, 0, sizeof(*e));
	uint64_t r = rnd();
	e->ts_ns = base + i * 10000;
	e->pid = 4000 + (uint32_t)(r % 8);
	e->tid = e->pid + (uint32_t)((r >> 8) % 4);
	e->cpu = (uint32_t)((r >> 12) % 16);
	e->cgroup_id = 5722;
	snprintf(e->comm, sizeof(e->comm), "python3");
	unsigned k = (unsigned)((r >> 16) % 100);
	if (i % 100000 == 0) {
		ig_snapshot_fill(e, e->ts_ns, 42.5, 33.3, 12000, 0, 1.5);
	} else if (k < 60) {
		e->kind = IG_EV_CALL;
		e->op = (uint16_t)ops[(r >> 24) % 5];
		e->dur_ns = 2000 + (r >> 32) % 200000;
		e->arg0 = 0x7f0000000000ull + ((r >> 20) & 0xffff);
		e->stream = 0x55550000 + (r & 3);
		e->stack_id = r * 2654435761u;
		if (k < 10) {
			e->preempt_ns = e->dur_ns / 3;
			e->blocked_ns = e->dur_ns / 3;
			e->switches = 2;
			e->other_pid = 2231;
			snprintf(e->other_comm, sizeof(e->other_comm), "stress-ng");
		}
	} else if (k < 95) {
		e->kind = IG_EV_OFFCPU;
		e->dur_ns = 5000 + (r >> 30) % 5000000;
		e->state = (uint8_t)(1 + (r & 1));
		e->other_pid = 2231;
		snprintf(e->other_comm, sizeof(e->other_comm), "stress-ng");
	} else if (k < 98) {
		e->kind = IG_EV_PAGE_ALLOC;
		e->arg0 = 4096 * (1 + (r >> 40) % 256);
	} else {
		e->kind = IG_EV_BLOCK_IO;
		e->op = IG_IO_READ;
		e->dur_ns = 100000 + (r >> 30) % 1000000;
		e->arg0 = 4096 * (1 + (r >> 40) % 32);
	}
}

static void to_model(void *ctx, const struct ig_event *e)
{
	model_ingest(ctx, e);
}

static void count_ev(void *ctx, const struct ig_event *e)
{
	(*(uint64_t *)ctx)++;
}

static uint64_t fsize(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* 3. flight recorder: push cost, the caller's share of a save of a full
 * ring, and the longest stall of a caller pushing while saves run. */
static void bench_flight(const struct ig_event *evs, uint64_t n, const char *dir)
{
	struct flight *f = flight_new(300, FLIGHT_DEFAULT_MAX_EVENTS);
	double t0 = now_s();
	for (uint64_t i = 0; i < n; i++)
		flight_push(f, &evs[i]);
	double t_push = now_s() - t0;
	char fpath[4200];
	t0 = now_s();
	int frc = flight_save(f, dir, fpath, sizeof(fpath));
	double t_snap = now_s() - t0;
	char msg[4400] = "";
	t0 = now_s();
	while (frc == 0 && !flight_poll(f, msg, sizeof(msg)))
		usleep(5000);
	double t_fsave = now_s() - t0;
	size_t fcount = flight_count(f);
	if (frc == 0)
		unlink(fpath);
	struct stall sl = flight_stalls(f, evs, n, dir);
	flight_free(f);
	printf("flight push, ns/event       %.1f\n", t_push * 1e9 / (double)n);
	printf("flight snapshot (%zu ev)  %.1f ms on the caller, %.2f s in the background\n",
	       fcount, t_snap * 1e3, t_fsave);
	/* the claim, as a ratio within this run: the caller pays for taking
	 * references on the chunks only, a small part of the whole save */
	double share = t_fsave > 0 ? t_snap / (t_snap + t_fsave) : 1;
	printf("flight save: caller share   %.2f %% of the save (target <= 10 %%: %s)\n",
	       share * 100, share <= 0.10 ? "ok" : "MISSED");
	printf("flight stall while saving   longest batch of %d pushes %.2f ms (with %d saves "
	       "of %zu events and their polls), %.1fx the median batch (%.3f ms); the viewer "
	       "must not freeze > 50 ms: %s\n",
	       STALL_BATCH, sl.max_s * 1e3, sl.saves, fcount, sl.max_s / sl.median_s,
	       sl.median_s * 1e3, sl.max_s <= 0.05 ? "ok" : "MISSED");
}

/* A sync storm (per step a launch, a 4-byte copy and a sync, each a runtime
 * call around its driver call) recorded in full and with --record-rate 500:
 * the recorder's speed and the file's size, as ratios. */
static double record_storm(const struct ig_event *evs, uint64_t n, const char *path,
			   unsigned rate, uint64_t *bytes)
{
	struct rec_opts o = {.sum_rate = rate};
	const char *err = NULL;
	unlink(path);
	struct rec *r = rec_open(path, &o, &err);
	if (!r)
		return 0;
	double t0 = now_s();
	for (uint64_t i = 0; i < n; i++)
		while (rec_event(r, &evs[i]) == -ENOBUFS)
			sched_yield();
	rec_flush(r);
	double t = now_s() - t0;
	rec_close(r);
	*bytes = fsize(path);
	unlink(path);
	return t;
}

static void bench_storm(const char *dir)
{
	static const int outer[] = {IG_OP_CUDA_LAUNCH_KERNEL, IG_OP_CUDA_MEMCPY, IG_OP_CUDA_STREAM_SYNC};
	static const int inner[] = {IG_OP_CU_LAUNCH_KERNEL, IG_OP_CU_MEMCPY_DTOH, IG_OP_CU_STREAM_SYNC};
	const uint64_t n = 1200000;
	struct ig_event *evs = calloc(n, sizeof(*evs));
	if (!evs)
		return;
	uint64_t t = 1700000000000000000ull;
	for (uint64_t i = 0; i + 1 < n; i += 2) {
		int k = (int)((i / 2) % 3);
		uint64_t d = 3000 + rnd() % 6000;
		struct ig_event o = {.kind = IG_EV_CALL, .ts_ns = t, .dur_ns = d, .pid = 4000,
				     .tid = 4001, .op = (uint16_t)outer[k], .cpu = 1};
		if (k == 1) {
			o.arg0 = 4;
			o.arg1 = IG_DIR_D2H;
		}
		evs[i] = o;
		evs[i].op = (uint16_t)inner[k];
		evs[i].ts_ns += 300;
		evs[i].dur_ns -= 600;
		evs[i + 1] = o;
		t += d + 500 + rnd() % 500;
	}
	char path[4200];
	snprintf(path, sizeof(path), "%s/ig-bench-storm-%d.db", dir, (int)getpid());
	uint64_t full_b = 0, sum_b = 0;
	double full = record_storm(evs, n, path, 0, &full_b);
	double sum = record_storm(evs, n, path, 500, &sum_b);
	if (full > 0 && sum > 0 && sum_b > 0)
		printf("storm --record-rate 500      %.1fx the events/s of a full recording, "
		       "1/%.0f of its bytes (%" PRIu64 " calls: %.1f MB in full)\n",
		       full / sum, (double)full_b / (double)sum_b, n, (double)full_b / 1e6);
	free(evs);
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	char path[4096];
	snprintf(path, sizeof(path), "%s/ig-bench-storage-%d.db", dir, (int)getpid());
	unlink(path);
	uint64_t base = 1700000000000000000ull;
	struct ig_event *evs = malloc(n * sizeof(*evs));
	if (!evs)
		return 1;
	for (uint64_t i = 0; i < n; i++)
		make_event(&evs[i], i, base);

	/* 1. recording, with the model ingesting on this thread */
	const char *err;
	struct rec *r = rec_open(path, NULL, &err);
	if (!r) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	struct ig_model *m = an_model_new(NULL);
	double t0 = now_s();
	for (uint64_t i = 0; i < n; i++) {
		model_ingest(m, &evs[i]);
		while (rec_event(r, &evs[i]) == -ENOBUFS) /* full for 2 s: a stuck disk */
			sched_yield();
	}
	rec_flush(r);
	struct rec_stats rst;
	rec_get_stats(r, &rst);
	uint64_t waits = rst.waits;
	double t_rec = now_s() - t0;
	t0 = now_s();
	rec_close(r);
	double t_close = now_s() - t0;
	an_model_free(m);
	uint64_t bytes = fsize(path);

	/* the recorder alone, without the model */
	char path2[4200];
	snprintf(path2, sizeof(path2), "%s.2", path);
	unlink(path2);
	r = rec_open(path2, NULL, &err);
	t0 = now_s();
	for (uint64_t i = 0; i < n; i++)
		while (rec_event(r, &evs[i]) == -ENOBUFS)
			sched_yield();
	rec_flush(r);
	double t_rec_only = now_s() - t0;
	rec_close(r);
	unlink(path2);

	/* with --max-db 64M: pruning runs all along */
	struct rec_opts big = {.max_db_bytes = 64ull << 20};
	r = rec_open(path2, &big, &err);
	t0 = now_s();
	for (uint64_t i = 0; i < n; i++)
		while (rec_event(r, &evs[i]) == -ENOBUFS)
			sched_yield();
	rec_flush(r);
	double t_rec_idx = now_s() - t0;
	rec_close(r);
	unlink(path2);

	/* 2. replay into the model, and replay alone */
	const char *paths[] = {path};
	struct ig_source *s = replay_open(paths, 1, &err);
	if (!s) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	m = an_model_new(NULL);
	uint64_t got = 0;
	int rc;
	t0 = now_s();
	while ((rc = s->ops->poll(s, to_model, m, 4096)) > 0)
		got += (uint64_t)rc;
	double t_replay = now_s() - t0;
	an_model_free(m);
	replay_seek(s, 0);
	uint64_t cnt = 0;
	t0 = now_s();
	while (s->ops->poll(s, count_ev, &cnt, 4096) > 0)
		;
	double t_replay_only = now_s() - t0;
	s->ops->free(s);

	double rec_rate = (double)n / t_rec, rep_rate = (double)got / t_replay;
	printf("events                      %" PRIu64 " (live-like mix)\n", n);
	printf("record + model, events/s    %.0f  (target >= 300000: %s; writer queue full %" PRIu64
	       " times, waited for room)\n",
	       rec_rate, rec_rate >= 300000 ? "ok" : "MISSED", waits);
	printf("record alone, events/s      %.0f\n", (double)n / t_rec_only);
	printf("record --max-db 64M, events/s %.0f (pruning whole seconds as it goes)\n",
	       (double)n / t_rec_idx);
	printf("rec_close (indexes, ckpt)   %.2f s\n", t_close);
	printf("replay -> model, events/s   %.0f  (target >= 1000000: %s)\n", rep_rate,
	       rep_rate >= 1000000 ? "ok" : "MISSED");
	printf("replay alone, events/s      %.0f\n", (double)cnt / t_replay_only);
	printf("bytes on disk per 1M events %.1f MB\n", (double)bytes / ((double)n / 1e6) / 1e6);
	bench_flight(evs, n, dir);
	bench_storm(dir);
	unlink(path);
	free(evs);
	return 0;
}
