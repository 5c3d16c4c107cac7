/* A NULL in any column of any table replay reads is refused and counted,
 * or the whole file is refused with a reason (docs/recording.md, "Values
 * out of range"): never a row gone without a word. For each shipped
 * recording (ours, Ingero's single-node and cluster files), the NOT NULL
 * constraints are dropped from a copy, then each column of each table is
 * set NULL in one row, and the replay's count must grow by exactly one. */
#include "check.h"
#include "testdb.h"
#include "store/rec.h"
#include "store/replay.h"

#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp[64];

struct drained {
	uint64_t delivered, refused;
	int opened;
	char err[600];
};

static void on_ev(void *ctx, const struct ig_event *e)
{
	((struct drained *)ctx)->delivered++;
}

static void on_name(void *ctx, uint32_t pid, const char *name, uint64_t seen, unsigned node)
{
}

static int on_stack(void *ctx, uint64_t hash, const char *ips, const char *frames)
{
	return 0;
}

/* Opens path and reads all of it, as the session and the exports do:
 * every stream, the chains, the sessions, the names and the stacks. */
static void drain(const char *path, struct drained *d)
{
	const char *paths[] = {path}, *err = NULL;
	memset(d, 0, sizeof(*d));
	struct ig_source *s = replay_open(paths, 1, &err);
	if (!s) {
		snprintf(d->err, sizeof(d->err), "%s", err ? err : "?");
		return;
	}
	d->opened = 1;
	while (s->ops->poll(s, on_ev, d, 4096) > 0)
		;
	if (replay_error(s))
		snprintf(d->err, sizeof(d->err), "%s", replay_error(s));
	struct rec_chain *c;
	struct rec_session *v;
	size_t n;
	if (replay_chains(s, &c, &n) == 0)
		replay_chains_free(c, n);
	if (replay_sessions(s, &v, &n) == 0)
		replay_sessions_free(v, n);
	replay_process_names(s, on_name, NULL);
	replay_stacks(s, on_stack, NULL);
	struct replay_stats st;
	replay_get_stats(s, &st);
	d->refused = st.refused;
	s->ops->free(s);
}

/* Tables replay never reads: a NULL there changes nothing it shows. */
static int unread_table(const char *t)
{
	static const char *const skip[] = {"sqlite_sequence", "sources", "ingero_top_pruned",
					   "cgroup_metadata", "cgroup_schedstat"};
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strcmp(t, skip[i]))
			return 1;
	return !strncmp(t, "sqlite_", 7);
}

struct col {
	char table[64], name[64];
};

/* The columns a NULL may not be in: NOT NULL in the file's own schema, and
 * not the rowid (an INTEGER PRIMARY KEY set NULL takes a new rowid). */
static size_t columns(const char *path, struct col *out, size_t max)
{
	sqlite3 *db;
	sqlite3_stmt *t, *c;
	size_t n = 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &t,
			       NULL) == SQLITE_OK) {
		while (sqlite3_step(t) == SQLITE_ROW) {
			const char *tn = (const char *)sqlite3_column_text(t, 0);
			char sql[200];
			if (unread_table(tn))
				continue;
			snprintf(sql, sizeof(sql),
				 "SELECT name, type, \"notnull\", pk FROM "
				 "pragma_table_info('%s')",
				 tn);
			if (sqlite3_prepare_v2(db, sql, -1, &c, NULL) != SQLITE_OK)
				continue;
			while (sqlite3_step(c) == SQLITE_ROW && n < max) {
				const char *type = (const char *)sqlite3_column_text(c, 1);
				int rowid = sqlite3_column_int(c, 3) == 1 && type &&
					    !strcasecmp(type, "INTEGER");
				if (!sqlite3_column_int(c, 2) || rowid)
					continue;
				snprintf(out[n].table, sizeof(out[n].table), "%s", tn);
				snprintf(out[n].name, sizeof(out[n].name), "%s",
					 (const char *)sqlite3_column_text(c, 0));
				n++;
			}
			sqlite3_finalize(c);
		}
		sqlite3_finalize(t);
	}
	sqlite3_close(db);
	return n;
}

/* A copy of src whose tables take NULLs (their constraints dropped). */
static int loosen(const char *src, const char *dst)
{
	if (testdb_copy(src, dst))
		return -1;
	return testdb_run(dst, "PRAGMA writable_schema = ON;"
			       "UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') "
			       "WHERE type = 'table';"
			       "PRAGMA writable_schema = OFF;");
}

static void test_file(const char *rel)
{
	char src[256], base[128], m[128];
	struct col cols[256];
	struct drained b, d;
	if (testdb_find(src, sizeof(src), rel)) {
		CHECKF(0, "%s not found", rel);
		return;
	}
	size_t n = columns(src, cols, 256);
	CHECKF(n > 20, "%s: %zu columns", rel, n);
	snprintf(base, sizeof(base), "%s/base.db", tmp);
	snprintf(m, sizeof(m), "%s/null.db", tmp);
	CHECK(loosen(src, base) == 0);
	/* 3 000 events and 20 summaries are enough (the row set NULL is the
	 * first of its table): a small file copied and replayed once per column */
	CHECK(testdb_run(base, "DELETE FROM events WHERE rowid > (SELECT MIN(rowid) + 3000 FROM "
			       "events)") == 0);
	if (testdb_int(base, "SELECT count(*) FROM sqlite_master WHERE name = "
			     "'ingero_top_summaries'") == 1)
		CHECK(testdb_run(base, "DELETE FROM ingero_top_summaries WHERE rowid > (SELECT "
				       "MIN(rowid) + 20 FROM ingero_top_summaries)") == 0);
	CHECK(testdb_run(base, "VACUUM") == 0);
	drain(base, &b);
	CHECKF(b.opened && !b.err[0], "%s: %s", rel, b.err);
	size_t tried = 0;
	for (size_t i = 0; i < n; i++) {
		char sql[600];
		CHECK(testdb_copy(base, m) == 0);
		snprintf(
		    sql, sizeof(sql),
		    "UPDATE \"%.60s\" SET \"%.60s\" = NULL WHERE rowid = (SELECT MIN(rowid) FROM "
		    "\"%.60s\")",
		    cols[i].table, cols[i].name, cols[i].table);
		sqlite3 *db;
		int changed = 0;
		if (sqlite3_open(m, &db) == SQLITE_OK &&
		    sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK)
			changed = sqlite3_changes(db);
		sqlite3_close(db);
		if (!changed)
			continue; /* an empty table */
		tried++;
		drain(m, &d);
		/* refused whole, with a reason; or one row refused and counted */
		int ok = (!d.opened && d.err[0]) ||
			 (d.opened && !d.err[0] && d.refused == b.refused + 1);
		CHECKF(ok, "%s: NULL %s.%s: opened %d, refused %" PRIu64 " (was %" PRIu64 "), %s",
		       rel, cols[i].table, cols[i].name, d.opened, d.refused, b.refused, d.err);
	}
	CHECKF(tried > 20, "%s: %zu columns tried", rel, tried);
	printf("%s: %zu columns set NULL in turn\n", rel, tried);
}

int main(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/ig-test-nulls.XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	test_file("tests/scenarios/cpu-contention.db");
	test_file("tests/scenarios/hidden-sync.db"); /* with summaries */
	test_file("tests/fixtures/ingero/pytorch-dataloader-starvation.db");
	test_file("tests/fixtures/ingero/sample-cluster.db");
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd)) {
	}
	return check_done("test_replay_nulls");
}
