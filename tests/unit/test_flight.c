/* The flight recorder: the ring keeps the last N seconds and at most the
 * cap; a save writes exactly the ring as it was at the save (plus names,
 * chains with valid JSON columns, session) to a timestamped file in the
 * background: flight_save returns while the saver is still held (a hook
 * holds it), so the caller never waits for the write. How long the copy
 * takes on the caller is a benchmark (tests/bench/bench_storage). */
#include "check.h"
#include "store/flight.h"
#include "core/ops.h"
#include "store/replay.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <semaphore.h>
#include <sqlite3.h>
#include <time.h>
#include <unistd.h>

/* A gate the saver thread waits at (flight_set_save_hook). */
static sem_t gate, entered;

static void hold_saver(void *ctx)
{
	struct timespec ts;
	sem_post(&entered);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 60; /* never forever, even when the test is wrong */
	while (sem_timedwait(&gate, &ts) && errno == EINTR)
		;
}

/* Waits until the saver sits at the gate. */
static int saver_held(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 60;
	return sem_timedwait(&entered, &ts) == 0;
}

/* Rows of a query on the saved file (-1 when it cannot be run). */
static int count_row(void *ctx, int ncol, char **vals, char **cols)
{
	(*(int *)ctx)++;
	return 0;
}

static int rows_of(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	int rows = 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, sql, count_row, &rows, NULL) != SQLITE_OK)
		rows = -1;
	sqlite3_close(db);
	return rows;
}

static void ev(struct ig_event *e, uint64_t ts, int i)
{
	memset(e, 0, sizeof(*e));
	e->kind = i % 3 ? IG_EV_CALL : IG_EV_OFFCPU;
	e->op = IG_OP_CUDA_STREAM_SYNC;
	e->ts_ns = ts;
	e->dur_ns = 1000 + (uint64_t)(i % 7) * 10;
	e->pid = 100 + (uint32_t)(i % 5);
	e->tid = e->pid;
	e->arg0 = (uint64_t)i;
	snprintf(e->comm, sizeof(e->comm), "proc%u", e->pid);
}

struct got {
	struct ig_event *v;
	size_t n, cap;
	int docker777; /* name events of 777 with its container */
	int quota777;  /* its CPU quota events with their cgroup's directory */
};

static void on_ev(void *ctx, const struct ig_event *e)
{
	struct got *g = ctx;
	g->docker777 += e->kind == IG_EV_COMM && e->pid == 777 && e->container &&
			!strcmp(e->container, "docker:4f1e2d3c4b5a");
	g->quota777 += e->kind == IG_EV_CGROUP && e->pid == 777 && e->arg0 == 50000 &&
		       e->container && !strcmp(e->container, "/sys/fs/cgroup/cpu/job");
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 1024;
		g->v = realloc(g->v, g->cap * sizeof(*g->v));
	}
	g->v[g->n++] = *e;
}

static int wait_poll(struct flight *f, char *msg, size_t len)
{
	for (int i = 0; i < 12000; i++) { /* up to 120 s */
		if (flight_poll(f, msg, len))
			return 1;
		usleep(10000);
	}
	return 0;
}

/* The saved file holds exactly the n events of the ring, the six names,
 * the chain (replaced by id, JSON columns valid) and the session's node. */
