/* --record-rate: a synthetic sync storm (a launch, a device-to-host copy and
 * a stream sync a step, each a runtime call around its driver call, with
 * preemptions between and inside calls, a heavy tail and rare slow syncs)
 * and a quiet thread, recorded in full and at 500 calls/s, both replayed.
 * The summarised recording is a fraction of the size; its replay has every
 * op's count exactly, the duration sums within 0.1 %, none shorter than
 * the shortest live call, p50 and p99 within
 * 10 %, every preempted and slow call as it was, no two calls of the thread
 * overlapping and no call over an off-CPU interval, and the model finds
 * the same split of the thread's time (within 1.5 points) and the same
 * round-trip syncs; the quiet thread is untouched. A seek lands at the same
 * calls; damaged summary rows are refused and counted, never crash. Runs
 * a stuck writer's full queue refuses count their calls as dropped; runs
 * that overlap more than a recorder writes are refused (memory bounded). */
#include "check.h"
#include "core/ops.h"
#include "analysis.h"
#include "store/rec.h"
#include "store/replay.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BASE 1800000000000000000ull
#define SECONDS 2
#define PID 500
#define TID 501
#define QUIET 502
#define RATE 500

static char tmpdir[256];

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

struct vec {
	struct ig_event *e;
	size_t n, cap;
};

static void push(struct vec *v, const struct ig_event *e)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 4096;
		v->e = realloc(v->e, v->cap * sizeof(*v->e));
		if (!v->e)
			abort();
	}
	v->e[v->n++] = *e;
}

static uint64_t end_of(const struct ig_event *e)
{
	return e->ts_ns + e->dur_ns;
}

static int by_end(const void *a, const void *b)
{
	uint64_t x = end_of(a), y = end_of(b);
	return x < y ? -1 : x > y;
}

static int by_start(const void *a, const void *b)
{
	const struct ig_event *x = a, *y = b;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->dur_ns > y->dur_ns ? -1 : x->dur_ns < y->dur_ns;
}

static struct ig_event call(int op, uint32_t tid, uint64_t ts, uint64_t dur)
{
	struct ig_event e = {.kind = IG_EV_CALL,
			     .ts_ns = ts,
			     .dur_ns = dur,
			     .pid = PID,
			     .tid = tid,
			     .op = (uint16_t)op,
			     .cpu = 1};
	memcpy(e.comm, "storm", 6);
	if (op == IG_OP_CUDA_MEMCPY || op == IG_OP_CU_MEMCPY_DTOH) {
		e.arg0 = 4;
		e.arg1 = IG_DIR_D2H;
	}
	if (op == IG_OP_CUDA_LAUNCH_KERNEL || op == IG_OP_CU_LAUNCH_KERNEL)
		e.arg0 = 0x7f0000001000ull;
	return e;
}

/* A runtime call around its driver call: the driver call arrives first. */
static void pair(struct vec *v, int outer, int inner, uint64_t ts, uint64_t dur, uint64_t pre)
{
	struct ig_event i = call(inner, TID, ts + 600, dur - 1200);
	struct ig_event o = call(outer, TID, ts, dur);
	if (pre) {
		i.preempt_ns = o.preempt_ns = pre;
		i.switches = o.switches = 1;
		o.other_pid = i.other_pid = 77;
	}
	push(v, &i);
	push(v, &o);
}

