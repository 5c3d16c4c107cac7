/* Replaying files that fight back (docs/recording.md): rows out of range
 * are refused and counted exactly (ours and Ingero's); a path holding '%',
 * '?' or '#' opens that very file; a sparse 512 MiB -wal is not read into
 * memory or copied anywhere; a hot rollback journal is applied in memory;
 * a view named like a project table is refused; an index that does not
 * match its table is reported (at open, or while reading when the file is
 * too big for integrity_check), not looped on; a statement stops at the
 * interrupt flag and at the time limit of one step. */
#include "check.h"
#include "testdb.h"
#include "store/db.h"
#include "store/rec.h"
#include "store/replay.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmp[64];
static char own_src[512];    /* a shipped recording of ours */
static char ingero_src[512]; /* a shipped Ingero database */

struct drained {
	uint64_t events, snaps, names, last_key, backwards;
	uint64_t max_dur;
	int rc;
	struct replay_stats st;
	char err[600];
};

static void on_ev(void *ctx, const struct ig_event *e)
{
	struct drained *d = ctx;
	uint64_t k = e->ts_ns + e->dur_ns;
	d->backwards += k < d->last_key;
	d->last_key = k;
	d->events += e->kind != IG_EV_SNAPSHOT && e->kind != IG_EV_COMM;
	d->snaps += e->kind == IG_EV_SNAPSHOT;
	d->names += e->kind == IG_EV_COMM;
	if (e->dur_ns > d->max_dur)
		d->max_dur = e->dur_ns;
}

/* Opens and drains path: 0 or -1 (d->err says why). */
static int drain(const char *path, const struct replay_opts *o, struct drained *d)
{
	const char *paths[] = {path}, *err = NULL;
	memset(d, 0, sizeof(*d));
	struct ig_source *s = replay_open_opts(paths, 1, o, &err);
	if (!s) {
		snprintf(d->err, sizeof(d->err), "%s", err ? err : "?");
		return -1;
	}
	while ((d->rc = s->ops->poll(s, on_ev, d, 4096)) > 0)
		;
	if (replay_error(s))
		snprintf(d->err, sizeof(d->err), "%s", replay_error(s));
	struct rec_chain *c;
	size_t n;
	if (replay_chains(s, &c, &n) == 0)
		replay_chains_free(c, n);
	replay_get_stats(s, &d->st);
	s->ops->free(s);
	return 0;
}

/* --- values out of range ------------------------------------------------------- */

static void test_own_values(void)
{
	char m[128];
	struct drained base, d;
	snprintf(m, sizeof(m), "%s/values.db", tmp);
	CHECK(testdb_copy(own_src, m) == 0);
	CHECK(drain(m, NULL, &base) == 0 && base.st.refused == 0);
	/* seven event rows and two snapshots, each with one value out of range */
	CHECK(testdb_run(
		  m, "UPDATE events SET duration = -1 WHERE id = 10;"
		     "UPDATE events SET end_ns = 0 WHERE id = 20;"
		     "UPDATE events SET start_ns = 5000000000000000000, end_ns = "
		     "5000000000000000000 + duration WHERE id = 30;"
		     "UPDATE events SET pid = 0 WHERE id = 40;"
		     "UPDATE events SET pid = 4194305 WHERE id = 50;"
		     "UPDATE events SET op = 99 WHERE id = 60;"
		     "UPDATE events SET preempt_ns = duration, blocked_ns = 1 WHERE id = "
		     "(SELECT MIN(id) FROM events WHERE kind = 1 AND duration > 0 AND id > 70);"
		     "UPDATE system_snapshots SET cpu_pct = 922337203685477632 WHERE rowid = 1;"
		     "UPDATE system_snapshots SET mem_pct = 5000 WHERE rowid = 2;") == SQLITE_OK);
	CHECK(drain(m, NULL, &d) == 0);
	CHECKF(d.st.refused == 9, "refused %" PRIu64, d.st.refused);
	CHECKF(d.events == base.events - 7 && d.snaps == base.snaps - 2,
	       "%" PRIu64 " of %" PRIu64 " events, %" PRIu64 " of %" PRIu64 " snapshots", d.events,
	       base.events, d.snaps, base.snaps);
	CHECK(d.backwards == 0 && d.rc == -ENODATA && d.max_dur == base.max_dur);
	/* a row an hour and a second longer than the file's span */
	CHECK(testdb_run(m,
			 "UPDATE events SET duration = duration + 3601000000000, end_ns = end_ns + "
			 "3601000000000 + (SELECT MAX(end_ns) - MIN(end_ns) FROM events) WHERE id "
			 "= 100") == SQLITE_OK);
	CHECK(drain(m, NULL, &d) == 0 && d.st.refused == 10);
	/* a chain from 1970 and one with a negative p99 */
	CHECK(testdb_run(
		  m, "INSERT INTO causal_chains (id, detected_at, severity, summary, root_cause, "
		     "explanation, cuda_p99_us) VALUES ('old', 0, 'HIGH', 's', 'r', 'e', 1), "
		     "('neg', 1795313950000000000, 'HIGH', 's', 'r', 'e', -1)") == SQLITE_OK);
	CHECK(drain(m, NULL, &d) == 0 && d.st.refused == 12);
}