static void check_saved(const char *path, size_t n, const char *const *recs,
			const struct rec_tl *tl)
{
	const char *paths[] = {path}, *err = NULL;
	struct ig_source *s = replay_open(paths, 1, &err);
	CHECKF(s, "%s", err ? err : "?");
	if (s) {
		struct got g = {0};
		while (s->ops->poll(s, on_ev, &g, 1000) > 0)
			;
		size_t events = 0, names = 0, found777 = 0;
		for (size_t i = 0; i < g.n; i++) {
			if (g.v[i].kind == IG_EV_COMM) {
				names++;
				found777 += g.v[i].pid == 777 && !strcmp(g.v[i].comm, "longlived");
			} else {
				events++;
			}
		}
		CHECKF(events == n, "saved %zu of %zu", events, n);
		CHECK(names == 6 && found777 == 1 && g.docker777 == 1 && g.quota777 == 1);
		struct rec_chain *c;
		size_t nc;
		CHECK(replay_chains(s, &c, &nc) == 0 && nc == 1 &&
		      !strcmp(c[0].severity, "MEDIUM"));
		CHECK(nc == 1 && c[0].nrecs == 2 && !strcmp(c[0].recs[0], recs[0]) &&
		      !strcmp(c[0].recs[1], "bad \xef\xbf\xbd byte") && c[0].ntimeline == 2 &&
		      c[0].timeline[1].ts_ns == tl[1].ts_ns &&
		      !strcmp(c[0].timeline[1].text, tl[1].text));
		replay_chains_free(c, nc);
		CHECK(replay_node_name(s, 0) && !strcmp(replay_node_name(s, 0), "flighthost"));
		free(g.v);
		s->ops->free(s);
	}
	CHECK(rows_of(path, "SELECT id FROM causal_chains WHERE json_valid(timeline) = 1 AND "
			    "json_valid(recommendations) = 1") == 1);
}

/* The hard cap; a big ring's save does not hold the caller either; freeing
 * waits for the saver. */
static void test_cap_and_big(const char *dir, uint64_t base)
{
	char path[4200], msg[4400];
	uint64_t a, b;
	struct flight *f = flight_new(1000, 1000);
	for (int i = 0; i < 5000; i++) {
		struct ig_event e;
		ev(&e, base + (uint64_t)i * 1000, i);
		flight_push(f, &e);
	}
	CHECK(flight_count(f) == 1000 && flight_capped(f) == 4000);
	CHECK(flight_span(f, &a, &b) == 0 && a >= base + 4000ull * 1000);
	/* big ring: saving still does not stall; freeing waits for the saver */
	flight_free(f);
	f = flight_new(300, 0);
	for (int i = 0; i < 1000000; i++) {
		struct ig_event e;
		ev(&e, base + (uint64_t)i * 100000, i);
		flight_push(f, &e);
	}
	flight_set_save_hook(f, hold_saver, NULL);
	CHECK(flight_save(f, dir, path, sizeof(path)) == 0);
	CHECK(saver_held() && flight_busy(f));
	CHECK(flight_save(f, dir, NULL, 0) == -EBUSY);
	sem_post(&gate);
	CHECK(wait_poll(f, msg, sizeof(msg)));
	CHECKF(strstr(msg, "saved 1000000 events"), "%s", msg);
	flight_free(f);
}

/* Stacks: asked for on the thread that polls (the stacks module is not
 * thread-safe), once per distinct id, written to stack_traces. */
static pthread_t main_thread;
static int stack_calls, stack_wrong_thread;

static int stack_fn(void *ctx, uint64_t id, char **ips, char **frames)
{
	stack_calls++;
	stack_wrong_thread += !pthread_equal(pthread_self(), main_thread);
	if (id % 2) /* odd ids: no frames known */
		return -1;
	*ips = strdup("[\"0x1\"]");
	*frames = strdup("[{\"s\": \"main+0x1\", \"f\": \"app\"}]");
	return 0;
}

/* Stack 2 is still being resolved for its first asks (a busy resolver). */
static int pending_asks;
static int pending_fn(void *ctx, uint64_t id, char **ips, char **frames)
{
	*ips = strdup("[\"0x1\"]");
	if (id == 2 && pending_asks-- > 0) {
		*frames = strdup("");
		return 1;
	}
	*frames = strdup("[{\"s\": \"main+0x1\", \"f\": \"app\"}]");
	return 0;
}

/* A save waits for the stacks still being resolved (flight_poll asks again)
 * and writes their frames once they are; flight_free waits for none and
 * writes what it has. */
