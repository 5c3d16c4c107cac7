/* The recorder: synthetic events of every kind round-trip through rec ->
 * replay with every field equal; commits by time; a full queue waits for
 * room, and a writer stuck past wait_ms makes events refused and counted;
 * --max-db prunes whole
 * seconds and says so; a full disk stops recording and leaves a valid file;
 * kill -9 while recording keeps everything committed before it; chains
 * with hostile texts are valid JSON in the file and come back equal;
 * errors. */
#include "check.h"
#include "core/ops.h"
#include "core/waits.h"
#include "store/rec.h"
#include "store/replay.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[256];

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void rand_comm(char *c, int full)
{
	static const char *names[] = {"python3", "pt_data_worker", "stress-ng", "train",
				      "exactly16chars!!"};
	memset(c, 0, IG_COMM_LEN);
	const char *n = names[rnd() % 5];
	if (full)
		n = names[4];
	memcpy(c, n, strlen(n) < IG_COMM_LEN ? strlen(n) : IG_COMM_LEN);
}

/* A valid event of a random kind, with every field its kind uses set. */
static void synth(struct ig_event *e, uint64_t base, int i)
{
	memset(e, 0, sizeof(*e));
	static const int kinds[] = {IG_EV_CALL,	      IG_EV_CALL,     IG_EV_CALL,     IG_EV_OFFCPU,
				    IG_EV_OFFCPU,     IG_EV_FORK,     IG_EV_EXEC,     IG_EV_EXIT,
				    IG_EV_PAGE_ALLOC, IG_EV_BLOCK_IO, IG_EV_SNAPSHOT, IG_EV_COMM};
	int kind = kinds[rnd() % (sizeof(kinds) / sizeof(kinds[0]))];
	uint64_t ts = base + (uint64_t)i * 1000003 + rnd() % 1000;
	if (kind == IG_EV_SNAPSHOT) {
		ig_snapshot_fill(e, ts, (double)(rnd() % 1001) / 10.0,
				 (double)(rnd() % 1001) / 10.0, rnd() % 100000, rnd() % 4096,
				 (double)(rnd() % 5000) / 100.0);
		e->node = (uint8_t)(rnd() % 3);
		return;
	}
	e->kind = (uint16_t)kind;
	e->ts_ns = ts;
	e->pid = 1000 + (uint32_t)(rnd() % 50);
	e->tid = e->pid + (uint32_t)(rnd() % 4);
	e->node = (uint8_t)(rnd() % 3);
	rand_comm(e->comm, i % 17 == 0);
	if (kind == IG_EV_COMM)
		return;
	e->dur_ns = 1 + rnd() % 50000000;
	e->cpu = (uint32_t)(rnd() % 64);
	e->cgroup_id = rnd();
	switch (kind) {
	case IG_EV_CALL:
		e->op = (uint16_t)(1 + rnd() % (IG_OP_MAX - 1));
		e->ret = (int32_t)(rnd() % 3) - 1;
		e->flags = (uint32_t)(rnd() % 4);
		e->arg0 = rnd();
		e->arg1 = rnd() % 5;
		e->stream = rnd();
		/* off-CPU parts within the call (replay refuses more than 100 %) */
		e->preempt_ns = rnd() % e->dur_ns;
		e->blocked_ns = rnd() % (e->dur_ns - e->preempt_ns);
		e->switches = (uint32_t)(rnd() % 100);
		e->other_pid = (uint32_t)(rnd() % 65536);
		rand_comm(e->other_comm, i % 13 == 0);
		e->stack_id = rnd();
		break;
	case IG_EV_OFFCPU:
		e->state = (uint8_t)(rnd() % 3);
		e->flags = (uint32_t)(rnd() % 2);
		e->other_pid = (uint32_t)(rnd() % 65536);
		rand_comm(e->other_comm, 0);
		break;
	case IG_EV_FORK:
		e->arg0 = 2000 + rnd() % 1000;
		e->dur_ns = 0;
		break;
	case IG_EV_PAGE_ALLOC:
		e->arg0 = (rnd() % 100000) * 4096;
		break;
	case IG_EV_BLOCK_IO:
		e->op = (uint16_t)(1 + rnd() % 4);
		e->arg0 = (rnd() % 1024) * 512;
		e->arg1 = rnd() % 1000000;
		break;
	default:
		e->dur_ns = 0;
		break;
	}
}

struct vec {
	struct ig_event *v;
	size_t n, cap;
};

static void on_ev(void *ctx, const struct ig_event *e)
{
	struct vec *v = ctx;
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 1024;
		v->v = realloc(v->v, v->cap * sizeof(*v->v));
	}
	v->v[v->n++] = *e;
}

static int replay_all(const char *path, struct vec *out, struct ig_source **keep)
{
	const char *paths[] = {path}, *err = NULL;
	struct ig_source *s = replay_open(paths, 1, &err);
	if (!s) {
		fprintf(stderr, "replay: %s\n", err);
		return -1;
	}
	int rc;
	while ((rc = s->ops->poll(s, on_ev, out, 4096)) > 0)
		;
	struct replay_stats st;
	replay_get_stats(s, &st);
	CHECKF(st.refused == 0, "%s: %" PRIu64 " rows refused", path, st.refused);
	if (keep)
		*keep = s;
	else
		s->ops->free(s);
	return rc == -ENODATA ? 0 : rc;
}

static int type_rank(const struct ig_event *e)
{
	return e->kind == IG_EV_COMM ? 0 : e->kind == IG_EV_SNAPSHOT ? 1 : 3;
}

struct ordered {
	struct ig_event e;
	size_t seq;
};