static void test_ingero_values(void)
{
	char m[128];
	struct drained base, d;
	snprintf(m, sizeof(m), "%s/ingero-values.db", tmp);
	CHECK(testdb_copy(ingero_src, m) == 0);
	CHECK(drain(m, NULL, &base) == 0 && base.st.refused == 0);
	int64_t before = testdb_int(m, "SELECT COUNT(*) FROM events WHERE rowid IN (5,6,7,8,9)");
	CHECK(testdb_run(m,
			 "UPDATE events SET duration = -1 WHERE rowid = 5;"
			 "UPDATE events SET timestamp = 0 WHERE rowid = 6;"
			 "UPDATE events SET pid = 0 WHERE rowid = 7;"
			 "UPDATE events SET op = 77 WHERE rowid = 8;"
			 "UPDATE events SET timestamp = 4102444800000000001 WHERE rowid = 9;"
			 "UPDATE system_snapshots SET cpu_pct = -3 WHERE rowid = 1;") == SQLITE_OK);
	CHECK(drain(m, NULL, &d) == 0);
	/* the five rows were delivered or skipped before; now refused */
	CHECKF(before == 5 && d.st.refused == 6, "refused %" PRIu64, d.st.refused);
	/* every row is delivered, skipped or refused (one refusal is the snapshot) */
	CHECK(d.st.rows == base.st.rows &&
	      d.st.rows == d.events - d.st.synthesized + d.st.skipped + d.st.refused - 1);
	CHECK(base.st.rows == base.events - base.st.synthesized + base.st.skipped);
	CHECK(d.backwards == 0 && d.rc == -ENODATA);
}

/* One row stamped 1970 (end_ns 0) and one 115 days after the rest: the
 * first is refused, the second delivered in order; the span ends there. */
static void test_far_rows(void)
{
	char m[128];
	struct drained d;
	snprintf(m, sizeof(m), "%s/far.db", tmp);
	CHECK(testdb_copy(own_src, m) == 0);
	CHECK(testdb_run(m, "UPDATE events SET end_ns = 0, start_ns = 0 WHERE id = 3;"
			    "UPDATE events SET start_ns = start_ns + 9936000000000000, end_ns = "
			    "end_ns + 9936000000000000 WHERE id = 4") == SQLITE_OK);
	CHECK(drain(m, NULL, &d) == 0 && d.st.refused == 1 && d.backwards == 0);
	const char *paths[] = {m}, *err;
	struct ig_source *s = replay_open(paths, 1, &err);
	uint64_t a = 0, b = 0;
	CHECK(s && replay_span(s, &a, &b) == 0);
	CHECK(a > 1700000000000000000ull && b - a > 9936000000000000ull);
	if (s)
		s->ops->free(s);
}

/* --- paths and companions ------------------------------------------------------- */

static void test_paths(void)
{
	/* a name SQLite would read as a URI ("%41" is "A", "?" a query, "#" a
	 * fragment) beside the file that reading would open */
	static const char *const names[] = {"a%41b.db", "q?mode=memory.db", "h#frag.db"};
	static const char *const decoy[] = {"aAb.db", "q", "h"};
	char p[160], q[160];
	struct drained a, b;
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", tmp, names[i]);
		snprintf(q, sizeof(q), "%s/%s", tmp, decoy[i]);
		CHECK(testdb_copy(own_src, p) == 0 && testdb_copy(ingero_src, q) == 0);
		CHECK(drain(q, NULL, &b) == 0);
		CHECKF(drain(p, NULL, &a) == 0, "%s: %s", names[i], a.err);
		CHECKF(a.events == (uint64_t)testdb_int(own_src, "SELECT COUNT(*) FROM events") &&
			   a.events != b.events,
		       "%s: %" PRIu64 " events", names[i], a.events);
	}
}