/* The storm and the quiet thread, by completion as a source delivers. */
static void make_stream(struct vec *v, size_t *pre_calls, size_t *slow_calls)
{
	uint64_t t = BASE + 1000, end = BASE + SECONDS * 1000000000ull;
	*pre_calls = *slow_calls = 0;
	for (unsigned step = 1; t < end; step++) {
		uint64_t d = 4000 + rnd(2000);
		pair(v, IG_OP_CUDA_LAUNCH_KERNEL, IG_OP_CU_LAUNCH_KERNEL, t, d, 0);
		t += d + 500 + rnd(1000);
		d = 8000 + rnd(4000);
		pair(v, IG_OP_CUDA_MEMCPY, IG_OP_CU_MEMCPY_DTOH, t, d, 0);
		t += d + 500 + rnd(1000);
		d = rnd(100) < 3 ? 60000 + rnd(5000) : 10000 + rnd(20000);
		uint64_t pre = 0;
		if (step % 300 == 0) {
			pre = 20000;
			d += pre;
			*pre_calls += 2;
		}
		if (step % 2000 == 0) {
			d = 2000000;
			*slow_calls += 2;
		}
		pair(v, IG_OP_CUDA_STREAM_SYNC, IG_OP_CU_STREAM_SYNC, t, d, pre);
		if (pre) { /* the interval itself, inside the driver call */
			struct ig_event o = {.kind = IG_EV_OFFCPU,
					     .ts_ns = t + 2000,
					     .dur_ns = pre,
					     .pid = PID,
					     .tid = TID,
					     .state = IG_OFF_PREEMPTED,
					     .flags = IG_F_IN_CALL,
					     .preempt_ns = pre,
					     .other_pid = 77,
					     .cpu = 1};
			push(v, &o);
		}
		t += d + 500 + rnd(1000);
		if (step % 200 == 0) { /* preempted between calls */
			struct ig_event o = {.kind = IG_EV_OFFCPU,
					     .ts_ns = t,
					     .dur_ns = 50000,
					     .pid = PID,
					     .tid = TID,
					     .state = IG_OFF_PREEMPTED,
					     .preempt_ns = 50000,
					     .other_pid = 77,
					     .cpu = 1};
			push(v, &o);
			t += 50000 + 300;
		}
	}
	for (uint64_t q = BASE + 5000; q < end; q += 10000000) {
		struct ig_event e = call(IG_OP_CUDA_LAUNCH_KERNEL, QUIET, q, 7000);
		push(v, &e);
	}
	qsort(v->e, v->n, sizeof(v->e[0]), by_end);
}

static int64_t sql_int(const char *path, const char *sql)
{
	sqlite3 *db;
	int64_t v = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW)
				v = sqlite3_column_int64(st, 0);
			sqlite3_finalize(st);
		}
	}
	sqlite3_close(db);
	return v;
}

static int sql_exec(const char *path, const char *sql)
{
	sqlite3 *db;
	int rc = sqlite3_open(path, &db);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
}

static int record(const char *path, const struct vec *v, unsigned rate, struct rec_stats *st)
{
	struct rec_opts o = {.sum_rate = rate};
	const char *err = NULL;
	unlink(path);
	struct rec *r = rec_open(path, &o, &err);
	CHECKF(r, "%s", err ? err : "?");
	if (!r)
		return -1;
	int bad = 0;
	for (size_t i = 0; i < v->n; i++)
		bad += rec_event(r, &v->e[i]) != 0;
	rec_get_stats(r, st);
	CHECK(bad == 0);
	return rec_close(r);
}

struct replayed {
	struct vec v;
	struct ig_model *m;
	struct replay_stats st;
	uint64_t last_key, out_of_order;
};

static void on_ev(void *ctx, const struct ig_event *e)
{
	struct replayed *x = ctx;
	if (e->kind != IG_EV_CALL && e->kind != IG_EV_OFFCPU)
		return;
	push(&x->v, e);
	model_ingest(x->m, e);
	if (end_of(e) < x->last_key)
		x->out_of_order++;
	x->last_key = end_of(e);
}

/* Replays path (from seek when not 0) into x: its events and a model. */
static int replay(const char *path, struct replayed *x, uint64_t seek)
{
	const char *paths[] = {path}, *err = NULL;
	memset(x, 0, sizeof(*x));
	x->m = an_model_new(NULL);
	struct ig_source *s = replay_open(paths, 1, &err);
	CHECKF(s, "%s", err ? err : "?");
	if (!s || !x->m)
		return -1;
	if (seek)
		CHECK(replay_seek(s, seek) == 0);
	int rc;
	while ((rc = s->ops->poll(s, on_ev, x, 4096)) > 0)
		;
	replay_get_stats(s, &x->st);
	s->ops->free(s);
	model_advance(x->m, BASE + (SECONDS + 1) * 1000000000ull);
	return rc == -ENODATA ? 0 : rc;
}