static int cmp_order(const void *a, const void *b)
{
	const struct ordered *x = a, *y = b;
	uint64_t kx = x->e.ts_ns + x->e.dur_ns, ky = y->e.ts_ns + y->e.dur_ns;
	if (kx != ky)
		return kx < ky ? -1 : 1;
	if (type_rank(&x->e) != type_rank(&y->e))
		return type_rank(&x->e) - type_rank(&y->e);
	return x->seq < y->seq ? -1 : x->seq > y->seq;
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

/* PRAGMA integrity_check says ok (opening it normally recovers a WAL). */
static int integrity_ok(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int ok = 0;
	if (sqlite3_open(path, &db) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK) {
		ok = sqlite3_step(st) == SQLITE_ROW &&
		     !strcmp((const char *)sqlite3_column_text(st, 0), "ok");
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return ok;
}

static void test_round_trip(int sync)
{
	char path[512];
	path_in(path, sizeof(path), sync ? "rt-sync.db" : "rt.db");
	const char *err = NULL;
	struct rec_opts o = {.synchronous = sync, .batch_events = 1000};
	struct rec *r = rec_open(path, &o, &err);
	CHECKF(r, "%s", err ? err : "?");
	if (!r)
		return;
	CHECK(rec_set_node_name(r, 1, "gpu-b") == 0);
	CHECK(rec_set_node_name(r, 2, "gpu-c") == 0);
	struct rec_session ses = {.started_at_ns = 1700000000000000000ull,
				  .cpu_model = "Test CPU",
				  .cpu_cores = 8,
				  .mem_total_mb = 16000,
				  .kernel = "6.1.0",
				  .node = "hostA",
				  .flags = "record"};
	CHECK(rec_session_info(r, &ses) == 0);
	enum { N = 20000 };
	struct ordered *want = calloc(N, sizeof(*want));
	size_t nw = 0;
	uint64_t base = 1700000000000000000ull;
	for (int i = 0; i < N; i++) {
		struct ig_event e;
		synth(&e, base, i);
		CHECK(rec_event(r, &e) == 0);
		want[nw].e = e;
		want[nw].seq = (size_t)i;
		nw++;
	}
	const char *recs[] = {"pin"};
	struct rec_chain ch = {.id = "cpu-contention-cudaStreamSynchronize",
			       .detected_at_ns = base + 5000000000ull,
			       .severity = "HIGH",
			       .summary = "cudaStreamSynchronize p99 142 ms",
			       .root_cause = "cpu_contention",
			       .explanation = "preempted",
			       .recs = recs,
			       .nrecs = 1,
			       .cuda_op = "cudaStreamSynchronize",
			       .p99_us = 142000,
			       .p50_us = 900,
			       .tail_ratio = 157.7};
	CHECK(rec_chain(r, &ch) == 0);
	CHECK(rec_stack(r, 42, "[\"0x1\"]", "[{\"s\":\"main\"}]") == 0);
	CHECK(rec_flush(r) == 0);
	CHECK(rec_error(r) == NULL);
	struct rec_stats st;
	rec_get_stats(r, &st);
	CHECK(st.dropped == 0);
	CHECK(rec_close(r) == 0);

	qsort(want, nw, sizeof(*want), cmp_order);
	struct vec got = {0};
	struct ig_source *s = NULL;
	CHECK(replay_all(path, &got, &s) == 0);
	CHECKF(got.n == nw, "replayed %zu of %zu", got.n, nw);
	size_t bad = 0;
	for (size_t i = 0; i < got.n && i < nw; i++) {
		if (memcmp(&got.v[i], &want[i].e, sizeof(struct ig_event))) {
			if (bad++ < 3) {
				const struct ig_event *a = &got.v[i], *b = &want[i].e;
				fprintf(stderr,
					"event %zu differs: kind %d/%d op %d/%d ts %" PRIu64
					"/%" PRIu64 " node %d/%d comm %.16s/%.16s\n",
					i, a->kind, b->kind, a->op, b->op, a->ts_ns, b->ts_ns,
					a->node, b->node, a->comm, b->comm);
			}
		}
	}
	CHECKF(bad == 0, "%zu events differ", bad);
	if (s) {
		CHECK(replay_node_name(s, 0) && !strcmp(replay_node_name(s, 0), "hostA"));
		CHECK(replay_node_name(s, 1) && !strcmp(replay_node_name(s, 1), "gpu-b"));
		CHECK(replay_node_name(s, 2) && !strcmp(replay_node_name(s, 2), "gpu-c"));
		struct rec_chain *c;
		size_t n;
		CHECK(replay_chains(s, &c, &n) == 0 && n == 1);
		if (n == 1) {
			CHECK(!strcmp(c[0].id, ch.id) && !strcmp(c[0].severity, "HIGH") &&
			      c[0].p99_us == 142000 && c[0].tail_ratio == 157.7 &&
			      c[0].nrecs == 1 && !strcmp(c[0].recs[0], "pin") &&
			      c[0].ntimeline == 0 && c[0].detected_at_ns == ch.detected_at_ns &&
			      !strcmp(c[0].node, "hostA"));
		}
		replay_chains_free(c, n);
		struct rec_session *ss;
		CHECK(replay_sessions(s, &ss, &n) == 0 && n == 1);
		if (n == 1)
			CHECK(ss[0].cpu_cores == 8 && !strcmp(ss[0].cpu_model, "Test CPU") &&
			      ss[0].stopped_at_ns > 0 && !strcmp(ss[0].node, "hostA") &&
			      strstr(ss[0].version, "ingero-top"));
		replay_sessions_free(ss, n);
		struct replay_file_info fi;
		CHECK(replay_file_info(s, 0, &fi) == 0 && !strcmp(fi.writer, "ingero-top") &&
		      fi.ingero_top_schema ==
			  REC_SCHEMA_PLAIN); /* no summaries: older builds read it */
		s->ops->free(s);
	}
	/* Ingero's SQL works on it: the README's per-op query, joins on ops */
	CHECK(sql_int(path, "SELECT COUNT(*) FROM events e JOIN sources s ON s.id = e.source "
			    "JOIN ops o ON o.source_id = e.source AND o.op_id = e.op") ==
	      sql_int(path, "SELECT COUNT(*) FROM events"));
	CHECK(sql_int(path, "SELECT COUNT(*) FROM events WHERE source = 3 AND op = 1 AND "
			    "timestamp != start_ns + duration") == 0);
	CHECK(sql_int(path, "SELECT COUNT(*) FROM stack_traces WHERE hash = 42") == 1);
	CHECK(sql_int(path, "SELECT COUNT(*) FROM causal_chains WHERE recommendations = "
			    "'[\"pin\"]' AND timeline = '[]'") == 1);
	CHECK(sql_int(path, "SELECT COUNT(*) FROM sqlite_master WHERE name = "
			    "'idx_events_timestamp'") == 1);
	CHECK(sql_int(path, "SELECT value FROM schema_info WHERE key = 'ingero_top_schema'") ==
	      REC_SCHEMA_PLAIN);
	char wal[600];
	snprintf(wal, sizeof(wal), "%s-wal", path);
	CHECK(access(wal, F_OK) != 0); /* closed: one self-contained file */
	free(got.v);
	free(want);
}

/* Chains whose texts hold quotes, backslashes, control bytes and invalid
 * UTF-8: the JSON columns pass SQLite's own json_valid on every row, and
 * replay_chains gives every text back (invalid bytes as U+FFFD in the JSON
 * columns, byte for byte in the plain ones). */
static void test_chain_json(void)
{
	static const char *const texts[] = {
	    "say \"hi\" \\ back\\slash \\u0041",
	    "ctl \x01\x1b]0;pwned\x07\x7f tab\t cr\r nl\n",
	    "bad \xff\xfe utf8 \xc3",
	    "caf\xc3\xa9 \xe2\x80\xa8 \xc2\x9b ok",
	    "",
	};
	static const char *const back[] = {
	    "say \"hi\" \\ back\\slash \\u0041",
	    "ctl \x01\x1b]0;pwned\x07\x7f tab\t cr\r nl\n",
	    "bad \xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd",
	    "caf\xc3\xa9 \xe2\x80\xa8 \xc2\x9b ok",
	    "",
	};
	enum { N = 12, NT = 5 };
	char path[512];
	path_in(path, sizeof(path), "chains.db");
	const char *err;
	struct rec *r = rec_open(path, NULL, &err);
	CHECKF(r, "%s", err ? err : "?");
	if (!r)
		return;
	uint64_t base = 1700000000000000000ull;
	char ids[N][24];
	for (int round = 0; round < 2; round++) /* the second replaces the first, by id */
		for (int c = 0; c < N; c++) {
			const char *recs[4];
			struct rec_tl tl[4];
			size_t nrecs = (size_t)(c % 5), ntl = (size_t)(c % 4);
			for (size_t k = 0; k < nrecs; k++)
				recs[k] = texts[(c + (int)k + round) % NT];
			for (size_t k = 0; k < ntl; k++)
				tl[k] = (struct rec_tl){.ts_ns = base + (uint64_t)(c * 10 + (int)k),
							.text = texts[(c + (int)k) % NT]};
			snprintf(ids[c], sizeof(ids[c]), "chain-%04d", c);
			struct rec_chain ch = {.id = ids[c],
					       .detected_at_ns = base + (uint64_t)c,
					       .severity = round ? "HIGH" : "LOW",
					       .summary = texts[c % NT],
					       .root_cause = "cpu_contention",
					       .explanation = texts[(c + 1) % NT],
					       .recs = nrecs ? recs : NULL,
					       .nrecs = nrecs,
					       .cuda_op = "cudaMalloc",
					       .timeline = ntl ? tl : NULL,
					       .ntimeline = ntl};
			CHECK(rec_chain(r, &ch) == 0);
		}
	CHECK(rec_close(r) == 0);
	CHECK(sql_int(path, "SELECT COUNT(*) FROM causal_chains") == N);
	CHECK(sql_int(path, "SELECT COUNT(*) FROM causal_chains WHERE json_valid(timeline) = 1 "
			    "AND json_valid(recommendations) = 1 AND json_type(timeline) = 'array' "
			    "AND json_type(recommendations) = 'array'") == N);
	CHECK(sql_int(path, "SELECT json_extract(timeline, '$[1].ts_ns') FROM causal_chains "
			    "WHERE id = 'chain-0003'") == (int64_t)(base + 31));

	struct ig_source *src = NULL;
	struct vec got = {0};
	CHECK(replay_all(path, &got, &src) == 0);
	struct rec_chain *c = NULL;
	size_t n = 0;
	CHECK(src && replay_chains(src, &c, &n) == 0 && n == N);
	int bad = 0;
	for (size_t i = 0; i < n && i < N; i++) {
		int ci = (int)i; /* ordered by detected_at = base + c */
		bad += strcmp(c[i].id, ids[ci]) || strcmp(c[i].severity, "HIGH") ||
		       strcmp(c[i].summary, texts[ci % NT]) ||
		       strcmp(c[i].explanation, texts[(ci + 1) % NT]);
		bad += c[i].nrecs != (size_t)(ci % 5) || c[i].ntimeline != (size_t)(ci % 4);
		for (size_t k = 0; k < c[i].nrecs && k < (size_t)(ci % 5); k++)
			bad += strcmp(c[i].recs[k], back[(ci + (int)k + 1) % NT]) != 0;
		for (size_t k = 0; k < c[i].ntimeline && k < (size_t)(ci % 4); k++)
			bad += c[i].timeline[k].ts_ns != base + (uint64_t)(ci * 10 + (int)k) ||
			       strcmp(c[i].timeline[k].text, back[(ci + (int)k) % NT]);
	}
	CHECKF(bad == 0, "%d differences in replayed chains", bad);
	/* a copy owns everything: it outlives the array it came from */
	struct rec_chain copy;
	CHECK(n > 3 && rec_chain_copy(&copy, &c[3]) == 0);
	replay_chains_free(c, n);
	CHECK(copy.own && copy.nrecs == 3 && !strcmp(copy.recs[2], back[(3 + 2 + 1) % NT]) &&
	      copy.ntimeline == 3 && copy.timeline[2].ts_ns == base + 32);
	rec_chain_clear(&copy);
	CHECK(copy.own == NULL && copy.id == NULL);
	if (src)
		src->ops->free(src);
	free(got.v);
}

/* Appending a second session to an existing recording; refusing others. */
static void test_append_and_errors(void)
{
	char path[512];
	path_in(path, sizeof(path), "append.db");
	const char *err;
	for (int round = 0; round < 2; round++) {
		struct rec *r = rec_open(path, NULL, &err);
		CHECKF(r, "%s", err ? err : "?");
		struct ig_event e;
		synth(&e, 1700000000000000000ull + (uint64_t)round * 10000000000ull, 1);
		e.kind = IG_EV_EXIT;
		e.dur_ns = 0;
		rec_event(r, &e);
		CHECK(rec_close(r) == 0);
	}
	CHECK(sql_int(path, "SELECT COUNT(*) FROM sessions") == 2);
	CHECK(sql_int(path, "SELECT COUNT(*) FROM events") == 2);
	struct rec_opts ex = {.exclusive = 1};
	CHECK(rec_open(path, &ex, &err) == NULL && strstr(err, "exists"));

	CHECK(rec_open("/nonexistent-dir/x.db", NULL, &err) == NULL && err &&
	      strstr(err, "/nonexistent-dir/x.db"));
	CHECK(rec_open(tmpdir, NULL, &err) == NULL && strstr(err, "directory"));
	char other[512];
	path_in(other, sizeof(other), "other.db");
	sqlite3 *db;
	sqlite3_open(other, &db);
	sqlite3_exec(db,
		     "CREATE TABLE t(x); CREATE TABLE schema_info(key, value);"
		     "INSERT INTO schema_info VALUES ('version', '0.9')",
		     NULL, NULL, NULL);
	sqlite3_close(db);
	CHECK(rec_open(other, NULL, &err) == NULL && strstr(err, "not an ingero-top recording"));
	FILE *f = fopen(other, "w");
	fputs("text, not a database\n", f);
	fclose(f);
	CHECK(rec_open(other, NULL, &err) == NULL && err);

	uint64_t b;
	CHECK(rec_parse_size("500M", &b) == 0 && b == 500ull << 20);
	CHECK(rec_parse_size("2g", &b) == 0 && b == 2ull << 30);
	CHECK(rec_parse_size("10 GiB", &b) == 0 && b == 10ull << 30);
	CHECK(rec_parse_size("1.5k", &b) == 0 && b == 1536);
	CHECK(rec_parse_size("4096", &b) == 0 && b == 4096);
	CHECK(rec_parse_size("12x", &b) == -EINVAL);
	CHECK(rec_parse_size("", &b) == -EINVAL);
	CHECK(rec_parse_size("-1M", &b) == -EINVAL);
	const char *name;
	int id;
	CHECK(recfmt_ingero_op(IG_EV_OFFCPU, 0, &name, &id) == 3 && !strcmp(name, "sched_switch") &&
	      id == 1);
	CHECK(recfmt_ingero_op(IG_EV_CALL, IG_OP_CUDA_STREAM_SYNC, &name, &id) == 1 &&
	      !strcmp(name, "cudaStreamSync") && id == 5);
	CHECK(recfmt_ingero_op(IG_EV_CALL, IG_OP_CU_STREAM_SYNC, &name, NULL) == 4);
	CHECK(recfmt_ingero_op(IG_EV_SNAPSHOT, 0, &name, NULL) == 0);
	int k, op;
	CHECK(recfmt_ingero_kind(1, "cudaStreamSync", &k, &op) == 0 && k == IG_EV_CALL &&
	      op == IG_OP_CUDA_STREAM_SYNC);
	CHECK(recfmt_ingero_kind(5, "block_write", &k, &op) == 0 && k == IG_EV_BLOCK_IO &&
	      op == IG_IO_WRITE);
	CHECK(recfmt_ingero_kind(3, "sched_wakeup", &k, &op) == -ENOENT);
	CHECK(rec_close(NULL) == 0);
}

/* Rows become visible to other readers after commit_ms, without a flush
 * and without more events: polled with a generous deadline. */
static void test_commit_by_time(void)
{
	char path[512];
	path_in(path, sizeof(path), "timed.db");
	const char *err;
	struct rec_opts o = {.commit_ms = 50};
	struct rec *r = rec_open(path, &o, &err);
	CHECK(r);
	if (!r)
		return;
	for (int i = 0; i < 10; i++) {
		struct ig_event e;
		synth(&e, wall_ns(), i);
		e.kind = IG_EV_EXIT;
		e.dur_ns = 0;
		rec_event(r, &e);
	}
	int64_t n = 0;
	for (int i = 0; i < 6000 && n != 10; i++) { /* up to 60 s */
		usleep(10000);
		n = sql_int(path, "SELECT COUNT(*) FROM events");
	}
	CHECKF(n == 10, "%" PRId64 " rows visible", n);
	struct rec_stats st;
	rec_get_stats(r, &st);
	CHECK(st.committed == 10 && st.commits >= 1);
	rec_close(r);
}

/* A writer slower than its producer loses nothing: a full queue makes
 * rec_event() wait for room (counted), and every event reaches the file. A
 * queue of 16 events fills at once whatever the machine's speed. */
static void test_full_queue_waits(void)
{
	char path[512];
	path_in(path, sizeof(path), "fullq.db");
	const char *err;
	struct rec_opts o = {.queue_events = 16, .batch_events = 8};
	struct rec *r = rec_open(path, &o, &err);
	CHECK(r);
	if (!r)
		return;
	const int n = 20000;
	uint64_t base = wall_ns();
	int refused = 0;
	for (int i = 0; i < n; i++) {
		struct ig_event e;
		synth(&e, base, i);
		e.kind = IG_EV_EXIT; /* one events row each */
		e.dur_ns = 0;
		refused += rec_event(r, &e) != 0;
	}
	struct rec_stats st;
	rec_flush(r);
	rec_get_stats(r, &st);
	CHECKF(refused == 0 && st.dropped == 0, "%d refused, %" PRIu64 " dropped", refused,
	       st.dropped);
	CHECKF(st.events == (uint64_t)n, "%" PRIu64 " of %d written", st.events, n);
	CHECK(rec_close(r) == 0);
	int64_t rows = sql_int(path, "SELECT COUNT(*) FROM events");
	CHECKF(rows == n, "%" PRId64 " rows of %d", rows, n);
	printf("  full queue: waited %" PRIu64 " times, %.3f s in all\n", st.waits,
	       (double)st.wait_ns / 1e9);
}

/* A writer that makes no room for wait_ms (another connection holds the
 * file's write lock: a stuck disk, as far as the recorder can tell): the
 * caller waits that long once, then events are refused and counted, never
 * lost silently; once the lock goes the writer takes again and everything
 * it took is in the file. */
static void test_drops_counted(void)
{
	char path[512];
	path_in(path, sizeof(path), "drops.db");
	const char *err;
	struct rec_opts o = {.queue_events = 16, .batch_events = 4, .wait_ms = 20};
	struct rec *r = rec_open(path, &o, &err);
	CHECK(r);
	if (!r)
		return;
	CHECK(rec_flush(r) == 0); /* the schema is in, the writer idle */
	sqlite3 *other;
	CHECK(sqlite3_open(path, &other) == SQLITE_OK);
	CHECK(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK);
	uint64_t base = wall_ns();
	int n = 0, refused = 0;
	while (refused < 3 && n < 100000) { /* until the full queue refuses three */
		struct ig_event e;
		synth(&e, base, n++);
		e.kind = IG_EV_EXIT;
		e.dur_ns = 0;
		int rc = rec_event(r, &e);
		CHECKF(rc == 0 || rc == -ENOBUFS, "rec_event: %d", rc);
		refused += rc == -ENOBUFS;
	}
	struct rec_stats st;
	rec_get_stats(r, &st);
	CHECKF(refused == 3 && st.dropped == 3 && st.waits >= 1,
	       "%d refused, %" PRIu64 " dropped, %" PRIu64 " waits", refused, st.dropped, st.waits);
	CHECK(sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(other);
	CHECK(rec_flush(r) == 0 && rec_error(r) == NULL);
	rec_get_stats(r, &st);
	CHECKF(st.events + st.dropped == (uint64_t)n,
	       "%" PRIu64 " written + %" PRIu64 " dropped of %d", st.events, st.dropped, n);
	CHECK(rec_close(r) == 0);
	int64_t rows = sql_int(path, "SELECT COUNT(*) FROM events");
	CHECKF(rows == n - 3, "%" PRId64 " rows of %d sent, 3 refused", rows, n);
}

/* --max-db: the file stays near the bound, whole seconds go, it is noted. */
static void test_max_db(void)
{
	char path[512];
	path_in(path, sizeof(path), "bounded.db");
	const char *err;
	struct rec_opts o = {.max_db_bytes = 2 << 20};
	struct rec *r = rec_open(path, &o, &err);
	CHECK(r);
	if (!r)
		return;
	uint64_t base = 1700000000000000000ull;
	enum { N = 120000 };
	for (int i = 0; i < N; i++) {
		struct ig_event e;
		synth(&e, base, i); /* ~1 ms apart: 120 s */
		if (e.kind == IG_EV_SNAPSHOT || e.kind == IG_EV_COMM) {
			e.kind = IG_EV_EXIT;
			e.pid = e.tid = 1000; /* a snapshot has none: replay refuses pid 0 */
		}
		e.dur_ns = 1000;
		while (rec_event(r, &e) == -ENOBUFS)
			usleep(1000);
	}
	rec_flush(r);
	struct rec_stats st;
	rec_get_stats(r, &st);
	CHECK(st.prunes > 0 && st.pruned_events > 0);
	printf("max-db: %" PRIu64 " prunes, %" PRIu64 " events pruned, used %" PRIu64 " bytes\n",
	       st.prunes, st.pruned_events, st.db_bytes);
	CHECK(rec_close(r) == 0);
	struct stat sb;
	stat(path, &sb);
	CHECKF((uint64_t)sb.st_size <= (uint64_t)o.max_db_bytes * 3 / 2, "file %lld bytes",
	       (long long)sb.st_size);
	int64_t before = sql_int(path, "SELECT MAX(before_ns) FROM ingero_top_pruned");
	CHECK(before > 0 && before % 1000000000 == 0);
	CHECK(sql_int(path, "SELECT value FROM schema_info WHERE key = 'pruned_before_ns'") ==
	      before);
	CHECK(sql_int(path, "SELECT MIN(end_ns) FROM events") >= before);
	CHECK(sql_int(path, "SELECT COUNT(*) FROM schema_info WHERE key = 'query_indexes'") == 1);
	/* the newest events are kept */
	CHECK(sql_int(path, "SELECT MAX(start_ns) FROM events") >=
	      (int64_t)(base + (uint64_t)(N - 1) * 1000003));
	CHECK(sql_int(path, "SELECT COUNT(*) FROM events") + (int64_t)st.pruned_events >=
	      N - 20000);
}

/* A full disk (here: a file-size limit) stops recording, returns -errno, and
 * what was committed stays valid and replays. */
static void test_disk_full(void)
{
	char path[512];
	path_in(path, sizeof(path), "full.db");
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = {1 << 20, 1 << 20};
		setrlimit(RLIMIT_FSIZE, &rl);
		const char *err;
		struct rec *r = rec_open(path, NULL, &err);
		if (!r)
			_exit(10);
		int rc = 0;
		for (int i = 0; i < 2000000 && (rc == 0 || rc == -ENOBUFS); i++) {
			struct ig_event e;
			synth(&e, 1700000000000000000ull, i);
			rc = rec_event(r, &e);
			if (rc == -ENOBUFS)
				usleep(1000);
		}
		if (rc == 0)
			rc = rec_flush(r);
		const char *msg = rec_error(r);
		int ok = rc < 0 && rc != -ENOBUFS && msg && strstr(msg, "stopped");
		fprintf(stderr, "disk full: rc %d: %s\n", rc, msg ? msg : "(none)");
		rec_close(r);
		_exit(ok ? 0 : 11);
	}
	int status;
	waitpid(pid, &status, 0);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
	/* the file (with its WAL, if the checkpoint could not run) is valid */
	struct vec got = {0};
	CHECK(replay_all(path, &got, NULL) == 0);
	CHECK(got.n > 1000);
	char tmp[600];
	path_in(tmp, sizeof(tmp), "full-copy.db");
	char cmd[4000];
	snprintf(cmd, sizeof(cmd), "cp %s %s; [ -f %s-wal ] && cp %s-wal %s-wal; true", path, tmp,
		 path, path, tmp);
	CHECK(system(cmd) == 0);
	CHECK(integrity_ok(tmp));
	free(got.v);
}

/* kill -9 while recording: the file passes integrity_check, replays without
 * touching it, and holds every event the recorder had reported committed
 * before the kill (the child reports each commit point through a pipe). */
static void crash_child(const char *path, int fd)
{
	const char *err;
	struct rec *r = rec_open(path, NULL, &err);
	if (!r)
		_exit(10);
	uint64_t reported = 0;
	for (uint64_t i = 0;; i++) {
		struct ig_event e;
		synth(&e, 0, (int)i);
		if (e.kind == IG_EV_SNAPSHOT || e.kind == IG_EV_COMM) {
			e.kind = IG_EV_EXIT;
			e.pid = e.tid = 1000; /* a snapshot has none: replay refuses pid 0 */
		}
		e.ts_ns = wall_ns();
		e.dur_ns = e.preempt_ns = e.blocked_ns = 0;
		rec_event(r, &e);
		if (i % 64)
			continue;
		struct rec_stats st;
		rec_get_stats(r, &st);
		if (st.committed != reported) {
			reported = st.committed;
			if (write(fd, &reported, sizeof(reported)) != sizeof(reported))
				_exit(11);
		}
		usleep(200); /* ~100k events/s */
	}
}

/* The last commit point the child reported; waits until one reaches at
 * least want (0: reads what is there until the pipe ends). */
static uint64_t read_commits(int fd, uint64_t want)
{
	uint64_t last = 0, v;
	for (int i = 0; i < 6000; i++) { /* up to 60 s */
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 10) <= 0)
			continue;
		ssize_t n = read(fd, &v, sizeof(v));
		if (n != sizeof(v))
			break;
		last = v;
		if (want && last >= want)
			break;
	}
	return last;
}