static uint64_t rchar(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	uint64_t v = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "rchar:", 6))
			v = strtoull(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

static int entries(const char *d)
{
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq 0", d);
	return system(cmd) == 0 ? 0 : 1;
}

/* A sparse 512 MiB WAL: not read whole, not copied (TMPDIR stays empty),
 * said in the file's note; the file reads as it is. */
static void test_sparse_wal(void)
{
	char m[128], wal[140], tdir[140];
	struct drained base, d;
	snprintf(m, sizeof(m), "%s/sparse.db", tmp);
	snprintf(wal, sizeof(wal), "%s-wal", m);
	snprintf(tdir, sizeof(tdir), "%s/tmpdir", tmp);
	CHECK(testdb_copy(own_src, m) == 0 && mkdir(tdir, 0700) == 0);
	CHECK(drain(m, NULL, &base) == 0);
	CHECK(truncate(wal, 0) != 0); /* create it sparse */
	FILE *f = fopen(wal, "w");
	fclose(f);
	CHECK(truncate(wal, 512ll << 20) == 0);
	setenv("TMPDIR", tdir, 1);
	uint64_t r0 = rchar();
	const char *paths[] = {m}, *err;
	struct ig_source *s = replay_open(paths, 1, &err);
	uint64_t read = rchar() - r0;
	CHECKF(s, "%s", err);
	struct replay_file_info fi;
	CHECK(s && replay_file_info(s, 0, &fi) == 0 && !fi.recovered &&
	      strstr(fi.note, "no valid header"));
	if (s)
		s->ops->free(s);
	CHECKF(read < (64u << 20), "read %" PRIu64 " bytes to open it", read);
	CHECK(entries(tdir) == 0);
	CHECK(drain(m, NULL, &d) == 0 && d.events == base.events);
	unsetenv("TMPDIR");
	unlink(wal);
}

/* A writer killed inside a transaction that already wrote into the file:
 * the journal's original pages are applied in memory; nothing changes on
 * disk. */
static void test_hot_journal(void)
{
	char m[128], jnl[140];
	struct drained base, d;
	snprintf(m, sizeof(m), "%s/journal.db", tmp);
	snprintf(jnl, sizeof(jnl), "%s-journal", m);
	CHECK(testdb_copy(own_src, m) == 0);
	CHECK(drain(m, NULL, &base) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		sqlite3 *db;
		sqlite3_open(m, &db);
		sqlite3_exec(db,
			     "PRAGMA journal_mode=DELETE; PRAGMA cache_size=2; BEGIN; "
			     "DELETE FROM events; DELETE FROM system_snapshots;"
			     "UPDATE process_names SET name = 'overwritten';",
			     NULL, NULL, NULL);
		kill(getpid(), SIGKILL); /* no commit, no rollback */
		_exit(1);
	}
	int status;
	waitpid(pid, &status, 0);
	struct stat j0, j1, d0, d1;
	CHECK(stat(jnl, &j0) == 0 && j0.st_size > 0 && stat(m, &d0) == 0);
	const char *paths[] = {m}, *err;
	struct ig_source *s = replay_open(paths, 1, &err);
	struct replay_file_info fi;
	CHECKF(s && replay_file_info(s, 0, &fi) == 0 && fi.recovered, "%s", s ? "" : err);
	if (s)
		s->ops->free(s);
	CHECK(drain(m, NULL, &d) == 0);
	CHECKF(d.events == base.events && d.snaps == base.snaps && d.names == base.names,
	       "%" PRIu64 "/%" PRIu64 " events after the journal", d.events, base.events);
	CHECK(stat(jnl, &j1) == 0 && j1.st_size == j0.st_size && stat(m, &d1) == 0 &&
	      d1.st_size == d0.st_size && d1.st_mtim.tv_nsec == d0.st_mtim.tv_nsec);
}

/* --- structure -------------------------------------------------------------------- */

static int quick_ok(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int ok = 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &st, NULL) == SQLITE_OK) {
		ok = sqlite3_step(st) == SQLITE_ROW &&
		     !strcmp((const char *)sqlite3_column_text(st, 0), "ok");
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return ok;
}