static void free_replayed(struct replayed *x)
{
	an_model_free(x->m);
	free(x->v.e);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Calls of op in thread tid shorter than lo ns. */
static size_t shorter(const struct vec *v, int op, uint32_t tid, double lo)
{
	size_t n = 0;
	for (size_t i = 0; i < v->n; i++)
		n += v->e[i].kind == IG_EV_CALL && v->e[i].op == op && v->e[i].tid == tid &&
		     (double)v->e[i].dur_ns < lo;
	return n;
}

/* Calls of op (tid 0: any thread): count, duration sum, p50, p99. */
static void op_figures(const struct vec *v, int op, uint32_t tid, uint64_t *n, uint64_t *sum,
		       uint64_t *p50, uint64_t *p99)
{
	uint64_t *d = malloc((v->n + 1) * sizeof(*d));
	size_t k = 0;
	*sum = 0;
	for (size_t i = 0; i < v->n; i++)
		if (v->e[i].kind == IG_EV_CALL && v->e[i].op == op &&
		    (!tid || v->e[i].tid == tid)) {
			d[k++] = v->e[i].dur_ns;
			*sum += v->e[i].dur_ns;
		}
	qsort(d, k, sizeof(*d), cmp_u64);
	*n = k;
	*p50 = *p99 = 0;
	if (k) {
		*p50 = d[(size_t)(0.50 * (double)(k - 1))];
		*p99 = d[(size_t)(0.99 * (double)(k - 1))];
	}
	free(d);
}

static int has_call(const struct vec *v, const struct ig_event *e)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->e[i].kind == IG_EV_CALL && v->e[i].ts_ns == e->ts_ns &&
		    v->e[i].dur_ns == e->dur_ns && v->e[i].op == e->op && v->e[i].tid == e->tid &&
		    v->e[i].preempt_ns == e->preempt_ns)
			return 1;
	return 0;
}

static double share(const struct ig_proc_stats *p, int part)
{
	return 100.0 * ig_part_share(&p->life_parts, part);
}