static void test_crash(void)
{
	char path[512];
	path_in(path, sizeof(path), "crash.db");
	int pfd[2];
	CHECK(pipe(pfd) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		crash_child(path, pfd[1]);
	}
	close(pfd[1]);
	uint64_t committed = read_commits(pfd[0], 20000);
	CHECKF(committed >= 20000, "only %" PRIu64 " events committed", committed);
	uint64_t killed = wall_ns();
	kill(pid, SIGKILL);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status));
	uint64_t later = read_commits(pfd[0], 0); /* reported before the kill landed */
	if (later > committed)
		committed = later;
	close(pfd[0]);
	/* replay first (it must not touch the crashed file or its WAL) */
	char wal[600];
	snprintf(wal, sizeof(wal), "%s-wal", path);
	struct stat w0, w1, d0, d1;
	int had_wal = stat(wal, &w0) == 0;
	stat(path, &d0);
	struct vec got = {0};
	struct ig_source *s = NULL;
	CHECK(replay_all(path, &got, &s) == 0);
	if (s) {
		struct replay_file_info fi;
		replay_file_info(s, 0, &fi);
		CHECK(fi.recovered == (had_wal && w0.st_size > 0));
		s->ops->free(s);
	}
	stat(path, &d1);
	CHECK(d0.st_size == d1.st_size && d0.st_mtim.tv_nsec == d1.st_mtim.tv_nsec);
	if (had_wal)
		CHECK(stat(wal, &w1) == 0 && w1.st_size == w0.st_size &&
		      w1.st_mtim.tv_nsec == w0.st_mtim.tv_nsec);
	uint64_t last = 0;
	for (size_t i = 0; i < got.n; i++)
		if (got.v[i].ts_ns > last)
			last = got.v[i].ts_ns;
	double lost_s = last ? (double)(killed - last) / 1e9 : 99;
	printf("crash: %zu events kept of %" PRIu64 " reported committed, newest %.3f s before "
	       "kill -9 (wal %s)\n",
	       got.n, committed, lost_s, had_wal ? "present" : "absent");
	CHECKF(got.n >= committed, "kept %zu of %" PRIu64 " committed events", got.n, committed);
	/* integrity_check (sqlite3 opens it normally and recovers the WAL) */
	CHECK(integrity_ok(path));
	free(got.v);
}