static void test_views_and_indexes(void)
{
	char m[128];
	struct drained d;
	snprintf(m, sizeof(m), "%s/view.db", tmp);
	CHECK(testdb_copy(own_src, m) == 0);
	CHECK(testdb_run(m, "ALTER TABLE events RENAME TO real_events;"
			    "CREATE VIEW events AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL "
			    "SELECT x + 1 FROM r) SELECT * FROM real_events, r;") == SQLITE_OK);
	CHECK(drain(m, NULL, &d) == -1 && strstr(d.err, "events is a view"));
	/* an index built descending, declared ascending: its rows come
	 * backwards; it passes quick_check, fails integrity_check */
	snprintf(m, sizeof(m), "%s/index.db", tmp);
	CHECK(testdb_copy(own_src, m) == 0);
	CHECK(testdb_run(
		  m, "DROP INDEX idx_events_end; CREATE INDEX idx_events_end ON events(end_ns "
		     "DESC); PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = 'CREATE "
		     "INDEX idx_events_end ON events(end_ns)' WHERE name = 'idx_events_end';") ==
	      SQLITE_OK);
	CHECK(quick_ok(m));
	CHECK(drain(m, NULL, &d) == -1 && strstr(d.err, "corrupt database"));
	struct replay_opts quick = {.full_check_max = -1};
	CHECK(drain(m, &quick, &d) == 0 && d.rc == -EIO && d.backwards == 0);
	CHECKF(strstr(d.err, "do not come in the order of their index"), "%s", d.err);
}

/* --- the guard -------------------------------------------------------------------- */

static char big[128];

static void make_big(void)
{
	snprintf(big, sizeof(big), "%s/big.db", tmp);
	struct rec_opts o = {.synchronous = 1};
	const char *err;
	struct rec *r = rec_open(big, &o, &err);
	for (int i = 0; r && i < 150000; i++) {
		struct ig_event e = {
		    .kind = IG_EV_CALL, .op = 5, .pid = 7, .tid = 7, .dur_ns = 1000};
		e.ts_ns = 1700000000000000000ull + (uint64_t)i * 100000;
		rec_event(r, &e);
	}
	CHECK(r && rec_close(r) == 0);
}

/* Raises the flag from inside a running statement (as a signal handler
 * would), after it has run a while. */
static int hook_calls;

static void interrupt_midway(void *ctx)
{
	if (++hook_calls == 50)
		db_interrupt();
}

static void test_guard(void)
{
	struct drained d;
	struct replay_opts full = {.full_check_max = 1ll << 40}; /* integrity_check: long */
	db_interrupt();
	CHECK(drain(big, &full, &d) == -1 && strstr(d.err, "interrupted"));
	db_interrupt_clear();
	/* the flag raised while a statement runs stops it */
	db_set_progress_hook(interrupt_midway, NULL);
	CHECKF(drain(big, &full, &d) == -1 && strstr(d.err, "interrupted"), "%s", d.err);
	CHECK(hook_calls >= 50);
	db_set_progress_hook(NULL, NULL);
	db_interrupt_clear();
	/* one step longer than the limit */
	db_set_step_limit_ms(1);
	CHECKF(drain(big, &full, &d) == -1 && strstr(d.err, "longer than"), "%s", d.err);
	db_set_step_limit_ms(0);
	CHECK(drain(big, &full, &d) == 0 && d.events == 150000);
}

int main(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/ig-test-hostile.XXXXXX");
	if (!mkdtemp(tmp) ||
	    testdb_find(own_src, sizeof(own_src), "tests/scenarios/cpu-contention.db") ||
	    testdb_find(ingero_src, sizeof(ingero_src),
			"tests/fixtures/ingero/pytorch-dataloader-starvation.db")) {
		fprintf(stderr, "test_replay_hostile: shipped recordings not found\n");
		return 1;
	}
	test_own_values();
	test_ingero_values();
	test_far_rows();
	test_paths();
	test_sparse_wal();
	test_hot_journal();
	test_views_and_indexes();
	make_big();
	test_guard();
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd)) {
	}
	return check_done("test_replay_hostile");
}