static void test_storm(void)
{
	char full[512], dense[512];
	snprintf(full, sizeof(full), "%s/full.db", tmpdir);
	snprintf(dense, sizeof(dense), "%s/dense.db", tmpdir);
	struct vec in = {0};
	size_t pre_calls, slow_calls;
	make_stream(&in, &pre_calls, &slow_calls);
	struct rec_stats fs, ds;
	CHECK(record(full, &in, 0, &fs) == 0);
	CHECK(record(dense, &in, RATE, &ds) == 0);
	CHECK(fs.summarised == 0 && fs.summaries == 0);
	CHECKF(ds.summarised > 0 && ds.summaries > 0, "summarised %" PRIu64 " in %" PRIu64 " rows",
	       ds.summarised, ds.summaries);

	/* the file: rows kept + calls summarised = every call; a fraction of the size */
	int64_t calls_in = 0;
	for (size_t i = 0; i < in.n; i++)
		calls_in += in.e[i].kind == IG_EV_CALL;
	int64_t rows = sql_int(dense, "SELECT COUNT(*) FROM events WHERE kind = 1");
	int64_t told = sql_int(dense, "SELECT SUM(calls) FROM ingero_top_summaries");
	CHECKF(rows + told == calls_in, "%" PRId64 " rows + %" PRId64 " summarised != %" PRId64,
	       rows, told, calls_in);
	CHECK(told == (int64_t)ds.summarised);
	int64_t fsize = sql_int(full, "SELECT page_count * page_size FROM pragma_page_count, "
				      "pragma_page_size");
	int64_t dsize = sql_int(dense, "SELECT page_count * page_size FROM pragma_page_count, "
				       "pragma_page_size");
	printf("     full %" PRId64 " bytes, %" PRId64 " calls; at %d calls/s: %" PRId64
	       " bytes, %" PRId64 " rows + %" PRId64 " summarised in %" PRIu64 " runs\n",
	       fsize, calls_in, RATE, dsize, rows, told, ds.summaries);
	CHECKF(dsize * 10 < fsize, "%" PRId64 " bytes is not a tenth of %" PRId64, dsize, fsize);
	CHECK(sql_int(full, "SELECT value FROM schema_info WHERE key = 'ingero_top_schema'") == 1);
	CHECK(sql_int(dense, "SELECT value FROM schema_info WHERE key = 'ingero_top_schema'") == 2);
	CHECK(sql_int(dense, "SELECT COUNT(*) FROM events WHERE tid = 502") ==
	      sql_int(full, "SELECT COUNT(*) FROM events WHERE tid = 502"));

	struct replayed a, b;
	CHECK(replay(full, &a, 0) == 0);
	CHECK(replay(dense, &b, 0) == 0);
	CHECK(a.st.summarised == 0 && b.st.summarised == (uint64_t)told);
	CHECK(b.st.refused == 0 && b.out_of_order == 0);

	/* every op: count exact, sum within 0.5 %, p50 and p99 within 10 % */
	static const int ops[] = {IG_OP_CUDA_LAUNCH_KERNEL, IG_OP_CU_LAUNCH_KERNEL,
				  IG_OP_CUDA_MEMCPY,	    IG_OP_CU_MEMCPY_DTOH,
				  IG_OP_CUDA_STREAM_SYNC,   IG_OP_CU_STREAM_SYNC};
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		uint64_t n0, s0, p50a, p99a, n1, s1, p50b, p99b, nq0, sq0, nq1, sq1, x;
		op_figures(&a.v, ops[k], TID, &n0, &s0, &p50a, &p99a);
		op_figures(&b.v, ops[k], TID, &n1, &s1, &p50b, &p99b);
		op_figures(&a.v, ops[k], QUIET, &nq0, &sq0, &x, &x);
		op_figures(&b.v, ops[k], QUIET, &nq1, &sq1, &x, &x);
		const char *name = ig_op_name(ops[k]);
		printf("     %-22s %7" PRIu64 " calls, p50 %6" PRIu64 " / %6" PRIu64
		       " ns, p99 %6" PRIu64 " / %6" PRIu64 " ns (full / summarised)\n",
		       name, n0, p50a, p50b, p99a, p99b);
		CHECKF(n0 == n1, "%s: %" PRIu64 " calls, replayed %" PRIu64, name, n0, n1);
		CHECKF(fabs((double)s1 - (double)s0) <= 0.001 * (double)s0,
		       "%s: sum %" PRIu64 " vs %" PRIu64, name, s1, s0);
		CHECKF(fabs((double)p50b - (double)p50a) <= 0.10 * (double)p50a,
		       "%s: p50 %" PRIu64 " vs %" PRIu64, name, p50b, p50a);
		CHECKF(fabs((double)p99b - (double)p99a) <= 0.10 * (double)p99a,
		       "%s: p99 %" PRIu64 " vs %" PRIu64, name, p99b, p99a);
		CHECK(nq0 == nq1 && sq0 == sq1);
		/* no call shorter than the shortest of the live run (2 % for the
		 * scaling to the exact sum): none squeezed at a run's end */
		uint64_t lo = UINT64_MAX;
		for (size_t i = 0; i < a.v.n; i++)
			if (a.v.e[i].kind == IG_EV_CALL && a.v.e[i].op == ops[k] &&
			    a.v.e[i].tid == TID && a.v.e[i].dur_ns < lo)
				lo = a.v.e[i].dur_ns;
		size_t short_n = shorter(&b.v, ops[k], TID, 0.98 * (double)lo);
		CHECKF(short_n == 0,
		       "%s: %zu calls shorter than the shortest live one (%" PRIu64 " ns)", name,
		       short_n, lo);
	}
	/* preempted and slow calls come back as they were */
	size_t pre_back = 0, slow_back = 0, pre_in = 0, slow_in = 0;
	for (size_t i = 0; i < in.n; i++) {
		const struct ig_event *e = &in.e[i];
		if (e->kind != IG_EV_CALL)
			continue;
		if (e->preempt_ns) {
			pre_in++;
			pre_back += has_call(&b.v, e);
		}
		if (e->dur_ns >= 1000000) {
			slow_in++;
			slow_back += has_call(&b.v, e);
		}
	}
	CHECKF(pre_in == pre_calls && pre_back == pre_in, "preempted calls %zu of %zu back",
	       pre_back, pre_in);
	CHECKF(slow_in >= slow_calls && slow_back == slow_in, "slow calls %zu of %zu back",
	       slow_back, slow_in);

	/* the storm thread's calls: outer ones never overlap, nor an off-CPU interval */
	qsort(b.v.e, b.v.n, sizeof(b.v.e[0]), by_start);
	uint64_t busy_to = 0;
	size_t overlaps = 0;
	for (size_t i = 0; i < b.v.n; i++) {
		const struct ig_event *e = &b.v.e[i];
		if (e->tid != TID)
			continue;
		if (end_of(e) <= busy_to) /* inside the call before */
			continue;
		overlaps += e->ts_ns < busy_to;
		busy_to = end_of(e);
	}
	CHECKF(overlaps == 0, "%zu calls or intervals overlap the one before", overlaps);

	/* the model: the same split of the storm's time and round trips */
	struct ig_proc_stats pa, pb;
	CHECK(model_proc(a.m, PID, &pa) == 0 && model_proc(b.m, PID, &pb) == 0);
	for (int p = 0; p < IG_PART_MAX; p++) {
		printf("     %-15s %5.1f%% / %5.1f%%\n", ig_part_name(p), share(&pa, p),
		       share(&pb, p));
		CHECKF(fabs(share(&pa, p) - share(&pb, p)) <= 1.5, "%s: %.1f%% vs %.1f%%",
		       ig_part_name(p), share(&pa, p), share(&pb, p));
	}
	double rta = 100.0 * (double)pa.life_parts.rt_sync_ns / (double)pa.life_parts.wall_ns;
	double rtb = 100.0 * (double)pb.life_parts.rt_sync_ns / (double)pb.life_parts.wall_ns;
	printf("     rt_sync         %5.1f%% / %5.1f%%\n", rta, rtb);
	CHECKF(rta > 5 && fabs(rta - rtb) <= 1.5, "round-trip syncs %.1f%% vs %.1f%%", rta, rtb);

	/* a seek lands at the same calls as the replay from the start */
	uint64_t seek = BASE + 1300000000ull;
	struct replayed c;
	CHECK(replay(dense, &c, seek) == 0);
	size_t after = 0, got = 0;
	for (size_t i = 0; i < b.v.n; i++)
		after += b.v.e[i].kind == IG_EV_CALL && end_of(&b.v.e[i]) >= seek;
	for (size_t i = 0; i < c.v.n; i++)
		got += c.v.e[i].kind == IG_EV_CALL;
	CHECKF(after == got && after > 0, "after the seek %zu calls, from the start %zu", got,
	       after);
	free_replayed(&c);

	/* damaged rows: refused and counted, the rest replays */
	char bad[512];
	snprintf(bad, sizeof(bad), "%s/bad.db", tmpdir);
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "cp %s %s", dense, bad);
	CHECK(system(cmd) == 0);
	CHECK(sql_exec(bad,
		       "UPDATE ingero_top_summaries SET units = '1 2 3' WHERE id = 1;"
		       "UPDATE ingero_top_summaries SET units = '99999' || substr(units, "
		       "instr(units, ' ')) WHERE id = 2;"
		       "UPDATE ingero_top_summaries SET to_ns = from_ns - 1 WHERE id = 3;"
		       "UPDATE ingero_top_summaries SET calls = calls + 1 WHERE id = 4;"
		       "UPDATE ingero_top_summaries SET units = replace(units, ';', ';;') "
		       "WHERE id = 5;"
		       "UPDATE ingero_top_summaries SET units = 'x' WHERE id = 6;"
		       "UPDATE ingero_top_summaries SET units = X'00' WHERE id = 7;") == SQLITE_OK);
	struct replayed d;
	CHECK(replay(bad, &d, 0) == 0);
	CHECKF(d.st.refused == 7, "%" PRIu64 " rows refused, want 7", d.st.refused);
	CHECK(d.st.summarised > 0 && d.st.summarised < b.st.summarised);
	free_replayed(&d);

	free_replayed(&a);
	free_replayed(&b);
	free(in.e);
}