/* Name events' containers as replay hands them over (the pointer is only
 * valid during the call: copied here). */
struct names {
	int n;
	char pid_cont[4][IG_CONTAINER_LEN]; /* by pid 1..3 */
	int null_cont;
};

static void on_name(void *ctx, const struct ig_event *e)
{
	struct names *nm = ctx;
	if (e->kind != IG_EV_COMM)
		return;
	nm->n++;
	if (!e->container)
		nm->null_cont++;
	else if (e->pid < 4)
		snprintf(nm->pid_cont[e->pid], IG_CONTAINER_LEN, "%s", e->container);
}

static void replay_names(const char *path, struct names *nm)
{
	const char *paths[] = {path}, *err = NULL;
	struct ig_source *s = replay_open(paths, 1, &err);
	memset(nm, 0, sizeof(*nm));
	CHECKF(s, "%s", err ? err : "?");
	while (s && s->ops->poll(s, on_name, nm, 100) > 0)
		;
	if (s)
		s->ops->free(s);
}

/* process_names.container: written for name events (the recorder copies
 * the text: the caller's buffer is gone when the writer runs), read back
 * by replay; a file without the column (written before it) replays with
 * no container and gains the column when appended to. */
static void test_container(void)
{
	char path[512], cont[IG_CONTAINER_LEN];
	const char *err;
	path_in(path, sizeof(path), "container.db");
	struct rec *r = rec_open(path, NULL, &err);
	CHECKF(r, "%s", err ? err : "?");
	struct ig_event e = {
	    .kind = IG_EV_COMM, .ts_ns = 1700000000000000000ull, .pid = 1, .tid = 1};
	strcpy(e.comm, "trainer");
	snprintf(cont, sizeof(cont), "k8s:0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9/4f1e2d3c4b5a");
	e.container = cont;
	CHECK(rec_event(r, &e) == 0);
	memset(cont, 'x', sizeof(cont) - 1); /* the recorder kept its own copy */
	e.pid = e.tid = 2;
	e.container = "-";
	CHECK(rec_event(r, &e) == 0);
	e.pid = e.tid = 3;
	e.container = NULL;
	CHECK(rec_event(r, &e) == 0);
	CHECK(rec_close(r) == 0);
	CHECK(sql_int(path, "SELECT COUNT(*) FROM process_names WHERE container = '-'") == 1);
	struct names nm;
	replay_names(path, &nm);
	CHECK(nm.n == 3 && nm.null_cont == 1);
	CHECK(!strcmp(nm.pid_cont[1], "k8s:0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9/4f1e2d3c4b5a"));
	CHECK(!strcmp(nm.pid_cont[2], "-"));

	/* a file from before the column */
	sqlite3 *db;
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "ALTER TABLE process_names DROP COLUMN container", NULL, NULL,
			   NULL) == SQLITE_OK);
	sqlite3_close(db);
	replay_names(path, &nm);
	CHECK(nm.n == 3 && nm.null_cont == 3);
	r = rec_open(path, NULL, &err);
	CHECKF(r, "%s", err ? err : "?");
	e.pid = e.tid = 1;
	e.ts_ns += 1000;
	e.container = "docker:4f1e2d3c4b5a";
	CHECK(rec_event(r, &e) == 0);
	CHECK(rec_close(r) == 0);
	replay_names(path, &nm);
	CHECK(nm.n == 4 && nm.null_cont == 3 && !strcmp(nm.pid_cont[1], "docker:4f1e2d3c4b5a"));
}