static void test_pending_stacks(const char *dir, uint64_t base)
{
	struct flight *f = flight_new(1e6, 1000);
	for (int i = 0; i < 100; i++) {
		struct ig_event e;
		ev(&e, base + (uint64_t)i * 1000, i);
		e.stack_id = e.kind == IG_EV_CALL ? 1 + (uint64_t)(i % 4) : 0;
		flight_push(f, &e);
	}
	flight_set_stacks(f, pending_fn, NULL);
	char path[4200], msg[4400];
	pending_asks = 3;
	CHECK(flight_save(f, dir, path, sizeof(path)) == 0);
	CHECK(wait_poll(f, msg, sizeof(msg)));
	CHECKF(pending_asks < 0, "asked again until resolved (%d)", pending_asks);
	CHECK(rows_of(path, "SELECT hash FROM stack_traces") == 4);
	CHECK(rows_of(path, "SELECT hash FROM stack_traces WHERE frames LIKE '%main+0x1%'") == 4);

	pending_asks = 1000000;
	CHECK(flight_save(f, dir, path, sizeof(path)) == 0);
	flight_free(f);
	CHECK(rows_of(path, "SELECT hash FROM stack_traces") == 4);
	CHECK(rows_of(path, "SELECT hash FROM stack_traces WHERE frames LIKE '%main+0x1%'") == 3);
}

/* The ring across chunks: a cap that is not a multiple of the chunk keeps
 * exactly the newest events, in order; the save is them, with the stacks. */
static void test_chunks_and_stacks(const char *dir, uint64_t base)
{
	main_thread = pthread_self();
	struct flight *f = flight_new(1e6, 10000);
	for (int i = 0; i < 25000; i++) {
		struct ig_event e;
		ev(&e, base + (uint64_t)i * 1000, i);
		e.stack_id = e.kind == IG_EV_CALL ? 1 + (uint64_t)(i % 10) : 0;
		flight_push(f, &e);
	}
	CHECK(flight_count(f) == 10000 && flight_capped(f) == 15000);
	char path[4200], msg[4400];
	/* calls with stacks, no stack source: saved without stack_traces */
	CHECK(flight_save(f, dir, path, sizeof(path)) == 0);
	CHECK(wait_poll(f, msg, sizeof(msg)));
	CHECKF(strstr(msg, "saved 10000 events"), "%s", msg);
	CHECK(rows_of(path, "SELECT hash FROM stack_traces") == 0);
	flight_set_stacks(f, stack_fn, NULL);
	CHECK(flight_save(f, dir, path, sizeof(path)) == 0);
	CHECK(stack_calls == 0); /* not on the caller of flight_save */
	CHECK(wait_poll(f, msg, sizeof(msg)));
	CHECKF(strstr(msg, "saved 10000 events"), "%s", msg);
	CHECK(stack_calls == 10 && stack_wrong_thread == 0);
	CHECK(rows_of(path, "SELECT hash FROM stack_traces") == 5);
	const char *paths[] = {path}, *err = NULL;
	struct ig_source *s = replay_open(paths, 1, &err);
	CHECKF(s, "%s", err ? err : "?");
	struct got g = {0};
	while (s && s->ops->poll(s, on_ev, &g, 1000) > 0)
		;
	size_t next = 15000, ordered = 0;
	for (size_t i = 0; i < g.n; i++)
		if (g.v[i].kind != IG_EV_COMM)
			ordered += g.v[i].arg0 == next++;
	CHECKF(ordered == 10000, "%zu of the newest 10000 in order", ordered);
	free(g.v);
	if (s)
		s->ops->free(s);
	/* a save whose saver still waits for its stacks: freeing serves them */
	stack_calls = 0;
	CHECK(flight_save(f, dir, path, sizeof(path)) == 0);
	flight_free(f);
	CHECK(stack_calls == 10 && stack_wrong_thread == 0);
	CHECK(rows_of(path, "SELECT hash FROM stack_traces") == 5);
}