/* A writer stuck behind another connection's write lock while runs close
 * (an off-CPU interval every 20 calls ends one): runs the full queue
 * refuses count their calls as dropped, so the calls and intervals in the
 * file (rows and runs) plus those counted dropped are all those sent. */
static void test_runs_dropped(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/drops.db", tmpdir);
	unlink(path);
	struct rec_opts o = {.sum_rate = 1, .queue_events = 16, .batch_events = 4, .wait_ms = 20};
	const char *err = NULL;
	struct rec *r = rec_open(path, &o, &err);
	CHECKF(r, "%s", err ? err : "?");
	if (!r)
		return;
	CHECK(rec_flush(r) == 0);
	sqlite3 *other;
	CHECK(sqlite3_open(path, &other) == SQLITE_OK);
	CHECK(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK);
	uint64_t t = BASE + 1000, sent = 0, odd = 0;
	struct rec_stats st = {0};
	for (int i = 0; st.dropped < 200 && i < 200000; i++) {
		struct ig_event e = call(IG_OP_CUDA_LAUNCH_KERNEL, TID, t, 5000);
		if (i % 20 == 19)
			e = (struct ig_event){.kind = IG_EV_OFFCPU,
					      .ts_ns = t,
					      .dur_ns = 1000,
					      .pid = PID,
					      .tid = TID,
					      .state = IG_OFF_PREEMPTED,
					      .preempt_ns = 1000,
					      .cpu = 1};
		int rc = rec_event(r, &e);
		odd += rc != 0 && rc != -ENOBUFS;
		sent++;
		t += 6000;
		rec_get_stats(r, &st);
	}
	CHECKF(odd == 0 && st.dropped >= 200, "%" PRIu64 " dropped, %" PRIu64 " other errors",
	       st.dropped, odd);
	CHECK(sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(other);
	CHECK(rec_flush(r) == 0 && rec_error(r) == NULL);
	rec_get_stats(r, &st);
	CHECK(rec_close(r) == 0);
	int64_t rows = sql_int(path, "SELECT COUNT(*) FROM events WHERE kind IN (1, 2)");
	int64_t told = sql_int(path, "SELECT COALESCE(SUM(calls), 0) FROM ingero_top_summaries");
	CHECKF(rows + told + (int64_t)st.dropped == (int64_t)sent,
	       "%" PRId64 " rows + %" PRId64 " summarised + %" PRIu64 " dropped != %" PRIu64
	       " sent",
	       rows, told, st.dropped, sent);
	CHECK(told > 0 && (uint64_t)told == st.summarised);
}

/* A file whose runs all overlap (70 runs of 4096 units from the same
 * instant; a recorder writes at most 64 at once, one per thread): the
 * replay holds the calls of 64 in memory and refuses the others, counted. */
static void test_overlap_bounded(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/overlap.db", tmpdir);
	unlink(path);
	const char *err = NULL;
	struct rec *r = rec_open(path, NULL, &err);
	CHECKF(r, "%s", err ? err : "?");
	if (!r)
		return;
	struct ig_event e = call(IG_OP_CUDA_LAUNCH_KERNEL, TID, BASE, 1000);
	rec_event(r, &e);
	e.ts_ns = BASE + 3000000000ull;
	rec_event(r, &e);
	CHECK(rec_close(r) == 0);
	sqlite3 *db;
	sqlite3_stmt *st;
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	CHECK(sqlite3_prepare_v2(db, recfmt_summary_insert_sql, -1, &st, NULL) == SQLITE_OK);
	static const int ops[] = {IG_OP_CUDA_MEMCPY, IG_OP_CU_MEMCPY_DTOH, IG_OP_CU_MEMCPY_DTOH};
	for (int i = 0; i < 70; i++) {
		struct rec_summary sm = {.pid = PID,
					 .tid = 1000 + (uint32_t)i,
					 .from_ns = BASE + 1000000000ull,
					 .to_ns = BASE + 1500000000ull,
					 .calls = REC_SUM_MAX_UNITS * 3,
					 .nunits = 1};
		struct rec_sum_unit *u = &sm.u[0];
		u->n = REC_SUM_MAX_UNITS;
		u->ncalls = 3;
		for (int k = 0; k < REC_SUM_Q; k++)
			u->q[k] = 1000;
		for (int j = 0; j < 3; j++)
			u->c[j] =
			    (struct rec_sum_call){.op = (uint16_t)ops[j],
						  .arg0 = 4,
						  .arg1 = IG_DIR_D2H,
						  .dur_sum = j ? 100ull * u->n : 1000ull * u->n,
						  .off_sum = j ? 100ull * u->n : 0};
		CHECK(recfmt_summary_bind(st, &sm, "") == 0);
		CHECK(sqlite3_step(st) == SQLITE_DONE);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	CHECK(sqlite3_exec(db,
			   "INSERT OR REPLACE INTO schema_info VALUES "
			   "('ingero_top_schema', '2')",
			   NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	struct replayed x;
	CHECK(replay(path, &x, 0) == 0);
	CHECKF(x.st.refused == 6 && x.st.summarised == 64ull * REC_SUM_MAX_UNITS * 3,
	       "%" PRIu64 " refused, %" PRIu64 " laid out", x.st.refused, x.st.summarised);
	CHECK(x.out_of_order == 0);
	free_replayed(&x);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ig-test-recsum.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	test_storm();
	test_runs_dropped();
	test_overlap_bounded();
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd)) {
	}
	return check_done("test_rec_sum");
}