/* What the kernel's evidence adds: a kernel-time event and a CPU quota
 * event with its cgroup's directory (events.detail, longer than any
 * container name) come back equal; a file without the detail column
 * replays its quota events without a directory and gains the column when
 * appended to; a quota row out of bounds is refused. */
struct kept {
	int n, ktime, cgroup;
	struct ig_event kt, cg;
	char dir[IG_DETAIL_LEN];
};

static void on_kept(void *ctx, const struct ig_event *e)
{
	struct kept *k = ctx;
	k->n++;
	if (e->kind == IG_EV_KTIME) {
		k->ktime++;
		k->kt = *e;
	} else if (e->kind == IG_EV_CGROUP) {
		k->cgroup++;
		k->cg = *e;
		snprintf(k->dir, sizeof(k->dir), "%s", e->container ? e->container : "(null)");
	}
}

static void replay_kept(const char *path, struct kept *k)
{
	const char *paths[] = {path}, *err = NULL;
	struct ig_source *s = replay_open(paths, 1, &err);
	memset(k, 0, sizeof(*k));
	CHECKF(s, "%s", err ? err : "?");
	while (s && s->ops->poll(s, on_kept, k, 100) > 0)
		;
	if (s)
		s->ops->free(s);
}

static void test_wait_rows(void)
{
	char path[512], dir[IG_DETAIL_LEN];
	const char *err;
	path_in(path, sizeof(path), "waits.db");
	struct rec *r = rec_open(path, NULL, &err);
	CHECKF(r, "%s", err ? err : "?");
	struct ig_ktime kt = {.ns = {11, 22, 33, 44, 55, 66, 77}, .majors = 7, .n = 99};
	struct ig_event k;
	ig_ktime_pack(&k, 1700000000000000000ull, 10, 11, &kt);
	strcpy(k.comm, "trainer");
	CHECK(rec_event(r, &k) == 0);
	struct ig_event g = {
	    .kind = IG_EV_CGROUP, .ts_ns = 1700000000500000000ull, .pid = 10, .tid = 10};
	g.arg0 = 50000;
	g.arg1 = 100000;
	g.arg2 = 412000000;
	g.stream = (uint64_t)6 << 32 | 10;
	g.flags = 1;
	memset(dir, 0, sizeof(dir));
	memcpy(dir, "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/", 55);
	memset(dir + 55, 'a', 180);
	g.container = dir;
	CHECK(rec_event(r, &g) == 0);
	char want[IG_DETAIL_LEN];
	snprintf(want, sizeof(want), "%s", dir);
	memset(dir, 'x', sizeof(dir) - 1); /* the recorder kept its own copy */
	CHECK(rec_close(r) == 0);
	struct kept kp;
	replay_kept(path, &kp);
	CHECK(kp.ktime == 1 && kp.cgroup == 1);
	struct ig_ktime back;
	ig_ktime_unpack(&kp.kt, &back);
	CHECK(!memcmp(&back, &kt, sizeof(kt)) && kp.kt.tid == 11);
	CHECK(kp.cg.arg0 == 50000 && kp.cg.arg1 == 100000 && kp.cg.arg2 == 412000000 &&
	      kp.cg.stream == ((uint64_t)6 << 32 | 10) && kp.cg.flags == 1 && kp.cg.pid == 10);
	CHECKF(!strcmp(kp.dir, want), "%s", kp.dir);

	/* a file from before the column */
	sqlite3 *db;
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "ALTER TABLE events DROP COLUMN detail", NULL, NULL, NULL) ==
	      SQLITE_OK);
	sqlite3_close(db);
	replay_kept(path, &kp);
	CHECK(kp.cgroup == 1 && !strcmp(kp.dir, "(null)") && kp.cg.arg0 == 50000);
	r = rec_open(path, NULL, &err);
	CHECKF(r, "%s", err ? err : "?");
	g.ts_ns += 1000000000ull;
	g.container = "/sys/fs/cgroup/cpu/q";
	CHECK(rec_event(r, &g) == 0);
	CHECK(rec_close(r) == 0);
	replay_kept(path, &kp);
	CHECK(kp.cgroup == 2 && !strcmp(kp.dir, "/sys/fs/cgroup/cpu/q"));

	/* a period over the kernel's 1 s: the row is refused, the rest stays */
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "UPDATE events SET arg1 = 5000000 WHERE kind = 13", NULL, NULL,
			   NULL) == SQLITE_OK);
	sqlite3_close(db);
	replay_kept(path, &kp);
	CHECK(kp.cgroup == 0 && kp.ktime == 1);
}