int main(void)
{
	char dir[] = "/tmp/ig-test-flight.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	CHECK(flight_new(0, 10) == NULL);
	flight_free(NULL);

	/* time span: 20 s of events at 1 ms, keep 5 s */
	struct flight *f = flight_new(5, 0);
	CHECK(f);
	uint64_t base = 1700000000000000000ull;
	for (int i = 0; i < 20000; i++) {
		struct ig_event e;
		ev(&e, base + (uint64_t)i * 1000000, i);
		flight_push(f, &e);
	}
	uint64_t a, b;
	CHECK(flight_span(f, &a, &b) == 0);
	CHECK(b - a <= 5000000000ull && b - a > 4990000000ull);
	CHECK(flight_count(f) >= 4990 && flight_count(f) <= 5001);
	CHECK(flight_capped(f) == 0);
	const char *recs[] = {"quote \" and \\ and \x1b[2J", "bad \xff byte"};
	struct rec_tl tl[] = {{b - 5, "first\tfired"}, {b, "HIGH \x01 detected"}};
	struct rec_chain ch = {.id = "host-starvation-cudaStreamSynchronize",
			       .detected_at_ns = b,
			       .severity = "HIGH",
			       .summary = "starved",
			       .root_cause = "host_starvation",
			       .recs = recs,
			       .nrecs = 2,
			       .timeline = tl,
			       .ntimeline = 2};
	CHECK(flight_chain(f, &ch) == 0);
	ch.severity = "MEDIUM"; /* replaced by id */
	CHECK(flight_chain(f, &ch) == 0);
	struct rec_session ses = {.started_at_ns = base, .node = "flighthost", .cpu_cores = 2};
	CHECK(flight_set_session(f, &ses) == 0);
	struct ig_event comm = {.kind = IG_EV_COMM, .pid = 777, .ts_ns = base};
	snprintf(comm.comm, sizeof(comm.comm), "longlived");
	char cont[IG_CONTAINER_LEN] = "docker:4f1e2d3c4b5a";
	comm.container = cont;
	flight_push(f, &comm);
	cont[0] = 0; /* the ring kept its own copy */
	/* a CPU quota event: its directory is kept apart (the ring's copies
	 * of events keep no text) and goes with it into the file */
	char cgdir[IG_DETAIL_LEN] = "/sys/fs/cgroup/cpu/job";
	struct ig_event quota = {.kind = IG_EV_CGROUP,
				 .pid = 777,
				 .tid = 777,
				 .ts_ns = b,
				 .arg0 = 50000,
				 .arg1 = 100000,
				 .container = cgdir};
	flight_push(f, &quota);
	cgdir[0] = 0;
	size_t n = flight_count(f);

	char path[4200], msg[4400];
	sem_init(&gate, 0, 0);
	sem_init(&entered, 0, 0);
	flight_set_save_hook(f, hold_saver, NULL);
	CHECK(flight_save(f, dir, path, sizeof(path)) == 0);
	/* back on the caller while the saver is held before writing anything */
	CHECK(saver_held() && flight_busy(f));
	CHECK(flight_poll(f, msg, sizeof(msg)) == 0);
	CHECK(flight_save(f, dir, NULL, 0) == -EBUSY);
	CHECK(strstr(path, "/ingero-top-flight-") && strstr(path, ".db"));
	/* the ring keeps working while the saver runs; the save is the ring as
	 * it was (the new event is not in the file) */
	struct ig_event more;
	ev(&more, base + 30000000000ull, 1);
	flight_push(f, &more);
	sem_post(&gate);
	CHECK(wait_poll(f, msg, sizeof(msg)));
	flight_set_save_hook(f, NULL, NULL);
	CHECKF(strstr(msg, "saved") && strstr(msg, path), "%s", msg);
	CHECK(flight_poll(f, msg, sizeof(msg)) == 0);

	check_saved(path, n, recs, tl);
	/* a second save in the same second gets its own name */
	char path2[4200];
	CHECK(flight_save(f, dir, path2, sizeof(path2)) == 0);
	CHECK(strcmp(path, path2) != 0);
	CHECK(flight_save(f, dir, NULL, 0) == -EBUSY || !flight_busy(f));
	CHECK(wait_poll(f, msg, sizeof(msg)));
	/* unwritable directory: an error now, nothing left behind */
	CHECK(flight_save(f, "/nonexistent-dir", path2, sizeof(path2)) == -ENOENT);
	flight_free(f);

	test_cap_and_big(dir, base);
	test_chunks_and_stacks(dir, base);
	test_pending_stacks(dir, base);

	char cmd[200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
	}
	return check_done("test_flight");
}