/* A process's environment settings (IG_EV_ENV): recorded and replayed
 * equal; a row with a setting no version writes is refused. */
static int env_rows;
static struct ig_event env_back;
static void on_env(void *ctx, const struct ig_event *e)
{
	(void)ctx;
	if (e->kind == IG_EV_ENV) {
		env_rows++;
		env_back = *e;
	}
}

static int replay_env(const char *path)
{
	const char *paths[] = {path}, *err = NULL;
	struct ig_source *s = replay_open(paths, 1, &err);
	env_rows = 0;
	CHECKF(s, "%s", err ? err : "?");
	while (s && s->ops->poll(s, on_env, NULL, 100) > 0)
		;
	if (s)
		s->ops->free(s);
	return env_rows;
}

static void test_env_rows(void)
{
	char path[512];
	const char *err;
	path_in(path, sizeof(path), "env.db");
	struct rec *r = rec_open(path, NULL, &err);
	CHECKF(r, "%s", err ? err : "?");
	struct ig_event e = {.kind = IG_EV_ENV,
			     .ts_ns = 1700000000000000000ull,
			     .pid = 10,
			     .tid = 10,
			     .arg0 = IG_ENV_ALL,
			     .arg1 = IG_ENV_SRC_LIVE,
			     .arg2 = IG_ENV_NO_ALLOC_CACHE};
	CHECK(rec_event(r, &e) == 0);
	CHECK(rec_close(r) == 0);
	CHECK(replay_env(path) == 1);
	CHECK(env_back.arg0 == IG_ENV_ALL && env_back.arg1 == IG_ENV_SRC_LIVE &&
	      env_back.arg2 == IG_ENV_NO_ALLOC_CACHE && env_back.pid == 10);
	sqlite3 *db;
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "UPDATE events SET arg0 = 4 WHERE kind = 14", NULL, NULL, NULL) ==
	      SQLITE_OK);
	sqlite3_close(db);
	CHECK(replay_env(path) == 0);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ig-test-rec.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	test_round_trip(0);
	test_round_trip(1);
	test_chain_json();
	test_append_and_errors();
	test_commit_by_time();
	test_full_queue_waits();
	test_drops_counted();
	test_max_db();
	test_disk_full();
	test_crash();
	test_container();
	test_wait_rows();
	test_env_rows();
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd)) {
	}
	return check_done("test_rec");
}
